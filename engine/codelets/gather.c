/* SPDX-License-Identifier: MIT */
/*
 * gather.c - GATHER: out[o][t][:] = data[o][indices[t]][:].
 *
 * Indices are data: each one is read once into a local, normalised and
 * range-checked before it is used; an index outside [-len, len) stops the
 * vertex with IPU_FAULT_INDEX (out is then partly written).
 */
#include "cl_opt.h"
#include "cl_common.h"

static int gather_check(const struct ipu_vertex_ctx *v, char *why, size_t len)
{
	const uint32_t *p;
	uint64_t n, nout;
	uint32_t idt;
	int r = cl_check_counts(v, "GATHER", 3, 3, 4, 4, why, len);

	if (r)
		return r;
	p = v->params;
	if (!cl_is_valid_dt(v->ops[0].dtype))
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "GATHER: data has invalid dtype %u",
			      v->ops[0].dtype);
	idt = v->ops[1].dtype;
	if (idt != IPUX_DT_I32 && idt != IPUX_DT_I64)
		return ipu_errorf(why, len, IPUX_E_OPERAND_TYPE,
			      "GATHER: indices is %s, expected I32 or I64",
			      cl_dt_name(idt));
	r = cl_check_same_dtype(v, 0, 2, "GATHER", "data", "out", why, len);
	if (r)
		return r;
	r = cl_check_dims(p, 3, &n, "GATHER", "outer*len*inner", why, len);
	if (r)
		return r;
	if (p[3] == 0)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE, "GATHER: nidx is 0");
	nout = (uint64_t)p[0] * p[3];
	if (nout > UINT32_MAX || (nout *= p[2]) > UINT32_MAX)
		return ipu_errorf(why, len, IPUX_E_PARAM_VALUE,
			      "GATHER: out would exceed 2^32-1 elements");
	r = cl_check_count(v, 0, n, "GATHER", "data", "outer*len*inner", why,
			   len);
	if (!r)
		r = cl_check_count(v, 1, p[3], "GATHER", "indices", "nidx", why,
				   len);
	if (!r)
		r = cl_check_count(v, 2, nout, "GATHER", "out",
				   "outer*nidx*inner", why, len);
	return r;
}

static uint64_t gather_cost(const struct ipu_vertex_ctx *v)
{
	/* one index decode per row, then the copy */
	return CL_VERTEX_OVERHEAD +
	       cl_sat_mul((uint64_t)v->params[0] * v->params[3], 2) +
	       cl_cost_stream(v->ops[2].count, v->ops[2].dtype, 1);
}

static int gather_run(const struct ipu_vertex_ctx *v)
{
	const uint32_t *p = v->params;
	size_t outer = p[0], L = p[1], inner = p[2], nidx = p[3], o, t;
	size_t es = ipux_dtype_size(v->ops[0].dtype), row = inner * es;
	const uint8_t *data = IPU_OP_PTR(v, 0, const uint8_t);
	const uint8_t *ind = IPU_OP_PTR(v, 1, const uint8_t);
	uint8_t *out = IPU_OP_PTR(v, 2, uint8_t);
	int i64 = v->ops[1].dtype == IPUX_DT_I64;

	for (o = 0; o < outer; o++)
		for (t = 0; t < nidx; t++) {
			int64_t ix;

			if (i64) {
				memcpy(&ix, ind + t * 8, 8);
			} else {
				int32_t i32;

				memcpy(&i32, ind + t * 4, 4);
				ix = i32;
			}
			if (ix < 0)
				ix += (int64_t)L;
			if (ix < 0 || ix >= (int64_t)L)
				return IPU_FAULT_INDEX;
			memmove(out + (o * nidx + t) * row,
				data + (o * L + (size_t)ix) * row, row);
		}
	return 0;
}

const struct ipu_codelet ipu_cl_gather = {
	"GATHER", gather_check, gather_cost, gather_run
};
