/* SPDX-License-Identifier: MIT */
/*
 * cl_opt.h - included first by every codelet source file.
 *
 * The codelets are the device's hot loops and rely on gcc's loop
 * vectoriser, which -O2 (QEMU's default build) runs with a cost model too
 * cheap for them (3-10x slower elementwise codelets).  Ask for -O3 whatever
 * the command line says, as long as optimisation is on at all (so -O0 debug
 * builds stay debuggable).  This must come before any include so that every
 * function of the file, header inlines included, gets the same options.
 */
#ifndef IPU_CL_OPT_H
#define IPU_CL_OPT_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) && \
	!defined(__OPTIMIZE_SIZE__)
#pragma GCC optimize("O3")
#endif

#endif /* IPU_CL_OPT_H */
