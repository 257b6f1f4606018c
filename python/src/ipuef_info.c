// SPDX-License-Identifier: MIT
/*
 * ipuef_info.c - _ipu.read_ipuef: an .ipuef file's contents as Python
 * objects, with the same keys and values as `ipuef-dump --json`.
 */
#include "ipu_py.h"

#include "ipu/ipuef.h"

static PyObject *shape_list(const uint64_t *dims, uint32_t rank)
{
	PyObject *l = PyList_New(rank);
	uint32_t i;

	for (i = 0; l && i < rank; i++) {
		PyObject *d = PyLong_FromUnsignedLongLong(dims[i]);

		if (!d) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, i, d);
	}
	return l;
}

/* Append the result of Py_BuildValue-made `item` (a new reference) to list. */
static int append(PyObject *list, PyObject *item)
{
	int rc = item ? PyList_Append(list, item) : -1;

	Py_XDECREF(item);
	return rc;
}

static const char *program_name(const struct ipuef_metadata *m, uint32_t index)
{
	uint32_t i;

	for (i = 0; i < m->num_programs; i++)
		if (m->programs[i].index == index)
			return m->programs[i].name;
	return "?";
}

static PyObject *anchor_dict(const struct ipuef_metadata *m, const struct ipuef_anchor *a)
{
	static const char *const kinds[] = { "user", "tensor_data", "index" };
	PyObject *progs = PyList_New(0), *bd;
	uint32_t b;

	for (b = 0; progs && b < IPUEF_MAX_PROGRAMS; b++)
		if ((a->programs & (1ull << b)) &&
		    append(progs, PyUnicode_FromString(program_name(m, b))))
			Py_CLEAR(progs);
	if (!progs)
		return NULL;
	bd = a->batch_dim == IPUEF_NO_BATCH_DIM ? Py_NewRef(Py_None)
						 : PyLong_FromUnsignedLong(a->batch_dim);
	return Py_BuildValue("{s:s,s:s,s:N,s:K,s:s,s:s,s:N,s:I,s:N}", "name", a->name, "dtype",
			     ipurt_dtype_name(a->dtype), "shape", shape_list(a->dims, a->rank),
			     "bytes", (unsigned long long)ipuef_anchor_bytes(a), "direction",
			     a->direction == IPUEF_INPUT ? "input" : "output", "kind",
			     a->kind < 3 ? kinds[a->kind] : "user", "batch_dim", bd, "stream_id",
			     a->stream_id, "programs", progs);
}

/* A device-resident state, as ipuef-dump --json prints it. */
static PyObject *state_dict(const struct ipuef_state *s)
{
	PyObject *regions = PyList_New(0);

	for (uint32_t r = 0; regions && r < s->num_regions; r++)
		if (append(regions, Py_BuildValue("{s:I,s:I,s:I}", "tile", s->regions[r].tile,
						  "offset", s->regions[r].offset, "bytes",
						  s->regions[r].bytes)))
			Py_CLEAR(regions);
	if (!regions)
		return NULL;
	return Py_BuildValue("{s:s,s:s,s:N,s:K,s:s,s:I,s:I,s:N}", "name", s->name, "dtype",
			     ipurt_dtype_name(s->dtype), "shape", shape_list(s->dims, s->rank),
			     "bytes", (unsigned long long)ipuef_state_bytes(s), "init",
			     s->init == IPUEF_STATE_INIT_DATA ? "tensor-data" : "zeros",
			     "write_stream", s->write_stream, "read_stream", s->read_stream,
			     "regions", regions);
}

static PyObject *metadata_dict(const struct ipuef_file *f)
{
	const struct ipuef_metadata *m = ipuef_metadata(f);
	PyObject *progs = PyList_New(0), *anchors = PyList_New(0), *states = PyList_New(0);
	char exe_format[16];
	size_t exe_len;
	uint32_t i;

	for (i = 0; progs && i < m->num_programs; i++)
		if (append(progs, Py_BuildValue("{s:s,s:I}", "name", m->programs[i].name, "index",
						m->programs[i].index)))
			Py_CLEAR(progs);
	for (i = 0; anchors && i < m->num_anchors; i++)
		if (append(anchors, anchor_dict(m, &m->anchors[i])))
			Py_CLEAR(anchors);
	for (i = 0; states && i < m->num_states; i++)
		if (append(states, state_dict(&m->states[i])))
			Py_CLEAR(states);
	if (!progs || !anchors || !states) {
		Py_XDECREF(progs);
		Py_XDECREF(anchors);
		Py_XDECREF(states);
		return NULL;
	}
	ipuef_executable(f, &exe_len);
	snprintf(exe_format, sizeof(exe_format), "%u.%u", m->exe_format_major,
		 m->exe_format_minor);
	return Py_BuildValue("{s:s,s:n,s:s,s:I,s:I,s:I,s:N,s:N,s:N}", "exe_format", exe_format,
			     "executable_size", (Py_ssize_t)exe_len, "ipu_version",
			     m->ipu_version, "num_tiles", m->num_tiles, "tile_mem", m->tile_mem,
			     "batch_size", m->batch_size, "programs", progs, "anchors", anchors,
			     "states", states);
}

static PyObject *file_dict(const struct ipuef_file *f)
{
	PyObject *blobs = PyList_New(0), *tensors = PyList_New(0), *opaques = PyList_New(0);
	char version[16], checksum[16];
	uint16_t major, minor;
	uint32_t i;

	for (i = 0; blobs && i < ipuef_num_blobs(f); i++) {
		const struct ipuef_blob_info *b = ipuef_blob(f, i);
		char crc[16];
		PyObject *d;

		snprintf(crc, sizeof(crc), "0x%08x", b->crc);
		d = Py_BuildValue("{s:s,s:I,s:K,s:K,s:s}", "type", ipuef_blob_type_name(b->type),
				  "version", b->version, "offset", (unsigned long long)b->offset,
				  "size", (unsigned long long)b->size, "crc", crc);
		if (d && b->name) {
			PyObject *n = PyUnicode_FromString(b->name);

			if (!n || PyDict_SetItemString(d, "name", n))
				Py_CLEAR(d);
			Py_XDECREF(n);
		}
		if (append(blobs, d))
			Py_CLEAR(blobs);
	}
	for (i = 0; tensors && i < ipuef_num_tensors(f); i++) {
		const struct ipuef_tensor *t = ipuef_tensor(f, i);

		if (append(tensors, Py_BuildValue("{s:s,s:s,s:N,s:K,s:O}", "name", t->name, "dtype",
						  ipurt_dtype_name(t->dtype), "shape",
						  shape_list(t->dims, t->rank), "bytes",
						  (unsigned long long)t->size, "frozen",
						  t->flags & IPUEF_TENSOR_FROZEN ? Py_True
										 : Py_False)))
			Py_CLEAR(tensors);
	}
	for (i = 0; opaques && i < ipuef_num_opaques(f); i++) {
		const struct ipuef_opaque *o = ipuef_opaque(f, i);

		if (append(opaques, Py_BuildValue("{s:s,s:s,s:K}", "name", o->name, "version",
						  o->version, "bytes",
						  (unsigned long long)o->size)))
			Py_CLEAR(opaques);
	}
	if (!blobs || !tensors || !opaques) {
		Py_XDECREF(blobs);
		Py_XDECREF(tensors);
		Py_XDECREF(opaques);
		return NULL;
	}
	ipuef_version(f, &major, &minor);
	snprintf(version, sizeof(version), "%u.%u", major, minor);
	snprintf(checksum, sizeof(checksum), "0x%08x", ipuef_checksum(f));
	return Py_BuildValue("{s:s,s:K,s:s,s:N,s:N,s:N,s:N}", "version", version, "size",
			     (unsigned long long)ipuef_file_size(f), "checksum", checksum,
			     "blobs", blobs, "metadata", metadata_dict(f), "tensors", tensors,
			     "opaques", opaques);
}

PyObject *ipupy_read_ipuef(PyObject *module, PyObject *args)
{
	struct ipupy_state *st = ipupy_state_of(module);
	char err[IPUPY_ERRLEN] = "";
	struct ipuef_file *f = NULL;
	PyObject *src, *d;
	int rc;

	if (!PyArg_ParseTuple(args, "O:read_ipuef", &src))
		return NULL;
	if (PyUnicode_Check(src) || PyObject_HasAttrString(src, "__fspath__")) {
		PyObject *path = NULL;

		if (!PyUnicode_FSConverter(src, &path))
			return NULL;
		Py_BEGIN_ALLOW_THREADS
		rc = ipuef_open(PyBytes_AS_STRING(path), &f, err, sizeof(err));
		Py_END_ALLOW_THREADS
		Py_DECREF(path);
	} else {
		Py_buffer v;

		if (PyObject_GetBuffer(src, &v, PyBUF_SIMPLE))
			return NULL;
		Py_BEGIN_ALLOW_THREADS
		rc = ipuef_open_mem(v.buf, (size_t)v.len, &f, err, sizeof(err));
		Py_END_ALLOW_THREADS
		PyBuffer_Release(&v);
	}
	if (rc)
		return ipupy_raise(st, rc, err);
	d = file_dict(f);
	ipuef_close(f);
	return d;
}
