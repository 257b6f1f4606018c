/* SPDX-License-Identifier: MIT */
/*
 * alloc_inject.h - allocation-failure injection for tests, as SQLite's
 * test harness does it: the Nth allocation (malloc, calloc, realloc,
 * strdup, strndup, aligned_alloc, posix_memalign) made by the project's
 * code fails, for N = 1, 2, ... until an operation completes without
 * reaching N.  Test binaries get it by linking alloc_inject.o with
 * -Wl,--wrap=malloc,... (ALLOC_WRAP in alloc-tests.mk); the libraries are
 * not changed.  Allocations inside shared libraries (libc, protobuf-c,
 * libyaml) are not counted: the linker only redirects our objects' calls.
 */
#ifndef IPU_ALLOC_INJECT_H
#define IPU_ALLOC_INJECT_H

/* Fail the nth allocation from now on (0: never fail). Resets the count. */
void alloc_fail_at(long n);
/* Allocations counted since the last alloc_fail_at(). */
long alloc_count(void);
/* 1 if the armed failure has been injected. */
int alloc_injected(void);

#endif
