/* SPDX-License-Identifier: MIT */
/*
 * test_codelets_fuzz.c - check() as a security boundary.
 *
 * For every codelet a valid small vertex is mutated at random (a param set
 * to an interesting value or nudged, an operand count or dtype changed, an
 * operand or param dropped or added).  Whenever check() still accepts the
 * vertex, run() is executed on random data: it must return 0 (or
 * IPU_FAULT_INDEX for GATHER) and must not write outside its operands
 * (guard bytes) nor, in the ASan build, read outside them (the gaps are
 * poisoned).  check() must write a reason whenever it refuses.
 */
#include "cl_test.h"

#define FZ_CAP 2048u	/* elements of capacity behind every operand */
#define FZ_OPS 5

struct fz_vertex {
	uint32_t id;
	uint32_t nops;
	uint32_t dt[FZ_OPS];
	uint32_t count[FZ_OPS];
	uint32_t nparams;
	uint32_t p[IPUX_MAX_PARAMS];
};

#define F IPUX_DT_F32
#define H IPUX_DT_F16
#define I IPUX_DT_I32
#define U IPUX_DT_U8
#define L IPUX_DT_I64
#define E IPUX_DT_FP8_143

/* Valid seeds, one or more per codelet. */
static const struct fz_vertex seeds[] = {
	{ IPUX_CL_COPY, 2, { F, F }, { 7, 7 }, 0, { 0 } },
	{ IPUX_CL_FILL, 1, { H }, { 9 }, 1, { 0x3f800000 } },
	{ IPUX_CL_CAST, 2, { F, U }, { 9, 9 }, 0, { 0 } },
	{ IPUX_CL_UNARY, 2, { F, F }, { 10, 10 }, 3, { IPUX_UN_CLIP, 0xbf000000, 0x3f000000 } },
	{ IPUX_CL_UNARY, 2, { I, I }, { 10, 10 }, 1, { IPUX_UN_ABS } },
	{ IPUX_CL_BINARY, 3, { F, F, F }, { 12, 4, 12 }, 8,
	  { IPUX_BIN_ADD, 2, 3, 4, 4, 1, 0, 1 } },
	{ IPUX_CL_BINARY, 3, { I, I, U }, { 12, 12, 12 }, 8,
	  { IPUX_BIN_LESS, 2, 3, 4, 1, 3, 4, 1 } },
	{ IPUX_CL_WHERE, 4, { U, H, H, H }, { 4, 1, 12, 12 }, 9,
	  { 2, 3, 4, 0, 1, 0, 0, 4, 1 } },
	{ IPUX_CL_MATMUL, 3, { F, F, F }, { 24, 40, 30 }, 5, { 2, 3, 5, 4, 0 } },
	{ IPUX_CL_MATMUL, 3, { H, H, H }, { 12, 40, 30 }, 5,
	  { 2, 3, 5, 4, IPUX_MM_A_SHARED | IPUX_MM_TRANS_B | IPUX_MM_ACCUMULATE } },
	{ IPUX_CL_CONV2D, 4, { F, F, F, F }, { 144, 36, 32, 2 }, 17,
	  { 1, 4, 6, 6, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0 } },
	{ IPUX_CL_CONV2D, 3, { H, H, F }, { 50, 18, 36 }, 17,
	  { 2, 1, 5, 5, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1 } },
	{ IPUX_CL_REDUCE, 2, { F, F }, { 24, 8 }, 4, { IPUX_RED_LOG_SUM_EXP, 2, 3, 4 } },
	{ IPUX_CL_REDUCE, 2, { H, I }, { 24, 6 }, 4, { IPUX_RED_ARGMAX, 2, 4, 3 } },
	{ IPUX_CL_SOFTMAX, 2, { F, F }, { 24, 24 }, 4, { 2, 3, 4, 1 } },
	{ IPUX_CL_NORM, 4, { H, H, H, H }, { 12, 2, 2, 12 }, 5, { 3, 4, 0x3727c5ac, 1, 2 } },
	{ IPUX_CL_POOL2D, 2, { F, F }, { 50, 18 }, 15,
	  { 1, 2, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1 } },
	{ IPUX_CL_GATHER, 3, { F, I, F }, { 24, 2, 16 }, 4, { 2, 3, 4, 2 } },
	{ IPUX_CL_GATHER, 3, { U, L, U }, { 24, 5, 40 }, 4, { 2, 3, 4, 5 } },
	{ IPUX_CL_TRANSPOSE, 2, { L, L }, { 24, 24 }, 7, { 3, 2, 3, 4, 2, 0, 1 } },
	{ IPUX_CL_STRIDED_COPY, 2, { F, F }, { 10, 6 }, 6, { 2, 2, 3, 9, (uint32_t)-3, (uint32_t)-1 } },
	{ IPUX_CL_PAD, 2, { H, H }, { 6, 20 }, 9, { 2, 2, 3, 1, 1, 1, 1, 1, 0 } },
	{ IPUX_CL_PAD, 2, { I, I }, { 6, 6 }, 9, { 2, 2, 3, (uint32_t)-1, 1, 1, (uint32_t)-1, 0, 7 } },
	{ IPUX_CL_CUMSUM, 2, { I, I }, { 24, 24 }, 4, { 2, 3, 4, 3 } },
	{ IPUX_CL_TOPK, 3, { F, F, I }, { 24, 16, 16 }, 5, { 2, 3, 4, 2, 1 } },
	{ IPUX_CL_IOTA, 1, { L }, { 9 }, 2, { 5, (uint32_t)-2 } },
	{ IPUX_CL_CAST_FP8, 2, { H, E }, { 9, 9 }, 1, { (uint32_t)-3 } },
	{ IPUX_CL_CAST_FP8, 2, { E, F }, { 9, 9 }, 1, { 2 } },
	{ IPUX_CL_MATMUL_FP8, 3, { H, E, F }, { 24, 40, 30 }, 7,
	  { 2, 3, 5, 4, IPUX_MM_TRANS_B, 0, (uint32_t)-4 } },
	{ IPUX_CL_MATMUL_FP8, 3, { E, E, H }, { 12, 20, 30 }, 7,
	  { 2, 3, 5, 4, IPUX_MM_A_SHARED | IPUX_MM_B_SHARED | IPUX_MM_ACCUMULATE, 1, 0 } },
	{ IPUX_CL_CONV2D_FP8, 4, { F, E, F, H }, { 144, 36, 32, 2 }, 19,
	  { 1, 4, 6, 6, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0, 0, 5 } },
	{ IPUX_CL_CONV2D_FP8, 3, { E, E, H }, { 50, 18, 36 }, 19,
	  { 2, 1, 5, 5, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, (uint32_t)-2, 3 } },
	{ IPUX_CL_SAMPLE, 5, { H, L, F, L, L }, { 8, 8, 4, 6, 2 }, 2, { 2, 4 } },
};

static const uint32_t interesting[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 255, 256, 1000, 0x7fff, 0x8000,
	0xffff, 0x10000, 0x7fffffff, 0x80000000u, 0x80000001u, 0xfffffffeu,
	0xffffffffu, 0x40000000u, 0x3f800000u, 0xff800000u, 0x7fc00000u,
};

static uint32_t fz_interesting(struct ct_rng *r)
{
	return interesting[ct_next(r) % (sizeof(interesting) / sizeof(interesting[0]))];
}

static void fz_mutate(struct ct_rng *r, struct fz_vertex *v)
{
	uint32_t k;

	switch (ct_next(r) % 8) {
	case 0: /* a param to an interesting value */
	case 1:
		if (v->nparams)
			v->p[ct_next(r) % v->nparams] = fz_interesting(r);
		break;
	case 2: /* a param nudged */
		if (v->nparams) {
			k = (uint32_t)(ct_next(r) % v->nparams);
			v->p[k] += (uint32_t)ct_int(r, -2, 2);
		}
		break;
	case 3: /* a count changed (within the capacity) */
		if (v->nops) {
			k = (uint32_t)(ct_next(r) % v->nops);
			v->count[k] = ct_next(r) & 1 ? v->count[k] + (uint32_t)ct_int(r, -3, 3)
						     : (uint32_t)ct_int(r, 0, FZ_CAP);
			if (v->count[k] > FZ_CAP)
				v->count[k] = FZ_CAP;
		}
		break;
	case 4: /* a dtype changed (incl. invalid ones) */
		if (v->nops)
			v->dt[ct_next(r) % v->nops] = (uint32_t)ct_int(r, 0, 7);
		break;
	case 5: /* operand dropped or added */
		if (ct_next(r) & 1 && v->nops)
			v->nops--;
		else if (v->nops < FZ_OPS) {
			v->dt[v->nops] = (uint32_t)ct_int(r, 1, 6);
			v->count[v->nops] = (uint32_t)ct_int(r, 0, 64);
			v->nops++;
		}
		break;
	case 6: /* param dropped or added */
		if (ct_next(r) & 1 && v->nparams)
			v->nparams--;
		else if (v->nparams < IPUX_MAX_PARAMS)
			v->p[v->nparams++] = fz_interesting(r);
		break;
	default: /* rank-like first param */
		if (v->nparams)
			v->p[0] = (uint32_t)ct_int(r, 0, 8);
		break;
	}
}

TEST(mutated_vertices)
{
	struct ct_rng r = { 0xfeedbeef };
	struct ct_tile t;
	uint32_t it, accepted = 0, refused = 0, ran_bad = 0, nseeds;
	const uint32_t iters = 60000;

	nseeds = (uint32_t)(sizeof(seeds) / sizeof(seeds[0]));
	ct_init(&t, (size_t)FZ_OPS * (FZ_CAP * 8 + 2 * CT_GUARD + 64) + 4096);
	for (it = 0; it < iters; it++) {
		struct fz_vertex v = seeds[it % nseeds];
		uint32_t nm = it < nseeds ? 0 : (uint32_t)ct_int(&r, 1, 3), m, k;
		int rc;

		for (m = 0; m < nm; m++)
			fz_mutate(&r, &v);
		ct_reset(&t);
		for (k = 0; k < v.nops; k++) {
			/* full capacity allocated, then the (mutated) count */
			uint32_t op = ct_op(&t, IPUX_DT_I64, FZ_CAP);

			t.ops[op].dtype = (uint8_t)v.dt[k];
			t.ops[op].count = v.count[k];
		}
		for (k = 0; k < v.nparams; k++)
			ct_p(&t, v.p[k]);
		rc = ct_check(&t, v.id);
		if (rc) {
			refused++;
			if (!t.why[0] && ran_bad++ < 5)
				fprintf(stderr, "  id %u refused (%d) without a reason\n",
					v.id, rc);
			CHECK(rc < 0);
			continue;
		}
		accepted++;
		if (it < nseeds)
			CHECK(1);
		/* random data, including NaNs and huge integers */
		for (k = 0; k < v.nops; k++) {
			uint8_t *p = ct_ptr(&t, k);
			size_t b, n = (size_t)v.count[k] * ipux_dtype_size(v.dt[k]);

			for (b = 0; b < n; b++)
				p[b] = (uint8_t)ct_next(&r);
		}
		if (v.id == IPUX_CL_GATHER && v.nops == 3 && (it & 1))
			memset(ct_ptr(&t, 1), 0, (size_t)v.count[1] *
			       ipux_dtype_size(v.dt[1])); /* in-range indices */
		rc = ct_run(&t, v.id);
		if (!(rc == 0 || (rc == IPU_FAULT_INDEX && v.id == IPUX_CL_GATHER))) {
			if (ran_bad++ < 5) {
				fprintf(stderr, "  id %u accepted but run gave %d; params", v.id, rc);
				for (k = 0; k < v.nparams; k++)
					fprintf(stderr, " %u", v.p[k]);
				fprintf(stderr, "; ops");
				for (k = 0; k < v.nops; k++)
					fprintf(stderr, " %u:%u", v.dt[k], v.count[k]);
				fprintf(stderr, "\n");
			}
		}
	}
	/* every seed must have been accepted */
	CHECK(accepted >= nseeds);
	CHECK(refused > 0);
	CHECK_EQ_INT(ran_bad, 0);
	printf("# %u accepted, %u refused\n", accepted, refused);
	ct_free(&t);
}

TEST(seeds_valid)
{
	struct ct_tile t;
	uint32_t i, k;

	ct_init(&t, (size_t)FZ_OPS * (FZ_CAP * 8 + 2 * CT_GUARD + 64) + 4096);
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		ct_reset(&t);
		for (k = 0; k < seeds[i].nops; k++)
			ct_op(&t, seeds[i].dt[k], seeds[i].count[k]);
		for (k = 0; k < seeds[i].nparams; k++)
			ct_p(&t, seeds[i].p[k]);
		CHECK_MSG(ct_check(&t, seeds[i].id) == 0, "seed %u: %s", i, t.why);
	}
	ct_free(&t);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(seeds_valid);
	RUN(mutated_vertices);
	printf("# %d checks\n", th_g.checks);
	return TH_DONE();
}
