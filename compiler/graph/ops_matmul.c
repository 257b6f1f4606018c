// SPDX-License-Identifier: MIT
/*
 * ops_matmul.c - a matmul partitioned over tiles in M, N and K.
 *
 * Tile (i, j, l) multiplies block A[i, l] by block B[l, j] into an f32
 * partial.  When K is split (kp > 1) the partials of block (i, j) are
 * exchanged to its owner tile (l = 0) and summed there by a REDUCE vertex,
 * the tree's single level; the owner then applies bias, activation and the
 * cast to the output dtype, and its rows are copied into C.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipu/codelet.h"
#include "ipu/ops.h"

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint64_t owner_bytes(uint64_t mb, uint64_t nb, uint64_t kb, uint32_t kp, uint32_t es)
{
	uint64_t b = (mb * kb + kb * nb) * es;	/* operand blocks */

	b += mb * nb * 4;			/* f32 result block */
	if (kp > 1)
		b += (uint64_t)kp * mb * nb * 4;	/* stacked partials */
	b += mb * nb * es + nb * 4;		/* output rows, bias */
	b += 6 * 16;				/* alignment of the pieces */
	return b;
}

int ipu_mm_plan(uint64_t M, uint64_t N, uint64_t K, uint32_t es, uint32_t ntiles,
		uint64_t budget, struct ipu_mm_plan *plan, char *err, size_t errlen)
{
	double best = -1;
	uint64_t least = UINT64_MAX;
	uint32_t mp, np, kp;

	if (!M || !N || !K || !ntiles) {
		snprintf(err, errlen, "matmul of [%llu,%llu] x [%llu,%llu] over %u tiles",
			 (unsigned long long)M, (unsigned long long)K, (unsigned long long)K,
			 (unsigned long long)N, ntiles);
		return -1;
	}
	for (mp = 1; mp <= ntiles && mp <= M; mp++) {
		uint64_t mb = cdiv(M, mp);

		if (cdiv(M, mb) != mp)
			continue;	/* same blocks as a smaller mp */
		for (np = 1; (uint64_t)mp * np <= ntiles && np <= N; np++) {
			uint64_t nb = cdiv(N, np);

			if (cdiv(N, nb) != np)
				continue;
			for (kp = 1; (uint64_t)mp * np * kp <= ntiles && kp <= K; kp++) {
				uint64_t kb = cdiv(K, kp), bytes, macs;
				double score;

				if (cdiv(K, kb) != kp)
					continue;
				bytes = owner_bytes(mb, nb, kb, kp, es);
				if (bytes < least)
					least = bytes;
				if (bytes > budget)
					continue;
				macs = mb * nb * kb;
				/* modelled cycles: compute, operand and partial exchange, reduce */
				score = (double)macs / (es == 2 ? 64.0 : 16.0) +
					(double)((mb * kb + kb * nb) * es) / 8.0 +
					(kp > 1 ? (double)(kp - 1) * mb * nb * 4 / 8.0 +
							  (double)kp * mb * nb / 2.0 + 600.0 : 0.0);
				if (best < 0 || score < best) {
					best = score;
					plan->mp = mp;
					plan->np = np;
					plan->kp = kp;
					plan->mb = (uint32_t)mb;
					plan->nb = (uint32_t)nb;
					plan->kb = (uint32_t)kb;
					plan->bytes_per_tile = bytes;
					plan->macs_per_tile = macs;
				}
			}
		}
	}
	if (best < 0) {
		snprintf(err, errlen,
			 "matmul [%llu,%llu] x [%llu,%llu] does not fit %u tiles: the best split needs %llu bytes on a tile, budget %llu",
			 (unsigned long long)M, (unsigned long long)K, (unsigned long long)K,
			 (unsigned long long)N, ntiles, (unsigned long long)least,
			 (unsigned long long)budget);
		return -1;
	}
	return 0;
}

struct blk {
	uint64_t m0, m1, n0, n1, k0, k1;
};

static void block(const struct ipu_mm_args *x, const struct ipu_mm_plan *p, uint32_t i,
		  uint32_t j, uint32_t l, struct blk *b)
{
	b->m0 = (uint64_t)i * p->mb;
	b->m1 = b->m0 + p->mb < x->M ? b->m0 + p->mb : x->M;
	b->n0 = (uint64_t)j * p->nb;
	b->n1 = b->n0 + p->nb < x->N ? b->n0 + p->nb : x->N;
	b->k0 = (uint64_t)l * p->kb;
	b->k1 = b->k0 + p->kb < x->K ? b->k0 + p->kb : x->K;
}

static ipu_tensor tile_tensor(struct ipu_graph *g, const char *base, const char *what,
			      uint32_t i, uint32_t j, uint32_t l, enum ipux_dtype dt,
			      uint64_t elems, uint32_t tile)
{
	char name[160];
	ipu_tensor t;

	snprintf(name, sizeof(name), "%s/%s[%u,%u,%u]", base, what, i, j, l);
	t = ipu_graph_add_tensor(g, name, dt, 1, &elems);
	if (t != IPU_GRAPH_INVALID && ipu_graph_map_tile(g, t, tile))
		return IPU_GRAPH_INVALID;
	return t;
}

ipu_tensor ipu_ops_matmul(struct ipu_graph *g, ipu_step seq, const struct ipu_mm_args *x,
			  struct ipu_mm_plan *plan_out)
{
	enum ipux_dtype dt = ipu_graph_tensor_dtype(g, x->a);
	uint32_t es = ipux_dtype_size(dt), tiles, tile_mem, i, j, l;
	const char *base = x->name ? x->name : "matmul";
	struct ipu_mm_plan p;
	ipu_tensor c;
	ipu_step xin, xpart, xout;
	uint32_t cs_mm, cs_red = IPU_GRAPH_INVALID, cs_epi = IPU_GRAPH_INVALID;
	uint64_t dims[2] = { x->M, x->N };
	char err[256];
	int need_epi;

	if (dt != IPUX_DT_F32 && dt != IPUX_DT_F16) {
		ipu_graph_fail(g, "%s: matmul needs f32 or f16 operands", base);
		return IPU_GRAPH_INVALID;
	}
	if (ipu_graph_tensor_elems(g, x->a) != x->M * x->K ||
	    (x->b != IPU_GRAPH_INVALID && (ipu_graph_tensor_elems(g, x->b) != x->K * x->N ||
					   ipu_graph_tensor_dtype(g, x->b) != dt)) ||
	    (x->b == IPU_GRAPH_INVALID && !x->b_data)) {
		ipu_graph_fail(g, "%s: A must be [%llu,%llu] and B [%llu,%llu] of the same dtype",
			       base, (unsigned long long)x->M, (unsigned long long)x->K,
			       (unsigned long long)x->K, (unsigned long long)x->N);
		return IPU_GRAPH_INVALID;
	}
	ipu_graph_target(g, &tiles, &tile_mem);
	if ((uint64_t)x->first_tile + x->ntiles > tiles || !x->ntiles) {
		ipu_graph_fail(g, "%s: tiles [%u, +%u) outside the %u-tile target", base,
			       x->first_tile, x->ntiles, tiles);
		return IPU_GRAPH_INVALID;
	}
	if (ipu_mm_plan(x->M, x->N, x->K, es, x->ntiles,
			x->budget ? x->budget : (uint64_t)tile_mem * 3 / 4, &p, err, sizeof(err))) {
		ipu_graph_fail(g, "%s: %s", base, err);
		return IPU_GRAPH_INVALID;
	}
	if (plan_out)
		*plan_out = p;
	c = ipu_graph_add_tensor(g, base, dt, 2, dims);
	xin = ipu_step_exchange(g);
	xpart = ipu_step_exchange(g);
	xout = ipu_step_exchange(g);
	cs_mm = ipu_graph_add_compute_set(g, base);
	if (p.kp > 1) {
		char n[160];

		snprintf(n, sizeof(n), "%s/reduce", base);
		cs_red = ipu_graph_add_compute_set(g, n);
	}
	need_epi = x->bias != IPU_GRAPH_INVALID || x->bias_data || x->act >= 0 || dt != IPUX_DT_F32;
	if (need_epi) {
		char n[160];

		snprintf(n, sizeof(n), "%s/epilogue", base);
		cs_epi = ipu_graph_add_compute_set(g, n);
	}
	for (i = 0; i < p.mp; i++) {
		for (j = 0; j < p.np; j++) {
			uint32_t owner = x->first_tile + (i * p.np + j) * p.kp;
			struct blk b0;
			uint64_t mbl, nbl, r;
			ipu_tensor acc, stack = IPU_GRAPH_INVALID, out;

			block(x, &p, i, j, 0, &b0);
			mbl = b0.m1 - b0.m0;
			nbl = b0.n1 - b0.n0;
			acc = tile_tensor(g, base, "acc", i, j, 0, IPUX_DT_F32, mbl * nbl, owner);
			if (p.kp > 1)
				stack = tile_tensor(g, base, "partials", i, j, 0, IPUX_DT_F32,
						    (uint64_t)p.kp * mbl * nbl, owner);
			for (l = 0; l < p.kp; l++) {
				uint32_t tile = owner + l;
				struct blk bl;
				uint64_t kbl;
				ipu_tensor ab, bb, part;
				struct ipu_slice ops[3];
				uint32_t prm[5];

				block(x, &p, i, j, l, &bl);
				kbl = bl.k1 - bl.k0;
				ab = tile_tensor(g, base, "a", i, j, l, dt, mbl * kbl, tile);
				bb = tile_tensor(g, base, "b", i, j, l, dt, kbl * nbl, tile);
				if (ab == IPU_GRAPH_INVALID || bb == IPU_GRAPH_INVALID)
					return IPU_GRAPH_INVALID;
				for (r = bl.m0; r < bl.m1; r++)
					ipu_exchange_add(g, xin,
							 (struct ipu_slice){ x->a, r * x->K + bl.k0, kbl },
							 (struct ipu_slice){ ab, (r - bl.m0) * kbl, kbl });
				if (x->b != IPU_GRAPH_INVALID) {
					for (r = bl.k0; r < bl.k1; r++)
						ipu_exchange_add(g, xin,
								 (struct ipu_slice){ x->b, r * x->N + bl.n0, nbl },
								 (struct ipu_slice){ bb, (r - bl.k0) * nbl, nbl });
				} else {
					uint8_t *blkdata = malloc(kbl * nbl * es);

					if (!blkdata) {
						ipu_graph_fail(g, "%s: out of memory", base);
						return IPU_GRAPH_INVALID;
					}
					for (r = bl.k0; r < bl.k1; r++)
						memcpy(blkdata + (r - bl.k0) * nbl * es,
						       (const uint8_t *)x->b_data + (r * x->N + bl.n0) * es,
						       nbl * es);
					ipu_graph_set_init(g, bb, blkdata, kbl * nbl * es);
					free(blkdata);
				}
				if (p.kp == 1) {
					ops[2] = (struct ipu_slice){ acc, 0, mbl * nbl };
				} else if (l == 0) {
					ops[2] = (struct ipu_slice){ stack, 0, mbl * nbl };
				} else {
					part = tile_tensor(g, base, "p", i, j, l, IPUX_DT_F32, mbl * nbl, tile);
					ops[2] = (struct ipu_slice){ part, 0, mbl * nbl };
					ipu_exchange_add(g, xpart, ops[2],
							 (struct ipu_slice){ stack, (uint64_t)l * mbl * nbl,
									     mbl * nbl });
				}
				ops[0] = (struct ipu_slice){ ab, 0, mbl * kbl };
				ops[1] = (struct ipu_slice){ bb, 0, kbl * nbl };
				prm[0] = 1;
				prm[1] = (uint32_t)mbl;
				prm[2] = (uint32_t)nbl;
				prm[3] = (uint32_t)kbl;
				prm[4] = 0;
				ipu_graph_add_vertex(g, cs_mm, IPUX_CL_MATMUL, ops, 3, prm, 5);
			}
			if (p.kp > 1) {
				struct ipu_slice ops[2] = { { stack, 0, (uint64_t)p.kp * mbl * nbl },
							    { acc, 0, mbl * nbl } };
				uint32_t prm[4] = { IPUX_RED_SUM, 1, p.kp, (uint32_t)(mbl * nbl) };

				ipu_graph_add_vertex(g, cs_red, IPUX_CL_REDUCE, ops, 2, prm, 4);
			}
			if (x->bias != IPU_GRAPH_INVALID || x->bias_data) {
				ipu_tensor bt = tile_tensor(g, base, "bias", i, j, 0, IPUX_DT_F32, nbl, owner);
				struct ipu_slice ops[3] = { { acc, 0, mbl * nbl }, { bt, 0, nbl },
							    { acc, 0, mbl * nbl } };
				uint32_t prm[8] = { IPUX_BIN_ADD, 2, (uint32_t)mbl, (uint32_t)nbl,
						    (uint32_t)nbl, 1, 0, 1 };

				if (x->bias_data)
					ipu_graph_set_init(g, bt, (const float *)x->bias_data + b0.n0,
							   nbl * 4);
				else
					ipu_exchange_add(g, xin, (struct ipu_slice){ x->bias, b0.n0, nbl },
							 (struct ipu_slice){ bt, 0, nbl });
				ipu_graph_add_vertex(g, cs_epi, IPUX_CL_BINARY, ops, 3, prm, 8);
			}
			if (x->act >= 0) {
				struct ipu_slice ops[2] = { { acc, 0, mbl * nbl }, { acc, 0, mbl * nbl } };
				uint32_t prm[1] = { (uint32_t)x->act };

				ipu_graph_add_vertex(g, cs_epi, IPUX_CL_UNARY, ops, 2, prm, 1);
			}
			out = acc;
			if (dt != IPUX_DT_F32) {
				struct ipu_slice ops[2];

				out = tile_tensor(g, base, "out", i, j, 0, dt, mbl * nbl, owner);
				ops[0] = (struct ipu_slice){ acc, 0, mbl * nbl };
				ops[1] = (struct ipu_slice){ out, 0, mbl * nbl };
				ipu_graph_add_vertex(g, cs_epi, IPUX_CL_CAST, ops, 2, NULL, 0);
			}
			for (r = b0.m0; r < b0.m1; r++) {
				ipu_graph_map(g, c, owner, r * x->N + b0.n0, r * x->N + b0.n1);
				ipu_exchange_add(g, xout, (struct ipu_slice){ out, (r - b0.m0) * nbl, nbl },
						 (struct ipu_slice){ c, r * x->N + b0.n0, nbl });
			}
		}
	}
	ipu_step_append(g, seq, xin);
	ipu_step_append(g, seq, ipu_step_execute(g, cs_mm));
	if (p.kp > 1) {
		ipu_step_append(g, seq, xpart);
		ipu_step_append(g, seq, ipu_step_execute(g, cs_red));
	}
	if (need_epi)
		ipu_step_append(g, seq, ipu_step_execute(g, cs_epi));
	ipu_step_append(g, seq, xout);
	return ipu_graph_error(g) ? IPU_GRAPH_INVALID : c;
}
