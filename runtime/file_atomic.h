/* SPDX-License-Identifier: MIT */
/* file_atomic.h - replace a file so that readers never see half of it. */
#ifndef IPU_RT_FILE_ATOMIC_H
#define IPU_RT_FILE_ATOMIC_H

#include <stddef.h>

/*
 * Write data to a temporary file next to `path` (mode 0644), fsync it and
 * rename it over `path`.  Returns 0, or -1 with a message naming the step
 * and the errno in err; the temporary file is removed on failure.
 */
int rt_write_file_atomic(const char *path, const void *data, size_t len, char *err,
			 size_t errlen);

#endif
