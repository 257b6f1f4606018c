/* SPDX-License-Identifier: MIT */
/*
 * repo_poll.h - --model-control-mode=poll: the repository looked at every
 * --repository-poll-secs seconds; a model folder added is loaded, one
 * whose config or versions changed is reloaded (requests in flight finish
 * on the versions they hold), one removed is unloaded.
 */
#ifndef IPU_SERVE_REPO_POLL_H
#define IPU_SERVE_REPO_POLL_H

#include <stddef.h>

struct srv_repo;
struct srv_poll;

/*
 * Take the repository's state as it is now (call before the models are
 * first loaded, so that a change made meanwhile is seen at the first poll).
 */
int srv_poll_create(struct srv_repo *r, const char *dir, int log_verbose, struct srv_poll **out,
		    char *err, size_t errlen);
/* Look once: load, reload and unload what changed since the last look. */
void srv_poll_scan(struct srv_poll *p);
/* Look every `secs` seconds on a thread of its own until srv_poll_destroy. */
int srv_poll_start(struct srv_poll *p, unsigned secs, char *err, size_t errlen);
/* Stop the thread (waits for a load under way) and free. */
void srv_poll_destroy(struct srv_poll *p);

#endif /* IPU_SERVE_REPO_POLL_H */
