/* SPDX-License-Identifier: MIT */
/*
 * ipu_run_stats.h - ipu-run's latency statistics and how it prints times.
 */
#ifndef IPU_RUN_STATS_H
#define IPU_RUN_STATS_H

#include <stddef.h>

/* Of n request latencies, in the unit they were given in. */
struct lat_stats {
	double min, mean, median, p90, p95, p99, max;
};

/*
 * Sorts v (n >= 1) and fills s.  The median is the middle value (the mean
 * of the two middle ones for even n); p90/p95/p99 are nearest-rank: the
 * smallest value with at least that percentage of values <= it (numpy's
 * percentile(method="inverted_cdf")).
 */
void lat_stats_compute(double *v, size_t n, struct lat_stats *s);

/* A duration in seconds with a unit that fits: "812 ns", "95.1 us", "1.52 ms", "2.03 s". */
const char *fmt_seconds(double s, char *buf, size_t len);

#endif /* IPU_RUN_STATS_H */
