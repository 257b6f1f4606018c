/* SPDX-License-Identifier: MIT */
/*
 * thread.h - threads a library starts take none of the process's signals.
 *
 * A signal sent to the process (SIGINT, SIGTERM, ...) goes to a thread that
 * does not block it; if that were a worker of the engine, libipu or the
 * runtime, the program's own handling (a tool holding signals while it
 * renames a file into place, QEMU's main loop) would be bypassed.  So every
 * thread is created with all signals blocked, as QEMU does for its own.
 * Faults (SIGSEGV, ...) still reach the faulting thread.
 */
#ifndef IPU_THREAD_H
#define IPU_THREAD_H

#include <pthread.h>
#include <signal.h>

static inline int ipu_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

#endif
