// SPDX-License-Identifier: MIT
/*
 * ipu-monitor - print the driver's device events as they happen
 * (generic netlink family "ipu", multicast group "events", libnl-genl-3),
 * or with --top a live table of the devices (ipu_top.c) with each one's
 * last event.
 *
 *   ipu-monitor [--count N] [--timeout SECONDS]
 *   ipu-monitor --top [--interval SECONDS] [--iterations N]
 */
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "cli.h"
#include "ipu_tool.h"
#include "ipu_top.h"

static long seen;

static const char *type_name(uint32_t t)
{
	switch (t) {
	case IPU_EVENT_ERROR: return "error";
	case IPU_EVENT_RESET: return "reset";
	case IPU_EVENT_ATTACH: return "attach";
	case IPU_EVENT_DETACH: return "detach";
	default: return "unknown";
	}
}

static const char *reason_name(uint32_t r)
{
	switch (r) {
	case IPU_RESET_REASON_USER: return "user";
	case IPU_RESET_REASON_WATCHDOG: return "watchdog";
	case IPU_RESET_REASON_FATAL: return "fatal";
	case IPU_RESET_REASON_CLOSE: return "close";
	case IPU_RESET_REASON_PCI: return "pci";
	default: return "-";
	}
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[IPU_GENL_A_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	uint32_t type, code;

	if (nla_parse(tb, IPU_GENL_A_MAX, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
		      NULL) < 0 || !tb[IPU_GENL_A_TYPE] || !tb[IPU_GENL_A_MINOR])
		return NL_SKIP;
	type = nla_get_u32(tb[IPU_GENL_A_TYPE]);
	code = tb[IPU_GENL_A_CODE] ? nla_get_u32(tb[IPU_GENL_A_CODE]) : 0;
	if (arg) {	/* --top: the table shows each device's last event */
		char text[64];
		time_t now = time(NULL);
		int n = (int)strftime(text, sizeof(text), "%H:%M:%S ", localtime(&now));

		snprintf(text + n, sizeof(text) - (size_t)n, "%s%s%s", type_name(type),
			 type == IPU_EVENT_RESET || type == IPU_EVENT_DETACH ? " " : "",
			 type == IPU_EVENT_RESET || type == IPU_EVENT_DETACH ?
			 reason_name(code) : "");
		ipu_top_event(arg, nla_get_u32(tb[IPU_GENL_A_MINOR]), text);
		seen++;
		return NL_OK;
	}
	printf("accel%u %s", nla_get_u32(tb[IPU_GENL_A_MINOR]), type_name(type));
	if (tb[IPU_GENL_A_PID] && nla_get_u32(tb[IPU_GENL_A_PID]))
		printf(" pid=%u", nla_get_u32(tb[IPU_GENL_A_PID]));
	if (type == IPU_EVENT_RESET || type == IPU_EVENT_DETACH)
		printf(" reason=%s", reason_name(code));
	if (type == IPU_EVENT_ERROR)
		printf(" code=%u detail=%u addr=%#llx", code,
		       tb[IPU_GENL_A_DETAIL] ? nla_get_u32(tb[IPU_GENL_A_DETAIL]) : 0,
		       tb[IPU_GENL_A_ADDR] ?
		       (unsigned long long)nla_get_u64(tb[IPU_GENL_A_ADDR]) : 0ull);
	if (tb[IPU_GENL_A_ID])
		printf(" id=%llu", (unsigned long long)nla_get_u64(tb[IPU_GENL_A_ID]));
	printf("\n");
	fflush(stdout);
	seen++;
	return NL_OK;
}

/* Subscribe to the driver's events; NULL (message on stderr) if impossible. */
static struct nl_sock *subscribe(void *ctx)
{
	struct nl_sock *sk = nl_socket_alloc();
	int grp, rc;

	if (!sk) {
		fprintf(stderr, "ipu-monitor: out of memory\n");
		return NULL;
	}
	rc = genl_connect(sk);
	if (rc) {
		fprintf(stderr, "ipu-monitor: cannot open a generic netlink socket: %s\n",
			nl_geterror(rc));
		goto fail;
	}
	grp = genl_ctrl_resolve_grp(sk, IPU_GENL_NAME, IPU_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		fprintf(stderr, "ipu-monitor: no netlink family \"%s\": is ipu.ko loaded? (%s)\n",
			IPU_GENL_NAME, nl_geterror(grp));
		goto fail;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, ctx);
	rc = nl_socket_add_membership(sk, grp);
	if (rc) {
		fprintf(stderr, "ipu-monitor: cannot join group \"%s\": %s\n",
			IPU_GENL_MCGRP_EVENTS, nl_geterror(rc));
		goto fail;
	}
	return sk;
fail:
	nl_socket_free(sk);
	return NULL;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Take the socket's events for up to `seconds` (just sleep without one). */
static void events_for(struct nl_sock *sk, double seconds)
{
	struct timespec t0;
	double el;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((el = elapsed(&t0)) < seconds) {
		int ms = (int)((seconds - el) * 1000) + 1;

		if (!sk) {
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);
			return;
		}
		struct pollfd p = { .fd = nl_socket_get_fd(sk), .events = POLLIN };

		if (poll(&p, 1, ms) > 0)
			nl_recvmsgs_default(sk);
	}
}

static int top(double interval, long iterations)
{
	struct ipu_top *t = ipu_top_create();
	struct nl_sock *sk;
	int clear = isatty(STDOUT_FILENO), rc = 0;

	if (!t) {
		fprintf(stderr, "ipu-monitor: out of memory\n");
		return 1;
	}
	sk = subscribe(t);	/* without events the table still works */
	for (long i = 0; iterations < 0 || i < iterations; i++) {
		if (i)
			events_for(sk, interval);
		if (ipu_top_print(t, clear)) {
			fprintf(stderr, "ipu-monitor: no IPU driver: /sys/bus/pci/drivers/ipu missing (load ipu.ko)\n");
			rc = 1;
			break;
		}
		if (!clear && (iterations < 0 || i + 1 < iterations))
			printf("\n");
	}
	if (sk)
		nl_socket_free(sk);
	ipu_top_free(t);
	return rc;
}

int main(int argc, char **argv)
{
	long count = -1, iterations = -1;
	double timeout = -1, interval = 1;
	int top_mode = 0;
	struct nl_sock *sk;
	struct timespec t0;

	static const struct option lo[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "top", no_argument, NULL, 'T' },
		{ "interval", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] =
		"usage: ipu-monitor [--count N] [--timeout SECONDS]\n"
		"       ipu-monitor --top [--interval SECONDS] [--iterations N]\n"
		"Print the driver's events (errors, resets, attach/detach) as they come, or with\n"
		"--top a table of the devices refreshed live: state, owner pid and command line\n"
		"(which names the model it runs), programs run per second, modelled utilisation\n"
		"(device cycles over wall time at the tile clock: 1.33 GHz ipu2, 1.85 GHz ipu21),\n"
		"stream bytes per second, errors, resets, pinned pages and the last event.\n"
		"Reads sysfs/ioctls read-only and the netlink events: no attach, no privilege.\n"
		"  --count N          stop after N events (1..1000000000)\n"
		"  --timeout SECONDS  stop after this long (1..86400)\n"
		"  --top              the live table (redrawn on a terminal, appended otherwise)\n"
		"  --interval SECONDS between tables with --top (1..3600, default 1)\n"
		"  --iterations N     print N tables with --top, then stop (1..1000000000)\n"
		"  --help, --version  this text; the version\n"
		"Exit status: 0 done, 1 no driver / netlink error, 2 bad command line.\n";
	uint64_t v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (cli_parse_u64("ipu-monitor", "count", optarg, 1, 1000000000, &v))
				return CLI_EXIT_USAGE;
			count = (long)v;
			break;
		case 't':
			if (cli_parse_u64("ipu-monitor", "timeout", optarg, 1, 86400, &v))
				return CLI_EXIT_USAGE;
			timeout = (double)v;
			break;
		case 'T': top_mode = 1; break;
		case 'i':
			if (cli_parse_u64("ipu-monitor", "interval", optarg, 1, 3600, &v))
				return CLI_EXIT_USAGE;
			interval = (double)v;
			break;
		case 'n':
			if (cli_parse_u64("ipu-monitor", "iterations", optarg, 1, 1000000000, &v))
				return CLI_EXIT_USAGE;
			iterations = (long)v;
			break;
		case 'h': fputs(usage, stdout); return CLI_EXIT_OK;
		case 'v': cli_print_version("ipu-monitor"); return CLI_EXIT_OK;
		default:
			fprintf(stderr, "ipu-monitor: bad option '%s' (see --help)\n", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	if (top_mode && (count >= 0 || timeout >= 0)) {
		fprintf(stderr, "ipu-monitor: --count and --timeout go without --top (see --help)\n");
		return CLI_EXIT_USAGE;
	}
	if (!top_mode && (iterations >= 0 || interval != 1)) {
		fprintf(stderr, "ipu-monitor: --interval and --iterations go with --top (see --help)\n");
		return CLI_EXIT_USAGE;
	}
	if (top_mode)
		return top(interval, iterations);
	sk = subscribe(NULL);
	if (!sk)
		return 1;
	fprintf(stderr, "ipu-monitor: listening for IPU events\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (count < 0 || seen < count) {
		struct pollfd p = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
		int ms = 1000;

		if (timeout >= 0) {
			double el = elapsed(&t0);

			if (el >= timeout)
				break;
			ms = (int)((timeout - el) * 1000) + 1;
		}
		if (poll(&p, 1, ms) > 0)
			nl_recvmsgs_default(sk);
	}
	nl_socket_free(sk);
	return 0;
}
