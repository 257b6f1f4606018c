// SPDX-License-Identifier: MIT
/* file_atomic.c - see file_atomic.h (used by the .ipuef and .npy writers). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_atomic.h"

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int rt_write_file_atomic(const char *path, const void *data, size_t len, char *err,
			 size_t errlen)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	int fd, rc = 0;

	if (!tmp) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create a temporary file: %s", path,
			 strerror(errno));
		free(tmp);
		return -1;
	}
	if (write_all(fd, data, len) || fsync(fd)) {
		snprintf(err, errlen, "%s: write: %s", tmp, strerror(errno));
		rc = -1;
	} else if (fchmod(fd, 0644)) {
		snprintf(err, errlen, "%s: chmod: %s", tmp, strerror(errno));
		rc = -1;
	}
	if (close(fd) && !rc) {
		snprintf(err, errlen, "%s: close: %s", tmp, strerror(errno));
		rc = -1;
	}
	if (!rc && rename(tmp, path)) {
		snprintf(err, errlen, "rename %s -> %s: %s", tmp, path, strerror(errno));
		rc = -1;
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}
