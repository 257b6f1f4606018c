// SPDX-License-Identifier: MIT
/*
 * test_error.c - the one error table (ipu/error.h): every code of every
 * layer has one unique name and a description, the verifier's findings
 * belong to the IPU_E_VERIFY class, every code has an errno class (one
 * per kind of failure, whatever the layer), no code is a -errno value and
 * a plain -errno passes through with its C library name, and the
 * formatting helper truncates
 * safely and returns the code it was given.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "ipu/error.h"

/* Every code the header declares, by layer (kept in step with the enum). */
static int all_codes(int *out)
{
	int n = 0, c;

	out[n++] = IPU_OK;
	for (c = IPUX_E_TRUNCATED; c >= IPUX_E_SIZE_OVERFLOW; c--)
		out[n++] = c;
	for (c = IPU_E_NOMEM; c >= IPU_E_VERIFY; c--)
		out[n++] = c;
	for (c = IPUEF_E_IO; c >= IPUEF_E_OPAQUE; c--)
		out[n++] = c;
	for (c = IPURT_NPY_E_IO; c >= IPURT_NPY_E_VALUE; c--)
		out[n++] = c;
	for (c = IPURT_E_NOMEM; c >= IPURT_E_CLOSED; c--)
		out[n++] = c;
	return n;
}

TEST(every_code_named_once)
{
	int codes[256], n = all_codes(codes), i, j;

	CHECK_EQ_INT(n, 114);
	for (i = 0; i < n; i++) {
		const char *name = ipu_err_name(codes[i]);

		CHECK_MSG(strcmp(name, "IPU_E_UNKNOWN"), "code %d has no name", codes[i]);
		CHECK_MSG(strcmp(ipu_strerror(codes[i]), "unknown error"),
			  "code %d has no description", codes[i]);
		for (j = 0; j < i; j++)
			CHECK_MSG(strcmp(name, ipu_err_name(codes[j])), "%s named twice", name);
	}
	/* the layers' own spellings, including the .npy ones that used to print as unknown */
	CHECK(!strcmp(ipu_err_name(IPURT_NPY_E_ORDER), "IPURT_NPY_E_ORDER"));
	CHECK(!strcmp(ipu_err_name(IPUEF_E_CHECKSUM), "IPUEF_E_CHECKSUM"));
	CHECK(!strcmp(ipu_err_name(IPUX_E_TILES), "IPUX_E_TILES"));
	CHECK(!strcmp(ipu_err_name(IPURT_E_SHAPE), "IPURT_E_SHAPE"));
	CHECK(!strcmp(ipu_err_name(IPU_E_VERIFY), "IPU_E_VERIFY"));
	/* gaps between the layers and beyond them are unknown, never NULL */
	CHECK(!strcmp(ipu_err_name(IPU_ERR_BASE - 47), "IPU_E_UNKNOWN"));
	CHECK(!strcmp(ipu_err_name(IPU_ERR_BASE - 200), "IPU_E_UNKNOWN"));
	CHECK(!strcmp(ipu_err_name(IPU_ERR_BASE), "IPU_E_UNKNOWN"));
	CHECK(!strcmp(ipu_err_name(12345), "IPU_E_UNKNOWN"));
	CHECK(!strcmp(ipu_strerror(IPU_ERR_BASE - 1000), "unknown error"));
	/* a plain -errno has the C library's name and description */
	CHECK(!strcmp(ipu_err_name(-ENOMEM), "ENOMEM"));
	CHECK(!strcmp(ipu_err_name(-ETIMEDOUT), "ETIMEDOUT"));
	CHECK(!strcmp(ipu_strerror(-ETIMEDOUT), "Connection timed out"));
	CHECK(!strcmp(ipu_err_name(-4000), "IPU_E_UNKNOWN"));
	CHECK(!strcmp(ipu_strerror(-4000), "unknown error"));
}

TEST(codes_never_overlap_errno)
{
	int codes[256], n = all_codes(codes), i;

	/* every code lies below the -errno range, so neither is read as the other */
	for (i = 1; i < n; i++)
		CHECK_MSG(codes[i] < -IPU_ERRNO_MAX, "%s is %d, a -errno value",
			  ipu_err_name(codes[i]), codes[i]);
	CHECK_EQ_INT(IPU_ERR_BASE, -IPU_ERRNO_MAX - 1);
	/* every -errno is its own class: -12 is -ENOMEM, -110 -ETIMEDOUT */
	for (i = 1; i <= IPU_ERRNO_MAX; i++)
		CHECK_MSG(ipu_err_errno(-i) == -i, "-%d has class %d", i, ipu_err_errno(-i));
}

TEST(verifier_findings_are_details_of_one_class)
{
	int c;

	for (c = IPUX_E_TRUNCATED; c >= IPUX_E_SIZE_OVERFLOW; c--)
		CHECK_EQ_INT(ipu_err_class(c), IPU_E_VERIFY);
	CHECK_EQ_INT(ipu_err_class(IPU_E_VERIFY), IPU_E_VERIFY);
	CHECK_EQ_INT(ipu_err_class(IPU_E_NOMEM), IPU_E_NOMEM);
	CHECK_EQ_INT(ipu_err_class(IPUEF_E_CHECKSUM), IPUEF_E_CHECKSUM);
	CHECK_EQ_INT(ipu_err_class(0), 0);
}

/* The classes a caller may see: each maps to one HTTP status and one Python exception. */
static int known_class(int c)
{
	switch (c) {
	case -ENOMEM: case -EINVAL: case -EBUSY: case -ETIMEDOUT: case -ECANCELED:
	case -ESHUTDOWN: case -ENODEV: case -EIO: case -ENOEXEC: case -EPROTO: case -EOVERFLOW:
		return 1;
	default:
		return 0;
	}
}

TEST(every_code_has_an_errno_class)
{
	int codes[256], n = all_codes(codes), i;

	CHECK_EQ_INT(ipu_err_errno(IPU_OK), 0);
	for (i = 1; i < n; i++)
		CHECK_MSG(known_class(ipu_err_errno(codes[i])), "%s has class %d",
			  ipu_err_name(codes[i]), ipu_err_errno(codes[i]));
	/* one class per kind, whatever the layer */
	CHECK_EQ_INT(ipu_err_errno(IPU_E_NOMEM), -ENOMEM);
	CHECK_EQ_INT(ipu_err_errno(IPUEF_E_NOMEM), -ENOMEM);
	CHECK_EQ_INT(ipu_err_errno(IPURT_NPY_E_NOMEM), -ENOMEM);
	CHECK_EQ_INT(ipu_err_errno(IPURT_E_NOMEM), -ENOMEM);
	CHECK_EQ_INT(ipu_err_errno(IPU_E_INVAL), -EINVAL);
	CHECK_EQ_INT(ipu_err_errno(IPUEF_E_INVAL), -EINVAL);
	CHECK_EQ_INT(ipu_err_errno(IPURT_NPY_E_INVAL), -EINVAL);
	CHECK_EQ_INT(ipu_err_errno(IPURT_E_SHAPE), -EINVAL);
	CHECK_EQ_INT(ipu_err_errno(IPU_E_TIMEOUT), -ETIMEDOUT);
	CHECK_EQ_INT(ipu_err_errno(IPURT_E_TIMEOUT), -ETIMEDOUT);
	CHECK_EQ_INT(ipu_err_errno(IPU_E_BUSY), -EBUSY);
	CHECK_EQ_INT(ipu_err_errno(IPURT_E_BUSY), -EBUSY);
	CHECK_EQ_INT(ipu_err_errno(IPU_E_CANCELLED), -ECANCELED);
	CHECK_EQ_INT(ipu_err_errno(IPURT_E_CANCELLED), -ECANCELED);
	CHECK_EQ_INT(ipu_err_errno(IPU_E_IO), -EIO);
	CHECK_EQ_INT(ipu_err_errno(IPUEF_E_IO), -EIO);
	CHECK_EQ_INT(ipu_err_errno(IPURT_E_CLOSED), -ESHUTDOWN);
	/* a verifier finding is an unusable executable, like its class IPU_E_VERIFY */
	for (i = IPUX_E_TRUNCATED; i >= IPUX_E_SIZE_OVERFLOW; i--)
		CHECK_EQ_INT(ipu_err_errno(i), ipu_err_errno(IPU_E_VERIFY));
	CHECK_EQ_INT(ipu_err_errno(IPU_E_VERIFY), -ENOEXEC);
	CHECK_EQ_INT(ipu_err_errno(IPUX_E_SECTION_ALIGN), -ENOEXEC);
	/* a plain -errno (the kernel backend's) passes through */
	CHECK_EQ_INT(ipu_err_errno(-ENOMEM), -ENOMEM);
	CHECK_EQ_INT(ipu_err_errno(-ETIMEDOUT), -ETIMEDOUT);
	CHECK_EQ_INT(ipu_err_errno(-EBADE), -EBADE);
	CHECK_EQ_INT(ipu_err_errno(-EPROTO), -EPROTO);
	CHECK_EQ_INT(ipu_err_errno(-EADDRINUSE), -EADDRINUSE);
	CHECK_EQ_INT(ipu_err_errno(-EHWPOISON), -EHWPOISON);
	CHECK_EQ_INT(ipu_err_errno(-IPU_ERRNO_MAX), -IPU_ERRNO_MAX);
	/* neither a code nor an errno */
	CHECK_EQ_INT(ipu_err_errno(-IPU_ERRNO_MAX - 1), -EIO);
	CHECK_EQ_INT(ipu_err_errno(7), -EINVAL);
}

TEST(formatting_helper)
{
	struct ipu_error e;
	char small[8];

	memset(small, 'x', sizeof(small));
	CHECK_EQ_INT(ipu_errorf(small, sizeof(small), IPU_E_INVAL, "value %d too large", 123456),
		     IPU_E_INVAL);
	CHECK(!strcmp(small, "value 1"));
	CHECK_EQ_INT(ipu_errorf(NULL, 0, IPURT_E_NAME, "ignored %s", "x"), IPURT_E_NAME);
	CHECK_EQ_INT(ipu_errorf(small, 0, IPURT_E_NAME, "not written"), IPURT_E_NAME);
	CHECK(!strcmp(small, "value 1"));
	CHECK_EQ_INT(ipu_error_set(&e, IPU_E_VERIFY, IPUX_E_CHECKSUM, "crc %08x", 0xdeadbeefu),
		     IPU_E_VERIFY);
	CHECK_EQ_INT(e.code, IPU_E_VERIFY);
	CHECK_EQ_INT(e.detail, IPUX_E_CHECKSUM);
	CHECK(!strcmp(e.msg, "crc deadbeef"));
	CHECK_EQ_INT(ipu_error_set(NULL, IPU_E_IO, 0, "nowhere"), IPU_E_IO);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(every_code_named_once);
	RUN(verifier_findings_are_details_of_one_class);
	RUN(every_code_has_an_errno_class);
	RUN(codes_never_overlap_errno);
	RUN(formatting_helper);
	return TH_DONE();
}
