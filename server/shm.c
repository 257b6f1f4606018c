// SPDX-License-Identifier: MIT
/*
 * shm.c - the system shared-memory extension (shm.h; Triton's
 * docs/protocol/extension_shared_memory.md): the registry of regions, its
 * endpoints, and the reads and writes of requests.
 *
 * Any process that can reach the API port can make the server open any
 * shared-memory object the server's user can open (Documentation/serve/
 * shared-memory.md): keys are single names under /dev/shm, opened without
 * following a symbolic link, and must be regular files.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_budget.h"
#include "shm.h"

struct srv_shm_region {
	char name[SRV_SHM_NAME_MAX + 1];
	char key[SRV_SHM_KEY_MAX + 1];
	uint64_t offset, byte_size;
	int fd;
	int writable;
	int refs;			/* the registry's (while registered) and requests' */
	struct srv_shm_region *next;
};

struct srv_shm {
	pthread_mutex_t lock;
	struct srv_shm_region *head;
	uint32_t count, max;
};

struct srv_shm *srv_shm_create(uint32_t max_regions)
{
	struct srv_shm *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->max = max_regions;
	return s;
}

static void drop(struct srv_shm_region *r)
{
	if (--r->refs)
		return;
	close(r->fd);
	free(r);
}

void srv_shm_destroy(struct srv_shm *s)
{
	struct srv_shm_region *r, *next;

	if (!s)
		return;
	for (r = s->head; r; r = next) {
		next = r->next;
		drop(r);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 400;
}

/* Names travel in URL paths: a short, unreserved set. */
static int name_ok(const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name), i;

	if (!n || n > SRV_SHM_NAME_MAX)
		return bad(err, errlen, "a region name has 1 to %d characters (got %zu)", SRV_SHM_NAME_MAX, n);
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._~:@+-", c)))
			return bad(err, errlen, "a region name may hold letters, digits and . _ ~ : @ + - "
				   "only (character %zu is 0x%02x)", i, (unsigned char)c);
	}
	return 0;
}

/* A POSIX shared-memory name: "/" then one file name, nothing that walks out of /dev/shm. */
static int key_ok(const char *key, size_t len, char *err, size_t errlen)
{
	if (len != strlen(key))
		return bad(err, errlen, "'key' holds a NUL character");
	if (len < 2 || key[0] != '/' || len > SRV_SHM_KEY_MAX)
		return bad(err, errlen, "'key' must be a shared-memory object name: '/' and 1 to %d "
			   "characters (as given to shm_open)", SRV_SHM_KEY_MAX - 1);
	if (strchr(key + 1, '/') || !strcmp(key, "/.") || !strcmp(key, "/.."))
		return bad(err, errlen, "'key' must name an object directly under /dev/shm: no '/' after "
			   "the first, not '.' or '..'");
	return 0;
}

static struct srv_shm_region *find(struct srv_shm *s, const char *name)
{
	struct srv_shm_region *r;

	for (r = s->head; r; r = r->next)
		if (!strcmp(r->name, name))
			return r;
	return NULL;
}

int srv_shm_register(struct srv_shm *s, const char *name, const char *key, uint64_t offset,
		     uint64_t byte_size, char *err, size_t errlen)
{
	struct srv_shm_region *r;
	struct stat st;
	int fd, writable = 1, rc;

	if ((rc = name_ok(name, err, errlen)) || (rc = key_ok(key, strlen(key), err, errlen)))
		return rc;
	if (!byte_size)
		return bad(err, errlen, "'byte_size' must be at least 1");
	if (offset > UINT64_MAX - byte_size)
		return bad(err, errlen, "'offset' + 'byte_size' overflows");
	/* glibc adds O_NOFOLLOW and O_CLOEXEC; O_NONBLOCK: a FIFO planted there cannot hang us */
	fd = shm_open(key, O_RDWR | O_NONBLOCK, 0);
	if (fd < 0 && (errno == EACCES || errno == EROFS)) {
		writable = 0;
		fd = shm_open(key, O_RDONLY | O_NONBLOCK, 0);
	}
	if (fd < 0)
		return bad(err, errlen, "cannot open shared-memory object '%s': %s%s", key, strerror(errno),
			   errno == ELOOP ? " (a symbolic link: refused)" : "");
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return bad(err, errlen, "'%s' is not a shared-memory object (not a regular file)", key);
	}
	if ((uint64_t)st.st_size < offset + byte_size) {
		close(fd);
		return bad(err, errlen, "region '%s': offset %llu + byte_size %llu is beyond the end of "
			   "'%s' (%lld bytes)", name, (unsigned long long)offset,
			   (unsigned long long)byte_size, key, (long long)st.st_size);
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->offset = offset;
	r->byte_size = byte_size;
	r->fd = fd;
	r->writable = writable;
	r->refs = 1;
	pthread_mutex_lock(&s->lock);
	if (find(s, name)) {
		pthread_mutex_unlock(&s->lock);
		drop(r);
		return bad(err, errlen, "region '%s' is already registered (unregister it first)", name);
	}
	if (s->count >= s->max) {
		pthread_mutex_unlock(&s->lock);
		drop(r);
		return bad(err, errlen, "%u regions are registered, the most the server keeps: unregister "
			   "some first", s->max);
	}
	r->next = s->head;
	s->head = r;
	s->count++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int srv_shm_unregister(struct srv_shm *s, const char *name)
{
	struct srv_shm_region **pp, *r;
	int found = 0;

	pthread_mutex_lock(&s->lock);
	for (pp = &s->head; (r = *pp);) {
		if (name && strcmp(r->name, name)) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		s->count--;
		found++;
		/* requests that hold it keep its descriptor until they end */
		drop(r);
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}

uint32_t srv_shm_count(struct srv_shm *s)
{
	uint32_t n;

	pthread_mutex_lock(&s->lock);
	n = s->count;
	pthread_mutex_unlock(&s->lock);
	return n;
}

struct srv_shm_region *srv_shm_acquire(struct srv_shm *s, const char *name, uint64_t offset,
				       uint64_t size, char *err, size_t errlen)
{
	struct srv_shm_region *r;

	pthread_mutex_lock(&s->lock);
	r = find(s, name);
	if (!r) {
		pthread_mutex_unlock(&s->lock);
		bad(err, errlen, "no shared-memory region '%.*s' is registered", SRV_SHM_NAME_MAX, name);
		return NULL;
	}
	if (offset > r->byte_size || size > r->byte_size - offset) {
		bad(err, errlen, "shared_memory_offset %llu + shared_memory_byte_size %llu is beyond region "
		    "'%s' (%llu bytes)", (unsigned long long)offset, (unsigned long long)size, r->name,
		    (unsigned long long)r->byte_size);
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	r->refs++;
	pthread_mutex_unlock(&s->lock);
	return r;
}

void srv_shm_release(struct srv_shm *s, struct srv_shm_region *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&s->lock);
	drop(r);
	pthread_mutex_unlock(&s->lock);
}

const char *srv_shm_region_name(const struct srv_shm_region *r)
{
	return r->name;
}

int srv_shm_read(struct srv_shm_region *r, uint64_t offset, void *buf, uint64_t size, char *err,
		 size_t errlen)
{
	uint64_t at = r->offset + offset, done = 0;

	while (done < size) {
		ssize_t n = pread(r->fd, (char *)buf + done, size - done, (off_t)(at + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return bad(err, errlen, "region '%s': '%s' ends before byte %llu (shrunk since it was "
				   "registered?)%s%s", r->name, r->key, (unsigned long long)(at + size),
				   n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		done += (uint64_t)n;
	}
	return 0;
}

int srv_shm_write(struct srv_shm_region *r, uint64_t offset, const void *buf, uint64_t size,
		  char *err, size_t errlen)
{
	uint64_t at = r->offset + offset, done = 0;
	struct stat st;

	if (!r->writable)
		return bad(err, errlen, "region '%s': '%s' could only be opened read-only, outputs cannot "
			   "be written into it", r->name, r->key);
	/* never grow an object its owner shrank: the answer would land past its end */
	if (fstat(r->fd, &st) || (uint64_t)st.st_size < at + size)
		return bad(err, errlen, "region '%s': '%s' ends before byte %llu (shrunk since it was "
			   "registered?)", r->name, r->key, (unsigned long long)(at + size));
	while (done < size) {
		ssize_t n = pwrite(r->fd, (const char *)buf + done, size - done, (off_t)(at + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return bad(err, errlen, "region '%s': writing '%s' failed: %s", r->name, r->key,
				   n < 0 ? strerror(errno) : "no progress");
		done += (uint64_t)n;
	}
	return 0;
}

int srv_shm_params(const json_t *params, const char *what, const char *name, const char **region,
		   uint64_t *offset, uint64_t *size, char *err, size_t errlen)
{
	json_t *reg = json_object_get(params, "shared_memory_region");
	json_t *off = json_object_get(params, "shared_memory_offset");
	json_t *sz = json_object_get(params, "shared_memory_byte_size");

	if (!reg && !off && !sz)
		return 0;
	if (!reg || !sz)
		return bad(err, errlen, "%s '%s': shared_memory_region and shared_memory_byte_size go "
			   "together", what, name);
	if (!json_is_string(reg))
		return bad(err, errlen, "%s '%s': shared_memory_region must be a string", what, name);
	if (!json_is_integer(sz) || json_integer_value(sz) < 0)
		return bad(err, errlen, "%s '%s': shared_memory_byte_size must be a whole number >= 0",
			   what, name);
	if (off && (!json_is_integer(off) || json_integer_value(off) < 0))
		return bad(err, errlen, "%s '%s': shared_memory_offset must be a whole number >= 0", what,
			   name);
	*region = json_string_value(reg);
	*offset = off ? (uint64_t)json_integer_value(off) : 0;
	*size = (uint64_t)json_integer_value(sz);
	return 1;
}

/* --------------------------------------------------------------------- */
/* The endpoints                                                          */
/* --------------------------------------------------------------------- */

static json_t *region_json(const struct srv_shm_region *r)
{
	return json_pack("{s:s,s:s,s:I,s:I}", "name", r->name, "key", r->key, "offset",
			 (json_int_t)r->offset, "byte_size", (json_int_t)r->byte_size);
}

static int status(struct srv_shm *s, const char *name, char **out, size_t *outlen, char *err,
		  size_t errlen)
{
	json_t *list = json_array();
	struct srv_shm_region *r;
	int found = 0;

	pthread_mutex_lock(&s->lock);
	for (r = s->head; list && r; r = r->next) {
		if (name && strcmp(r->name, name))
			continue;
		found = 1;
		if (json_array_append_new(list, region_json(r))) {
			json_decref(list);
			list = NULL;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (name && !found) {
		json_decref(list);
		return bad(err, errlen, "no shared-memory region '%s' is registered", name);
	}
	*out = list ? srv_json_text(list, JSON_COMPACT | JSON_ENSURE_ASCII, outlen) : NULL;
	json_decref(list);
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	return 200;
}

static int do_register(struct srv_shm *s, const char *name, const char *body, size_t len,
		       struct srv_json_budget *budget, char *err, size_t errlen)
{
	struct srv_json_doc doc;
	json_t *key, *off, *sz;
	int rc;

	rc = srv_json_parse(budget, body, len, JSON_REJECT_DUPLICATES, &doc, err, errlen);
	if (rc) {
		srv_json_release(&doc);
		return rc;
	}
	key = json_object_get(doc.root, "key");
	off = json_object_get(doc.root, "offset");
	sz = json_object_get(doc.root, "byte_size");
	if (!json_is_object(doc.root))
		rc = bad(err, errlen, "the register body must be a JSON object {\"key\", \"offset\", \"byte_size\"}");
	else if (!json_is_string(key))
		rc = bad(err, errlen, "'key' (the shared-memory object's name, a string) is missing");
	else if (off && (!json_is_integer(off) || json_integer_value(off) < 0))
		rc = bad(err, errlen, "'offset' must be a whole number >= 0");
	else if (!json_is_integer(sz) || json_integer_value(sz) < 0)
		rc = bad(err, errlen, "'byte_size' (a whole number >= 1) is missing");
	else if (!(rc = key_ok(json_string_value(key), json_string_length(key), err, errlen)))
		rc = srv_shm_register(s, name, json_string_value(key),
				      off ? (uint64_t)json_integer_value(off) : 0,
				      (uint64_t)json_integer_value(sz), err, errlen);
	srv_json_release(&doc);
	return rc;
}

int srv_shm_endpoint(struct srv_shm *s, const char *method, const char *path, const char *body,
		     size_t len, struct srv_json_budget *budget, char **out, size_t *outlen, char *err,
		     size_t errlen)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
	char name[SRV_SHM_NAME_MAX + 1];
	const char *action = path;
	int rc;

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "the system shared-memory extension is off (ipu-serve "
			 "--system-shared-memory off)");
		return 403;
	}
	name[0] = 0;
	if (!strncmp(path, "region/", 7)) {
		const char *n = path + 7, *slash = strrchr(n, '/');
		size_t nl = slash ? (size_t)(slash - n) : 0;

		if (!slash)
			return bad(err, errlen, "use /v2/systemsharedmemory/region/NAME/register, "
				   ".../status or .../unregister");
		if (nl > SRV_SHM_NAME_MAX)
			return bad(err, errlen, "a region name has 1 to %d characters (got %zu)",
				   SRV_SHM_NAME_MAX, nl);
		memcpy(name, n, nl);
		name[nl] = 0;
		if ((rc = name_ok(name, err, errlen)))
			return rc;
		action = slash + 1;
	}
	if (!strcmp(action, "status")) {
		if (!get) {
			snprintf(err, errlen, "use GET for status");
			return 405;
		}
		return status(s, name[0] ? name : NULL, out, outlen, err, errlen);
	}
	if (strcmp(action, "register") && strcmp(action, "unregister")) {
		snprintf(err, errlen, "no such endpoint: /v2/systemsharedmemory[/region/NAME]/status, "
			 "/v2/systemsharedmemory/region/NAME/register, "
			 "/v2/systemsharedmemory[/region/NAME]/unregister");
		return 404;
	}
	if (!post) {
		snprintf(err, errlen, "use POST for %s", action);
		return 405;
	}
	if (!strcmp(action, "register")) {
		if (!name[0])
			return bad(err, errlen, "register names its region: "
				   "/v2/systemsharedmemory/region/NAME/register");
		rc = do_register(s, name, body, len, budget, err, errlen);
	} else {
		/* as Triton: a name not registered is nothing to do, not an error */
		srv_shm_unregister(s, name[0] ? name : NULL);
		rc = 0;
	}
	if (rc)
		return rc;
	*out = strdup("");
	*outlen = 0;
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	return 200;
}
