// SPDX-License-Identifier: MIT
/*
 * ipu_run_group.c - what a split model's IPUs did over the whole ipu-run
 * (first request, warm-up, latency and throughput runs): each link's
 * transfers, bytes and modelled cycles, and the group's modelled clock,
 * the IPUs overlapped against one request after the other.  On kernel
 * devices the links are the devices' own: each IPU's link bytes and
 * modelled cycles as the devices counted them, no modelled clock (the
 * devices trace no steps).
 */
#include <stdio.h>

#include "cli.h"
#include "ipu_run_group.h"

static void device_links_text(struct ipu_group *g)
{
	printf("IPU group of %u kernel devices: the links are the devices' own\n", ipu_group_size(g));
	for (uint32_t k = 0; k < ipu_group_size(g); k++) {
		struct ipu_link_counters c;
		struct ipu_device_info info;

		if (ipu_group_ipu_links(g, k, &c) || ipu_info(ipu_group_device(g, k), &info))
			continue;
		printf("IPU %u (%s): link bytes %llu out, %llu in, %llu modelled cycles\n", k, info.name,
		       (unsigned long long)c.out_bytes, (unsigned long long)c.in_bytes,
		       (unsigned long long)c.cycles);
	}
}

static json_t *device_links_json(struct ipu_group *g)
{
	json_t *ipus = json_array(), *j;
	uint64_t bytes = 0;

	if (!ipus)
		return NULL;
	for (uint32_t k = 0; k < ipu_group_size(g); k++) {
		struct ipu_link_counters c;
		struct ipu_device_info info;

		if (ipu_group_ipu_links(g, k, &c) || ipu_info(ipu_group_device(g, k), &info))
			continue;
		bytes += c.out_bytes;
		json_array_append_new(ipus, json_pack("{s:i,s:s,s:I,s:I,s:I}", "ipu", (int)k, "device",
						      info.path, "link_out_bytes", (json_int_t)c.out_bytes,
						      "link_in_bytes", (json_int_t)c.in_bytes,
						      "link_modelled_cycles", (json_int_t)c.cycles));
	}
	j = json_pack("{s:i,s:b,s:I,s:o}", "ipus", (int)ipu_group_size(g), "device_links", 1,
		      "link_bytes", (json_int_t)bytes, "per_ipu", ipus);
	return j;
}

void group_report_text(struct ipurt_runner *r)
{
	struct ipu_group *g = ipurt_runner_group(r);
	const struct ipuef_group *gt = ipuef_metadata(ipurt_runner_file(r))->group;
	uint64_t pipe = 0, serial = 0, n;

	if (!g || !gt)
		return;
	if (ipu_group_device_links(g)) {
		device_links_text(g);
		return;
	}
	n = ipu_group_modelled(g, &pipe, &serial, NULL);
	printf("IPU group of %u: %llu requests, modelled %llu cycles with the IPUs overlapped, %llu one after the other (%.2fx)\n",
	       ipu_group_size(g), (unsigned long long)n, (unsigned long long)pipe,
	       (unsigned long long)serial, pipe ? (double)serial / (double)pipe : 0.0);
	for (uint32_t i = 0; i < ipu_group_num_links(g) && i < gt->num_links; i++) {
		struct ipu_link_stats st;
		char sn[256];

		if (ipu_group_link_stats(g, i, &st))
			continue;
		printf("link %s IPU %u -> IPU %u: %llu transfers, %llu bytes, %llu modelled cycles\n",
		       cli_safe(gt->links[i].name, sn, sizeof(sn)), st.src_ipu, st.dst_ipu,
		       (unsigned long long)st.transfers, (unsigned long long)st.bytes,
		       (unsigned long long)st.cycles);
	}
}

json_t *group_report_json(struct ipurt_runner *r)
{
	struct ipu_group *g = ipurt_runner_group(r);
	const struct ipuef_group *gt = ipuef_metadata(ipurt_runner_file(r))->group;
	uint64_t pipe = 0, serial = 0, n, bytes = 0, transfers = 0;
	json_t *links, *j;

	if (!g || !gt)
		return NULL;
	if (ipu_group_device_links(g))
		return device_links_json(g);
	links = json_array();
	if (!links)
		return NULL;
	n = ipu_group_modelled(g, &pipe, &serial, NULL);
	for (uint32_t i = 0; i < ipu_group_num_links(g) && i < gt->num_links; i++) {
		struct ipu_link_stats st;

		if (ipu_group_link_stats(g, i, &st))
			continue;
		bytes += st.bytes;
		transfers += st.transfers;
		json_array_append_new(links, json_pack("{s:s,s:i,s:i,s:I,s:I,s:I}", "name",
						       gt->links[i].name, "src_ipu", (int)st.src_ipu,
						       "dst_ipu", (int)st.dst_ipu, "transfers",
						       (json_int_t)st.transfers, "bytes",
						       (json_int_t)st.bytes, "modelled_cycles",
						       (json_int_t)st.cycles));
	}
	j = json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:o}", "ipus", (int)ipu_group_size(g), "requests",
		      (json_int_t)n, "modelled_cycles_pipelined", (json_int_t)pipe,
		      "modelled_cycles_sequential", (json_int_t)serial, "link_transfers",
		      (json_int_t)transfers, "link_bytes", (json_int_t)bytes, "links", links);
	return j;
}
