// SPDX-License-Identifier: MIT
/*
 * ipuef-dump - print what an .ipuef model file holds (like popef_dump):
 * blobs, target, programs, anchors, tensor data and producer information.
 * With --json the same as one JSON object, for scripts.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ipu/ipuef.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ipuef-dump [--json] FILE.ipuef\n"
		"\n"
		"Print the blobs, target requirements, programs, anchors (name,\n"
		"dtype, shape, direction, batch dimension), device-resident states\n"
		"(name, dtype, shape, initial value, tile regions), tensor data and\n"
		"producer information of a model file; for a model split over a\n"
		"group of IPUs, each IPU (its executable and streams) and the links\n"
		"between them (tensor, sender and receiver streams, bytes).  The file is fully\n"
		"validated first; a malformed file is reported and exit status is 1.\n"
		"\n"
		"  --json   one JSON object instead of text (names escaped as JSON)\n"
		"  --help, --version   this text; the version\n"
		"\n"
		"FILE may be a pipe or /dev/stdin: it is read once.  Names are printed\n"
		"with control characters escaped (\\xNN).\n"
		"Exit status: 0 done, 1 the file is malformed or unreadable, 2 bad\n"
		"command line.\n");
}

static const char *dir_name(uint32_t d)
{
	return d == IPUEF_INPUT ? "input" : "output";
}

static const char *kind_name(uint32_t k)
{
	switch (k) {
	case IPUEF_ANCHOR_TENSOR_DATA: return "tensor-data";
	case IPUEF_ANCHOR_INDEX: return "index";
	}
	return "user";
}

static const char *prog_name(const struct ipuef_metadata *m, uint32_t idx)
{
	for (uint32_t i = 0; i < m->num_programs; i++)
		if (m->programs[i].index == idx)
			return m->programs[i].name;
	return "?";
}

static void print_shape(const uint64_t *dims, uint32_t rank)
{
	printf("[");
	for (uint32_t i = 0; i < rank; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
	printf("]");
}

/* Names as they may be shown on a terminal (control characters escaped). */
#define S(x) cli_safe((x), sbuf, sizeof(sbuf))
#define S2(x) cli_safe((x), sbuf2, sizeof(sbuf2))

static void dump_text(const char *path, const struct ipuef_file *f)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	char sbuf[4 * IPUEF_MAX_NAME + 1], sbuf2[4 * IPUEF_MAX_NAME + 1];
	uint16_t major, minor;
	size_t exe_len;

	ipuef_version(f, &major, &minor);
	ipuef_executable(f, &exe_len);
	printf("File: %s\n", S(path));
	printf("Format: .ipuef %u.%u, %llu bytes, %u blobs, checksum 0x%08x\n",
	       major, minor, (unsigned long long)ipuef_file_size(f),
	       ipuef_num_blobs(f), ipuef_checksum(f));
	printf("\nBlobs:\n  %-3s %-11s %-4s %10s %12s  %-10s  %s\n", "#",
	       "type", "ver", "offset", "size", "crc", "name");
	for (uint32_t i = 0; i < ipuef_num_blobs(f); i++) {
		const struct ipuef_blob_info *b = ipuef_blob(f, i);

		printf("  %-3u %-11s %-4u %10llu %12llu  0x%08x  %s\n", i,
		       ipuef_blob_type_name(b->type), b->version,
		       (unsigned long long)b->offset,
		       (unsigned long long)b->size, b->crc,
		       b->name ? S(b->name) : "");
	}
	printf("\nMetadata:\n");
	printf("  Target:            %s, %u tiles, %u bytes per tile\n",
	       S(m->ipu_version), m->num_tiles, m->tile_mem);
	printf("  Executable format: %u.%u (%zu bytes)\n", m->exe_format_major,
	       m->exe_format_minor, exe_len);
	printf("  Batch size:        %u\n", m->batch_size);
	printf("\nPrograms:\n");
	for (uint32_t i = 0; i < m->num_programs; i++)
		printf("  %-3u %s\n", m->programs[i].index, S(m->programs[i].name));
	printf("\nAnchors:\n");
	for (uint32_t i = 0; i < m->num_anchors; i++) {
		const struct ipuef_anchor *a = &m->anchors[i];

		printf("  %s\n    %s %s ", S(a->name), dir_name(a->direction),
		       ipurt_dtype_name(a->dtype));
		print_shape(a->dims, a->rank);
		printf(" (%llu bytes), ",
		       (unsigned long long)ipuef_anchor_bytes(a));
		if (a->batch_dim == IPUEF_NO_BATCH_DIM)
			printf("no batch dim");
		else
			printf("batch dim %u", a->batch_dim);
		if (m->group) {
			uint32_t ls, k = ipuef_anchor_ipu(m, a, &ls);

			printf(", %s, IPU %u stream %u, programs:", kind_name(a->kind), k, ls);
		} else {
			printf(", %s, stream %u, programs:", kind_name(a->kind),
			       a->stream_id);
		}
		for (uint32_t b = 0; b < IPUEF_MAX_PROGRAMS; b++)
			if (a->programs & (1ull << b))
				printf(" %s", S(prog_name(m, b)));
		printf("\n");
	}
	if (m->group) {
		const struct ipuef_group *g = m->group;

		printf("\nIPUs (a group of %u, %s):\n", g->num_ipus,
		       g->pipelined ? "pipelined" : "not pipelined");
		for (uint32_t k = 0; k < g->num_ipus; k++) {
			size_t el = 0;

			ipuef_group_executable(f, k, &el);
			printf("  %-3u executable %zu bytes, %u streams\n", k, el, g->num_streams[k]);
		}
		printf("\nLinks:\n");
		for (uint32_t i = 0; i < g->num_links; i++) {
			const struct ipuef_link *l = &g->links[i];

			printf("  %s\n    IPU %u stream %u -> IPU %u stream %u, %llu bytes\n",
			       S(l->name), l->src_ipu, l->src_stream, l->dst_ipu, l->dst_stream,
			       (unsigned long long)l->bytes);
		}
	}
	if (m->num_states) {
		printf("\nStates (device-resident, kept from run to run):\n");
		for (uint32_t i = 0; i < m->num_states; i++) {
			const struct ipuef_state *st = &m->states[i];

			printf("  %s\n    %s ", S(st->name), ipurt_dtype_name(st->dtype));
			print_shape(st->dims, st->rank);
			printf(" (%llu bytes), %s, write stream %u, read stream %u, %u region%s:",
			       (unsigned long long)ipuef_state_bytes(st),
			       st->init == IPUEF_STATE_INIT_DATA ? "initial value from tensor data"
								 : "starts as zeros",
			       st->write_stream, st->read_stream, st->num_regions,
			       st->num_regions == 1 ? "" : "s");
			for (uint32_t r = 0; r < st->num_regions; r++)
				printf(" tile %u [%u, +%u)", st->regions[r].tile,
				       st->regions[r].offset, st->regions[r].bytes);
			printf("\n");
		}
	}
	if (ipuef_num_tensors(f)) {
		printf("\nTensor data:\n");
		for (uint32_t i = 0; i < ipuef_num_tensors(f); i++) {
			const struct ipuef_tensor *t = ipuef_tensor(f, i);

			printf("  %s %s ", S(t->name), ipurt_dtype_name(t->dtype));
			print_shape(t->dims, t->rank);
			printf(" (%llu bytes)%s\n", (unsigned long long)t->size,
			       t->flags & IPUEF_TENSOR_FROZEN ? " frozen" : "");
		}
	}
	if (ipuef_num_opaques(f)) {
		printf("\nOpaque:\n");
		for (uint32_t i = 0; i < ipuef_num_opaques(f); i++) {
			const struct ipuef_opaque *o = ipuef_opaque(f, i);

			printf("  %s %s (%llu bytes)\n", S(o->name), S2(o->version),
			       (unsigned long long)o->size);
		}
	}
}

#undef S
#undef S2

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], min, len;

	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		len = 2, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		len = 3, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		len = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	return c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ? 0 : len;
}

/*
 * A JSON string: quotes, backslashes and control characters escaped.
 * Names from the file are valid UTF-8 (the reader checks); the file path
 * may not be, and its invalid bytes become U+FFFD so the output stays JSON.
 */
static void jstr(const char *str)
{
	const unsigned char *p = (const unsigned char *)str;
	size_t n = strlen(str);

	putchar('"');
	while (n) {
		size_t k;

		switch (*p) {
		case '"': fputs("\\\"", stdout); break;
		case '\\': fputs("\\\\", stdout); break;
		case '\n': fputs("\\n", stdout); break;
		case '\t': fputs("\\t", stdout); break;
		case '\r': fputs("\\r", stdout); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				printf("\\u%04x", *p);
				break;
			}
			k = utf8_len(p, n);
			if (!k) {
				fputs("\\ufffd", stdout);
				break;
			}
			fwrite(p, 1, k, stdout);
			p += k;
			n -= k;
			continue;
		}
		p++;
		n--;
	}
	putchar('"');
}

static void jshape(const uint64_t *dims, uint32_t rank)
{
	printf("[");
	for (uint32_t i = 0; i < rank; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)dims[i]);
	printf("]");
}

static void dump_json(const char *path, const struct ipuef_file *f)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	uint16_t major, minor;
	size_t exe_len;

	ipuef_version(f, &major, &minor);
	ipuef_executable(f, &exe_len);
	printf("{\"file\":");
	jstr(path);
	printf(",\"version\":\"%u.%u\",\"size\":%llu,\"checksum\":\"0x%08x\"",
	       major, minor, (unsigned long long)ipuef_file_size(f),
	       ipuef_checksum(f));
	printf(",\"blobs\":[");
	for (uint32_t i = 0; i < ipuef_num_blobs(f); i++) {
		const struct ipuef_blob_info *b = ipuef_blob(f, i);

		printf("%s{\"type\":", i ? "," : "");
		jstr(ipuef_blob_type_name(b->type));
		printf(",\"version\":%u,\"offset\":%llu,\"size\":%llu,\"crc\":\"0x%08x\"",
		       b->version, (unsigned long long)b->offset,
		       (unsigned long long)b->size, b->crc);
		if (b->name) {
			printf(",\"name\":");
			jstr(b->name);
		}
		printf("}");
	}
	printf("],\"metadata\":{\"exe_format\":\"%u.%u\",\"executable_size\":%zu,\"ipu_version\":",
	       m->exe_format_major, m->exe_format_minor, exe_len);
	jstr(m->ipu_version);
	printf(",\"num_tiles\":%u,\"tile_mem\":%u,\"batch_size\":%u,\"programs\":[",
	       m->num_tiles, m->tile_mem, m->batch_size);
	for (uint32_t i = 0; i < m->num_programs; i++) {
		printf("%s{\"name\":", i ? "," : "");
		jstr(m->programs[i].name);
		printf(",\"index\":%u}", m->programs[i].index);
	}
	printf("],\"anchors\":[");
	for (uint32_t i = 0; i < m->num_anchors; i++) {
		const struct ipuef_anchor *a = &m->anchors[i];
		int first = 1;

		printf("%s{\"name\":", i ? "," : "");
		jstr(a->name);
		printf(",\"dtype\":\"%s\",\"shape\":", ipurt_dtype_name(a->dtype));
		jshape(a->dims, a->rank);
		printf(",\"bytes\":%llu,\"direction\":\"%s\",\"kind\":\"%s\",\"batch_dim\":",
		       (unsigned long long)ipuef_anchor_bytes(a),
		       dir_name(a->direction), kind_name(a->kind));
		if (a->batch_dim == IPUEF_NO_BATCH_DIM)
			printf("null");
		else
			printf("%u", a->batch_dim);
		printf(",\"stream_id\":%u", a->stream_id);
		if (m->group) {
			uint32_t ls, k = ipuef_anchor_ipu(m, a, &ls);

			printf(",\"ipu\":%u,\"ipu_stream\":%u", k, ls);
		}
		printf(",\"programs\":[");
		for (uint32_t b = 0; b < IPUEF_MAX_PROGRAMS; b++)
			if (a->programs & (1ull << b)) {
				printf("%s", first ? "" : ",");
				jstr(prog_name(m, b));
				first = 0;
			}
		printf("]}");
	}
	printf("],\"states\":[");
	for (uint32_t i = 0; i < m->num_states; i++) {
		const struct ipuef_state *st = &m->states[i];

		printf("%s{\"name\":", i ? "," : "");
		jstr(st->name);
		printf(",\"dtype\":\"%s\",\"shape\":", ipurt_dtype_name(st->dtype));
		jshape(st->dims, st->rank);
		printf(",\"bytes\":%llu,\"init\":\"%s\",\"write_stream\":%u,\"read_stream\":%u,\"regions\":[",
		       (unsigned long long)ipuef_state_bytes(st),
		       st->init == IPUEF_STATE_INIT_DATA ? "tensor-data" : "zeros",
		       st->write_stream, st->read_stream);
		for (uint32_t r = 0; r < st->num_regions; r++)
			printf("%s{\"tile\":%u,\"offset\":%u,\"bytes\":%u}", r ? "," : "",
			       st->regions[r].tile, st->regions[r].offset, st->regions[r].bytes);
		printf("]}");
	}
	printf("]");
	if (m->group) {
		const struct ipuef_group *g = m->group;

		printf(",\"group\":{\"pipelined\":%s,\"micro_batches\":%u,\"ipus\":[",
		       g->pipelined ? "true" : "false", g->micro_batches);
		for (uint32_t k = 0; k < g->num_ipus; k++) {
			size_t el = 0;

			ipuef_group_executable(f, k, &el);
			printf("%s{\"ipu\":%u,\"executable_size\":%zu,\"streams\":%u}", k ? "," : "", k,
			       el, g->num_streams[k]);
		}
		printf("],\"links\":[");
		for (uint32_t i = 0; i < g->num_links; i++) {
			const struct ipuef_link *l = &g->links[i];

			printf("%s{\"name\":", i ? "," : "");
			jstr(l->name);
			printf(",\"src_ipu\":%u,\"src_stream\":%u,\"dst_ipu\":%u,\"dst_stream\":%u,\"bytes\":%llu}",
			       l->src_ipu, l->src_stream, l->dst_ipu, l->dst_stream,
			       (unsigned long long)l->bytes);
		}
		printf("]}");
	}
	printf("},\"tensors\":[");
	for (uint32_t i = 0; i < ipuef_num_tensors(f); i++) {
		const struct ipuef_tensor *t = ipuef_tensor(f, i);

		printf("%s{\"name\":", i ? "," : "");
		jstr(t->name);
		printf(",\"dtype\":\"%s\",\"shape\":", ipurt_dtype_name(t->dtype));
		jshape(t->dims, t->rank);
		printf(",\"bytes\":%llu,\"frozen\":%s}",
		       (unsigned long long)t->size,
		       t->flags & IPUEF_TENSOR_FROZEN ? "true" : "false");
	}
	printf("],\"opaques\":[");
	for (uint32_t i = 0; i < ipuef_num_opaques(f); i++) {
		const struct ipuef_opaque *o = ipuef_opaque(f, i);

		printf("%s{\"name\":", i ? "," : "");
		jstr(o->name);
		printf(",\"version\":");
		jstr(o->version);
		printf(",\"bytes\":%llu}", (unsigned long long)o->size);
	}
	printf("]}\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	struct ipuef_file *f;
	char err[512];
	int json = 0, rc, c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': usage(stdout); return CLI_EXIT_OK;
		case 'v': cli_print_version("ipuef-dump"); return CLI_EXIT_OK;
		default:
			fprintf(stderr, "ipuef-dump: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, optind == argc ? "ipuef-dump: which file? (usage: ipuef-dump [--json] FILE.ipuef)\n"
					      : "ipuef-dump: one file at a time\n");
		return CLI_EXIT_USAGE;
	}
	path = argv[optind];
	rc = ipuef_open(path, &f, err, sizeof(err));
	if (rc) {
		/* I/O messages already name the file. */
		if (rc == IPUEF_E_IO)
			fprintf(stderr, "ipuef-dump: %s (%s)\n", err,
				ipu_err_name(rc));
		else
			fprintf(stderr, "ipuef-dump: %s: %s (%s)\n", path,
				err, ipu_err_name(rc));
		return CLI_EXIT_FAILURE;
	}
	if (json)
		dump_json(path, f);
	else
		dump_text(path, f);
	ipuef_close(f);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "ipuef-dump: write error\n");
		return 1;
	}
	return 0;
}
