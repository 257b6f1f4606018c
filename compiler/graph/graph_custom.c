/* SPDX-License-Identifier: MIT */
/* graph_custom.c - custom codelets of a graph: the CUSTOM section's records. */
#include <string.h>

#include "graph_internal.h"
#include "ipu/custom_table.h"

void ipu_graph_set_custom_table(struct ipu_graph *g, const struct ipu_custom_table *t)
{
	g->custom = t;
}

const struct ipu_custom_table *ipu_graph_custom_table(const struct ipu_graph *g)
{
	return g->custom;
}

uint32_t ipu_graph_custom_codelet(struct ipu_graph *g, const char *domain, const char *name,
				  const uint8_t hash[32])
{
	struct ipux_custom rec;

	if (g->error)
		return IPU_GRAPH_INVALID;
	if (strlen(domain) >= sizeof(rec.domain) || strlen(name) >= sizeof(rec.name) ||
	    !domain[0] || !name[0]) {
		g_fail(g, "custom codelet '%s::%s': domain and name must be 1 to %zu characters",
		       domain, name, sizeof(rec.name) - 1);
		return IPU_GRAPH_INVALID;
	}
	memset(&rec, 0, sizeof(rec));
	strcpy(rec.domain, domain);
	strcpy(rec.name, name);
	memcpy(rec.lib_hash, hash, sizeof(rec.lib_hash));
	for (uint32_t i = 0; i < g->n_customs; i++)
		if (!memcmp(&g->customs[i], &rec, sizeof(rec)))
			return IPUX_CL_CUSTOM_BASE + i;
	if (g->n_customs >= IPUX_MAX_CUSTOM) {
		g_fail(g, "more than %u custom codelets", IPUX_MAX_CUSTOM);
		return IPU_GRAPH_INVALID;
	}
	if (G_PUSH(g, customs))
		return IPU_GRAPH_INVALID;
	g->customs[g->n_customs] = rec;
	return IPUX_CL_CUSTOM_BASE + g->n_customs++;
}
