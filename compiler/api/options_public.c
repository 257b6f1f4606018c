/* SPDX-License-Identifier: MIT */
/* options_public.c - ipu_compile()'s options: their defaults, and each
 * value checked and turned into the pipeline's options by the setters
 * ipu-compile's command line uses (so both refuse alike). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "ipu/onnx_io.h"

int ipu_compile_options_init(struct ipu_compile_options *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->precision = "fp32";
	o->ipu_version = "ipu2";
	o->tiles = IPU2_TILES;
	o->tile_mem = IPU2_TILE_MEM;
	o->executable = 1;
	o->keep_executable = 1;
	return 0;
}

static int join_list(const char *const *items, size_t n, const char *what, char **out,
		     struct ir_error *e)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++) {
		if (!items[i] || !items[i][0] || strchr(items[i], ','))
			return ir_err(e, "%s: entry %zu is empty or holds a comma", what, i);
		len += strlen(items[i]) + 1;
	}
	if (!(s = malloc(len)))
		return ir_err(e, "out of memory");
	s[0] = 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, items[i]);
	}
	*out = s;
	return 0;
}

static int model_from_public(const struct ipu_compile_model *pm, size_t index,
			     struct ipuc_model *m, struct ir_error *e)
{
	if (!pm->path && !pm->data)
		return ir_err(e, "model %zu: give its path or its bytes", index);
	if (pm->path && pm->data)
		return ir_err(e, "model %zu: give its path or its bytes, not both", index);
	if (ipuc_setstr(&m->input_model, pm->path ? pm->path : pm->name ? pm->name : "<memory>", e))
		return -1;
	m->data = pm->data;
	m->size = pm->size;
	if ((pm->base_dir && ipuc_setstr(&m->base_dir, pm->base_dir, e)) ||
	    (pm->export_onnx && ipuc_setstr(&m->export_path, pm->export_onnx, e)) ||
	    (pm->precision && ipuc_set_precision(&m->precision, pm->precision, e)))
		return -1;
	if (pm->num_input_shapes > IPUC_MAX_SHAPES)
		return ir_err(e, "more than %d input shapes", IPUC_MAX_SHAPES);
	for (size_t i = 0; i < pm->num_input_shapes; i++) {
		const struct ipu_compile_shape *s = &pm->input_shapes[i];
		struct ir_shape_binding *b = &m->shapes[m->nshapes];

		if (!s->name || !s->name[0])
			return ir_err(e, "input shape %zu has no input name", i);
		if (s->rank > IR_MAX_RANK || (s->rank && !s->dims))
			return ir_err(e, "input shape of '%s': rank %zu (at most %d)", s->name, s->rank,
				      IR_MAX_RANK);
		for (size_t k = 0; k < s->rank; k++)
			if (s->dims[k] < 1)
				return ir_err(e, "input shape of '%s': dimension %zu is %lld, not a positive size",
					      s->name, k, (long long)s->dims[k]);
		memset(b, 0, sizeof(*b));
		if (!(b->name = strdup(s->name)))
			return ir_err(e, "out of memory");
		b->rank = (int)s->rank;
		memcpy(b->dims, s->dims, s->rank * sizeof(*s->dims));
		m->nshapes++;
	}
	return 0;
}

int ipuc_options_from_public(const struct ipu_compile_options *given, struct ipuc_options *o,
			     struct ir_error *e)
{
	struct ipu_compile_options po;
	char *list = NULL;
	int r;

	ipu_compile_options_init(&po);
	if (!given->size || given->size > sizeof(po) + 4096)
		return ir_err(e, "options.size is %zu: call ipu_compile_options_init() first",
			      given->size);
	/* a caller built against an older header passes fewer fields */
	memcpy(&po, given, given->size < sizeof(po) ? given->size : sizeof(po));
	ipuc_options_init(o);
	if (!po.num_models || !po.models)
		return ir_err(e, "no model: give options.models and options.num_models");
	if (po.num_models > IPUC_MAX_MODELS)
		return ir_err(e, "%zu models: at most %d can be fused", po.num_models, IPUC_MAX_MODELS);
	if (po.precision && ipuc_set_precision(&o->model.precision, po.precision, e))
		return -1;
	for (size_t i = 0; i < po.num_models; i++)
		if (model_from_public(&po.models[i], i, &o->fusion[i], e))
			return -1;
	o->nfusion = (int)po.num_models;
	if (po.batch_size < 0 || po.batch_size > INT32_MAX)
		return ir_err(e, "batch_size %lld is not from 1 to %d (0: as the model says)",
			      (long long)po.batch_size, INT32_MAX);
	o->batch_size = po.batch_size;
	if (po.batch_axis < 0 || po.batch_axis >= IR_MAX_RANK)
		return ir_err(e, "batch_axis %d is not from 0 to %d", po.batch_axis, IR_MAX_RANK - 1);
	o->batch_axis = po.batch_axis;
	if (po.ipu_version && ipuc_set_ipu_version(o, po.ipu_version, e))
		return -1;
	if (po.tiles < 1 || po.tiles > 8192)
		return ir_err(e, "tiles %u is not from 1 to 8192", po.tiles);
	if (po.tile_mem < 1024 || po.tile_mem > (16u << 20))
		return ir_err(e, "tile_mem %u must be between 1 KiB and 16 MiB", po.tile_mem);
	o->tiles = po.tiles;
	o->tile_mem = po.tile_mem;
	if (po.max_tensor_size < -1)
		return ir_err(e, "max_tensor_size %lld: give bytes, 0 (64 MiB) or -1 (no limit)",
			      (long long)po.max_tensor_size);
	o->max_tensor_size = po.max_tensor_size;
	if (po.num_fp16_skip_op_types) {
		if (join_list(po.fp16_skip_op_types, po.num_fp16_skip_op_types, "fp16_skip_op_types",
			      &list, e))
			return -1;
		r = ipuc_add_skip_ops(o, list, e);
		free(list);
		if (r)
			return -1;
	}
	if (po.num_fp8_skip_op_names) {
		if (join_list(po.fp8_skip_op_names, po.num_fp8_skip_op_names, "fp8_skip_op_names",
			      &list, e))
			return -1;
		r = ipuc_add_fp8_skip(o, list, e);
		free(list);
		if (r)
			return -1;
	}
	if (po.fp8_params && ipuc_set_fp8_params(o, po.fp8_params, e))
		return -1;
	if (po.fp8_scale && ipuc_set_fp8_scale(o, po.fp8_scale, e))
		return -1;
	if (po.fp8_auto_skip && ipuc_set_fp8_auto_skip(o, po.fp8_auto_skip, e))
		return -1;
	if (po.num_of_layers_keep_fp16 < 0)
		return ir_err(e, "num_of_layers_keep_fp16 %d is negative", po.num_of_layers_keep_fp16);
	o->keep_fp16 = po.num_of_layers_keep_fp16;
	if (po.state && ipuc_setstr(&o->state, po.state, e))
		return -1;
	if (po.prefill_model && ipuc_setstr(&o->prefill_model, po.prefill_model, e))
		return -1;
	o->check = !!po.check;
	o->no_fusion = !!po.no_fusion;
	o->no_memory_reuse = !!po.no_memory_reuse;
	o->verbose = !!po.verbose;
	if ((po.calibration_data && ipuc_setstr(&o->calibration_data, po.calibration_data, e)) ||
	    (po.calibration_loss_type && ipuc_set_calibration_loss(o, po.calibration_loss_type, e)) ||
	    (po.precision_compare_json &&
	     ipuc_setstr(&o->precision_compare_json, po.precision_compare_json, e)))
		return -1;
	o->precision_compare = po.precision_compare || po.precision_compare_json;
	if (po.export_opset && (po.export_opset < ONNX_EXPORT_OPSET_MIN || po.export_opset > ONNX_OPSET_MAX))
		return ir_err(e, "export_opset %d is not from %d to %d", po.export_opset,
			      ONNX_EXPORT_OPSET_MIN, ONNX_OPSET_MAX);
	o->convert_version = po.export_opset;
	if ((po.output && ipuc_setstr(&o->output, po.output, e)) ||
	    (po.report && ipuc_setstr(&o->report, po.report, e)))
		return -1;
	if (po.num_ipus > 64)
		return ir_err(e, "num_ipus %u is not from 1 to 64", po.num_ipus);
	o->num_ipus = po.num_ipus;
	if (po.manual_sharding_config && ipuc_setstr(&o->sharding_config, po.manual_sharding_config, e))
		return -1;
	o->pipelining = !!po.enable_pipelining;
	if (po.custom_library_so_paths && po.custom_library_so_paths[0] &&
	    ipuc_setstr(&o->custom_libs, po.custom_library_so_paths, e))
		return -1;
	if (!po.executable && (po.output || po.report || po.check))
		return ir_err(e, "output, report and check need the executable (options.executable 1)");
	return 0;
}
