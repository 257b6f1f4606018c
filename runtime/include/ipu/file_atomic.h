/* SPDX-License-Identifier: MIT */
/*
 * file_atomic.h - replace a file so that readers never see half of it, and
 * nothing but the file is ever replaced.  Every writer of the stack (.ipuef,
 * .npy, ONNX export) goes through it.
 */
#ifndef IPU_FILE_ATOMIC_H
#define IPU_FILE_ATOMIC_H

#include <stddef.h>

/*
 * Writes data to a temporary file next to `path` (mode 0644), fsyncs it and
 * renames it over `path`.  A `path` that exists and is not a regular file
 * (a directory, a device, a FIFO) is refused; a symbolic link to a regular
 * file is followed, so the link stays.  SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * are held back while the temporary file exists, so an interrupted tool
 * leaves either the old file or the new one, never a temporary.  Returns 0,
 * or -1 with a message naming the file and the step in err; the temporary
 * file is removed on failure.
 */
int ipurt_write_file_atomic(const char *path, const void *data, size_t len, char *err,
			    size_t errlen);

#endif
