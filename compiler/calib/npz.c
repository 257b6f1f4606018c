/* SPDX-License-Identifier: MIT */
/*
 * npz.c - NumPy .npz archives (a zip of .npy files) through libzip, each
 * member decoded by the runtime's .npy reader.  The archive is untrusted:
 * sizes are checked against the limits before anything is decompressed,
 * and libzip checks each member's CRC as it is read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "calib/calib.h"
#include "ipu/npy.h"

static int ir_dtype_of(uint32_t dt)
{
	switch (dt) {
	case IPURT_DT_F32: return IR_F32;
	case IPURT_DT_F16: return IR_F16;
	case IPURT_DT_I32: return IR_I32;
	case IPURT_DT_I64: return IR_I64;
	case IPURT_DT_U8: return IR_U8;
	case IPURT_DT_BOOL: return IR_BOOL;
	case IPURT_DT_I8: return IR_I8;
	default: return IR_UNDEFINED;
	}
}

void ipu_npz_free(struct ipu_npz *z)
{
	for (int i = 0; i < z->n; i++) {
		free(z->names[i]);
		ir_tensor_free(&z->arrays[i]);
	}
	free(z->names);
	free(z->arrays);
	memset(z, 0, sizeof(*z));
}

/* Member names are what the user typed as keyword arguments of np.savez:
 * anything printable, but a name with control bytes is a damaged file. */
static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static int read_member(zip_t *za, zip_uint64_t idx, const char *what, struct ipu_npz *z,
		       struct ir_error *e)
{
	zip_stat_t st;
	zip_file_t *f;
	struct ipurt_npy a;
	char err[256];
	const char *name;
	size_t len;
	unsigned char *buf;
	zip_int64_t got;
	int i = z->n, dt;

	zip_stat_init(&st);
	if (zip_stat_index(za, idx, 0, &st))
		return ir_err(e, "%s: member %llu: %s", what, (unsigned long long)idx,
			      zip_strerror(za));
	name = (st.valid & ZIP_STAT_NAME) && st.name ? st.name : "";
	len = strlen(name);
	if (len < 5 || strcmp(name + len - 4, ".npy") || !printable(name))
		return ir_err(e, "%s: member '%.200s' is not an .npy file (an .npz holds only NAME.npy members, as np.savez writes them)",
			      what, printable(name) ? name : "?");
	if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
		return ir_err(e, "%s: member '%.200s' is encrypted; save the arrays with np.savez", what, name);
	if (!(st.valid & ZIP_STAT_SIZE) || st.size > IPU_NPZ_MAX_MEMBER_BYTES)
		return ir_err(e, "%s: member '%.200s' declares %llu bytes, more than the %llu a member may have",
			      what, name, (unsigned long long)st.size,
			      (unsigned long long)IPU_NPZ_MAX_MEMBER_BYTES);
	for (int k = 0; k < z->n; k++)
		if (strlen(z->names[k]) == len - 4 && !strncmp(z->names[k], name, len - 4))
			return ir_err(e, "%s: two members are named '%.200s'", what, name);
	if (!(z->names[i] = strndup(name, len - 4)))
		return ir_err(e, "out of memory");
	buf = malloc(st.size ? (size_t)st.size : 1);
	if (!buf) {
		free(z->names[i]);
		return ir_err(e, "%s: out of memory for member '%.200s' (%llu bytes)", what, name,
			      (unsigned long long)st.size);
	}
	f = zip_fopen_index(za, idx, 0);
	if (!f) {
		ir_err(e, "%s: member '%.200s': %s", what, name, zip_strerror(za));
		goto fail;
	}
	got = zip_fread(f, buf, st.size);
	if (got < 0) {
		ir_err(e, "%s: member '%.200s' is damaged: %s", what, name, zip_file_strerror(f));
		zip_fclose(f);
		goto fail;
	}
	if ((zip_uint64_t)got != st.size) {
		ir_err(e, "%s: member '%.200s' holds %lld bytes but declares %llu", what, name,
		       (long long)got, (unsigned long long)st.size);
		zip_fclose(f);
		goto fail;
	}
	/* libzip checks the CRC when a read reaches the end: read past the
	 * declared size, which also catches a member longer than declared */
	{
		unsigned char extra;
		zip_int64_t more = zip_fread(f, &extra, 1);

		if (more != 0) {
			ir_err(e, "%s: member '%.200s' is damaged: %s", what, name,
			       more < 0 ? zip_file_strerror(f) : "more data than its declared size");
			zip_fclose(f);
			goto fail;
		}
	}
	if (zip_fclose(f)) {
		ir_err(e, "%s: member '%.200s' is damaged (checksum or truncation)", what, name);
		goto fail;
	}
	if (ipurt_npy_parse(buf, (size_t)st.size, &a, err, sizeof(err))) {
		ir_err(e, "%s: member '%.200s': %s", what, name, err);
		goto fail;
	}
	free(buf);
	buf = NULL;
	dt = ir_dtype_of(a.dtype);
	if (a.rank > IR_MAX_RANK || dt == IR_UNDEFINED) {
		ir_err(e, "%s: array '%.200s' has rank %u and dtype %s; the compiler takes at most rank %d",
		       what, z->names[i], a.rank, ipurt_dtype_name(a.dtype), IR_MAX_RANK);
		ipurt_npy_free(&a);
		goto fail;
	}
	memset(&z->arrays[i], 0, sizeof(z->arrays[i]));
	z->arrays[i].dtype = dt;
	z->arrays[i].rank = (int)a.rank;
	for (uint32_t k = 0; k < a.rank; k++) {
		if (a.dims[k] > INT64_MAX) {
			ipurt_npy_free(&a);
			ir_err(e, "%s: array '%.200s' is too large", what, z->names[i]);
			goto fail;
		}
		z->arrays[i].dims[k] = (int64_t)a.dims[k];
	}
	/* an empty array still gets a buffer, so data == NULL never means "no tensor" */
	z->arrays[i].data = a.data ? a.data : malloc(1);
	if (!z->arrays[i].data) {
		ir_err(e, "out of memory");
		goto fail;
	}
	z->n++;
	return 0;
fail:
	free(buf);
	free(z->names[i]);
	z->names[i] = NULL;
	return -1;
}

static int read_archive(zip_t *za, const char *what, struct ipu_npz *out, struct ir_error *e)
{
	zip_int64_t n = zip_get_num_entries(za, 0);

	if (n <= 0)
		return ir_err(e, "%s: the archive holds no arrays", what);
	if (n > IPU_NPZ_MAX_MEMBERS)
		return ir_err(e, "%s: the archive has %lld members; at most %d are read", what,
			      (long long)n, IPU_NPZ_MAX_MEMBERS);
	out->names = calloc((size_t)n, sizeof(*out->names));
	out->arrays = calloc((size_t)n, sizeof(*out->arrays));
	if (!out->names || !out->arrays) {
		ipu_npz_free(out);
		return ir_err(e, "out of memory");
	}
	for (zip_int64_t i = 0; i < n; i++)
		if (read_member(za, (zip_uint64_t)i, what, out, e)) {
			ipu_npz_free(out);
			return -1;
		}
	return 0;
}

static const char *zip_open_msg(int code, char *buf, size_t len)
{
	zip_error_t ze;

	zip_error_init_with_code(&ze, code);
	snprintf(buf, len, "%s", zip_error_strerror(&ze));
	zip_error_fini(&ze);
	return buf;
}

int ipu_npz_parse(const void *buf, size_t len, const char *what, struct ipu_npz *out,
		  struct ir_error *e)
{
	zip_error_t ze;
	zip_source_t *src;
	zip_t *za;
	char msg[256];
	int r;

	memset(out, 0, sizeof(*out));
	zip_error_init(&ze);
	src = zip_source_buffer_create(len ? buf : "", len, 0, &ze);
	if (!src) {
		r = ir_err(e, "%s: %s", what, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return r;
	}
	za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
	if (!za) {
		snprintf(msg, sizeof(msg), "%s", zip_error_strerror(&ze));
		zip_source_free(src);
		zip_error_fini(&ze);
		return ir_err(e, "%s is not a readable .npz (zip) archive: %s", what, msg);
	}
	zip_error_fini(&ze);
	r = read_archive(za, what, out, e);
	zip_discard(za);
	return r;
}

int ipu_npz_read(const char *path, struct ipu_npz *out, struct ir_error *e)
{
	struct stat st;
	zip_t *za;
	char msg[256];
	int code = 0, r;

	memset(out, 0, sizeof(*out));
	/* a FIFO or a device would block or never end: regular files only */
	if (stat(path, &st))
		return ir_err(e, "cannot open calibration data %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ir_err(e, "calibration data %s is not a regular file", path);
	za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code);
	if (!za)
		return ir_err(e, "%s is not a readable .npz (zip) archive: %s", path,
			      zip_open_msg(code, msg, sizeof(msg)));
	r = read_archive(za, path, out, e);
	zip_discard(za);
	return r;
}
