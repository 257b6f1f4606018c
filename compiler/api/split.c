// SPDX-License-Identifier: MIT
/*
 * split.c - ipu_compile()'s models bigger than one IPU: the optimised
 * graph split over num_ipus IPUs of the target (automatically, or where a
 * sharding YAML starts each stage), every stage lowered for its own IPU,
 * written as one group .ipuef (Documentation/compiler/sharding.md).
 */
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "ipu/partition.h"

int ipuc_lower_split(const struct ipuc_options *o, int nmodels, const struct ir_graph *g,
		     const struct ipu_target *t, void **image, size_t *len,
		     struct ipu_graph_stats *st, struct ir_error *e)
{
	struct ipu_partition p;
	struct ipu_shard sh;
	int r;

	if (o->num_ipus < 2)
		return ir_err(e, "--manual-sharding-config needs --num-ipus N (2 to 64): the IPUs its stages go to");
	if (nmodels > 1)
		return ir_err(e, "--num-ipus %u: model fusion over several IPUs is not supported; split one model",
			      o->num_ipus);
	if (o->check || o->report)
		return ir_err(e, "--num-ipus %u: --check and --report look at one IPU's executable; run the split model with ipu-run",
			      o->num_ipus);
	if (o->state && strcmp(o->state, "none"))
		return ir_err(e, "--num-ipus %u: device-resident state is kept on one IPU only (--state none streams the cache)",
			      o->num_ipus);
	if (o->sharding_config)
		r = ipu_partition_yaml(g, o->sharding_config, (int)o->num_ipus, &p, e);
	else
		r = ipu_partition_auto(g, (int)o->num_ipus, t, &p, e);
	if (r)
		return -1;
	r = ipu_shard_lower(g, &p, t, &sh, e);
	*st = sh.stats;
	if (!r)
		r = ipu_shard_write_mem(&sh, t, o->pipelining, 1, image, len, e);
	ipu_shard_free(&sh);
	return r;
}
