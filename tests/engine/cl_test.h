/* SPDX-License-Identifier: MIT */
/*
 * cl_test.h - a fake tile for codelet unit tests.
 *
 * A 64-byte aligned buffer stands for one tile's memory; operands are
 * carved out of it (each 64-byte aligned, with a guard gap of poison bytes
 * between them so that a write outside its region is caught), params are
 * appended, then the codelet's check() and run() are called as the engine
 * would.  Values are read and written as double through the dtype.
 */
#ifndef IPU_CL_TEST_H
#define IPU_CL_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/engine.h"
#include "ipu/half.h"
#include "harness.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CT_ASAN 1
#else
#define CT_ASAN 0
#endif

#define CT_GUARD 64u
#define CT_POISON 0xa5u

/* ------------------------------------------------------------ PRNG */

struct ct_rng {
	uint64_t s;
};

static inline uint64_t ct_next(struct ct_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* uniform in [lo, hi] (integers) */
static inline int64_t ct_int(struct ct_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(ct_next(r) % (uint64_t)(hi - lo + 1));
}

/* uniform double in [lo, hi) */
static inline double ct_unif(struct ct_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * (double)(ct_next(r) >> 11) * 0x1.0p-53;
}

static const uint32_t ct_odd_sizes[] = { 1, 2, 3, 5, 7, 8, 16, 17, 33, 65 };

static inline uint32_t ct_size(struct ct_rng *r)
{
	return ct_odd_sizes[ct_next(r) % (sizeof(ct_odd_sizes) /
					 sizeof(ct_odd_sizes[0]))];
}

/* ------------------------------------------------------------ tile */

struct ct_tile {
	uint8_t *mem;
	size_t size, used;
	struct ipux_operand ops[IPUX_MAX_OPERANDS];
	uint32_t nops;
	uint32_t params[IPUX_MAX_PARAMS + 8];
	uint32_t nparams;
	char why[256];
};

static inline void ct_init(struct ct_tile *t, size_t size)
{
	memset(t, 0, sizeof(*t));
	size = (size + 63) & ~(size_t)63;
	t->mem = aligned_alloc(64, size);
	if (!t->mem)
		abort();
	memset(t->mem, CT_POISON, size);
	t->size = size;
}

static inline void ct_free(struct ct_tile *t)
{
	free(t->mem);
	t->mem = NULL;
}

/* Start a new vertex on the same tile: forget operands, params, memory. */
static inline void ct_reset(struct ct_tile *t)
{
	t->nops = 0;
	t->nparams = 0;
	t->used = 0;
	memset(t->mem, CT_POISON, t->size);
	t->why[0] = 0;
}

static inline uint32_t ct_op(struct ct_tile *t, uint32_t dtype, uint32_t count)
{
	size_t bytes = (size_t)count * ipux_dtype_size(dtype);
	size_t off = t->used + CT_GUARD;

	off = (off + 63) & ~(size_t)63;
	if (off + bytes + CT_GUARD > t->size) {
		fprintf(stderr, "ct_op: tile too small (%zu + %zu > %zu)\n",
			off, bytes, t->size);
		abort();
	}
	t->ops[t->nops].offset = (uint32_t)off;
	t->ops[t->nops].count = count;
	t->ops[t->nops].dtype = (uint8_t)dtype;
	t->used = off + bytes;
	return t->nops++;
}

/* An operand that aliases an existing one (same region). */
static inline uint32_t ct_op_alias(struct ct_tile *t, uint32_t of)
{
	t->ops[t->nops] = t->ops[of];
	return t->nops++;
}

static inline void ct_p(struct ct_tile *t, uint32_t v)
{
	t->params[t->nparams++] = v;
}

static inline uint32_t ct_fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline void *ct_ptr(struct ct_tile *t, uint32_t op)
{
	return t->mem + t->ops[op].offset;
}

static inline struct ipu_vertex_ctx ct_ctx(struct ct_tile *t, int with_mem)
{
	struct ipu_vertex_ctx v;

	v.mem = with_mem ? t->mem : NULL;
	v.ops = t->ops;
	v.params = t->params;
	v.num_ops = t->nops;
	v.num_params = t->nparams;
	v.isa = IPU_ISA_AUTO;
	return v;
}

static inline int ct_check(struct ct_tile *t, uint32_t id)
{
	const struct ipu_codelet *c = ipu_codelet_get(id);
	struct ipu_vertex_ctx v = ct_ctx(t, 0);

	if (!c)
		return -9999;
	t->why[0] = 0;
	return c->check(&v, t->why, sizeof(t->why));
}

/* Guard gaps still hold the poison? */
static inline int ct_guards_ok(struct ct_tile *t)
{
	size_t pos = 0, i;
	uint32_t k;
	uint8_t *mark = calloc(t->size, 1);
	int ok = 1;

	for (k = 0; k < t->nops; k++) {
		size_t b = t->ops[k].offset;
		size_t e = b + (size_t)t->ops[k].count *
				       ipux_dtype_size(t->ops[k].dtype);

		if (e > t->size)
			continue;
		for (i = b; i < e; i++)
			mark[i] = 1;
	}
	for (pos = 0; pos < t->size; pos++)
		if (!mark[pos] && t->mem[pos] != CT_POISON) {
			fprintf(stderr, "  write outside operands at byte %zu\n",
				pos);
			ok = 0;
			break;
		}
	free(mark);
	return ok;
}

/*
 * In the ASan build, make every byte of the tile outside the operand
 * regions unaddressable while run() executes, so that a read (not only a
 * write) outside the operands is reported.
 */
static inline void ct_poison_gaps(struct ct_tile *t, int on)
{
#if CT_ASAN
	uint8_t *mark;
	size_t i, j;
	uint32_t k;

	if (!on) {
		ASAN_UNPOISON_MEMORY_REGION(t->mem, t->size);
		return;
	}
	mark = calloc(t->size, 1);
	for (k = 0; k < t->nops; k++) {
		size_t b = t->ops[k].offset;
		size_t e = b + (size_t)t->ops[k].count *
				       ipux_dtype_size(t->ops[k].dtype);

		for (i = b; i < e && i < t->size; i++)
			mark[i] = 1;
	}
	for (i = 0; i < t->size; i = j) {
		for (j = i; j < t->size && mark[j] == mark[i]; j++)
			;
		if (!mark[i])
			ASAN_POISON_MEMORY_REGION(t->mem + i, j - i);
	}
	free(mark);
#else
	(void)t;
	(void)on;
#endif
}

/* check() must accept, then run() returns its result; guards verified. */
static inline int ct_run(struct ct_tile *t, uint32_t id)
{
	const struct ipu_codelet *c = ipu_codelet_get(id);
	struct ipu_vertex_ctx v = ct_ctx(t, 1);
	int r = ct_check(t, id);

	if (r) {
		fprintf(stderr, "  check refused: %d %s\n", r, t->why);
		return -10000 + r;
	}
	(void)c->cost(&v);
	ct_poison_gaps(t, 1);
	r = c->run(&v);
	ct_poison_gaps(t, 0);
	if (!ct_guards_ok(t))
		return -20000;
	return r;
}

/* ------------------------------------------------------------ values */

static inline double ct_round_dt(double x, uint32_t dt)
{
	switch (dt) {
	case IPUX_DT_F32: return (float)x;
	case IPUX_DT_F16: return ipu_f16_to_f32(ipu_f32_to_f16((float)x));
	default: return x;
	}
}

static inline double ct_get(struct ct_tile *t, uint32_t op, size_t i)
{
	uint8_t *p = ct_ptr(t, op);

	switch (t->ops[op].dtype) {
	case IPUX_DT_F32: return ((float *)p)[i];
	case IPUX_DT_F16: return ipu_f16_to_f32(((uint16_t *)p)[i]);
	case IPUX_DT_I32: return ((int32_t *)p)[i];
	case IPUX_DT_U8: return p[i];
	case IPUX_DT_I8: return (int8_t)p[i];
	case IPUX_DT_I64: return (double)((int64_t *)p)[i];
	default: abort();
	}
}

static inline void ct_set(struct ct_tile *t, uint32_t op, size_t i, double x)
{
	uint8_t *p = ct_ptr(t, op);

	switch (t->ops[op].dtype) {
	case IPUX_DT_F32: ((float *)p)[i] = (float)x; break;
	case IPUX_DT_F16: ((uint16_t *)p)[i] = ipu_f32_to_f16((float)x); break;
	case IPUX_DT_I32: ((int32_t *)p)[i] = (int32_t)x; break;
	case IPUX_DT_U8: p[i] = (uint8_t)x; break;
	case IPUX_DT_I8: p[i] = (uint8_t)(int8_t)x; break;
	case IPUX_DT_I64: ((int64_t *)p)[i] = (int64_t)x; break;
	default: abort();
	}
}

/* Fill operand op with uniform random values in [lo, hi) (ints rounded). */
static inline void ct_fill_rand(struct ct_tile *t, struct ct_rng *r, uint32_t op,
			 double lo, double hi)
{
	size_t i;
	uint32_t dt = t->ops[op].dtype;

	for (i = 0; i < t->ops[op].count; i++) {
		double x = ct_unif(r, lo, hi);

		if (!(dt == IPUX_DT_F32 || dt == IPUX_DT_F16))
			x = floor(x);
		ct_set(t, op, i, x);
	}
}

/* Is got close to the double reference want for dtype dt? */
static inline int ct_close(double got, double want, uint32_t dt, double rtol,
		    double atol)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	if (dt == IPUX_DT_F16) {
		double w = ct_round_dt(want, IPUX_DT_F16);

		if (isinf(w))
			return isinf(got) || fabs(got) >= 65504;
		return fabs(got - w) <= atol + rtol * fabs(w) +
					       fabs(w - want);
	}
	if (dt == IPUX_DT_F32)
		return fabs(got - want) <= atol + rtol * fabs(want);
	return got == want;
}

/* Default tolerances per dtype. */
static inline double ct_rtol(uint32_t dt)
{
	return dt == IPUX_DT_F16 ? 2e-3 : dt == IPUX_DT_F32 ? 2e-6 : 0;
}

static inline double ct_atol(uint32_t dt)
{
	return dt == IPUX_DT_F16 ? 1e-4 : dt == IPUX_DT_F32 ? 1e-7 : 0;
}

/*
 * Compare operand op against want[0..count): returns the number of
 * mismatches and prints the first few.
 */
static inline int ct_compare(struct ct_tile *t, uint32_t op, const double *want,
		      double rtol, double atol, const char *what)
{
	size_t i, n = t->ops[op].count;
	int bad = 0;

	for (i = 0; i < n; i++) {
		double g = ct_get(t, op, i);

		if (!ct_close(g, want[i], t->ops[op].dtype, rtol, atol)) {
			if (bad < 4)
				fprintf(stderr,
					"  %s: [%zu] got %.9g want %.9g\n",
					what, i, g, want[i]);
			bad++;
		}
	}
	return bad;
}

static inline double *ct_dalloc(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));

	if (!p)
		abort();
	return p;
}


/* ------------------------------------------------------------ check() */

#define CT_EXPECT(t, id, code)                                              \
	do {                                                                \
		int ct_r_ = ct_check((t), (id));                            \
		CHECK_MSG(ct_r_ == (code), "check = %d (%s), want %s",      \
			  ct_r_, (t)->why, #code);                          \
	} while (0)

/*
 * The vertex in t is good: check() accepts it; one operand fewer or more,
 * one param fewer, operand dt_op of dtype bad_dt, and operand shape_op one
 * element longer are each refused with their code (and a reason).
 */
#define CT_REJECTS(t, id, dt_op, bad_dt, shape_op)                          \
	do {                                                                \
		uint8_t ct_sdt_;                                            \
		CT_EXPECT(t, id, 0);                                        \
		(t)->nops--;                                                \
		CT_EXPECT(t, id, IPUX_E_OPERAND_COUNT);                     \
		CHECK((t)->why[0] != 0);                                    \
		(t)->ops[(t)->nops + 1] = (t)->ops[0];                      \
		(t)->nops += 2;                                             \
		CT_EXPECT(t, id, IPUX_E_OPERAND_COUNT);                     \
		(t)->nops--;                                                \
		(t)->nparams--;                                             \
		CT_EXPECT(t, id, IPUX_E_PARAM_COUNT);                       \
		(t)->nparams++;                                             \
		ct_sdt_ = (t)->ops[dt_op].dtype;                            \
		(t)->ops[dt_op].dtype = (uint8_t)(bad_dt);                  \
		CT_EXPECT(t, id, IPUX_E_OPERAND_TYPE);                      \
		(t)->ops[dt_op].dtype = ct_sdt_;                            \
		(t)->ops[shape_op].count++;                                 \
		CT_EXPECT(t, id, IPUX_E_OPERAND_SHAPE);                     \
		(t)->ops[shape_op].count--;                                 \
		CT_EXPECT(t, id, 0);                                        \
	} while (0)

#endif /* IPU_CL_TEST_H */
