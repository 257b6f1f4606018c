/* SPDX-License-Identifier: MIT */
/*
 * lower.h - lowering of optimised IR graphs to tiles and the .ipuef
 * executable (through the graph builder, compiler/include/ipu/graph.h).
 */
#ifndef IPU_LOWER_H
#define IPU_LOWER_H

#include <stdint.h>

#include "ipu/ir.h"

struct ipu_target {
	const char *ipu_version;	/* "ipu2", "ipu21" or NULL (custom) */
	uint32_t tiles;
	uint32_t tile_mem;		/* bytes per tile */
};

/* 1 once lowering is implemented. */
int ipu_lower_available(void);

/* Lowers n graphs (n > 1: model fusion, subgraphs selected by the `index`
 * input, anchors graphK/NAME) and writes the .ipuef to out_path. */
int ipu_lower_write(struct ir_graph *const *graphs, int n,
		    const struct ipu_target *t, const char *out_path,
		    struct ir_error *e);

#endif /* IPU_LOWER_H */
