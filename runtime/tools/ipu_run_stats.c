// SPDX-License-Identifier: MIT
/* ipu_run_stats.c - latency statistics and durations for people. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ipu_run_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: index ceil(p / 100 * n) - 1, computed in integers. */
static double rank(const double *v, size_t n, unsigned p)
{
	size_t k = (p * n + 99) / 100;

	return v[k ? k - 1 : 0];
}

void lat_stats_compute(double *v, size_t n, struct lat_stats *s)
{
	double sum = 0;
	size_t i;

	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->min = v[0];
	s->max = v[n - 1];
	s->mean = sum / (double)n;
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s->p90 = rank(v, n, 90);
	s->p95 = rank(v, n, 95);
	s->p99 = rank(v, n, 99);
}

const char *fmt_seconds(double s, char *buf, size_t len)
{
	double a = fabs(s);

	if (a < 1e-6)
		snprintf(buf, len, "%.0f ns", s * 1e9);
	else if (a < 1e-3)
		snprintf(buf, len, "%.3g us", s * 1e6);
	else if (a < 1)
		snprintf(buf, len, "%.3g ms", s * 1e3);
	else
		snprintf(buf, len, "%.3g s", s);
	return buf;
}
