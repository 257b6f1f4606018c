// SPDX-License-Identifier: MIT
/*
 * shard_write.c - the .ipuef of a model split over a group of IPUs: one
 * Executable per IPU and the group table (Metadata version 3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/ipuef.h"
#include "ipu/ipux.h"
#include "ipu/partition.h"

int ipu_shard_write_mem(const struct ipu_shard *s, const struct ipu_target *t, int pipelined,
			uint32_t micro_batches, void **out, size_t *out_len, struct ir_error *e)
{
	uint32_t na = s->ninputs + s->noutputs, base[IPU_PARTITION_MAX_IPUS];
	struct ipuef_anchor *an = calloc((size_t)na + 1, sizeof(*an));
	struct ipuef_link *links = calloc((size_t)s->nlinks + 1, sizeof(*links));
	char (*names)[IPUEF_MAX_NAME + 8] = calloc((size_t)s->nlinks + 1, sizeof(*names));
	struct ipuef_program prog = { "main", 0 };
	struct ipuef_group grp = { 0 };
	struct ipuef_metadata md;
	struct ipuef_writer *w = NULL;
	char err[512], summary[256];
	int r = -1;

	if (!an || !links || !names) {
		ir_err(e, "out of memory");
		goto out;
	}
	base[0] = 0;
	for (uint32_t k = 1; k < s->nipus; k++)
		base[k] = base[k - 1] + s->nstreams[k - 1];
	for (uint32_t i = 0; i < na; i++) {
		const struct ipu_shard_io *io =
			i < s->ninputs ? &s->inputs[i] : &s->outputs[i - s->ninputs];

		if (io->anchor.kind != IPUEF_ANCHOR_USER) {
			ir_err(e, "IPU %u: '%s' is not a user input or output: a group of IPUs has no weights streamed in",
			       io->ipu, io->name);
			goto out;
		}
		an[i] = io->anchor;
		an[i].stream_id = base[io->ipu] + io->stream;
	}
	for (uint32_t i = 0; i < s->nlinks; i++) {
		const struct ipu_shard_link *l = &s->links[i];

		snprintf(names[i], sizeof(names[i]), "link:%.*s", (int)IPUEF_MAX_NAME - 5, l->name);
		links[i] = (struct ipuef_link){ names[i], l->src_ipu, l->dst_ipu, l->src_stream,
						l->dst_stream, l->bytes };
	}
	grp.num_ipus = s->nipus;
	grp.num_streams = s->nstreams;
	grp.num_links = s->nlinks;
	grp.links = links;
	grp.pipelined = pipelined ? 1 : 0;
	grp.micro_batches = micro_batches ? micro_batches : 1;
	memset(&md, 0, sizeof(md));
	md.exe_format_major = IPUX_VERSION_MAJOR;
	md.exe_format_minor = 0;	/* custom codelets (1.1) are not sharded */
	md.ipu_version = t->ipu_version ? t->ipu_version : "ipu2";
	md.num_tiles = t->tiles;
	md.tile_mem = t->tile_mem;
	md.batch_size = s->batch_size ? s->batch_size : 1;
	md.num_programs = 1;
	md.programs = &prog;
	md.num_anchors = na;
	md.anchors = an;
	md.group = &grp;
	snprintf(summary, sizeof(summary), "{\"ipus\": %u, \"links\": %u}", s->nipus, s->nlinks);
	if (ipuef_writer_create(&w, err, sizeof(err)) ||
	    ipuef_writer_set_metadata(w, &md, err, sizeof(err)) ||
	    ipuef_writer_set_executable(w, s->image[0], s->len[0], err, sizeof(err))) {
		ir_err(e, "writing the group .ipuef: %s", err);
		goto out;
	}
	for (uint32_t k = 1; k < s->nipus; k++)
		if (ipuef_writer_add_executable(w, s->image[k], s->len[k], err, sizeof(err))) {
			ir_err(e, "writing the group .ipuef: IPU %u: %s", k, err);
			goto out;
		}
	if (ipuef_writer_add_opaque(w, "ipu-compile", "1", summary, strlen(summary), err,
				    sizeof(err)) ||
	    ipuef_writer_write_mem(w, out, out_len, err, sizeof(err))) {
		ir_err(e, "writing the group .ipuef: %s", err);
		goto out;
	}
	r = 0;
out:
	ipuef_writer_destroy(w);
	free(an);
	free(links);
	free(names);
	return r;
}
