/* SPDX-License-Identifier: MIT */
/*
 * harness.h - the tiny unit-test harness every userspace test uses.
 *
 * A test file defines TEST(name) functions and lists them in main() with
 * RUN(name).  Each check that fails prints file:line and the expression;
 * a test passes when none of its checks failed.  The program prints one
 * "ok"/"not ok" line per test (TAP-like) and ends with
 * "N passed, N failed"; scripts/run-tests adds these up for `make check`.
 */
#ifndef IPU_TEST_HARNESS_H
#define IPU_TEST_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct th_state {
	int passed, failed, cur_failed, checks;
	const char *only;
};

static struct th_state th_g = { 0, 0, 0, 0, NULL };

#define CHECK(cond)                                                         \
	do {                                                                \
		th_g.checks++;                                              \
		if (!(cond)) {                                              \
			th_g.cur_failed++;                                  \
			fprintf(stderr, "  %s:%d: check failed: %s\n",      \
				__FILE__, __LINE__, #cond);                 \
		}                                                           \
	} while (0)

#define CHECK_MSG(cond, ...)                                                \
	do {                                                                \
		th_g.checks++;                                              \
		if (!(cond)) {                                              \
			th_g.cur_failed++;                                  \
			fprintf(stderr, "  %s:%d: check failed: %s: ",      \
				__FILE__, __LINE__, #cond);                 \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
		}                                                           \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                  \
	do {                                                                \
		long long th_a = (long long)(a), th_b = (long long)(b);     \
		CHECK_MSG(th_a == th_b, "%lld != %lld", th_a, th_b);        \
	} while (0)

/* Fatal: stop the current test (e.g. a NULL that the rest would use).
 * The condition is evaluated once. */
#define REQUIRE(cond)                                                       \
	do {                                                                \
		int th_ok = !!(cond);                                       \
		th_g.checks++;                                              \
		if (!th_ok) {                                               \
			th_g.cur_failed++;                                  \
			fprintf(stderr, "  %s:%d: required: %s\n",           \
				__FILE__, __LINE__, #cond);                 \
			return;                                             \
		}                                                           \
	} while (0)

#define TEST(name) static void test_##name(void)

#define RUN(name)                                                           \
	do {                                                                \
		if (th_g.only && strcmp(th_g.only, #name))                  \
			break;                                              \
		th_g.cur_failed = 0;                                        \
		test_##name();                                              \
		if (th_g.cur_failed) {                                      \
			th_g.failed++;                                      \
			printf("not ok - %s\n", #name);                     \
		} else {                                                    \
			th_g.passed++;                                      \
			printf("ok - %s\n", #name);                         \
		}                                                           \
		fflush(stdout);                                             \
	} while (0)

/* Call first in main(): `prog TESTNAME` runs only that test. */
#define TH_INIT(argc, argv)                                                 \
	do {                                                                \
		if ((argc) > 1)                                             \
			th_g.only = (argv)[1];                              \
	} while (0)

#define TH_DONE()                                                           \
	(printf("%d passed, %d failed\n", th_g.passed, th_g.failed),         \
	 th_g.failed ? 1 : 0)

#endif /* IPU_TEST_HARNESS_H */
