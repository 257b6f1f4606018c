// SPDX-License-Identifier: MIT
/*
 * device.c - libipu's public entry points: pick the backend from the
 * device spec and forward, with argument checks common to all backends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

extern const struct ipu_backend_ops ipu_kernel_backend;	/* backend_kernel.c */

static const struct ipu_backend_ops *backend_for(const char *spec)
{
	if (!strncmp(spec, "model", 5) && (spec[5] == 0 || spec[5] == ':'))
		return &ipu_model_backend;
	if (!strncmp(spec, "/dev/accel/accel", 16))
		return &ipu_kernel_backend;
	return NULL;
}

int ipu_open(const char *spec, struct ipu_device **out, char *err, size_t errlen)
{
	const struct ipu_backend_ops *ops;
	struct ipu_device *d;
	int rc;

	*out = NULL;
	if (!spec || !*spec)
		spec = "model";
	ops = backend_for(spec);
	if (!ops) {
		return ipu_errorf(err, errlen, IPU_E_INVAL,
			 "unknown device '%s': expected model[:tiles=N,tile_mem=SIZE,workers=N,version=ipu2|ipu21]",
			 spec);
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		return ipu_errorf(err, errlen, IPU_E_NOMEM, "out of memory");
	}
	d->ops = ops;
	snprintf(d->spec, sizeof(d->spec), "%s", spec);
	ipu_regions_init(&d->regions);
	rc = ipu_cq_init(&d->cq);
	if (rc) {
		ipu_regions_destroy(&d->regions);
		free(d);
		return ipu_errorf(err, errlen, rc, "out of memory");
	}
	rc = ops->open(d, spec, err, errlen);
	if (rc) {
		ipu_cq_destroy(&d->cq);
		ipu_regions_destroy(&d->regions);
		free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void ipu_close(struct ipu_device *d)
{
	if (!d)
		return;
	d->ops->close(d);
	/* the backend's own memory dies with the handle (the kernel's already went) */
	if (d->ops->free_memory_at_close)
		for (uint32_t i = 0; i < IPU_MAX_REGISTERED; i++)
			if (d->regions.r[i].owned)
				d->ops->free_memory_at_close(d, i);
	ipu_cq_destroy(&d->cq);
	ipu_regions_destroy(&d->regions);
	free(d);
}

int ipu_info(struct ipu_device *d, struct ipu_device_info *info)
{
	return d->ops->info(d, info);
}

int ipu_attach(struct ipu_device *d)
{
	return d->ops->attach(d);
}

int ipu_detach(struct ipu_device *d)
{
	return d->ops->detach(d);
}

int ipu_attach_group(struct ipu_device *const *devs, unsigned n)
{
	unsigned i;

	if (!devs || n < 2)
		return IPU_E_INVAL;
	for (i = 0; i < n; i++)
		if (!devs[i] || devs[i]->ops != devs[0]->ops)
			return IPU_E_INVAL;
	if (!devs[0]->ops->attach_group)
		return IPU_E_INVAL;
	return devs[0]->ops->attach_group(devs, n);
}

int ipu_link_stream(struct ipu_device *d, uint32_t stream, uint32_t peer_ipu,
		    uint32_t peer_stream)
{
	if (!d->ops->link_stream)
		return IPU_E_INVAL;
	return d->ops->link_stream(d, stream, peer_ipu, peer_stream);
}

int ipu_link_counters(struct ipu_device *d, struct ipu_link_counters *out)
{
	if (!d->ops->link_counters)
		return IPU_E_INVAL;
	return d->ops->link_counters(d, out);
}

int ipu_load(struct ipu_device *d, const void *image, size_t len, struct ipu_error *e)
{
	char msg[sizeof(e->msg)];
	int rc;

	if (!image || !len)
		return ipu_error_set(e, IPU_E_INVAL, 0, "empty executable image");
	msg[0] = 0;
	rc = d->ops->load(d, image, len, msg, sizeof(msg));
	if (!rc)
		return ipu_error_set(e, 0, 0, "%s", "");
	/* the precise finding stays a detail: callers test the class */
	if (ipu_err_class(rc) == IPU_E_VERIFY)
		return ipu_error_set(e, IPU_E_VERIFY, rc, "%s", msg);
	return ipu_error_set(e, rc, 0, "%s", msg);
}

int ipu_stream_count(struct ipu_device *d)
{
	return d->ops->stream_count(d);
}

int ipu_stream_info(struct ipu_device *d, uint32_t stream, uint32_t *dir,
		    uint32_t *buffer_bytes)
{
	return d->ops->stream_info(d, stream, dir, buffer_bytes);
}

int ipu_run(struct ipu_device *d, uint32_t prog, uint64_t *seq)
{
	return d->ops->run(d, prog, seq);
}

int ipu_run_here(struct ipu_device *d, uint32_t prog, uint64_t *seq)
{
	if (!d->ops->run_here)
		return IPU_E_BUSY;
	return d->ops->run_here(d, prog, seq);
}

int ipu_wait(struct ipu_device *d, uint64_t seq, int64_t timeout_ns, char *err,
	     size_t errlen)
{
	return d->ops->wait(d, seq, timeout_ns, err, errlen);
}

int ipu_run_sync(struct ipu_device *d, uint32_t prog, char *err, size_t errlen)
{
	uint64_t seq;
	int rc = ipu_run(d, prog, &seq);

	if (rc) {
		return ipu_errorf(err, errlen, rc, "cannot start program %u: %s", prog, ipu_strerror(rc));
	}
	return ipu_wait(d, seq, -1, err, errlen);
}

int ipu_set_completion_handler(struct ipu_device *d, ipu_completion_fn fn, void *ctx)
{
	ipu_cq_set_handler(&d->cq, fn, ctx);
	return 0;
}

int ipu_set_run_handler(struct ipu_device *d, ipu_run_fn fn, void *ctx)
{
	if (!d->ops->set_run_handler)
		return IPU_E_INVAL;
	return d->ops->set_run_handler(d, fn, ctx);
}

int ipu_stream_submit(struct ipu_device *d, uint32_t stream, void *buf, size_t len,
		      uint64_t tag)
{
	return d->ops->submit(d, stream, buf, len, tag);
}

int ipu_register_memory(struct ipu_device *d, void *addr, size_t len, uint32_t *id)
{
	return ipu_regions_add(d, addr, len, id);
}

int ipu_unregister_memory(struct ipu_device *d, uint32_t id)
{
	return ipu_regions_remove(d, id);
}

int ipu_alloc_memory(struct ipu_device *d, size_t len, void **addr, uint32_t *id)
{
	if (!addr || !id)
		return IPU_E_INVAL;
	return ipu_regions_alloc(d, -1, &len, addr, id);
}

int ipu_import_dmabuf(struct ipu_device *d, int fd, void **addr, size_t *len, uint32_t *id)
{
	size_t n = 0;
	int rc;

	if (fd < 0 || !addr || !id)
		return IPU_E_INVAL;
	rc = ipu_regions_alloc(d, fd, &n, addr, id);
	if (!rc && len)
		*len = n;
	return rc;
}

int ipu_buffer_export_dmabuf(struct ipu_device *d, uint32_t id, int *fd)
{
	return ipu_regions_export(d, id, fd);
}

int ipu_free_memory(struct ipu_device *d, uint32_t id)
{
	if (id >= IPU_MAX_REGISTERED || !d->regions.r[id].owned)
		return IPU_E_INVAL;
	return ipu_regions_remove(d, id);
}

int ipu_stream_poll(struct ipu_device *d, struct ipu_completion *out, unsigned max,
		    int64_t timeout_ns)
{
	if (!out || !max)
		return IPU_E_INVAL;
	return ipu_cq_poll(&d->cq, out, max, timeout_ns);
}

int ipu_abort(struct ipu_device *d)
{
	return d->ops->abort(d);
}

int ipu_reset(struct ipu_device *d)
{
	return d->ops->reset(d);
}

int ipu_counters(struct ipu_device *d, struct ipu_counters *out)
{
	return d->ops->counters(d, out);
}

int ipu_cs_profile(struct ipu_device *d, uint32_t cs, struct ipu_cs_profile *out)
{
	if (!d->ops->cs_profile)
		return IPU_E_INVAL;
	return d->ops->cs_profile(d, cs, out);
}

int ipu_set_trace(struct ipu_device *d, ipu_trace_fn fn, void *ctx)
{
	if (!d->ops->set_trace)
		return IPU_E_INVAL;
	return d->ops->set_trace(d, fn, ctx);
}

int ipu_superstep_cost(struct ipu_device *d, uint32_t kind, uint32_t index,
		       struct ipu_superstep_cost *out)
{
	if (!d->ops->superstep_cost)
		return IPU_E_INVAL;
	return d->ops->superstep_cost(d, kind, index, out);
}
