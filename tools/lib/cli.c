// SPDX-License-Identifier: MIT
/* cli.c - see cli.h. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

void cli_print_version(const char *tool)
{
	printf("%s (ipu-stack) %s\n", tool, IPU_STACK_VERSION);
}

int cli_parse_u64(const char *tool, const char *opt, const char *arg, uint64_t min,
		  uint64_t max, uint64_t *out)
{
	unsigned long long v = 0;
	char *end = NULL;

	errno = 0;
	/* strtoull accepts a sign and leading blanks: a number starts with a digit */
	if (arg[0] >= '0' && arg[0] <= '9')
		v = strtoull(arg, &end, 0);
	if (!end || *end || errno || v < min || v > max) {
		fprintf(stderr, "%s: --%s: '%s' is not a whole number from %" PRIu64 " to %" PRIu64 "\n",
			tool, opt, arg, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* Length of the valid UTF-8 sequence at s (0 if it is not one). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

const char *cli_safe(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!len)
		return buf;
	while (*p && o + 1 < len) {
		size_t n = utf8_len(p);

		if (n == 1 && *p >= 0x20 && *p != 0x7f) {
			buf[o++] = (char)*p++;
		} else if (n > 1 && !(p[0] == 0xc2 && p[1] < 0xa0)) {	/* C1 controls */
			if (o + n >= len)
				break;
			memcpy(buf + o, p, n);
			o += n;
			p += n;
		} else {
			if (o + 5 > len)
				break;
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p++);
		}
	}
	buf[o] = 0;
	return buf;
}

int cli_check_output(FILE *err, const char *tool, const char *out, const char *const *inputs,
		     unsigned ninputs)
{
	struct stat so, si;
	char *copy, *dir;
	unsigned i;
	int rc = 0;

	if (!out || !*out) {
		fprintf(err, "%s: empty output path\n", tool);
		return -1;
	}
	if (!stat(out, &so)) {
		if (!S_ISREG(so.st_mode)) {
			fprintf(err, "%s: %s exists and is not a regular file; refusing to replace it\n",
				tool, out);
			return -1;
		}
		for (i = 0; i < ninputs; i++) {
			if (inputs[i] && !stat(inputs[i], &si) && si.st_dev == so.st_dev &&
			    si.st_ino == so.st_ino) {
				fprintf(err,
					"%s: the output %s is the input %s; refusing to overwrite an input\n",
					tool, out, inputs[i]);
				return -1;
			}
		}
	} else if (errno != ENOENT) {
		fprintf(err, "%s: %s: %s\n", tool, out, strerror(errno));
		return -1;
	}
	copy = strdup(out);
	if (!copy) {
		fprintf(err, "%s: out of memory\n", tool);
		return -1;
	}
	dir = dirname(copy);
	if (access(dir, W_OK | X_OK)) {
		fprintf(err, "%s: cannot write %s: folder %s: %s\n", tool, out, dir,
			strerror(errno));
		rc = -1;
	}
	free(copy);
	return rc;
}
