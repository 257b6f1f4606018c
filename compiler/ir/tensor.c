/* SPDX-License-Identifier: MIT */
/* tensor.c - dense tensors: allocation with overflow checks. */
#include <stdlib.h>
#include <string.h>

#include "ipu/ir.h"

int64_t ir_numel(int rank, const int64_t *dims)
{
	int64_t n = 1;

	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return -1;
		if (dims[i] && n > INT64_MAX / dims[i])
			return -1;
		n *= dims[i];
	}
	return n;
}

size_t ir_tensor_bytes(const struct ir_tensor *t)
{
	int64_t n = ir_numel(t->rank, t->dims);

	return n < 0 ? 0 : (size_t)n * ir_dtype_size(t->dtype);
}

int ir_tensor_alloc(struct ir_tensor *t, int dtype, int rank,
		    const int64_t *dims, struct ir_error *e)
{
	int64_t n;
	size_t es = ir_dtype_size(dtype);

	memset(t, 0, sizeof(*t));
	if (rank < 0 || rank > IR_MAX_RANK)
		return ir_err(e, "rank %d is outside 0..%d", rank, IR_MAX_RANK);
	if (!es)
		return ir_err(e, "element type %s is not supported",
			      ir_dtype_name(dtype));
	n = ir_numel(rank, dims);
	if (n < 0 || (uint64_t)n > (((uint64_t)1 << 40) / es))
		return ir_err(e, "tensor of %lld elements is too large",
			      (long long)n);
	t->dtype = dtype;
	t->rank = rank;
	if (rank)
		memcpy(t->dims, dims, (size_t)rank * sizeof(dims[0]));
	t->data = calloc(n ? (size_t)n : 1, es);
	if (!t->data)
		return ir_err(e, "out of memory allocating %lld bytes",
			      (long long)(n * (int64_t)es));
	return 0;
}

void ir_tensor_free(struct ir_tensor *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
}
