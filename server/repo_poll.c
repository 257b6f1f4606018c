// SPDX-License-Identifier: MIT
/*
 * repo_poll.c - the repository watched (--model-control-mode=poll, Triton's
 * name).  A model folder's fingerprint covers its config files' bytes and,
 * for each version folder, the name, size, modification time and inode of
 * each file in it: a file replaced (renamed over), rewritten or added
 * changes it.  A changed fingerprint reloads the model through the
 * repository, which swaps the versions at once and lets requests in flight
 * finish on the old ones; a load that fails keeps what was serving and is
 * retried only when the folder changes again.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "ipu/crc32.h"
#include "repo_poll.h"
#include "serve.h"

#define POLL_MAX_MODELS 4096

struct seen {
	char *name;
	uint32_t fp;
};

struct srv_poll {
	struct srv_repo *repo;
	char *dir;
	int log_verbose;
	struct seen *models;		/* the folders at the last look */
	uint32_t nmodels;
	pthread_t thread;
	int started;
	unsigned secs;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* CLOCK_MONOTONIC */
	int stop;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a folder, sorted (readdir's order is the file system's). */
static uint32_t list(const char *dir, char **names, uint32_t max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint32_t n = 0;

	while (d && (de = readdir(d)) && n < max) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((names[n] = strdup(de->d_name)))
			n++;
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	return n;
}

static uint32_t hash_file(uint32_t crc, const char *path)
{
	char buf[8192];
	FILE *f = fopen(path, "rb");
	size_t got;

	if (!f)
		return ipu_crc32(crc, "-", 1);
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		crc = ipu_crc32(crc, buf, got);
	fclose(f);
	return ipu_crc32(crc, "+", 1);
}

static uint32_t hash_stat(uint32_t crc, const char *name, const struct stat *st)
{
	char s[512];
	int n = snprintf(s, sizeof(s), "%s %lld %lld.%09ld %llu\n", name, (long long)st->st_size,
			 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (unsigned long long)st->st_ino);

	return ipu_crc32(crc, s, n > 0 ? (size_t)n : 0);
}

/* What the model's load depends on, as one number. */
static uint32_t fingerprint(const char *mdir)
{
	static const char *const configs[] = { "config.pbtxt", "config.yaml" };
	char path[4096], *names[256];
	uint32_t crc = 0, n, i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", mdir, configs[i]);
		crc = ipu_crc32(crc, configs[i], strlen(configs[i]));
		crc = hash_file(crc, path);
	}
	n = list(mdir, names, 256);
	for (i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", mdir, names[i]);
		if (names[i][0] >= '0' && names[i][0] <= '9' && !stat(path, &st) && S_ISDIR(st.st_mode)) {
			char *files[256], fpath[4096 + 256];
			uint32_t nf = list(path, files, 256), k;

			crc = ipu_crc32(crc, names[i], strlen(names[i]) + 1);
			for (k = 0; k < nf; k++) {
				snprintf(fpath, sizeof(fpath), "%s/%s", path, files[k]);
				if (!stat(fpath, &st))
					crc = hash_stat(crc, files[k], &st);
				free(files[k]);
			}
		}
		free(names[i]);
	}
	return crc;
}

static int model_folder(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;

	if (!name[0] || name[0] == '.' || strlen(name) >= 256)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static struct seen *find(struct srv_poll *p, const char *name)
{
	for (uint32_t i = 0; i < p->nmodels; i++)
		if (!strcmp(p->models[i].name, name))
			return &p->models[i];
	return NULL;
}

/* The folders now with their fingerprints (names taken over by out). */
static uint32_t look(struct srv_poll *p, struct seen *out)
{
	char *names[POLL_MAX_MODELS], mdir[4096];
	uint32_t n = list(p->dir, names, POLL_MAX_MODELS), k = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!model_folder(p->dir, names[i])) {
			free(names[i]);
			continue;
		}
		snprintf(mdir, sizeof(mdir), "%s/%s", p->dir, names[i]);
		out[k].name = names[i];
		out[k].fp = fingerprint(mdir);
		k++;
	}
	return k;
}

static void say(struct srv_poll *p, const char *what, const char *name, const char *err)
{
	char safe[1024], se[SRV_ERR + 64];

	if (err)
		fprintf(stderr, "ipu-serve: poll: %s\n", cli_safe(err, se, sizeof(se)));
	else if (p->log_verbose)
		fprintf(stderr, "ipu-serve: poll: model '%s' %s\n", cli_safe(name, safe, sizeof(safe)), what);
}

void srv_poll_scan(struct srv_poll *p)
{
	struct seen *now = calloc(POLL_MAX_MODELS, sizeof(*now));
	char err[SRV_ERR];
	uint32_t n, i;

	if (!now) {
		fprintf(stderr, "ipu-serve: poll: out of memory, the repository was not looked at\n");
		return;
	}
	n = look(p, now);
	for (i = 0; i < p->nmodels; i++) {
		int gone = 1;

		for (uint32_t k = 0; k < n && gone; k++)
			gone = strcmp(now[k].name, p->models[i].name) != 0;
		if (gone && !srv_repo_unload(p->repo, p->models[i].name, err, sizeof(err)))
			say(p, "removed: unloaded", p->models[i].name, NULL);
	}
	for (i = 0; i < n; i++) {
		struct seen *was = find(p, now[i].name);

		if (was && was->fp == now[i].fp)
			continue;
		if (srv_repo_load(p->repo, now[i].name, err, sizeof(err)))
			say(p, NULL, now[i].name, err);
		else
			say(p, was ? "changed: reloaded" : "added: loaded", now[i].name, NULL);
	}
	for (i = 0; i < p->nmodels; i++)
		free(p->models[i].name);
	free(p->models);
	p->models = now;
	p->nmodels = n;
}

int srv_poll_create(struct srv_repo *r, const char *dir, int log_verbose, struct srv_poll **out,
		    char *err, size_t errlen)
{
	struct srv_poll *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;

	*out = NULL;
	if (!p || !(p->dir = strdup(dir)) || !(p->models = calloc(POLL_MAX_MODELS, sizeof(*p->models)))) {
		if (p)
			free(p->dir);
		free(p);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->repo = r;
	p->log_verbose = log_verbose;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->nmodels = look(p, p->models);
	*out = p;
	return 0;
}

static void *poller(void *arg)
{
	struct srv_poll *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += p->secs;
		while (!p->stop && pthread_cond_timedwait(&p->cond, &p->lock, &ts) != ETIMEDOUT)
			;
		if (p->stop)
			break;
		pthread_mutex_unlock(&p->lock);
		srv_poll_scan(p);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int srv_poll_start(struct srv_poll *p, unsigned secs, char *err, size_t errlen)
{
	p->secs = secs ? secs : 1;
	if (pthread_create(&p->thread, NULL, poller, p)) {
		snprintf(err, errlen, "cannot start the repository poll thread");
		return -1;
	}
	p->started = 1;
	return 0;
}

void srv_poll_destroy(struct srv_poll *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->stop = 1;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	for (uint32_t i = 0; i < p->nmodels; i++)
		free(p->models[i].name);
	free(p->models);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->dir);
	free(p);
}
