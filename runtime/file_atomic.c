// SPDX-License-Identifier: MIT
/* file_atomic.c - see ipu/file_atomic.h. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipu/file_atomic.h"

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

int ipurt_write_file_atomic(const char *path, const void *data, size_t len, char *err,
			    size_t errlen)
{
	sigset_t hold, old;
	struct stat st;
	char *real = NULL, *tmp;
	size_t plen;
	int fd, rc = 0;

	if (!stat(path, &st)) {
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a regular file; not replacing it",
				 path);
			return -1;
		}
		/* write where a symbolic link points, so that the link stays */
		real = realpath(path, NULL);
		if (!real) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		path = real;
	}
	plen = strlen(path);
	tmp = malloc(plen + 16);
	if (!tmp) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(real);
		return -1;
	}
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigaddset(&hold, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &hold, &old);
	fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create a temporary file: %s", path,
			 strerror(errno));
		rc = -1;
		goto out;
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
out:
	/* a signal that came meanwhile is delivered now, with no temporary left */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(tmp);
	free(real);
	return rc;
}
