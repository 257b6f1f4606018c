/* SPDX-License-Identifier: MIT */
/*
 * backend.h - what a libipu backend implements, and the completion queue
 * the backends share.
 */
#ifndef IPU_LIBIPU_BACKEND_H
#define IPU_LIBIPU_BACKEND_H

#include <pthread.h>
#include <stdio.h>

#include "ipu/ipu.h"

/* Finished stream buffers, delivered to a handler or queued for polling. */
struct ipu_cq {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct ipu_completion *ring;
	uint32_t cap, head, count;
	ipu_completion_fn fn;
	void *ctx;
};

int ipu_cq_init(struct ipu_cq *q);
void ipu_cq_destroy(struct ipu_cq *q);
void ipu_cq_set_handler(struct ipu_cq *q, ipu_completion_fn fn, void *ctx);
/* Deliver one completion; call without backend locks held. */
int ipu_cq_post(struct ipu_cq *q, const struct ipu_completion *c);
int ipu_cq_poll(struct ipu_cq *q, struct ipu_completion *out, unsigned max,
		int64_t timeout_ns);

/* Registered memory (regions.c): ranges never overlap. */
#define IPU_REGION_MAX_BYTES (1ull << 30)	/* io_uring's limit for one fixed buffer */
struct ipu_region {
	uintptr_t base;
	size_t len;			/* 0: free slot */
	int owned;			/* the backend's memory (alloc_memory/import) */
};

struct ipu_regions {
	pthread_mutex_t lock;
	struct ipu_region r[IPU_MAX_REGISTERED];
	uint32_t count;
};

void ipu_regions_init(struct ipu_regions *t);
void ipu_regions_destroy(struct ipu_regions *t);
/* Register / unregister through the backend's reg_memory / unreg_memory. */
int ipu_regions_add(struct ipu_device *d, void *addr, size_t len, uint32_t *id);
int ipu_regions_remove(struct ipu_device *d, uint32_t id);
/*
 * Memory of the backend's own, registered in a free slot: len bytes made
 * by alloc_memory (dmabuf < 0), or the dma-buf `dmabuf` imported by
 * import_dmabuf (*len its size).  ipu_regions_remove gives it back.
 */
int ipu_regions_alloc(struct ipu_device *d, int dmabuf, size_t *len, void **addr,
		      uint32_t *id);
/* The dma-buf of owned slot id (export_dmabuf). */
int ipu_regions_export(struct ipu_device *d, uint32_t id, int *fd);
/*
 * The slot holding all of [buf, buf + len), or -1.  Returns with the
 * table locked either way: call ipu_regions_put once the buffer has been
 * handed to the device (the slot stays as found until then).
 */
int ipu_regions_find(struct ipu_regions *t, const void *buf, size_t len);
void ipu_regions_put(struct ipu_regions *t);

struct ipu_backend_ops {
	const char *name;
	int (*open)(struct ipu_device *d, const char *spec, char *err, size_t errlen);
	void (*close)(struct ipu_device *d);
	int (*info)(struct ipu_device *d, struct ipu_device_info *info);
	int (*attach)(struct ipu_device *d);
	int (*detach)(struct ipu_device *d);
	int (*load)(struct ipu_device *d, const void *image, size_t len, char *err,
		    size_t errlen);
	int (*stream_count)(struct ipu_device *d);
	int (*stream_info)(struct ipu_device *d, uint32_t stream, uint32_t *dir,
			   uint32_t *bytes);
	int (*run)(struct ipu_device *d, uint32_t prog, uint64_t *seq);
	int (*wait)(struct ipu_device *d, uint64_t seq, int64_t timeout_ns, char *err,
		    size_t errlen);
	int (*submit)(struct ipu_device *d, uint32_t stream, void *buf, size_t len,
		      uint64_t tag);
	int (*abort)(struct ipu_device *d);
	int (*reset)(struct ipu_device *d);
	int (*counters)(struct ipu_device *d, struct ipu_counters *out);
	int (*cs_profile)(struct ipu_device *d, uint32_t cs, struct ipu_cs_profile *out);
	int (*set_run_handler)(struct ipu_device *d, ipu_run_fn fn, void *ctx);
	/* optional (NULL: not available on this backend) */
	int (*run_here)(struct ipu_device *d, uint32_t prog, uint64_t *seq);
	int (*set_trace)(struct ipu_device *d, ipu_trace_fn fn, void *ctx);
	int (*superstep_cost)(struct ipu_device *d, uint32_t kind, uint32_t index,
			      struct ipu_superstep_cost *out);
	/* optional: pin [addr, addr + len) as slot `slot` / release it */
	int (*reg_memory)(struct ipu_device *d, uint32_t slot, void *addr, size_t len);
	int (*unreg_memory)(struct ipu_device *d, uint32_t slot);
	/* optional: memory of the backend's own as slot `slot` / its dma-buf */
	int (*alloc_memory)(struct ipu_device *d, uint32_t slot, size_t len, void **addr);
	int (*import_dmabuf)(struct ipu_device *d, uint32_t slot, int fd, size_t *len,
			     void **addr);
	int (*free_memory)(struct ipu_device *d, uint32_t slot);
	int (*export_dmabuf)(struct ipu_device *d, uint32_t slot, int *fd);
	/* optional: devices joined by IPU-Links (ipu_attach_group, ipu_link_stream) */
	int (*attach_group)(struct ipu_device *const *devs, unsigned n);
	int (*link_stream)(struct ipu_device *d, uint32_t stream, uint32_t peer_ipu,
			   uint32_t peer_stream);
	int (*link_counters)(struct ipu_device *d, struct ipu_link_counters *out);
	/* optional: free_memory for a slot left at close, after close() */
	int (*free_memory_at_close)(struct ipu_device *d, uint32_t slot);
};

struct ipu_device {
	const struct ipu_backend_ops *ops;
	void *priv;
	struct ipu_cq cq;
	struct ipu_regions regions;
	char spec[64];
};

extern const struct ipu_backend_ops ipu_model_backend;

/* Absolute CLOCK_MONOTONIC deadline timeout_ns from now. */
void ipu_deadline(struct timespec *ts, int64_t timeout_ns);

#endif /* IPU_LIBIPU_BACKEND_H */
