/* SPDX-License-Identifier: MIT */
/* onnx_tensor.c - TensorProto <-> ir_tensor, including external data. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipu/file_atomic.h"
#include "ipu/onnx_io.h"
#include "onnx_internal.h"

static const char *tname(const Onnx__TensorProto *tp)
{
	return tp->name && tp->name[0] ? tp->name : "(unnamed)";
}

/*
 * Reads [offset, offset+len) of base_dir/location into a new tensor of the
 * proto's type and shape, allocated only once the file is known to hold it.
 */
static int read_external(const Onnx__TensorProto *tp, const char *base_dir, int dt,
			 struct ir_tensor *t, size_t want, struct ir_error *e)
{
	char *dst;
	const char *loc = NULL;
	long long off = 0, len = -1;
	char *path, *real = NULL, *dir = NULL;
	struct stat st;
	long long fsize;
	size_t got;
	int r = -1, fd = -1;

	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *kv = tp->external_data[i];
		char *end;

		if (!kv->key || !kv->value)
			continue;
		if (!strcmp(kv->key, "location")) {
			loc = kv->value;
		} else if (!strcmp(kv->key, "offset") ||
			   !strcmp(kv->key, "length")) {
			long long v = strtoll(kv->value, &end, 10);

			if (*end || v < 0)
				return ir_err(e, "tensor '%s': external data %s '%s' is not a non-negative integer",
					      tname(tp), kv->key, kv->value);
			if (kv->key[0] == 'o')
				off = v;
			else
				len = v;
		}
	}
	if (!loc || !loc[0])
		return ir_err(e, "tensor '%s': external data without a location", tname(tp));
	if (!base_dir)
		return ir_err(e, "tensor '%s': external data '%s' but the model was not loaded from a file",
			      tname(tp), loc);
	if (loc[0] == '/' || strstr(loc, "..") || strchr(loc, '\\'))
		return ir_err(e, "tensor '%s': external data location '%s' must be a relative path inside the model's directory",
			      tname(tp), loc);
	if (len >= 0 && (size_t)len != want)
		return ir_err(e, "tensor '%s': external data length %lld does not match its shape and type (%zu bytes)",
			      tname(tp), len, want);
	path = malloc(strlen(base_dir) + strlen(loc) + 2);
	if (!path)
		return ir_err(e, "out of memory");
	sprintf(path, "%s/%s", base_dir, loc);
	/*
	 * As onnxruntime: the file must be inside the model's folder once
	 * symbolic links are resolved, and a regular file (O_NONBLOCK: a FIFO
	 * must not block the open).
	 */
	real = realpath(path, NULL);
	dir = realpath(base_dir, NULL);
	if (!real || !dir) {
		ir_err(e, "tensor '%s': cannot open external data file %s: %s", tname(tp), path,
		       strerror(errno));
		goto out;
	}
	if (strncmp(real, dir, strlen(dir)) || (real[strlen(dir)] != '/' && strcmp(dir, "/"))) {
		ir_err(e, "tensor '%s': external data location '%s' leads to %s, outside the model's folder %s",
		       tname(tp), loc, real, dir);
		goto out;
	}
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		ir_err(e, "tensor '%s': cannot open external data file %s: %s", tname(tp), path,
		       strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ir_err(e, "tensor '%s': external data file %s is not a regular file", tname(tp), path);
		goto out;
	}
	fsize = (long long)st.st_size;
	if (off > fsize || (long long)want > fsize - off) {
		ir_err(e, "tensor '%s': external data [%lld, +%zu) is outside %s (%lld bytes)",
		       tname(tp), off, want, path, fsize);
		goto out;
	}
	if (ir_tensor_alloc(t, dt, (int)tp->n_dims, tp->dims, e)) {
		char m[IR_ERROR_LEN];

		snprintf(m, sizeof(m), "%s", e->msg);
		ir_err(e, "tensor '%s': %s", tname(tp), m);
		goto out;
	}
	dst = t->data;
	for (got = 0; got < want;) {
		ssize_t k = pread(fd, dst + got, want - got, (off_t)(off + (long long)got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			ir_err(e, "tensor '%s': short read from %s", tname(tp), path);
			goto out;
		}
		got += (size_t)k;
	}
	r = 0;
out:
	if (r)
		ir_tensor_free(t);	/* no half-read tensor reaches the caller */
	if (fd >= 0)
		close(fd);
	free(real);
	free(dir);
	free(path);
	return r;
}

/* The typed data field of dt holds exactly the n elements of the shape. */
static int typed_count_ok(const Onnx__TensorProto *tp, int dt, size_t n)
{
	switch (dt) {
	case IR_F32: return tp->n_float_data == n;
	case IR_C64: return tp->n_float_data == 2 * n;
	case IR_F64: return tp->n_double_data == n;
	case IR_C128: return tp->n_double_data == 2 * n;
	case IR_I64: return tp->n_int64_data == n;
	case IR_U32: case IR_U64: return tp->n_uint64_data == n;
	default: return tp->n_int32_data == n;
	}
}

int onnx_tensor_decode(const Onnx__TensorProto *tp, const char *base_dir,
		       struct ir_tensor *t, struct ir_error *e)
{
	int dt = tp->has_data_type ? tp->data_type : IR_UNDEFINED;
	size_t n, es, bytes;

	memset(t, 0, sizeof(*t));
	if (tp->segment)
		return ir_err(e, "tensor '%s': segmented tensors are not supported", tname(tp));
	if (dt == IR_STRING)
		return ir_err(e, "tensor '%s': string tensors are not supported", tname(tp));
	if (dt <= IR_UNDEFINED || dt >= IR_DTYPE_COUNT || !ir_dtype_size(dt))
		return ir_err(e, "tensor '%s': unknown data type %d", tname(tp), dt);
	if (tp->n_dims > IR_MAX_RANK)
		return ir_err(e, "tensor '%s': rank %zu is more than %d", tname(tp),
			      tp->n_dims, IR_MAX_RANK);
	for (size_t i = 0; i < tp->n_dims; i++)
		if (tp->dims[i] < 0)
			return ir_err(e, "tensor '%s': negative dimension %lld",
				      tname(tp), (long long)tp->dims[i]);
	es = ir_dtype_size(dt);
	if (ir_numel((int)tp->n_dims, tp->dims) < 0 ||
	    (uint64_t)ir_numel((int)tp->n_dims, tp->dims) > ((uint64_t)1 << 40) / es)
		return ir_err(e, "tensor '%s': its shape holds too many elements", tname(tp));
	n = (size_t)ir_numel((int)tp->n_dims, tp->dims);
	bytes = n * es;

	if (tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return read_external(tp, base_dir, dt, t, bytes, e);
	/* the data must be in the proto before its size is allocated */
	if (tp->has_raw_data ? tp->raw_data.len != bytes : !typed_count_ok(tp, dt, n)) {
		if (tp->has_raw_data)
			return ir_err(e, "tensor '%s': raw_data has %zu bytes, its shape and type need %zu",
				      tname(tp), tp->raw_data.len, bytes);
		return ir_err(e, "tensor '%s': has no raw_data and its %s data field does not hold the %zu elements of its shape",
			      tname(tp), ir_dtype_name(dt), n);
	}
	if (ir_tensor_alloc(t, dt, (int)tp->n_dims, tp->dims, e)) {
		char m[IR_ERROR_LEN];

		snprintf(m, sizeof(m), "%s", e->msg);
		return ir_err(e, "tensor '%s': %s", tname(tp), m);
	}
	if (tp->has_raw_data) {
		if (tp->raw_data.len != bytes) {
			ir_err(e, "tensor '%s': raw_data has %zu bytes, its shape and type need %zu",
			       tname(tp), tp->raw_data.len, bytes);
			goto fail;
		}
		if (bytes)
			memcpy(t->data, tp->raw_data.data, bytes);
		return 0;
	}
	/* Typed fields; complex types hold two numbers per element. */
	switch (dt) {
	case IR_F32: case IR_C64: {
		size_t want = dt == IR_C64 ? 2 * n : n;

		if (tp->n_float_data != want)
			goto count;
		if (want)
			memcpy(t->data, tp->float_data, want * sizeof(float));
		break;
	}
	case IR_F64: case IR_C128: {
		size_t want = dt == IR_C128 ? 2 * n : n;

		if (tp->n_double_data != want)
			goto count;
		if (want)
			memcpy(t->data, tp->double_data, want * sizeof(double));
		break;
	}
	case IR_I64:
		if (tp->n_int64_data != n)
			goto count;
		if (n)
			memcpy(t->data, tp->int64_data, n * 8);
		break;
	case IR_U32: case IR_U64:
		if (tp->n_uint64_data != n)
			goto count;
		for (size_t i = 0; i < n; i++)
			ir_set_i(t->data, dt, i, (int64_t)tp->uint64_data[i]);
		break;
	case IR_F16: case IR_BF16:
		if (tp->n_int32_data != n)
			goto count;
		for (size_t i = 0; i < n; i++)
			((uint16_t *)t->data)[i] = (uint16_t)tp->int32_data[i];
		break;
	default: /* int32, int16, int8, uint16, uint8, bool */
		if (tp->n_int32_data != n)
			goto count;
		for (size_t i = 0; i < n; i++)
			ir_set_i(t->data, dt, i, tp->int32_data[i]);
		break;
	}
	return 0;
count:
	ir_err(e, "tensor '%s': has no raw_data and its %s data field does not hold the %zu elements of its shape",
	       tname(tp), ir_dtype_name(dt), n);
fail:
	ir_tensor_free(t);
	return -1;
}

void onnx_tensor_encode(const struct ir_tensor *t, const char *name,
			Onnx__TensorProto *tp)
{
	onnx__tensor_proto__init(tp);
	tp->name = (char *)name;
	tp->n_dims = (size_t)t->rank;
	tp->dims = (int64_t *)t->dims;
	tp->has_data_type = 1;
	tp->data_type = t->dtype;
	tp->has_raw_data = 1;
	tp->raw_data.len = ir_tensor_bytes(t);
	tp->raw_data.data = t->data;
}

int onnx_load_tensor_file(const char *path, struct ir_tensor *t, char **name,
			  struct ir_error *e)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long size;
	Onnx__TensorProto *tp;
	int r = -1;

	if (name)
		*name = NULL;
	if (!f)
		return ir_err(e, "cannot open %s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return ir_err(e, "cannot size %s", path);
	}
	buf = malloc(size ? (size_t)size : 1);
	if (!buf) {
		fclose(f);
		return ir_err(e, "out of memory reading %s", path);
	}
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(buf);
		return ir_err(e, "short read from %s", path);
	}
	fclose(f);
	tp = onnx__tensor_proto__unpack(NULL, (size_t)size, buf);
	if (!tp) {
		free(buf);
		return ir_err(e, "%s is not a valid serialized ONNX TensorProto", path);
	}
	if (onnx_tensor_decode(tp, NULL, t, e) == 0) {
		r = 0;
		if (name && tp->name) {
			*name = strdup(tp->name);
			if (!*name) {
				ir_tensor_free(t);
				r = ir_err(e, "out of memory");
			}
		}
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	free(buf);
	return r;
}

int onnx_save_tensor_file(const char *path, const struct ir_tensor *t, const char *name,
			  struct ir_error *e)
{
	Onnx__TensorProto tp;
	char err[512];
	size_t len;
	void *buf;
	int r;

	onnx_tensor_encode(t, name, &tp);
	len = onnx__tensor_proto__get_packed_size(&tp);
	buf = malloc(len ? len : 1);
	if (!buf)
		return ir_err(e, "out of memory writing %s", path);
	onnx__tensor_proto__pack(&tp, buf);
	r = ipurt_write_file_atomic(path, buf, len, err, sizeof(err));
	free(buf);
	return r ? ir_err(e, "%s", err) : 0;
}
