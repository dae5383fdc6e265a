/*
 * introspect.c - read a context binary's metadata through the QNN system library.
 *
 * The binary-info member is chosen by its version (V3 is laid out differently from V1/V2);
 * the graph-info array is strided by the size the *system library* was built with. The whole
 * answer is validated (introspect_validate.c) before anything in it is copied or followed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_file.h"
#include "loader/loader.h"
#include "base/base.h"
#include "introspect_validate.h"
#include "memory.h"
#include "model_info.h"
#include "device/device.h"
#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_versions.h"

/* Sanity bound: far above any real model, low enough to refuse garbage before allocating. */
#define MAX_AXIS_CHANNELS (1u << 24)

typedef struct binary_fields {
  uint32_t backend_id;
  const char *build_id, *soc_version;
  qnn_version_t core_api, backend_api, blob_version;
  uint64_t blob_size;
  uint32_t num_graphs;
  const void *graphs;
  const qnn_device_platform_info_t *platform_info;
  uint32_t soc_model;
} binary_fields;

static htpu_version3 v3(qnn_version_t v) { return (htpu_version3){v.major, v.minor, v.patch}; }

static int pick_binary_fields(const qnn_system_context_binary_info_t *bi, binary_fields *f) {
  memset(f, 0, sizeof *f);
  switch (bi->version) {
    case QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_1:
    case QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_2: {
      /* V2 extends V1 by appending platform_info. */
      const qnn_binary_info_v2_t *b = &bi->u.v2;
      f->backend_id = b->backend_id;
      f->build_id = b->build_id;
      f->soc_version = b->soc_version;
      f->core_api = b->core_api_version;
      f->backend_api = b->backend_api_version;
      f->blob_version = b->context_blob_version;
      f->blob_size = b->context_blob_size;
      f->num_graphs = b->num_graphs;
      f->graphs = b->graphs;
      if (bi->version == QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_2) f->platform_info = b->platform_info;
      return 0;
    }
    case QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_3: {
      const qnn_binary_info_v3_t *b = &bi->u.v3;
      f->backend_id = b->backend_id;
      f->build_id = b->build_id;
      f->soc_version = b->soc_version;
      f->core_api = b->core_api_version;
      f->backend_api = b->backend_api_version;
      f->blob_version = b->context_blob_version;
      f->blob_size = b->context_blob_size;
      f->num_graphs = b->num_graphs;
      f->graphs = b->graphs;
      f->platform_info = b->platform_info;
      f->soc_model = b->soc_model;
      return 0;
    }
    default:
      return htpu_set_error(HTPU_EMODEL, 0,
                            "the system library reported binary info version %u (supported: 1, "
                            "2, 3)",
                            bi->version);
  }
}

/* Checks the answer as a whole before any of it is copied or followed. */
static int validate_answer(const qnn_system_lib *sys, const binary_fields *f) {
  const sysinfo_answer a = {sys->path, sys->api, f->build_id, f->soc_version, f->num_graphs,
                            f->graphs};
  return sysinfo_validate(&a);
}

/* Per-axis scale/offset (plain or bitwidth): copies of the arrays, in the public view and
 * in the template. */
static int copy_axis_quant(model_info *m, const char *where, const qnn_quantize_params_t *q,
                           htpu_tensor_info *info, qnn_quantize_params_t *tq) {
  int bw = q->quantization_encoding == QNN_QUANTIZATION_ENCODING_BW_AXIS_SCALE_OFFSET;
  int32_t axis = bw ? q->u.bw_axis_scale_offset_encoding.axis : q->u.axis_scale_offset_encoding.axis;
  uint32_t n = bw ? q->u.bw_axis_scale_offset_encoding.num_elements
                  : q->u.axis_scale_offset_encoding.num_scale_offsets;
  if (axis < 0 || (uint32_t)axis >= info->rank)
    return htpu_set_error(HTPU_EMODEL, 0, "%s: quantization axis %d outside rank %u", where,
                          axis, info->rank);
  if (n == 0 || n > MAX_AXIS_CHANNELS || n != info->dims[axis])
    return htpu_set_error(HTPU_EMODEL, 0,
                          "%s: %u per-axis scales for axis %d of size %u", where, n, axis,
                          info->dims[axis]);
  float *scales = model_info_alloc(m, n * sizeof(float));
  int32_t *zps = model_info_alloc(m, n * sizeof(int32_t));
  qnn_scale_offset_t *so = bw ? NULL : model_info_alloc(m, n * sizeof(qnn_scale_offset_t));
  int32_t *offs = bw ? model_info_alloc(m, n * sizeof(int32_t)) : NULL;
  if (!scales || !zps || (!bw && !so) || (bw && !offs))
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if ((bw && (!q->u.bw_axis_scale_offset_encoding.scales ||
              !q->u.bw_axis_scale_offset_encoding.offsets)) ||
      (!bw && !q->u.axis_scale_offset_encoding.scale_offset))
    return htpu_set_error(HTPU_EMODEL, 0, "%s: per-axis quantization without its arrays", where);
  for (uint32_t i = 0; i < n; i++) {
    float s = bw ? q->u.bw_axis_scale_offset_encoding.scales[i]
                 : q->u.axis_scale_offset_encoding.scale_offset[i].scale;
    int32_t o = bw ? q->u.bw_axis_scale_offset_encoding.offsets[i]
                   : q->u.axis_scale_offset_encoding.scale_offset[i].offset;
    if (!(s > 0.0f) || s > 3.0e38f || o == INT32_MIN)
      return htpu_set_error(HTPU_EMODEL, 0, "%s: channel %u has scale %g, offset %d", where,
                            i, (double)s, o);
    scales[i] = s;
    zps[i] = -o;
    if (so) so[i] = (qnn_scale_offset_t){s, o};
    if (offs) offs[i] = o;
  }
  if (bw) {
    tq->u.bw_axis_scale_offset_encoding.scales = scales;
    tq->u.bw_axis_scale_offset_encoding.offsets = offs;
  } else {
    tq->u.axis_scale_offset_encoding.scale_offset = so;
  }
  info->quant.kind = HTPU_QUANT_PER_AXIS;
  info->quant.axis = axis;
  info->quant.num_channels = n;
  info->quant.scales = scales;
  info->quant.zero_points = zps;
  return 0;
}

static int copy_quant(model_info *m, const char *where, const qnn_tensor_v1_t *src,
                      htpu_tensor_info *info, qnn_quantize_params_t *tq) {
  const qnn_quantize_params_t *q = &src->quantize_params;
  memset(tq, 0, sizeof *tq);
  tq->encoding_definition = QNN_DEFINITION_UNDEFINED;
  tq->quantization_encoding = QNN_QUANTIZATION_ENCODING_UNDEFINED;
  info->quant.kind = HTPU_QUANT_NONE;
  if (q->encoding_definition != QNN_DEFINITION_DEFINED) {
    if (dtype_is_fixed_point(src->data_type))
      return htpu_set_error(HTPU_EMODEL, 0, "%s: quantized type %s without quantization parameters",
                            where, htpu_dtype_name(info->dtype));
    return 0;
  }
  *tq = *q; /* pointer members are replaced with our copies below */
  switch (q->quantization_encoding) {
    case QNN_QUANTIZATION_ENCODING_SCALE_OFFSET:
    case QNN_QUANTIZATION_ENCODING_BW_SCALE_OFFSET: {
      float scale = q->quantization_encoding == QNN_QUANTIZATION_ENCODING_SCALE_OFFSET
                        ? q->u.scale_offset_encoding.scale
                        : q->u.bw_scale_offset_encoding.scale;
      int32_t offset = q->quantization_encoding == QNN_QUANTIZATION_ENCODING_SCALE_OFFSET
                           ? q->u.scale_offset_encoding.offset
                           : q->u.bw_scale_offset_encoding.offset;
      if (!(scale > 0.0f) || scale != scale || scale > 3.0e38f)
        return htpu_set_error(HTPU_EMODEL, 0, "%s: quantization scale %g is not a positive number",
                              where, (double)scale);
      if (offset == INT32_MIN)
        return htpu_set_error(HTPU_EMODEL, 0, "%s: quantization offset %d cannot be negated",
                              where, offset);
      info->quant.kind = HTPU_QUANT_PER_TENSOR;
      info->quant.scale = scale;
      info->quant.zero_point = -offset;
      return 0;
    }
    case QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET:
    case QNN_QUANTIZATION_ENCODING_BW_AXIS_SCALE_OFFSET:
      return copy_axis_quant(m, where, q, info, tq);
    default:
      return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                            "%s: quantization encoding %d is not supported at graph inputs and "
                            "outputs (supported: scale/offset and per-axis scale/offset)",
                            where, q->quantization_encoding);
  }
}

/* Copies one tensor description out of the system library's array. */
static int copy_tensor(model_info *m, const char *graph, const char *role,
                       const qnn_tensor_t *src, htpu_tensor_info *info, qnn_tensor_t *tmpl) {
  /* Version, rank, dimensions and name were validated (sysinfo_validate). */
  char where[256];
  const qnn_tensor_v1_t *t = &src->u.v1; /* V2 shares V1's fields at the same offsets */
  const char *name = t->name;
  snprintf(where, sizeof where, "graph '%s' %s '%s'", graph, role, name);
  int rc = sysinfo_check_io_format(where, t->data_format);
  if (rc) return rc;
  info->dtype = dtype_from_qnn(t->data_type);
  if (info->dtype == HTPU_DTYPE_INVALID)
    return htpu_set_error(HTPU_EUNSUPPORTED, 0, "%s: QNN data type 0x%04x is not supported", where,
                          t->data_type);
  info->name = model_info_strdup(m, name);
  if (!info->name) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  info->id = t->id;
  info->qnn_data_type = t->data_type;
  info->tensor_version = src->version;
  info->rank = t->rank;
  size_t elems = 1;
  for (uint32_t d = 0; d < t->rank; d++) {
    info->dims[d] = t->dimensions[d];
    if (t->dimensions[d] != 0 && elems > SIZE_MAX / t->dimensions[d] / 8)
      return htpu_set_error(HTPU_EMODEL, 0, "%s: element count overflows", where);
    elems *= t->dimensions[d];
  }
  info->num_elements = elems;
  info->byte_size = elems * htpu_dtype_size(info->dtype);
  info->dynamic_dims = sysinfo_dynamic_mask(src);

  /* The execute template: same version, id, type, format, data type, quantization and dims as
   * the binary declares ("tensors must carry the id assigned at creation"). */
  memset(tmpl, 0, sizeof *tmpl);
  tmpl->version = src->version;
  qnn_tensor_v1_t *d = &tmpl->u.v1;
  d->id = t->id;
  d->name = info->name;
  d->type = t->type;
  d->data_format = t->data_format;
  d->data_type = t->data_type;
  d->rank = t->rank;
  d->dimensions = t->rank ? model_info_alloc(m, t->rank * sizeof(uint32_t)) : NULL;
  if (t->rank && !d->dimensions) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if (t->rank) memcpy(d->dimensions, info->dims, t->rank * sizeof(uint32_t));
  d->mem_type = QNN_TENSORMEMTYPE_RAW;
  /* A zero-filled V2 would say hybrid COO (0); dense tensors carry UNDEFINED, as the V2
   * initializer and the system library's own tensors do. */
  if (tmpl->version == QNN_TENSOR_VERSION_2)
    tmpl->u.v2.sparse_params.type = QNN_SPARSE_LAYOUT_UNDEFINED;
  /* ... and its dynamic dimensions as declared (read only: the backend writes dims, never
   * these flags) */
  if (info->dynamic_dims) {
    uint8_t *dyn = model_info_alloc(m, t->rank);
    if (!dyn) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    for (uint32_t k = 0; k < t->rank; k++) dyn[k] = (info->dynamic_dims >> k) & 1u;
    tmpl->u.v2.is_dynamic_dimensions = dyn;
  }
  return copy_quant(m, where, t, info, &d->quantize_params);
}

static int copy_tensor_list(model_info *m, const char *graph, const char *role, uint32_t n,
                            const qnn_tensor_t *src, const htpu_tensor_info **out_infos,
                            qnn_tensor_t **out_tmpl) {
  htpu_tensor_info *infos = model_info_alloc(m, (n ? n : 1) * sizeof *infos);
  qnn_tensor_t *tmpl = model_info_alloc(m, (n ? n : 1) * sizeof *tmpl);
  if (!infos || !tmpl) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    /* The library's tensor stride: 144 bytes at every supported API version. */
    const qnn_tensor_t *t = (const qnn_tensor_t *)((const char *)src + (size_t)i * QNN_TENSOR_STRIDE);
    int rc = copy_tensor(m, graph, role, t, &infos[i], &tmpl[i]);
    if (rc) return rc;
  }
  *out_infos = infos;
  *out_tmpl = tmpl;
  return 0;
}

static int copy_graphs(model_info *m, const qnn_system_lib *sys, const binary_fields *f) {
  if (f->num_graphs == 0) return htpu_set_error(HTPU_EMODEL, 0, "the binary holds no graph");
  /* Counts, versions, names and arrays were validated (sysinfo_validate). */
  uint32_t n = f->num_graphs;
  uint32_t stride = qnn_graph_info_stride(sys->api);
  htpu_graph_info *graphs = model_info_alloc(m, n * sizeof *graphs);
  htpu_graph_memory *mem = model_info_alloc(m, n * sizeof *mem);
  m->templates = model_info_alloc(m, n * sizeof *m->templates);
  if (!graphs || !mem || !m->templates) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    const qnn_system_context_graph_info_t *g =
        (const qnn_system_context_graph_info_t *)((const char *)f->graphs + (size_t)i * stride);
    const qnn_graph_info_v1_t *p = &g->u.v1; /* V1..V3 share this prefix */
    for (uint32_t j = 0; j < i; j++)
      if (strcmp(graphs[j].name, p->graph_name) == 0)
        return htpu_set_error(HTPU_EMODEL, 0, "two graphs are named '%s'", p->graph_name);
    htpu_graph_info *gi = &graphs[i];
    gi->name = model_info_strdup(m, p->graph_name);
    if (!gi->name) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    gi->graph_info_version = g->version;
    int rc = copy_tensor_list(m, gi->name, "input", p->num_graph_inputs, p->graph_inputs,
                              &gi->inputs, &m->templates[i].inputs);
    if (rc) return rc;
    rc = copy_tensor_list(m, gi->name, "output", p->num_graph_outputs, p->graph_outputs,
                          &gi->outputs, &m->templates[i].outputs);
    if (rc) return rc;
    gi->num_inputs = p->num_graph_inputs;
    gi->num_outputs = p->num_graph_outputs;
    /* the HTP blob: memory figures, and V1's VTCM (src/model/memory.c) */
    if (g->version == QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3)
      memory_read_blob(g->u.v3.graph_blob_info, g->u.v3.graph_blob_info_size, &mem[i],
                       &gi->vtcm_bytes);
  }
  m->pub.graphs = graphs;
  m->pub.num_graphs = n;
  m->pub.graph_memory = mem;
  return 0;
}

int introspect_binary(const qnn_system_lib *sys, void *buf, size_t len, model_info **out) {
  *out = NULL;
  model_info *m = calloc(1, sizeof *m);
  if (!m) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  qnn_system_context_handle_t sc = NULL;
  uint64_t mark = qnn_log_mark();
  qnn_error_t e = sys->context_create(&sc);
  if (e != QNN_SUCCESS || !sc) {
    uint32_t code = QNN_ERROR_CODE(e);
    model_info_free(m);
    return htpu_set_error(HTPU_EQNN, code,
                          "reading the binary's metadata: systemContextCreate failed with QNN "
                          "error %u (%s)",
                          code, htpu_qnn_error_name(code));
  }
  const void *raw = NULL;
  qnn_context_binary_size_t raw_size = 0;
  e = sys->get_binary_info(sc, buf, (uint64_t)len, &raw, &raw_size);
  int rc = 0;
  if (e != QNN_SUCCESS || !raw) {
    uint32_t code = QNN_ERROR_CODE(e);
    rc = htpu_set_error(HTPU_EMODEL, code,
                        "reading the binary's metadata: systemContextGetBinaryInfo failed with "
                        "QNN error %u (%s: %s); is this a QNN context binary for this SDK?",
                        code, htpu_qnn_error_name(code), htpu_qnn_error_message(code));
    qnn_log_append_since(mark);
  } else {
    binary_fields f;
    const qnn_system_context_binary_info_t *bi = raw;
    rc = pick_binary_fields(bi, &f);
    if (!rc) rc = validate_answer(sys, &f);
    if (!rc) {
      m->pub.binary_info_version = bi->version;
      m->pub.backend_id = f.backend_id;
      m->pub.build_id = model_info_strdup(m, f.build_id ? f.build_id : "");
      m->pub.soc_version = model_info_strdup(m, f.soc_version ? f.soc_version : "");
      m->pub.core_api_version = v3(f.core_api);
      m->pub.backend_api_version = v3(f.backend_api);
      m->pub.context_blob_version = v3(f.blob_version);
      m->pub.context_blob_size = f.blob_size;
      m->pub.soc_model = f.soc_model;
      platform_info_read(f.platform_info, &m->pub.dsp_arch, &m->pub.soc_model, NULL);
      if (!m->pub.build_id || !m->pub.soc_version)
        rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
      else
        rc = copy_graphs(m, sys, &f);
      m->pub.binary_bytes = len;
      if (!rc)
        m->pub.load_estimate_bytes =
            memory_load_estimate(m->pub.graph_memory, m->pub.num_graphs, len);
    }
  }
  /* Everything is copied: the system context's memory can go. */
  sys->context_free(sc);
  if (rc) {
    model_info_free(m);
    return rc;
  }
  *out = m;
  return 0;
}
