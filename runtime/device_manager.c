// SPDX-License-Identifier: MIT
/*
 * device_manager.c - the DeviceManager: every device the process may use
 * (model specs it was given, /dev/accel/accelN nodes present), which of them are
 * taken, and a wait for one to be released.
 */
#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_internal.h"

struct dm_dev {
	char *spec;
	struct ipu_device *dev;		/* opened lazily */
	struct ipu_device_info info;
	int busy;
};

struct ipurt_device_manager {
	pthread_mutex_t lock;
	pthread_cond_t released;
	struct dm_dev *devs;
	uint32_t n;
};

static int add_spec(struct ipurt_device_manager *dm, const char *spec, size_t len)
{
	struct dm_dev *n = realloc(dm->devs, (dm->n + 1) * sizeof(*n));

	if (!n)
		return IPURT_E_NOMEM;
	dm->devs = n;
	memset(&n[dm->n], 0, sizeof(n[dm->n]));
	n[dm->n].spec = strndup(spec, len);
	if (!n[dm->n].spec)
		return IPURT_E_NOMEM;
	dm->n++;
	return 0;
}

/*
 * Length of the first device spec of a list.  Specs are separated by ';'
 * or ','; a model spec's own settings are comma-separated too
 * ("model:tiles=16,tile_mem=64KiB,/dev/accel/accel0"), so a ',' ends the spec
 * only when what follows is not a key=value setting of it.
 */
size_t rt_spec_len(const char *p)
{
	size_t len = 0;

	for (;;) {
		len += strcspn(p + len, ",;");
		if (p[len] != ',' || strncmp(p, "model:", 6))
			return len;
		/* "key=value" before the next separator continues this spec */
		{
			const char *next = p + len + 1;
			size_t tok = strcspn(next, ",;");
			const char *eq = memchr(next, '=', tok);

			if (!eq || memchr(next, ':', tok) || memchr(next, '/', (size_t)(eq - next)))
				return len;
		}
		len++;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int have_spec(const struct ipurt_device_manager *dm, const char *spec)
{
	for (uint32_t i = 0; i < dm->n; i++)
		if (!strcmp(dm->devs[i].spec, spec))
			return 1;
	return 0;
}

/* Is accel node `name` ipu.ko's (its PCI device's driver), not another accelerator's? */
static int is_ipu_node(const char *name)
{
	char path[300], link[300];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/accel/%s/device/driver", name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	base = strrchr(link, '/');
	return !strcmp(base ? base + 1 : link, "ipu");
}

/* ipu.ko's /dev/accel/accelN nodes not named in the specs already, sorted by name. */
static int add_dev_nodes(struct ipurt_device_manager *dm)
{
	DIR *d = opendir("/dev/accel");
	struct dirent *e;
	char *names[64];
	uint32_t n = 0, i;
	int rc = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < 64) {
		if (!strncmp(e->d_name, "accel", 5) && e->d_name[5] >= '0' && e->d_name[5] <= '9' &&
		    is_ipu_node(e->d_name)) {
			char path[300];

			snprintf(path, sizeof(path), "/dev/accel/%s", e->d_name);
			names[n] = strdup(path);
			if (!names[n]) {
				rc = IPURT_E_NOMEM;
				break;
			}
			n++;
		}
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		/* a node the specs named is one device, listed once */
		if (!rc && !have_spec(dm, names[i]))
			rc = add_spec(dm, names[i], strlen(names[i]));
		free(names[i]);
	}
	return rc;
}

int ipurt_dm_create(const char *specs, struct ipurt_device_manager **out, char *err,
		    size_t errlen)
{
	struct ipurt_device_manager *dm = calloc(1, sizeof(*dm));
	pthread_condattr_t ca;
	const char *p;
	int rc = 0;

	*out = NULL;
	if (!dm) {
		return ipu_errorf(err, errlen, IPURT_E_NOMEM, "out of memory");
	}
	pthread_mutex_init(&dm->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&dm->released, &ca);
	pthread_condattr_destroy(&ca);
	if (!specs || !*specs)
		specs = "model";
	for (p = specs; *p && !rc;) {
		size_t len = rt_spec_len(p);

		if (len)
			rc = add_spec(dm, p, len);
		p += len;
		if (*p == ',' || *p == ';')
			p++;
	}
	if (!rc)
		rc = add_dev_nodes(dm);
	if (rc) {
		ipu_errorf(err, errlen, rc, "out of memory");
		ipurt_dm_destroy(dm);
		return rc;
	}
	*out = dm;
	return 0;
}

void ipurt_dm_destroy(struct ipurt_device_manager *dm)
{
	uint32_t i;

	if (!dm)
		return;
	for (i = 0; i < dm->n; i++) {
		ipu_close(dm->devs[i].dev);
		free(dm->devs[i].spec);
	}
	free(dm->devs);
	pthread_mutex_destroy(&dm->lock);
	pthread_cond_destroy(&dm->released);
	free(dm);
}

uint32_t ipurt_dm_count(const struct ipurt_device_manager *dm)
{
	return dm->n;
}

const char *ipurt_dm_spec(const struct ipurt_device_manager *dm, uint32_t i)
{
	return i < dm->n ? dm->devs[i].spec : NULL;
}

/* Why device i cannot ever run the model, or NULL. Lock held. */
static const char *unsuitable(struct dm_dev *d, const struct ipurt_device_req *req,
			      char *why, size_t len)
{
	char err[200];

	if (!d->dev) {
		if (ipu_open(d->spec, &d->dev, err, sizeof(err))) {
			snprintf(why, len, "%s: cannot open: %s", d->spec, err);
			d->dev = NULL;
			return why;
		}
		ipu_info(d->dev, &d->info);
	}
	if (d->info.num_tiles < req->num_tiles) {
		snprintf(why, len, "%s: %u tiles, model needs %u", d->spec, d->info.num_tiles,
			 req->num_tiles);
		return why;
	}
	if (d->info.tile_mem < req->tile_mem) {
		snprintf(why, len, "%s: %u bytes per tile, model needs %u", d->spec,
			 d->info.tile_mem, req->tile_mem);
		return why;
	}
	if (req->ipu_version && *req->ipu_version &&
	    strcmp(req->ipu_version, d->info.version_name)) {
		snprintf(why, len, "%s: is %s, model was compiled for %s", d->spec,
			 d->info.version_name, req->ipu_version);
		return why;
	}
	return NULL;
}

/* Is dm's device i one of the specs in `only` (a list as ipurt_dm_create takes)? */
static int listed(const struct ipurt_device_manager *dm, uint32_t i, const char *only)
{
	const char *p;

	for (p = only; *p;) {
		size_t len = rt_spec_len(p);

		if (len && strlen(dm->devs[i].spec) == len && !strncmp(dm->devs[i].spec, p, len))
			return 1;
		p += len;
		if (*p == ',' || *p == ';')
			p++;
	}
	return 0;
}

/* Number of specs in a list, a spec named twice counted once per naming. */
static uint32_t count_specs(const char *only)
{
	uint32_t n = 0;
	const char *p;

	for (p = only; *p;) {
		size_t len = rt_spec_len(p);

		n += len != 0;
		p += len;
		if (*p == ',' || *p == ';')
			p++;
	}
	return n;
}

int ipurt_dm_acquire(struct ipurt_device_manager *dm, const struct ipurt_device_req *req,
		     enum ipurt_wait_policy policy, int64_t wait_timeout_ns,
		     struct ipu_device **dev, char *err, size_t errlen)
{
	return ipurt_dm_acquire_n(dm, req, 1, NULL, policy, wait_timeout_ns, dev, err, errlen);
}

int ipurt_dm_acquire_n(struct ipurt_device_manager *dm, const struct ipurt_device_req *req,
		       uint32_t n, const char *only, enum ipurt_wait_policy policy,
		       int64_t wait_timeout_ns, struct ipu_device **devs, char *err,
		       size_t errlen)
{
	struct timespec dl;
	uint32_t i, k;

	if (only && *only) {
		uint32_t want = count_specs(only);

		if (n == 0)
			n = want;
		if (n != want) {
			return ipu_errorf(err, errlen, IPURT_E_INVAL, "asked for %u devices but the list '%s' names %u", n,
				only, want);
		}
	} else {
		only = NULL;
	}
	if (n == 0 || n > dm->n) {
		return ipu_errorf(err, errlen, n ? IPURT_E_NO_DEVICE : IPURT_E_INVAL, "asked for %u devices; the manager has %u (%s)", n, dm->n,
			n ? "name more devices, or fewer replicas" : "at least one is needed");
	}
	for (k = 0; k < n; k++)
		devs[k] = NULL;
	if (policy == IPURT_WAIT_TIMEOUT) {
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += wait_timeout_ns / 1000000000;
		dl.tv_nsec += wait_timeout_ns % 1000000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&dm->lock);
	for (;;) {
		char why[1024] = "", one[256];
		uint32_t suitable = 0;

		/*
		 * All or none: a runner holding some of its devices while it
		 * waits for the rest could deadlock with another doing the same.
		 */
		k = 0;
		for (i = 0; i < dm->n && k < n; i++) {
			struct dm_dev *d = &dm->devs[i];

			if (only && !listed(dm, i, only))
				continue;
			if (unsuitable(d, req, one, sizeof(one))) {
				size_t l = strlen(why);

				snprintf(why + l, sizeof(why) - l, "%s%s", l ? "; " : "", one);
				continue;
			}
			suitable++;
			if (d->busy)
				continue;
			if (ipu_attach(d->dev)) /* another process holds it */
				continue;
			d->busy = 1;
			devs[k++] = d->dev;
		}
		if (k == n) {
			pthread_mutex_unlock(&dm->lock);
			return 0;
		}
		/* not enough: give back what this pass took */
		for (i = 0; i < dm->n; i++) {
			uint32_t j;

			for (j = 0; j < k; j++) {
				if (dm->devs[i].dev == devs[j] && dm->devs[i].busy) {
					ipu_detach(devs[j]);
					dm->devs[i].busy = 0;
				}
			}
		}
		for (; k > 0; k--)
			devs[k - 1] = NULL;
		if (suitable < n) {
			pthread_mutex_unlock(&dm->lock);
			if (n == 1)
				return ipu_errorf(err, errlen, IPURT_E_NO_DEVICE,
					"no device can run this model (%u tiles x %u bytes%s%s): %s",
					req->num_tiles, req->tile_mem, req->ipu_version ? ", " : "",
					req->ipu_version ? req->ipu_version : "",
					dm->n ? why : "no devices");
			return ipu_errorf(err, errlen, IPURT_E_NO_DEVICE,
					"%u devices needed, %u can run this model (%u tiles x %u bytes%s%s)%s%s",
					n, suitable, req->num_tiles, req->tile_mem,
					req->ipu_version ? ", " : "",
					req->ipu_version ? req->ipu_version : "", *why ? ": " : "", why);
		}
		if (policy == IPURT_WAIT_NONE) {
			pthread_mutex_unlock(&dm->lock);
			if (n == 1)
				return ipu_errorf(err, errlen, IPURT_E_BUSY,
					"all %u suitable devices are in use", suitable);
			return ipu_errorf(err, errlen, IPURT_E_BUSY,
					"%u devices needed, fewer of the %u suitable ones are free", n,
					suitable);
		}
		if (policy == IPURT_WAIT_FOREVER) {
			pthread_cond_wait(&dm->released, &dm->lock);
		} else if (pthread_cond_timedwait(&dm->released, &dm->lock, &dl) == ETIMEDOUT) {
			pthread_mutex_unlock(&dm->lock);
			return ipu_errorf(err, errlen, IPURT_E_TIMEOUT, "%s within %lld ns",
				n == 1 ? "no suitable device became free" : "not enough suitable devices became free",
				(long long)wait_timeout_ns);
		}
	}
}

void ipurt_dm_release(struct ipurt_device_manager *dm, struct ipu_device *dev)
{
	uint32_t i;

	pthread_mutex_lock(&dm->lock);
	for (i = 0; i < dm->n; i++) {
		if (dm->devs[i].dev == dev && dm->devs[i].busy) {
			ipu_detach(dev);
			dm->devs[i].busy = 0;
			pthread_cond_broadcast(&dm->released);
		}
	}
	pthread_mutex_unlock(&dm->lock);
}
