// SPDX-License-Identifier: MIT
/*
 * ipu-monitor - print the driver's device events as they happen
 * (generic netlink family "ipu", multicast group "events", libnl-genl-3).
 *
 *   ipu-monitor [--count N] [--timeout SECONDS]
 */
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "cli.h"
#include "ipu_tool.h"

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
	default: return "-";
	}
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[IPU_GENL_A_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	uint32_t type, code;

	(void)arg;
	if (nla_parse(tb, IPU_GENL_A_MAX, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
		      NULL) < 0 || !tb[IPU_GENL_A_TYPE] || !tb[IPU_GENL_A_MINOR])
		return NL_SKIP;
	type = nla_get_u32(tb[IPU_GENL_A_TYPE]);
	code = tb[IPU_GENL_A_CODE] ? nla_get_u32(tb[IPU_GENL_A_CODE]) : 0;
	printf("ipu%u %s", nla_get_u32(tb[IPU_GENL_A_MINOR]), type_name(type));
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

int main(int argc, char **argv)
{
	long count = -1;
	double timeout = -1;
	struct nl_sock *sk;
	struct timespec t0, t;
	int grp, i, rc;

	static const struct option lo[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] =
		"usage: ipu-monitor [--count N] [--timeout SECONDS]\n"
		"Print the driver's events (errors, resets, attach/detach) as they come.\n"
		"  --count N          stop after N events (1..1000000000)\n"
		"  --timeout SECONDS  stop after this long (1..86400)\n"
		"  --help, --version  this text; the version\n"
		"Exit status: 0 done, 1 no driver / netlink error, 2 bad command line.\n";
	uint64_t v;
	int c;

	(void)i;
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
	sk = nl_socket_alloc();
	if (!sk) {
		fprintf(stderr, "ipu-monitor: out of memory\n");
		return 1;
	}
	rc = genl_connect(sk);
	if (rc) {
		fprintf(stderr, "ipu-monitor: cannot open a generic netlink socket: %s\n",
			nl_geterror(rc));
		return 1;
	}
	grp = genl_ctrl_resolve_grp(sk, IPU_GENL_NAME, IPU_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		fprintf(stderr, "ipu-monitor: no netlink family \"%s\": is ipu.ko loaded? (%s)\n",
			IPU_GENL_NAME, nl_geterror(grp));
		return 1;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, NULL);
	rc = nl_socket_add_membership(sk, grp);
	if (rc) {
		fprintf(stderr, "ipu-monitor: cannot join group \"%s\": %s\n",
			IPU_GENL_MCGRP_EVENTS, nl_geterror(rc));
		return 1;
	}
	fprintf(stderr, "ipu-monitor: listening for IPU events\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (count < 0 || seen < count) {
		struct pollfd p = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
		int ms = 1000;

		if (timeout >= 0) {
			double el;

			clock_gettime(CLOCK_MONOTONIC, &t);
			el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
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
