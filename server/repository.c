// SPDX-License-Identifier: MIT
/*
 * repository.c - the model repository in Triton's layout:
 *
 *   <repo>/<model>/config.pbtxt or config.yaml   optional, not both
 *   <repo>/<model>/<version>/model.ipuef         version: a whole number
 *                   (or model.onnx, or the config's default_model_filename)
 *
 * Loaded versions are handed out as counted references: an unload or a
 * reload takes the versions out of the table at once (new requests see
 * the change) while requests already holding a version finish on it; the
 * last reference stops its workers and frees it.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "json_budget.h"
#include "serve.h"

struct repo_entry {
	char *name;
	enum srv_state state;
	char reason[SRV_ERR];
	struct srv_model *ver[SRV_MAX_VERSIONS];
	uint32_t nver;
	struct repo_entry *next;
};

struct srv_repo {
	char *dir;
	struct srv_load_opts o;
	pthread_mutex_t lock;		/* the table and every model's refs */
	pthread_mutex_t load_lock;	/* one load or unload at a time */
	struct repo_entry *models;
};

const char *srv_state_name(enum srv_state s)
{
	switch (s) {
	case SRV_READY: return "READY";
	case SRV_LOADING: return "LOADING";
	case SRV_UNLOADING: return "UNLOADING";
	default: return "UNAVAILABLE";
	}
}

int srv_repo_create(const char *dir, const struct srv_load_opts *o, struct srv_repo **out,
		    char *err, size_t errlen)
{
	struct srv_repo *r;
	struct stat st;

	*out = NULL;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "model repository '%s' is not a folder%s%s", dir,
			 errno ? ": " : "", errno ? strerror(errno) : "");
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(dir))) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->o = *o;
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->load_lock, NULL);
	*out = r;
	return 0;
}

static void put_locked(struct srv_model *m, struct srv_model **dead)
{
	if (--m->refs == 0)
		*dead = m;
}

void srv_repo_put(struct srv_repo *r, struct srv_model *m)
{
	struct srv_model *dead = NULL;

	pthread_mutex_lock(&r->lock);
	put_locked(m, &dead);
	pthread_mutex_unlock(&r->lock);
	srv_model_destroy(dead);
}

void srv_repo_destroy(struct srv_repo *r)
{
	struct repo_entry *e, *next;
	uint32_t i;

	if (!r)
		return;
	for (e = r->models; e; e = next) {
		next = e->next;
		for (i = 0; i < e->nver; i++)
			srv_repo_put(r, e->ver[i]);
		free(e->name);
		free(e);
	}
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->load_lock);
	free(r->dir);
	free(r);
}

/* A model name is one folder of the repository, nothing else. */
static int valid_name(const char *name)
{
	return name && *name && name[0] != '.' && !strchr(name, '/') && strlen(name) < 256;
}

static struct repo_entry *find(struct srv_repo *r, const char *name)
{
	struct repo_entry *e;

	for (e = r->models; e; e = e->next)
		if (!strcmp(e->name, name))
			return e;
	return NULL;
}

static struct repo_entry *find_or_add(struct srv_repo *r, const char *name)
{
	struct repo_entry *e = find(r, name);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->name = strdup(name))) {
		free(e);
		return NULL;
	}
	e->next = r->models;
	r->models = e;
	return e;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The model file of a version folder: the config's default_model_filename,
 * else model.ipuef, else model.onnx (compiled at load); NULL if none. */
static const char *version_model(const struct srv_model_config *c, const char *mdir,
				 const char *version, char *path, size_t len)
{
	static const char *const names[] = { "model.ipuef", "model.onnx" };
	struct stat st;

	if (c->model_filename[0]) {
		snprintf(path, len, "%s/%s/%s", mdir, version, c->model_filename);
		return !stat(path, &st) && S_ISREG(st.st_mode) ? c->model_filename : NULL;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path, len, "%s/%s/%s", mdir, version, names[i]);
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			return names[i];
	}
	return NULL;
}

/* The version folders holding a model.ipuef or model.onnx, ascending. */
static int scan_versions(const struct srv_model_config *c, const char *mdir, int64_t *v,
			 uint32_t *n, char *err, size_t errlen)
{
	DIR *d = opendir(mdir);
	struct dirent *de;

	*n = 0;
	if (!d) {
		snprintf(err, errlen, "%s: %s", mdir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		char path[4096], *end;
		long long x;

		if (!de->d_name[0] || de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		errno = 0;
		x = strtoll(de->d_name, &end, 10);
		if (*end || errno || x < 0)
			continue;
		if (!version_model(c, mdir, de->d_name, path, sizeof(path)))
			continue;
		if (*n == SRV_MAX_VERSIONS) {
			closedir(d);
			snprintf(err, errlen, "%s: more than %d versions", mdir, SRV_MAX_VERSIONS);
			return -1;
		}
		v[(*n)++] = x;
	}
	closedir(d);
	qsort(v, *n, sizeof(v[0]), cmp_i64);
	return 0;
}

/* Versions the policy serves, from the ones on disk. */
static int select_versions(const struct srv_model_config *c, const int64_t *have, uint32_t nhave,
			   int64_t *sel, uint32_t *nsel, char *err, size_t errlen)
{
	uint32_t i, j;

	*nsel = 0;
	switch (c->policy) {
	case SRV_POLICY_ALL:
		memcpy(sel, have, nhave * sizeof(*have));
		*nsel = nhave;
		break;
	case SRV_POLICY_LATEST:
		for (i = nhave > c->latest_n ? nhave - c->latest_n : 0; i < nhave; i++)
			sel[(*nsel)++] = have[i];
		break;
	case SRV_POLICY_SPECIFIC:
		for (i = 0; i < c->num_versions; i++) {
			for (j = 0; j < nhave && have[j] != c->versions[i]; j++)
				;
			if (j == nhave) {
				snprintf(err, errlen, "version_policy names version %lld, which has no "
					 "<version>/model.ipuef or model.onnx", (long long)c->versions[i]);
				return -1;
			}
			sel[(*nsel)++] = c->versions[i];
		}
		qsort(sel, *nsel, sizeof(sel[0]), cmp_i64);
		break;
	}
	if (!*nsel && c->model_filename[0]) {
		snprintf(err, errlen, "no version to serve: add <version>/%s (default_model_filename)",
			 c->model_filename);
		return -1;
	}
	if (!*nsel) {
		snprintf(err, errlen, "no version to serve: add <version>/model.ipuef (e.g. 1/model.ipuef) or <version>/model.onnx");
		return -1;
	}
	return 0;
}

int srv_repo_load(struct srv_repo *r, const char *name, char *err, size_t errlen)
{
	char mdir[4096], msg[SRV_ERR];
	struct srv_model_config cfg;
	struct srv_load_opts lo;
	struct srv_model *fresh[SRV_MAX_VERSIONS] = { 0 }, *old[SRV_MAX_VERSIONS];
	int64_t have[SRV_MAX_VERSIONS], sel[SRV_MAX_VERSIONS];
	uint32_t nhave = 0, nsel = 0, nold = 0, i;
	struct repo_entry *e;
	struct stat st;
	int rc = 400;

	if (!valid_name(name)) {
		snprintf(err, errlen, "'%s' is not a model name (one folder of the repository)",
			 name ? name : "");
		return 400;
	}
	snprintf(mdir, sizeof(mdir), "%s/%s", r->dir, name);
	if (stat(mdir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "the repository has no model '%s' (no folder %s)", name, mdir);
		return 404;
	}
	pthread_mutex_lock(&r->load_lock);
	pthread_mutex_lock(&r->lock);
	e = find_or_add(r, name);
	if (e && !e->nver)
		e->state = SRV_LOADING;
	pthread_mutex_unlock(&r->lock);
	if (!e) {
		pthread_mutex_unlock(&r->load_lock);
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	if (srv_model_config_read(mdir, name, &cfg, msg, sizeof(msg)) ||
	    scan_versions(&cfg, mdir, have, &nhave, msg, sizeof(msg)) ||
	    select_versions(&cfg, have, nhave, sel, &nsel, msg, sizeof(msg)))
		goto fail;
	/* parameters timeout_ns: this model's execution timeout */
	lo = r->o;
	if (cfg.has_timeout)
		lo.exec_timeout_ns = cfg.timeout_ns;
	for (i = 0; i < nsel; i++) {
		char path[4096], m2[SRV_ERR], ver[32];
		const char *file;
		size_t fl;
		struct ipuef_file *f = NULL;

		snprintf(ver, sizeof(ver), "%lld", (long long)sel[i]);
		file = version_model(&cfg, mdir, ver, path, sizeof(path));
		fl = file ? strlen(file) : 0;
		/* an ONNX model is compiled now, in memory (model.ipuef wins) */
		if (fl >= 5 && !strcmp(file + fl - 5, ".onnx") &&
		    srv_compile_onnx(path, &f, m2, sizeof(m2))) {
			snprintf(msg, sizeof(msg), "version %lld: %s", (long long)sel[i], m2);
			goto fail;
		}
		if (f && r->o.log_verbose)
			fprintf(stderr, "ipu-serve: compiled %s\n", cli_safe(path, m2, sizeof(m2)));
		if (srv_model_create_from(name, sel[i], path, f, &cfg, &lo, &fresh[i], m2, sizeof(m2)) ||
		    srv_model_config_check_io(&cfg, fresh[i], m2, sizeof(m2))) {
			snprintf(msg, sizeof(msg), "version %lld: %s", (long long)sel[i], m2);
			goto fail;
		}
		fresh[i]->refs = 1;
	}
	/* the new versions replace the old ones at once */
	pthread_mutex_lock(&r->lock);
	nold = e->nver;
	memcpy(old, e->ver, nold * sizeof(old[0]));
	memcpy(e->ver, fresh, nsel * sizeof(fresh[0]));
	e->nver = nsel;
	e->state = SRV_READY;
	e->reason[0] = 0;
	pthread_mutex_unlock(&r->lock);
	for (i = 0; i < nold; i++)
		srv_repo_put(r, old[i]);
	pthread_mutex_unlock(&r->load_lock);
	if (r->o.log_verbose) {
		char safe[1024];

		/* a folder's name may hold control bytes: never raw into the log */
		fprintf(stderr, "ipu-serve: loaded model '%s' (%u version%s)\n",
			cli_safe(name, safe, sizeof(safe)), nsel, nsel == 1 ? "" : "s");
	}
	return 0;
fail:
	for (i = 0; i < nsel; i++)
		srv_model_destroy(fresh[i]);
	pthread_mutex_lock(&r->lock);
	/* a failed reload keeps the versions that were serving */
	if (!e->nver)
		e->state = SRV_UNAVAILABLE;
	snprintf(e->reason, sizeof(e->reason), "%s", msg);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&r->load_lock);
	snprintf(err, errlen, "failed to load '%s': %s", name, msg);
	return rc;
}

int srv_repo_unload(struct srv_repo *r, const char *name, char *err, size_t errlen)
{
	struct srv_model *old[SRV_MAX_VERSIONS];
	struct repo_entry *e;
	uint32_t nold, i;

	pthread_mutex_lock(&r->load_lock);
	pthread_mutex_lock(&r->lock);
	e = valid_name(name) ? find(r, name) : NULL;
	if (!e || !e->nver) {
		pthread_mutex_unlock(&r->lock);
		pthread_mutex_unlock(&r->load_lock);
		snprintf(err, errlen, "model '%s' is not loaded", name ? name : "");
		return e ? 400 : 404;
	}
	nold = e->nver;
	memcpy(old, e->ver, nold * sizeof(old[0]));
	e->nver = 0;
	e->state = SRV_UNAVAILABLE;
	snprintf(e->reason, sizeof(e->reason), "unloaded");
	pthread_mutex_unlock(&r->lock);
	/* requests in flight keep their version until they are answered */
	for (i = 0; i < nold; i++)
		srv_repo_put(r, old[i]);
	pthread_mutex_unlock(&r->load_lock);
	if (r->o.log_verbose) {
		char safe[1024];

		fprintf(stderr, "ipu-serve: unloaded model '%s'\n", cli_safe(name, safe, sizeof(safe)));
	}
	return 0;
}

int srv_repo_load_all(struct srv_repo *r, char *err, size_t errlen)
{
	DIR *d = opendir(r->dir);
	struct dirent *de;
	char *names[4096];
	uint32_t n = 0, i;
	int rc = 0;

	if (!d) {
		snprintf(err, errlen, "%s: %s", r->dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) && n < 4096) {
		char path[4096];
		struct stat st;

		if (!valid_name(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->dir, de->d_name);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		if (!rc && srv_repo_load(r, names[i], err, errlen))
			rc = -1;
		free(names[i]);
	}
	return rc;
}

struct srv_model *srv_repo_get(struct srv_repo *r, const char *name, int64_t version,
			       char *err, size_t errlen)
{
	struct repo_entry *e;
	struct srv_model *m = NULL;
	uint32_t i;

	pthread_mutex_lock(&r->lock);
	e = find(r, name);
	if (!e || !e->nver) {
		if (e && e->state == SRV_UNAVAILABLE)
			snprintf(err, errlen, "model '%s' is not loaded (%s)", name,
				 e->reason[0] ? e->reason : "unavailable");
		else
			snprintf(err, errlen, "unknown model '%s'", name);
	} else if (version < 0) {
		m = e->ver[e->nver - 1];
	} else {
		for (i = 0; i < e->nver; i++)
			if (e->ver[i]->version == version)
				m = e->ver[i];
		if (!m)
			snprintf(err, errlen, "model '%s' has no version %lld loaded", name,
				 (long long)version);
	}
	if (m)
		m->refs++;
	pthread_mutex_unlock(&r->lock);
	return m;
}

uint32_t srv_repo_versions(struct srv_repo *r, const char *name, struct srv_model **out,
			   uint32_t max)
{
	struct repo_entry *e;
	uint32_t n = 0, i;

	pthread_mutex_lock(&r->lock);
	e = find(r, name);
	for (i = 0; e && i < e->nver && n < max; i++) {
		e->ver[i]->refs++;
		out[n++] = e->ver[i];
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}

uint32_t srv_repo_all(struct srv_repo *r, struct srv_model **out, uint32_t max)
{
	struct repo_entry *e;
	uint32_t n = 0, i;

	pthread_mutex_lock(&r->lock);
	for (e = r->models; e; e = e->next) {
		for (i = 0; i < e->nver && n < max; i++) {
			e->ver[i]->refs++;
			out[n++] = e->ver[i];
		}
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *srv_repo_index_json(struct srv_repo *r, int ready_only)
{
	json_t *arr = json_array();
	DIR *d = opendir(r->dir);
	struct dirent *de;
	char *names[4096], *text = NULL;
	uint32_t n = 0, i, k;

	/* every folder of the repository, loaded or not */
	while (d && (de = readdir(d)) && n < 4096) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", r->dir, de->d_name);
		if (valid_name(de->d_name) && !stat(path, &st) && S_ISDIR(st.st_mode) &&
		    (names[n] = strdup(de->d_name)))
			n++;
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_names);
	pthread_mutex_lock(&r->lock);
	for (i = 0; arr && i < n; i++) {
		struct repo_entry *e = find(r, names[i]);

		if (e && e->nver) {
			for (k = 0; k < e->nver; k++) {
				char v[32];

				snprintf(v, sizeof(v), "%lld", (long long)e->ver[k]->version);
				json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s}", "name", names[i],
								     "version", v, "state", "READY",
								     "reason", ""));
			}
		} else if (!ready_only) {
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", names[i], "state",
							     srv_state_name(e ? e->state : SRV_UNAVAILABLE),
							     "reason", e ? e->reason : ""));
		}
	}
	pthread_mutex_unlock(&r->lock);
	for (i = 0; i < n; i++)
		free(names[i]);
	if (arr)
		text = srv_json_text(arr, JSON_COMPACT | JSON_ENSURE_ASCII, NULL);
	json_decref(arr);
	return text;
}
