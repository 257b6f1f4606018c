// SPDX-License-Identifier: MIT
/*
 * test_serve_status.c - the one mapping from a library error to an HTTP
 * status (and through it to a gRPC code): by the code's class
 * (ipu_err_errno), for every code of ipu/error.h.
 */
#include <errno.h>
#include <string.h>

#include "grpc_server.h"
#include "harness.h"
#include "infer_core.h"
#include "ipu/error.h"

/*
 * Every library code answers by its class, whatever the layer that
 * raised it: a device timeout is a 504 like the runtime's, a busy device a
 * 503, every NOMEM a 503, and gRPC follows the same class.
 */
TEST(status_by_error_class)
{
	int c, n = 0;

	for (c = IPU_ERR_BASE - 1; c >= IPU_ERR_BASE - 400; c--) {
		int st;

		if (!strcmp(ipu_err_name(c), "IPU_E_UNKNOWN"))
			continue;
		n++;
		st = srv_status_of_runtime(c);
		CHECK_MSG(st == 400 || st == 404 || st == 500 || st == 503 || st == 504,
			  "%s: status %d", ipu_err_name(c), st);
		CHECK_EQ_INT(st, srv_status_of_class(ipu_err_errno(c)));
	}
	CHECK_EQ_INT(n, 113);
	CHECK_EQ_INT(srv_status_of_runtime(IPU_E_TIMEOUT), 504);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_E_TIMEOUT), 504);
	CHECK_EQ_INT(srv_grpc_code(srv_status_of_runtime(IPU_E_TIMEOUT)), 4); /* DEADLINE_EXCEEDED */
	CHECK_EQ_INT(srv_status_of_runtime(IPU_E_BUSY), 503);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_E_BUSY), 503);
	CHECK_EQ_INT(srv_grpc_code(srv_status_of_runtime(IPU_E_BUSY)), 14); /* UNAVAILABLE */
	CHECK_EQ_INT(srv_status_of_runtime(IPU_E_NOMEM), 503);
	CHECK_EQ_INT(srv_status_of_runtime(IPUEF_E_NOMEM), 503);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_NPY_E_NOMEM), 503);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_E_NOMEM), 503);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_E_CLOSED), 503);
	CHECK_EQ_INT(srv_status_of_runtime(IPU_E_CANCELLED), 504);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_E_SHAPE), 400);
	CHECK_EQ_INT(srv_status_of_runtime(IPU_E_INVAL), 400);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_NPY_E_FORMAT), 400);
	CHECK_EQ_INT(srv_status_of_runtime(IPU_E_FAULT), 500);
	CHECK_EQ_INT(srv_status_of_runtime(IPURT_E_DEVICE), 500);
	CHECK_EQ_INT(srv_status_of_runtime(IPUX_E_CHECKSUM), 500);
	/* a plain -errno (no code is one) keeps its own class */
	CHECK_EQ_INT(srv_status_of_runtime(-EADDRINUSE), 500);
	CHECK_EQ_INT(srv_status_of_runtime(-ETIMEDOUT), 504);
	CHECK_EQ_INT(srv_status_of_runtime(-ENOMEM), 503);
	CHECK_EQ_INT(srv_status_of_runtime(-EBUSY), 503);
	CHECK_EQ_INT(srv_status_of_runtime(-EINVAL), 400);
	CHECK_EQ_INT(srv_status_of_class(-EAGAIN), 503);
}

int main(int argc, char **argv)
{
	TH_INIT(argc, argv);
	RUN(status_by_error_class);
	return TH_DONE();
}
