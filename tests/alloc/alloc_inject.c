// SPDX-License-Identifier: MIT
/*
 * alloc_inject.c - the --wrap'ed allocators behind alloc_inject.h.  The
 * counters are process-wide atomics: the runtime allocates from its feeder
 * and device threads too, and those allocations must be able to fail.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_inject.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t sz);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);

static atomic_long count;
static atomic_long fail_at;
static atomic_int injected;

void alloc_fail_at(long n)
{
	atomic_store(&fail_at, 0);
	atomic_store(&count, 0);
	atomic_store(&injected, 0);
	atomic_store(&fail_at, n);
}

long alloc_count(void)
{
	return atomic_load(&count);
}

int alloc_injected(void)
{
	return atomic_load(&injected);
}

static int should_fail(void)
{
	long n = atomic_load(&fail_at), c = atomic_fetch_add(&count, 1) + 1;

	if (n > 0 && c == n) {
		atomic_store(&injected, 1);
		return 1;
	}
	return 0;
}

void *__wrap_malloc(size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strndup(s, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_aligned_alloc(align, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	if (should_fail())
		return ENOMEM;
	return __real_posix_memalign(p, align, n);
}
