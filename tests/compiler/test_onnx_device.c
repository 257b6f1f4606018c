/* SPDX-License-Identifier: MIT */
/*
 * test_onnx_device.c - the ONNX conformance runner: every test of Debian's
 * libonnx-testdata in the node, pytorch-converted and pytorch-operator
 * suites (the last two exported by PyTorch in opset 6, so converted on
 * import) compiled at the test's shapes for a 16-tile target, run on the
 * in-process device, outputs compared with the expected ones.  Prints
 * pass / wrong-result / unsupported counts per suite and writes the
 * per-test tables to $LOGDIR/onnx-SUITE-device.txt.  Wrong results must be
 * 0 and passes must not drop below each suite's record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/lower.h"
#include "onnx_node_runner.h"

#define DATA_DIR "/usr/share/libonnx-testdata/data"

struct suite {
	const char *name;	/* folder under DATA_DIR */
	int min_pass;		/* the record */
	int counts[5], frozen, have_data;
};

static struct suite suites[] = {
	{ "node", 829 },
	{ "pytorch-converted", 81 },
	{ "pytorch-operator", 31 },
};
#define NSUITES (sizeof(suites) / sizeof(suites[0]))

static void run_suite(struct suite *s, const char *filter)
{
	char top[512], **names, path[4096];
	long n;
	const char *logdir = getenv("LOGDIR") ? getenv("LOGDIR") : "build/test-logs";
	struct ipu_target t = { "ipu2", 16, 1u << 20 };
	int *counts = s->counts;
	FILE *table;

	snprintf(top, sizeof(top), "%s/%s", DATA_DIR, s->name);
	n = node_list_dir(top, &names);
	if (n < 0)
		return;
	s->have_data = 1;
	snprintf(path, sizeof(path), "%s/onnx-%s-device.txt", logdir, s->name);
	table = fopen(path, "w");
	for (long i = 0; i < n; i++) {
		char dir[4096];
		struct node_outcome o;

		if (filter && !strstr(names[i], filter)) {
			free(names[i]);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", top, names[i]);
		run_node_test_device(dir, &t, &o);
		counts[o.result]++;
		s->frozen += o.frozen && o.result == NODE_PASS;
		if (table)
			fprintf(table, "%-12s %-60s %s%s\n", node_result_name(o.result), names[i],
				o.frozen ? "[shape inputs frozen] " : "", o.msg);
		if (filter || o.result == NODE_WRONG_SHAPE || o.result == NODE_WRONG_VALUE)
			fprintf(stderr, "  %s: %s: %s\n", names[i], node_result_name(o.result), o.msg);
		free(names[i]);
	}
	free(names);
	if (table) {
		fprintf(table, "pass %d (%d with shape inputs frozen), wrong %d, unsupported %d, no-data %d\n",
			counts[0], s->frozen, counts[2] + counts[3], counts[1], counts[4]);
		fclose(table);
	}
	printf("# device conformance, %s: pass %d (%d with shape inputs frozen), wrong-result %d, unsupported %d, unreadable %d\n",
	       s->name, counts[0], s->frozen, counts[2] + counts[3], counts[1], counts[4]);
}

TEST(no_wrong_results)
{
	for (size_t i = 0; i < NSUITES; i++)
		CHECK_MSG(suites[i].counts[NODE_WRONG_SHAPE] + suites[i].counts[NODE_WRONG_VALUE] == 0,
			  "%s: %d wrong", suites[i].name,
			  suites[i].counts[NODE_WRONG_SHAPE] + suites[i].counts[NODE_WRONG_VALUE]);
}

TEST(pass_count_not_below_record)
{
	for (size_t i = 0; i < NSUITES; i++)
		CHECK_MSG(suites[i].counts[NODE_PASS] >= suites[i].min_pass, "%s: %d passing, recorded %d",
			  suites[i].name, suites[i].counts[NODE_PASS], suites[i].min_pass);
}

int main(int argc, char **argv)
{
	/* argv[1]: a test name filter (runs those, prints each outcome) */
	for (size_t i = 0; i < NSUITES; i++) {
		run_suite(&suites[i], argc > 1 ? argv[1] : NULL);
		if (!suites[i].have_data) {
			printf("# %s/%s missing: install libonnx-testdata\n0 passed, 1 failed\n",
			       DATA_DIR, suites[i].name);
			return 1;
		}
	}
	if (argc > 1)
		return 0;
	RUN(no_wrong_results);
	RUN(pass_count_not_below_record);
	return TH_DONE();
}
