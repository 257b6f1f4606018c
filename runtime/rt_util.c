// SPDX-License-Identifier: MIT
/* rt_util.c - small helpers of the Model Runtime. */
#include <string.h>

#include "ipu/npy.h"
#include "rt_internal.h"

void rt_shape_str(uint32_t dtype, uint32_t rank, const uint64_t *dims, char *buf, size_t len)
{
	size_t n;
	uint32_t i;

	n = (size_t)snprintf(buf, len, "%s[", ipurt_dtype_name(dtype));
	for (i = 0; i < rank && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%llu", i ? "," : "",
				      (unsigned long long)dims[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

const char *ipurt_err_name(int err)
{
	switch (err) {
#define N(x) case x: return #x
	N(IPURT_E_NOMEM); N(IPURT_E_INVAL); N(IPURT_E_NO_DEVICE); N(IPURT_E_BUSY);
	N(IPURT_E_TIMEOUT); N(IPURT_E_NAME); N(IPURT_E_DTYPE); N(IPURT_E_SHAPE);
	N(IPURT_E_MISSING); N(IPURT_E_BATCH); N(IPURT_E_MODEL); N(IPURT_E_DEVICE);
	N(IPURT_E_CANCELLED); N(IPURT_E_CLOSED);
#undef N
	case 0:
		return "OK";
	default:
		if (err <= -100 && err > -150)
			return ipuef_err_name(err);
		if (err <= -160 && err > -200)
			return ipurt_npy_err_name(err);
		return ipu_err_name(err);
	}
}
