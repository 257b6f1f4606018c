// SPDX-License-Identifier: MIT
/*
 * ipu_top.c - the live table of ipu-monitor --top.
 *
 * Each sample reads INFO and COUNTERS of every device (read-only opens:
 * no attach, no privilege) and turns the differences since the previous
 * sample into rates: programs run per second, stream bytes per second,
 * and modelled utilisation, the share of the wall time the modelled IPU
 * would have been busy (device cycles / (seconds x tile clock)).  The
 * owner is named by its pid and command line (/proc), which shows the
 * model a tool such as ipu-run was given.
 */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ipu_tool.h"
#include "ipu_top.h"

struct sample {
	uint32_t minor;
	int valid;
	struct ipu_counters_args cnt;
};

struct ipu_top {
	struct sample prev[IPU_TOOL_MAX_DEVS];
	int nprev;
	double t_prev;
	char events[IPU_TOOL_MAX_DEVS][64];	/* last event, by minor */
};

struct ipu_top *ipu_top_create(void)
{
	return calloc(1, sizeof(struct ipu_top));
}

void ipu_top_free(struct ipu_top *t)
{
	free(t);
}

void ipu_top_event(struct ipu_top *t, uint32_t minor, const char *text)
{
	if (minor < IPU_TOOL_MAX_DEVS)
		snprintf(t->events[minor], sizeof(t->events[minor]), "%s", text);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "ipu-run /m/model.ipuef --iterations 100", printable, at most len-1 bytes */
static void command_of(int pid, char *out, size_t len)
{
	char path[64], raw[256], safe[512];
	ssize_t n = -1;
	int fd;

	snprintf(out, len, "-");
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, raw, sizeof(raw) - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(out, len, "?");
		return;
	}
	raw[n] = 0;
	for (ssize_t i = 0; i < n - 1; i++)
		if (!raw[i])
			raw[i] = ' ';
	{
		const char *argv0_end = strchr(raw, ' '), *base = raw;

		/* the program's base name, then its arguments */
		for (const char *p = raw; *p && (!argv0_end || p < argv0_end); p++)
			if (*p == '/')
				base = p + 1;
		snprintf(out, len, "%s", cli_safe(base, safe, sizeof(safe)));
	}
}

static const struct sample *previous(const struct ipu_top *t, uint32_t minor)
{
	for (int i = 0; i < t->nprev; i++)
		if (t->prev[i].valid && t->prev[i].minor == minor)
			return &t->prev[i];
	return NULL;
}

static void rate(char *buf, size_t len, double v, const char *fmt)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
}

int ipu_top_print(struct ipu_top *t, int clear)
{
	char names[IPU_TOOL_MAX_DEVS][32];
	struct sample cur[IPU_TOOL_MAX_DEVS];
	int n = ipu_tool_list(names, IPU_TOOL_MAX_DEVS);
	double tnow = now_s(), dt = t->t_prev > 0 ? tnow - t->t_prev : 0;
	time_t wall = time(NULL);
	char clock[16];

	if (n < 0)
		return -1;
	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&wall));
	if (clear)
		printf("\033[H\033[2J");
	printf("ipu-monitor --top  %s  %d device%s%s\n", clock, n, n == 1 ? "" : "s",
	       dt > 0 ? "" : "  (rates from the next sample)");
	printf("%-6s %-6s %7s %9s %7s %10s %6s %6s %7s  %-24s %s\n", "DEV", "STATE", "PID",
	       "REQ/S", "UTIL%", "STREAM/S", "ERRORS", "RESETS", "PINNED", "LAST EVENT", "COMMAND");
	for (int i = 0; i < n; i++) {
		struct ipu_tool_dev d;
		const struct sample *p;
		char cmd[72], req[16], util[16], bw[16];
		double r = -1, u = -1, b = -1;

		memset(&cur[i], 0, sizeof(cur[i]));
		if (ipu_tool_query(names[i], &d)) {
			printf("%-6s error: %s%s\n", names[i], strerror(d.err), ipu_tool_hint(d.err));
			continue;
		}
		cur[i].valid = 1;
		cur[i].minor = d.info.minor;
		cur[i].cnt = d.cnt;
		p = previous(t, d.info.minor);
		/* counters restart at a device reset: no rate across one */
		if (p && dt > 0 && d.cnt.programs_run >= p->cnt.programs_run &&
		    d.cnt.cycles >= p->cnt.cycles && d.cnt.stream_bytes >= p->cnt.stream_bytes) {
			r = (double)(d.cnt.programs_run - p->cnt.programs_run) / dt;
			u = 100.0 * (double)(d.cnt.cycles - p->cnt.cycles) /
			    (dt * ipu_tool_clock_ghz(d.info.hw_version) * 1e9);
			b = (double)(d.cnt.stream_bytes - p->cnt.stream_bytes) / dt;
		}
		command_of(d.info.owner_pid, cmd, sizeof(cmd));
		rate(req, sizeof(req), r, "%.1f");
		rate(util, sizeof(util), u, "%.3f");
		if (b < 0)
			snprintf(bw, sizeof(bw), "-");
		else if (b >= 1e6)
			snprintf(bw, sizeof(bw), "%.1f MB", b / 1e6);
		else
			snprintf(bw, sizeof(bw), "%.1f kB", b / 1e3);
		printf("%-6s %-6s %7d %9s %7s %10s %6llu %6llu %7llu  %-24s %s\n", names[i],
		       ipu_tool_state(d.info.state), d.info.owner_pid, req, util, bw,
		       (unsigned long long)d.cnt.drv_errors, (unsigned long long)d.cnt.drv_resets,
		       (unsigned long long)d.cnt.pinned_pages,
		       d.info.minor < IPU_TOOL_MAX_DEVS && t->events[d.info.minor][0] ?
		       t->events[d.info.minor] : "-", cmd);
	}
	fflush(stdout);
	memcpy(t->prev, cur, sizeof(cur[0]) * (size_t)n);
	t->nprev = n;
	t->t_prev = tnow;
	return 0;
}
