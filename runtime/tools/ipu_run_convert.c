// SPDX-License-Identifier: MIT
/* ipu_run_convert.c - input element types converted (ipu_run_convert.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "ipu/half.h"
#include "ipu_run_convert.h"

static int is_int(uint32_t dt)
{
	return dt == IPURT_DT_I32 || dt == IPURT_DT_I64 || dt == IPURT_DT_I8 || dt == IPURT_DT_U8;
}

static int64_t get_int(const void *p, uint32_t dt, uint64_t i)
{
	switch (dt) {
	case IPURT_DT_I32: return ((const int32_t *)p)[i];
	case IPURT_DT_I64: return ((const int64_t *)p)[i];
	case IPURT_DT_I8: return ((const int8_t *)p)[i];
	default: return ((const uint8_t *)p)[i];
	}
}

static int fits(int64_t v, uint32_t dt)
{
	switch (dt) {
	case IPURT_DT_I32: return v >= INT32_MIN && v <= INT32_MAX;
	case IPURT_DT_I8: return v >= INT8_MIN && v <= INT8_MAX;
	case IPURT_DT_U8: return v >= 0 && v <= UINT8_MAX;
	default: return 1;
	}
}

static void put_int(void *p, uint32_t dt, uint64_t i, int64_t v)
{
	switch (dt) {
	case IPURT_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
	case IPURT_DT_I64: ((int64_t *)p)[i] = v; break;
	case IPURT_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
	default: ((uint8_t *)p)[i] = (uint8_t)v; break;
	}
}

int convert_input(struct ipurt_npy *a, uint32_t want, const char *path, const char *anchor,
		  char *note, size_t notelen, char *err, size_t errlen)
{
	uint64_t n = a->size / ipurt_dtype_size(a->dtype), i, inf = 0;
	uint32_t have = a->dtype;
	char sp[256], sa[256];
	void *out;

	if (have == want)
		return 0;
	if (!((have == IPURT_DT_F32 && want == IPURT_DT_F16) || (have == IPURT_DT_F16 && want == IPURT_DT_F32) ||
	      (is_int(have) && is_int(want))))
		return 0;
	cli_safe(path, sp, sizeof(sp));
	cli_safe(anchor, sa, sizeof(sa));
	out = malloc(n ? n * ipurt_dtype_size(want) : 1);
	if (!out) {
		snprintf(err, errlen, "out of memory converting %s", sp);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (have == IPURT_DT_F32) {
			float f = ((const float *)a->data)[i];
			uint16_t h = ipu_f32_to_f16(f);

			inf += isfinite(f) && isinf(ipu_f16_to_f32(h));
			((uint16_t *)out)[i] = h;
		} else if (have == IPURT_DT_F16) {
			((float *)out)[i] = ipu_f16_to_f32(((const uint16_t *)a->data)[i]);
		} else {
			int64_t v = get_int(a->data, have, i);

			if (!fits(v, want)) {
				snprintf(err, errlen, "%s: element %llu is %lld, out of the range of input '%s' (%s)",
					 sp, (unsigned long long)i, (long long)v, sa, ipurt_dtype_name(want));
				free(out);
				return -1;
			}
			put_int(out, want, i, v);
		}
	}
	snprintf(note, notelen, "%s is %s, input '%s' is %s: converted%s", sp, ipurt_dtype_name(have), sa,
		 ipurt_dtype_name(want),
		 have == IPURT_DT_F32 ? (inf ? " (rounded to nearest; some values beyond float16's range became infinite)"
					     : " (rounded to nearest)")
				      : " (no value changed)");
	free(a->data);
	a->data = out;
	a->dtype = want;
	a->size = n * ipurt_dtype_size(want);
	return 1;
}
