/* SPDX-License-Identifier: MIT */
/*
 * shm.h - Triton's system shared-memory extension (server/shm.c): named
 * regions of POSIX shared-memory objects that infer requests read their
 * inputs from and write their outputs into, instead of the HTTP body.
 *
 * A region is a window [offset, offset + byte_size) of the object a client
 * names by its shm_open key.  The server keeps the object's descriptor
 * open, not a mapping, and reads and writes it with pread/pwrite, so an
 * object shrunk by its owner after registration is an error of the
 * request that uses it, never a SIGBUS.  Each request holds a counted
 * reference to its output regions: unregistering one forgets its name at
 * once, and the descriptor is closed when the last request using it ends.
 */
#ifndef IPU_SERVE_SHM_H
#define IPU_SERVE_SHM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SRV_SHM_NAME_MAX 128		/* region names: [A-Za-z0-9._~:@+-] */
#define SRV_SHM_KEY_MAX 255		/* keys: "/" and a file name of /dev/shm */
#define SRV_SHM_MAX_REGIONS 1024	/* registered at once (each an open descriptor) */

struct srv_shm;
struct srv_shm_region;
struct srv_json_budget;

/* An empty registry of at most max_regions regions; NULL out of memory. */
struct srv_shm *srv_shm_create(uint32_t max_regions);
/* Close every region (no request may hold one any more). */
void srv_shm_destroy(struct srv_shm *s);

/* Register name for key's [offset, offset + byte_size); 0 or 400 with err. */
int srv_shm_register(struct srv_shm *s, const char *name, const char *key, uint64_t offset,
		     uint64_t byte_size, char *err, size_t errlen);
/* Forget name (NULL: every region); how many regions were forgotten. */
int srv_shm_unregister(struct srv_shm *s, const char *name);
/* How many regions are registered. */
uint32_t srv_shm_count(struct srv_shm *s);

/*
 * The HTTP endpoints below /v2/systemsharedmemory/: method and the rest of
 * the path ("status", "region/NAME/register" ...), the body for register.
 * Returns the HTTP status; on 200 *out is the malloc'd JSON answer
 * (*outlen bytes), otherwise err says why.
 */
int srv_shm_endpoint(struct srv_shm *s, const char *method, const char *path, const char *body,
		     size_t len, struct srv_json_budget *budget, char **out, size_t *outlen, char *err,
		     size_t errlen);

/*
 * A counted reference to [offset, offset + size) of region name (offset
 * relative to the region's own); NULL with 400 and err if there is no
 * such region or the window does not fit in it.  Release each.
 */
struct srv_shm_region *srv_shm_acquire(struct srv_shm *s, const char *name, uint64_t offset,
				       uint64_t size, char *err, size_t errlen);
void srv_shm_release(struct srv_shm *s, struct srv_shm_region *r);
/* Copy size bytes at offset of the region out of / into the object: 0 or 400 with err. */
int srv_shm_read(struct srv_shm_region *r, uint64_t offset, void *buf, uint64_t size, char *err,
		 size_t errlen);
int srv_shm_write(struct srv_shm_region *r, uint64_t offset, const void *buf, uint64_t size,
		  char *err, size_t errlen);
const char *srv_shm_region_name(const struct srv_shm_region *r);

/*
 * Triton's tensor parameters (shared_memory_region, shared_memory_offset,
 * shared_memory_byte_size) from a tensor's "parameters" object: 0 if none
 * is there, 1 with region, offset and size if the region and size are (the
 * offset defaults to 0), 400 with err if they are incomplete or mistyped.
 * what and name name the tensor in the message ("input 'X'").
 */
int srv_shm_params(const json_t *params, const char *what, const char *name,
		   const char **region, uint64_t *offset, uint64_t *size, char *err, size_t errlen);

#endif
