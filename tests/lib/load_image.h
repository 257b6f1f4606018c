/* SPDX-License-Identifier: MIT */
/*
 * load_image.h - ipu_load for tests that report failures through a char
 * buffer: the message goes to err, and a refused image returns the
 * verifier's precise finding (the struct's detail) so a test can name it.
 */
#ifndef IPU_TEST_LOAD_IMAGE_H
#define IPU_TEST_LOAD_IMAGE_H

#include <stdio.h>

#include "ipu/ipu.h"

static inline int test_load_image(struct ipu_device *d, const void *img, size_t len, char *err,
				  size_t errlen)
{
	struct ipu_error e;
	int rc = ipu_load(d, img, len, &e);

	if (rc && err && errlen)
		snprintf(err, errlen, "%s", e.msg);
	return rc == IPU_E_VERIFY ? e.detail : rc;
}

#endif /* IPU_TEST_LOAD_IMAGE_H */
