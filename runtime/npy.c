// SPDX-License-Identifier: MIT
/*
 * npy.c - NumPy .npy read and write (see ipu/npy.h).
 *
 * File layout: "\x93NUMPY", u8 major, u8 minor, header length (u16 LE for
 * 1.x, u32 LE for 2.x/3.x), header text (a Python dict literal with the
 * keys 'descr', 'fortran_order' and 'shape', padded with spaces, ending
 * in '\n'; latin-1 up to 2.x, UTF-8 in 3.x), then the raw data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipu/file_atomic.h"
#include "ipu/npy.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6

void ipurt_npy_free(struct ipurt_npy *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof(*a));
}

/* descr of each dtype as np.save writes it. */
static const char *const descrs[IPURT_DT_COUNT] = {
	[IPURT_DT_F32] = "<f4", [IPURT_DT_F16] = "<f2",
	[IPURT_DT_I32] = "<i4", [IPURT_DT_I64] = "<i8",
	[IPURT_DT_U8] = "|u1",	[IPURT_DT_BOOL] = "|b1",
	[IPURT_DT_I8] = "|i1",
};

/* What to tell a user whose array has a type we do not take. */
static const struct {
	const char *code, *numpy, *to;
} unsupported[] = {
	{ "f8", "float64", "np.float32" }, { "u2", "uint16", "np.int32" },
	{ "u4", "uint32", "np.int64" },	   { "u8", "uint64", "np.int64" },
	{ "i2", "int16", "np.int32" },	   { "c8", "complex64", "a real type" },
	{ "c16", "complex128", "a real type" },
};

static int parse_descr(const char *d, uint32_t *dtype, char *err,
		       size_t errlen)
{
	char order = d[0];
	const char *code = d + 1;

	if (order != '<' && order != '>' && order != '|' && order != '=')
		return ipu_errorf(err, errlen, IPURT_NPY_E_DTYPE,
			    "dtype '%.40s' is not supported (no byte-order mark)",
			    d);
	for (uint32_t t = 1; t < IPURT_DT_COUNT; t++) {
		size_t esize = ipurt_dtype_size(t);

		if (strcmp(code, descrs[t] + 1))
			continue;
		if (esize > 1 && order == '>')
			return ipu_errorf(err, errlen, IPURT_NPY_E_DTYPE,
				    "dtype '%s' is big-endian: save it with a.astype('<%s')",
				    d, code);
		if (esize > 1 && order == '|')
			return ipu_errorf(err, errlen, IPURT_NPY_E_DTYPE,
				    "dtype '%s': a %zu-byte type needs a byte order",
				    d, esize);
		*dtype = t;
		return 0;
	}
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		if (!strcmp(code, unsupported[i].code))
			return ipu_errorf(err, errlen, IPURT_NPY_E_DTYPE,
				    "dtype '%s' (%s) is not supported: save it with a.astype(%s)",
				    d, unsupported[i].numpy, unsupported[i].to);
	return ipu_errorf(err, errlen, IPURT_NPY_E_DTYPE,
		    "dtype '%.40s' is not supported (the runtime takes float32, float16, int32, int64, uint8, bool, int8)",
		    d);
}

/* Tokenizer over the header dict. */
struct lex {
	const char *start, *p, *end;
	char *err;
	size_t errlen;
};

static void skip_ws(struct lex *l)
{
	while (l->p < l->end &&
	       (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
		l->p++;
}

static int syntax(struct lex *l, const char *what)
{
	return ipu_errorf(l->err, l->errlen, IPURT_NPY_E_FORMAT,
		    "header: %s at byte %td", what, l->p - l->start);
}

static int expect(struct lex *l, char c)
{
	skip_ws(l);
	if (l->p >= l->end || *l->p != c) {
		char what[32];

		snprintf(what, sizeof(what), "expected '%c'", c);
		return syntax(l, what);
	}
	l->p++;
	return 0;
}

/* A quoted string without escapes (all valid keys and descrs are). */
static int string(struct lex *l, char *out, size_t outlen)
{
	char q;
	size_t n = 0;

	skip_ws(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return syntax(l, "expected a string");
	q = *l->p++;
	while (l->p < l->end && *l->p != q) {
		if (*l->p == '\\' || n + 1 >= outlen)
			return syntax(l, "unexpected string");
		out[n++] = *l->p++;
	}
	if (l->p >= l->end)
		return syntax(l, "unterminated string");
	l->p++;
	out[n] = 0;
	return 0;
}

static int word(struct lex *l, const char *w)
{
	size_t n = strlen(w);

	skip_ws(l);
	if ((size_t)(l->end - l->p) >= n && !memcmp(l->p, w, n)) {
		l->p += n;
		return 1;
	}
	return 0;
}

static int shape(struct lex *l, struct ipurt_npy *a)
{
	int rc = expect(l, '(');

	if (rc)
		return rc;
	a->rank = 0;
	for (;;) {
		uint64_t v = 0;
		int digits = 0;

		skip_ws(l);
		if (l->p < l->end && *l->p == ')')
			break;
		while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
			if (v > (UINT64_MAX - 9) / 10 || digits > 19)
				return ipu_errorf(l->err, l->errlen, IPURT_NPY_E_SHAPE,
					    "header: dimension %u is too large",
					    a->rank);
			v = v * 10 + (uint64_t)(*l->p++ - '0');
			digits++;
		}
		if (!digits)
			return syntax(l, "expected a dimension");
		if (l->p < l->end && *l->p == 'L') /* Python 2 long */
			l->p++;
		if (a->rank >= IPURT_NPY_MAX_RANK)
			return ipu_errorf(l->err, l->errlen, IPURT_NPY_E_SHAPE,
				    "header: more than %u dimensions",
				    IPURT_NPY_MAX_RANK);
		a->dims[a->rank++] = v;
		skip_ws(l);
		if (l->p < l->end && *l->p == ',') {
			l->p++;
			continue;
		}
		skip_ws(l);
		if (l->p < l->end && *l->p == ')')
			break;
		return syntax(l, "expected ',' or ')' in the shape");
	}
	l->p++;
	return 0;
}

/* Parse the header dict into a (dtype, rank, dims). */
static int parse_dict(const char *h, size_t len, struct ipurt_npy *a,
		      char *err, size_t errlen)
{
	struct lex l = { h, h, h + len, err, errlen };
	bool have_descr = false, have_order = false, have_shape = false;
	char key[32], descr[64];
	int rc = expect(&l, '{');

	if (rc)
		return rc;
	for (;;) {
		skip_ws(&l);
		if (l.p < l.end && *l.p == '}')
			break;
		rc = string(&l, key, sizeof(key));
		if (!rc)
			rc = expect(&l, ':');
		if (rc)
			return rc;
		if (!strcmp(key, "descr")) {
			if (have_descr)
				return syntax(&l, "'descr' given twice");
			skip_ws(&l);
			if (l.p < l.end && *l.p == '[')
				return ipu_errorf(err, errlen, IPURT_NPY_E_DTYPE,
					    "structured dtypes are not supported: save a plain array");
			rc = string(&l, descr, sizeof(descr));
			if (rc)
				return rc;
			rc = parse_descr(descr, &a->dtype, err, errlen);
			if (rc)
				return rc;
			have_descr = true;
		} else if (!strcmp(key, "fortran_order")) {
			if (have_order)
				return syntax(&l, "'fortran_order' given twice");
			if (word(&l, "True"))
				return ipu_errorf(err, errlen, IPURT_NPY_E_ORDER,
					    "the array is in Fortran order: save it with np.save(f, np.ascontiguousarray(a))");
			if (!word(&l, "False"))
				return syntax(&l, "fortran_order must be True or False");
			have_order = true;
		} else if (!strcmp(key, "shape")) {
			if (have_shape)
				return syntax(&l, "'shape' given twice");
			rc = shape(&l, a);
			if (rc)
				return rc;
			have_shape = true;
		} else {
			return syntax(&l, "unknown key");
		}
		skip_ws(&l);
		if (l.p < l.end && *l.p == ',') {
			l.p++;
			continue;
		}
		skip_ws(&l);
		if (l.p < l.end && *l.p == '}')
			break;
		return syntax(&l, "expected ',' or '}'");
	}
	l.p++;
	skip_ws(&l);
	if (l.p != l.end)
		return syntax(&l, "text after the closing '}'");
	if (!have_descr || !have_order || !have_shape)
		return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
			    "header lacks '%s'",
			    !have_descr ? "descr" :
			    !have_order ? "fortran_order" : "shape");
	return 0;
}

/*
 * Check the preamble and header of buf; fill a's dtype and shape, return
 * the data offset (> 0) or a negative error.
 */
static long long parse_header(const uint8_t *buf, size_t len,
			      struct ipurt_npy *a, char *err, size_t errlen)
{
	size_t hlen, pre, esize;
	uint64_t n;
	int rc;

	if (len < MAGIC_LEN + 2 || memcmp(buf, MAGIC, MAGIC_LEN))
		return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
			    "not a .npy file (no \\x93NUMPY magic)");
	if (buf[6] < 1 || buf[6] > 3 || buf[7] != 0)
		return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
			    ".npy format version %u.%u is not supported (1.0, 2.0, 3.0 are)",
			    buf[6], buf[7]);
	pre = buf[6] == 1 ? 10 : 12;
	if (len < pre)
		return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
			    "truncated: %zu bytes, the preamble needs %zu", len,
			    pre);
	hlen = buf[6] == 1 ? (size_t)(buf[8] | buf[9] << 8)
			   : (size_t)buf[8] | (size_t)buf[9] << 8 |
				     (size_t)buf[10] << 16 |
				     (size_t)buf[11] << 24;
	if (hlen > IPURT_NPY_MAX_HEADER)
		return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
			    "header of %zu bytes is over the %u-byte limit", hlen,
			    IPURT_NPY_MAX_HEADER);
	if (hlen > len - pre)
		return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
			    "truncated: the header needs %zu bytes, %zu are left",
			    hlen, len - pre);
	for (size_t i = 0; i < hlen; i++)
		if (!buf[pre + i] || (buf[6] < 3 && buf[pre + i] >= 0x80))
			return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
				    "header byte %zu is 0x%02x, not text", i,
				    buf[pre + i]);
	rc = parse_dict((const char *)buf + pre, hlen, a, err, errlen);
	if (rc)
		return rc;
	esize = ipurt_dtype_size(a->dtype);
	n = esize;
	for (uint32_t i = 0; i < a->rank; i++) {
		if (a->dims[i] && n > (uint64_t)(SIZE_MAX / 2) / a->dims[i])
			return ipu_errorf(err, errlen, IPURT_NPY_E_SHAPE,
				    "shape too large for memory");
		n *= a->dims[i];
	}
	if (n != len - pre - hlen) {
		if (n > len - pre - hlen)
			return ipu_errorf(err, errlen, IPURT_NPY_E_SIZE,
				    "truncated: %s shape needs %llu data bytes, the file has %zu",
				    ipurt_dtype_name(a->dtype),
				    (unsigned long long)n, len - pre - hlen);
		return ipu_errorf(err, errlen, IPURT_NPY_E_SIZE,
			    "%zu unexpected bytes after the %llu data bytes",
			    len - pre - hlen - (size_t)n, (unsigned long long)n);
	}
	a->size = (size_t)n;
	return (long long)(pre + hlen);
}

static int check_bools(const struct ipurt_npy *a, char *err, size_t errlen)
{
	const uint8_t *d = a->data;

	if (a->dtype != IPURT_DT_BOOL)
		return 0;
	for (size_t i = 0; i < a->size; i++)
		if (d[i] > 1)
			return ipu_errorf(err, errlen, IPURT_NPY_E_VALUE,
				    "bool element %zu is %u, not 0 or 1", i,
				    d[i]);
	return 0;
}

int ipurt_npy_parse(const void *buf, size_t len, struct ipurt_npy *out,
		    char *err, size_t errlen)
{
	struct ipurt_npy a;
	long long off;
	int rc;

	if (!out || (!buf && len))
		return ipu_errorf(err, errlen, IPURT_NPY_E_INVAL,
			    "ipurt_npy_parse: NULL argument");
	memset(out, 0, sizeof(*out));
	memset(&a, 0, sizeof(a));
	off = parse_header(buf, len, &a, err, errlen);
	if (off < 0)
		return (int)off;
	a.data = malloc(a.size ? a.size : 1);
	if (!a.data)
		return ipu_errorf(err, errlen, IPURT_NPY_E_NOMEM,
			    "out of memory for %zu bytes", a.size);
	memcpy(a.data, (const uint8_t *)buf + off, a.size);
	rc = check_bools(&a, err, errlen);
	if (rc) {
		ipurt_npy_free(&a);
		return rc;
	}
	*out = a;
	return 0;
}

int ipurt_npy_read(const char *path, struct ipurt_npy *out, char *err,
		   size_t errlen)
{
	struct ipurt_npy a;
	struct stat st;
	uint8_t *buf;
	size_t len = 0, cap;
	long long off;
	int fd, rc;

	if (!path || !out)
		return ipu_errorf(err, errlen, IPURT_NPY_E_INVAL,
			    "ipurt_npy_read: NULL argument");
	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ipu_errorf(err, errlen, IPURT_NPY_E_IO, "%s: %s", path,
			    strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		int e = errno;

		close(fd);
		return ipu_errorf(err, errlen, IPURT_NPY_E_IO, "%s: %s", path,
			    S_ISREG(st.st_mode) ? strerror(e) : "not a regular file");
	}
	{
		/* the magic before the body: a large file that is not a .npy
		 * is refused after 6 bytes, not read whole */
		uint8_t magic[6];
		ssize_t n;

		do
			n = pread(fd, magic, sizeof(magic), 0);
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(magic) || memcmp(magic, MAGIC, sizeof(magic))) {
			close(fd);
			return ipu_errorf(err, errlen, IPURT_NPY_E_FORMAT,
				    "%s: not a .npy file (no \\x93NUMPY magic)", path);
		}
	}
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return ipu_errorf(err, errlen, IPURT_NPY_E_NOMEM,
			    "%s: out of memory for %zu bytes", path, cap);
	}
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return ipu_errorf(err, errlen, IPURT_NPY_E_IO, "%s: read: %s",
				    path, strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len == cap) {
		free(buf);
		return ipu_errorf(err, errlen, IPURT_NPY_E_IO,
			    "%s: the file grew while it was read", path);
	}
	memset(&a, 0, sizeof(a));
	off = parse_header(buf, len, &a, err, errlen);
	if (off < 0) {
		free(buf);
		return (int)off;
	}
	/* Reuse the file buffer: move the data to its start. */
	memmove(buf, buf + off, a.size);
	a.data = buf;
	rc = check_bools(&a, err, errlen);
	if (rc) {
		ipurt_npy_free(&a);
		return rc;
	}
	*out = a;
	return 0;
}

int ipurt_npy_encode(const struct ipurt_npy *a, void **out, size_t *len,
		     char *err, size_t errlen)
{
	char header[64 + 24 * IPURT_NPY_MAX_RANK];
	size_t h = 0, pre, total, pad;
	uint64_t n;
	uint8_t *buf;

	if (!a || !out || !len || (!a->data && a->size))
		return ipu_errorf(err, errlen, IPURT_NPY_E_INVAL,
			    "ipurt_npy_encode: NULL argument");
	if (!ipurt_dtype_size(a->dtype) || a->dtype == IPURT_DT_INVALID)
		return ipu_errorf(err, errlen, IPURT_NPY_E_DTYPE, "unknown dtype %u",
			    a->dtype);
	if (a->rank > IPURT_NPY_MAX_RANK)
		return ipu_errorf(err, errlen, IPURT_NPY_E_SHAPE, "rank %u > %u",
			    a->rank, IPURT_NPY_MAX_RANK);
	n = ipurt_dtype_size(a->dtype);
	for (uint32_t i = 0; i < a->rank; i++) {
		if (a->dims[i] && n > (uint64_t)(SIZE_MAX / 2) / a->dims[i])
			return ipu_errorf(err, errlen, IPURT_NPY_E_SHAPE,
				    "shape too large");
		n *= a->dims[i];
	}
	if (n != a->size)
		return ipu_errorf(err, errlen, IPURT_NPY_E_SIZE,
			    "%zu data bytes, but the %s shape needs %llu",
			    a->size, ipurt_dtype_name(a->dtype),
			    (unsigned long long)n);
	h += (size_t)snprintf(header + h, sizeof(header) - h,
			      "{'descr': '%s', 'fortran_order': False, 'shape': (",
			      descrs[a->dtype]);
	for (uint32_t i = 0; i < a->rank; i++)
		h += (size_t)snprintf(header + h, sizeof(header) - h, "%s%llu",
				      i ? ", " : "",
				      (unsigned long long)a->dims[i]);
	h += (size_t)snprintf(header + h, sizeof(header) - h, "%s), }",
			      a->rank == 1 ? "," : "");
	/* Pad with spaces and a final '\n' to a multiple of 64 (np.save). */
	pre = 10;
	pad = 64 - (pre + h + 1) % 64;
	if (pad == 64)
		pad = 0;
	if (pre + h + pad + 1 > 65535)
		pre = 12;	/* version 2.0: cannot happen below 32 dims */
	total = pre + h + pad + 1 + a->size;
	buf = malloc(total);
	if (!buf)
		return ipu_errorf(err, errlen, IPURT_NPY_E_NOMEM,
			    "out of memory for %zu bytes", total);
	memcpy(buf, MAGIC, MAGIC_LEN);
	buf[6] = pre == 10 ? 1 : 2;
	buf[7] = 0;
	{
		size_t hl = h + pad + 1;

		buf[8] = (uint8_t)hl;
		buf[9] = (uint8_t)(hl >> 8);
		if (pre == 12) {
			buf[10] = (uint8_t)(hl >> 16);
			buf[11] = (uint8_t)(hl >> 24);
		}
	}
	memcpy(buf + pre, header, h);
	memset(buf + pre + h, ' ', pad);
	buf[pre + h + pad] = '\n';
	if (a->size)
		memcpy(buf + pre + h + pad + 1, a->data, a->size);
	*out = buf;
	*len = total;
	return 0;
}

int ipurt_npy_write(const char *path, const struct ipurt_npy *a, char *err,
		    size_t errlen)
{
	char msg[512];
	void *buf;
	size_t len;
	int rc;

	if (!path)
		return ipu_errorf(err, errlen, IPURT_NPY_E_INVAL,
			    "ipurt_npy_write: NULL path");
	rc = ipurt_npy_encode(a, &buf, &len, err, errlen);
	if (rc)
		return rc;
	if (ipurt_write_file_atomic(path, buf, len, msg, sizeof(msg)))
		rc = ipu_errorf(err, errlen, IPURT_NPY_E_IO, "%s", msg);
	free(buf);
	return rc;
}
