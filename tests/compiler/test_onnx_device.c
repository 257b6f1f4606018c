/* SPDX-License-Identifier: MIT */
/*
 * test_onnx_device.c - the ONNX conformance runner: every node test of
 * Debian's libonnx-testdata compiled at the test's shapes for a 16-tile
 * target, run on the in-process device, outputs compared with the
 * expected ones.  Prints pass / wrong-result / unsupported counts and
 * writes the per-test table to $LOGDIR/onnx-node-device.txt.  Wrong
 * results must be 0 and passes must not drop below the record.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ipu/lower.h"
#include "onnx_node_runner.h"

#define MIN_PASS 570
#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

static int counts[5], have_data, frozen;

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_all(const char *filter)
{
	DIR *d = opendir(NODE_DIR);
	struct dirent *de;
	char **names = NULL, path[4096];
	size_t n = 0;
	const char *logdir = getenv("LOGDIR") ? getenv("LOGDIR") : "build/test-logs";
	struct ipu_target t = { "ipu2", 16, 1u << 20 };
	FILE *table;

	if (!d)
		return;
	have_data = 1;
	while ((de = readdir(d))) {
		char **nn;

		if (de->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp);
	snprintf(path, sizeof(path), "%s/onnx-node-device.txt", logdir);
	table = fopen(path, "w");
	for (size_t i = 0; i < n; i++) {
		char dir[4096];
		struct node_outcome o;

		if (filter && !strstr(names[i], filter)) {
			free(names[i]);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", NODE_DIR, names[i]);
		run_node_test_device(dir, &t, &o);
		counts[o.result]++;
		frozen += o.frozen && o.result == NODE_PASS;
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
			counts[0], frozen, counts[2] + counts[3], counts[1], counts[4]);
		fclose(table);
	}
	printf("# device conformance: pass %d (%d with shape inputs frozen), wrong-result %d, unsupported %d, unreadable %d\n",
	       counts[0], frozen, counts[2] + counts[3], counts[1], counts[4]);
}

TEST(no_wrong_results)
{
	CHECK_EQ_INT(counts[NODE_WRONG_SHAPE] + counts[NODE_WRONG_VALUE], 0);
}

TEST(pass_count_not_below_record)
{
	CHECK_MSG(counts[NODE_PASS] >= MIN_PASS, "%d passing, recorded %d", counts[NODE_PASS], MIN_PASS);
}

int main(int argc, char **argv)
{
	/* argv[1]: a test name filter (runs those, prints each outcome) */
	run_all(argc > 1 ? argv[1] : NULL);
	if (!have_data) {
		printf("# %s missing: install libonnx-testdata\n0 passed, 1 failed\n", NODE_DIR);
		return 1;
	}
	if (argc > 1)
		return 0;
	RUN(no_wrong_results);
	RUN(pass_count_not_below_record);
	return TH_DONE();
}
