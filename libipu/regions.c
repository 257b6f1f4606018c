// SPDX-License-Identifier: MIT
/*
 * regions.c - the registered-memory table of a device handle.
 *
 * A slot is a range of the caller's address space that the backend may
 * have pinned (the kernel backend: an io_uring fixed buffer at the same
 * index).  Ranges never overlap, so a stream buffer belongs to at most one
 * of them and the lookup needs no rule for choosing.  The table's lock is
 * held from a lookup until the backend has handed the buffer to the
 * device (ipu_regions_find ... ipu_regions_put), and by register and
 * unregister around the backend's own update, so a slot cannot be
 * emptied between the two.
 */
#include <stdint.h>
#include <string.h>

#include "backend.h"

void ipu_regions_init(struct ipu_regions *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
}

void ipu_regions_destroy(struct ipu_regions *t)
{
	pthread_mutex_destroy(&t->lock);
}

static int overlaps(const struct ipu_region *r, uintptr_t a, size_t len)
{
	return r->len && a < r->base + r->len && r->base < a + len;
}

int ipu_regions_add(struct ipu_device *d, void *addr, size_t len, uint32_t *id)
{
	struct ipu_regions *t = &d->regions;
	uintptr_t a = (uintptr_t)addr;
	int slot = -1, rc = 0;

	if (!addr || !len || !id || a + len < a || len > IPU_REGION_MAX_BYTES)
		return IPU_E_INVAL;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < IPU_MAX_REGISTERED; i++) {
		if (overlaps(&t->r[i], a, len)) {
			rc = IPU_E_INVAL;
			break;
		}
		if (!t->r[i].len && slot < 0)
			slot = i;
	}
	if (!rc && slot < 0)
		rc = IPU_E_BUSY;
	if (!rc && d->ops->reg_memory)
		rc = d->ops->reg_memory(d, (uint32_t)slot, addr, len);
	if (!rc) {
		t->r[slot].base = a;
		t->r[slot].len = len;
		t->count++;
		*id = (uint32_t)slot;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ipu_regions_remove(struct ipu_device *d, uint32_t id)
{
	struct ipu_regions *t = &d->regions;
	int rc = 0;

	if (id >= IPU_MAX_REGISTERED)
		return IPU_E_INVAL;
	pthread_mutex_lock(&t->lock);
	if (!t->r[id].len)
		rc = IPU_E_INVAL;
	else if (t->r[id].owned)
		rc = d->ops->free_memory(d, id);
	else if (d->ops->unreg_memory)
		rc = d->ops->unreg_memory(d, id);
	if (!rc) {
		t->r[id].base = 0;
		t->r[id].len = 0;
		t->r[id].owned = 0;
		t->count--;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ipu_regions_alloc(struct ipu_device *d, int dmabuf, size_t *len, void **addr,
		      uint32_t *id)
{
	struct ipu_regions *t = &d->regions;
	int slot = -1, rc;

	if (dmabuf < 0 ? !d->ops->alloc_memory : !d->ops->import_dmabuf)
		return IPU_E_INVAL;
	if (dmabuf < 0 && (!*len || *len > IPU_REGION_MAX_BYTES))
		return IPU_E_INVAL;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < IPU_MAX_REGISTERED && slot < 0; i++)
		if (!t->r[i].len)
			slot = i;
	if (slot < 0)
		rc = IPU_E_BUSY;
	else if (dmabuf < 0)
		rc = d->ops->alloc_memory(d, (uint32_t)slot, *len, addr);
	else
		rc = d->ops->import_dmabuf(d, (uint32_t)slot, dmabuf, len, addr);
	if (!rc) {
		/* a new mapping: it overlaps no registered range */
		t->r[slot].base = (uintptr_t)*addr;
		t->r[slot].len = *len;
		t->r[slot].owned = 1;
		t->count++;
		*id = (uint32_t)slot;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ipu_regions_export(struct ipu_device *d, uint32_t id, int *fd)
{
	struct ipu_regions *t = &d->regions;
	int rc;

	if (id >= IPU_MAX_REGISTERED || !fd)
		return IPU_E_INVAL;
	pthread_mutex_lock(&t->lock);
	if (!t->r[id].len || !t->r[id].owned || !d->ops->export_dmabuf)
		rc = IPU_E_INVAL;
	else
		rc = d->ops->export_dmabuf(d, id, fd);
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int ipu_regions_find(struct ipu_regions *t, const void *buf, size_t len)
{
	uintptr_t a = (uintptr_t)buf;

	pthread_mutex_lock(&t->lock);
	if (!t->count)
		return -1;
	for (int i = 0; i < IPU_MAX_REGISTERED; i++) {
		const struct ipu_region *r = &t->r[i];

		if (r->len && a >= r->base && len <= r->len && a - r->base <= r->len - len)
			return i;
	}
	return -1;
}

void ipu_regions_put(struct ipu_regions *t)
{
	pthread_mutex_unlock(&t->lock);
}
