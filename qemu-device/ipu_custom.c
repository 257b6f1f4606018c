/* SPDX-License-Identifier: MIT */
/*
 * ipu_custom.c - the `custom-ops` property: custom-operator plugins
 * (ipu/custom_op.h) the device's engine runs.
 *
 * Whoever starts QEMU chooses them (-device ipu,custom-ops=/a.so:/b.so);
 * the guest cannot.  Each file is hashed (SHA-256, the hash an executable
 * names its custom codelets by) and loaded here, in the QEMU process:
 * the engine only receives the table of codelets (ipu/custom_table.h).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"

#include <dlfcn.h>

/* before ipu.h: its register names (IPU_FAULT_NONE) would shadow the
 * codelet header's enum */
#include "ipu/custom_table.h"
#include "ipu.h"

void ipu_custom_unload(IpuState *s)
{
    unsigned i;

    ipu_custom_table_destroy(s->custom);
    s->custom = NULL;
    for (i = 0; i < s->ncustom_handles; i++) {
        dlclose(s->custom_handles[i]);
    }
    g_free(s->custom_handles);
    s->custom_handles = NULL;
    s->ncustom_handles = 0;
}

static bool load_one(IpuState *s, const char *path, Error **errp)
{
    uint8_t hash[IPU_CUSTOM_HASH_BYTES];
    gsize hlen = sizeof(hash), len;
    ipu_custom_op_entry_fn entry;
    GError *ge = NULL;
    GChecksum *ck;
    gchar *data;
    char err[512];
    void *h;

    if (!strchr(path, '/')) {
        error_setg(errp, "ipu: custom-ops '%s': give a path (with a '/')", path);
        return false;
    }
    if (!g_file_get_contents(path, &data, &len, &ge)) {
        error_setg(errp, "ipu: custom-ops %s: %s", path, ge->message);
        g_error_free(ge);
        return false;
    }
    ck = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(ck, (const guchar *)data, len);
    g_checksum_get_digest(ck, hash, &hlen);
    g_checksum_free(ck);
    g_free(data);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        error_setg(errp, "ipu: custom-ops %s: %s", path, dlerror());
        return false;
    }
    *(void **)&entry = dlsym(h, IPU_CUSTOM_OP_ENTRY);
    if (!entry) {
        dlclose(h);
        error_setg(errp, "ipu: custom-ops %s exports no %s()", path, IPU_CUSTOM_OP_ENTRY);
        return false;
    }
    s->custom_handles = g_renew(void *, s->custom_handles, s->ncustom_handles + 1);
    s->custom_handles[s->ncustom_handles++] = h;
    if (ipu_custom_table_add(s->custom, entry(), hash, path, err, sizeof(err))) {
        error_setg(errp, "ipu: %s", err);
        return false;
    }
    return true;
}

bool ipu_custom_load(IpuState *s, Error **errp)
{
    gchar **paths;
    bool ok = true;
    int i;

    if (!s->custom_ops || !s->custom_ops[0]) {
        return true;
    }
    if (ipu_custom_table_create(&s->custom)) {
        error_setg(errp, "ipu: out of memory for the custom-op table");
        return false;
    }
    paths = g_strsplit(s->custom_ops, ":", -1);
    for (i = 0; ok && paths[i]; i++) {
        ok = load_one(s, paths[i], errp);
    }
    g_strfreev(paths);
    if (!ok) {
        ipu_custom_unload(s);
    }
    return ok;
}
