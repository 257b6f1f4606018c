/* SPDX-License-Identifier: MIT */
/* node_report.c - runs every node test under a directory and prints one
 * line per test: "<result> <test> <message>" plus totals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_node_runner.h"

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "/usr/share/libonnx-testdata/data/node";
	char **names;
	long n = node_list_dir(root, &names);
	int counts[5] = { 0 }, frozen = 0;

	if (n < 0) {
		perror(root);
		return 1;
	}
	for (long i = 0; i < n; i++) {
		char dir[4096];
		struct node_outcome o;

		if (argc > 2 && !strstr(names[i], argv[2])) {
			free(names[i]);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", root, names[i]);
		run_node_test(dir, &o);
		counts[o.result]++;
		printf("%-12s %-60s %s%s\n", node_result_name(o.result), names[i],
		       o.frozen ? "[frozen inputs] " : "", o.msg);
		frozen += o.frozen && o.result == NODE_PASS;
		free(names[i]);
	}
	free(names);
	printf("pass %d (%d with shape inputs frozen), unsupported %d, wrong-shape %d, wrong-value %d, no-data %d\n",
	       counts[0], frozen, counts[1], counts[2], counts[3], counts[4]);
	return 0;
}
