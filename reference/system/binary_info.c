/* binary_info.c - QnnSystemContext binary info built from a reference model. */
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_versions.h"
#include "rs_internal.h"

void *rs_alloc(rs_context *c, size_t size) {
  rs_block *b = malloc(sizeof(*b));
  void *p = calloc(1, size ? size : 1);
  if (!b || !p) {
    free(b);
    free(p);
    return NULL;
  }
  b->p = p;
  b->size = size;
  b->next = c->blocks;
  c->blocks = b;
  return p;
}

void rs_free_all(rs_context *c) {
  while (c->blocks) {
    rs_block *b = c->blocks;
    c->blocks = b->next;
    free(b->p);
    free(b);
  }
}

size_t rs_allocated(const rs_context *c) {
  size_t n = 0;
  for (const rs_block *b = c->blocks; b; b = b->next) n += b->size;
  return n;
}

static char *rs_strdup(rs_context *c, const char *s) {
  if (!s) s = "";
  size_t n = strlen(s) + 1;
  char *p = rs_alloc(c, n);
  if (p) memcpy(p, s, n);
  return p;
}

/* HTP graph blob info, version 1, as HTP/QnnHtpSystemContext.h lays it out (40 bytes). */
typedef struct rs_htp_graph_blob {
  uint32_t version;
  uint64_t spill_fill_buffer_size;
  uint32_t vtcm_size; /* bytes in real binaries */
  uint32_t optimization_level;
  uint8_t htp_dlbc;
  uint64_t num_hvx_threads;
} rs_htp_graph_blob;
_Static_assert(offsetof(rs_htp_graph_blob, spill_fill_buffer_size) == 8, "blob layout");
_Static_assert(offsetof(rs_htp_graph_blob, vtcm_size) == 16, "blob layout");
_Static_assert(offsetof(rs_htp_graph_blob, optimization_level) == 20, "blob layout");
_Static_assert(offsetof(rs_htp_graph_blob, htp_dlbc) == 24, "blob layout");
_Static_assert(offsetof(rs_htp_graph_blob, num_hvx_threads) == 32, "blob layout");
_Static_assert(sizeof(rs_htp_graph_blob) == 40, "blob layout");
_Static_assert(sizeof(qnn_tensor_t) == QNN_TENSOR_STRIDE, "tensor stride");
_Static_assert(offsetof(qnn_tensor_t, u) + sizeof(qnn_tensor_v1_t) == QNN_TENSOR_STRIDE_V1_ONLY,
               "a V1-only tensor is the version and V1");
_Static_assert(sizeof(qnn_system_context_graph_info_t) == QNN_GRAPH_INFO_STRIDE_V3, "stride");
_Static_assert(offsetof(qnn_system_context_graph_info_t, u) + sizeof(qnn_graph_info_v1_t) ==
                   QNN_GRAPH_INFO_STRIDE_V1_ONLY,
               "a V1-only graph info is the version and V1");

/* The HTP graph blob info of graph g, the version the model asks for, its figures from the
 * model (ref_graph_memory_of): version 1 the spill-fill buffer and VTCM, version 2 the sizes
 * (HTP/QnnHtpSystemContext.h lays out both: qnn_device_abi.h). 0, or -1 out of memory. */
static int fill_blob(rs_context *c, const ref_model *m, uint32_t g, qnn_graph_info_v3_t *v) {
  ref_graph_memory mem;
  ref_graph_memory_of(m, g, &mem);
  if (m->meta.graph_blob_version == 2) {
    qnn_htp_graph_blob_info_v2_t *b = rs_alloc(c, sizeof(*b));
    if (!b) return -1;
    b->version = QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V2;
    b->io_tensor_size = mem.io_bytes;
    b->op_data_size = mem.op_data_bytes;
    b->const_size = mem.const_bytes;
    b->ddr_tensor_size = mem.ddr_bytes;
    b->shared_weights_size = mem.shared_weights_bytes;
    v->graph_blob_info_size = (uint32_t)sizeof(*b);
    v->graph_blob_info = b;
    return 0;
  }
  rs_htp_graph_blob *blob = rs_alloc(c, sizeof(*blob));
  if (!blob) return -1;
  blob->version = QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V1;
  blob->spill_fill_buffer_size = mem.spill_fill_bytes;
  blob->vtcm_size = m->meta.vtcm_blob; /* as the model says: bytes, or MB to test readers */
  blob->optimization_level = 2;       /* what a default QAIRT build (O=2) reports */
  blob->num_hvx_threads = 4;          /* v68: 4 HVX contexts */
  v->graph_blob_info_size = (uint32_t)sizeof(*blob);
  v->graph_blob_info = blob;
  return 0;
}

static int fill_quant(rs_context *c, const ref_tensor *t, qnn_quantize_params_t *q) {
  memset(q, 0, sizeof(*q));
  switch (t->quant) {
    case REF_QUANT_SCALE_OFFSET:
      q->encoding_definition = QNN_DEFINITION_DEFINED;
      q->quantization_encoding = QNN_QUANTIZATION_ENCODING_SCALE_OFFSET;
      q->u.scale_offset_encoding.scale = t->scale;
      q->u.scale_offset_encoding.offset = t->offset;
      return 0;
    case REF_QUANT_AXIS_SCALE_OFFSET: {
      qnn_scale_offset_t *so = rs_alloc(c, t->num_axis * sizeof(*so));
      if (!so) return -1;
      for (uint32_t i = 0; i < t->num_axis; i++) {
        so[i].scale = t->scales[i];
        so[i].offset = t->offsets[i];
      }
      q->encoding_definition = QNN_DEFINITION_DEFINED;
      q->quantization_encoding = QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET;
      q->u.axis_scale_offset_encoding.axis = t->axis;
      q->u.axis_scale_offset_encoding.num_scale_offsets = t->num_axis;
      q->u.axis_scale_offset_encoding.scale_offset = so;
      return 0;
    }
    default:
      q->encoding_definition = QNN_DEFINITION_UNDEFINED;
      q->quantization_encoding = QNN_QUANTIZATION_ENCODING_UNDEFINED;
      return 0;
  }
}

/* What V2 appends: isDynamicDimensions (NULL when every dimension is static, as QnnTypes.h
 * allows), the sparse parameters a sparse tensor "must fully specify" (hybrid COO over all its
 * elements and dimensions; UNDEFINED, the V2 initializer's value, for a dense one), and
 * isProduced 0. */
static int fill_v2_extras(rs_context *c, const ref_tensor *t, qnn_tensor_v2_t *v2) {
  if (t->dynamic_mask) {
    uint8_t *dyn = rs_alloc(c, t->rank);
    if (!dyn) return -1;
    for (uint32_t d = 0; d < t->rank; d++) dyn[d] = (t->dynamic_mask >> d) & 1u;
    v2->is_dynamic_dimensions = dyn;
  }
  v2->sparse_params.type = QNN_SPARSE_LAYOUT_UNDEFINED;
  if (t->data_format == QNN_TENSOR_DATA_FORMAT_SPARSE) {
    v2->sparse_params.type = QNN_SPARSE_LAYOUT_HYBRID_COO;
    v2->sparse_params.u.hybrid_coo.num_specified_elements = (uint32_t)ref_tensor_elements(t);
    v2->sparse_params.u.hybrid_coo.num_sparse_dimensions = t->rank;
  }
  return 0;
}

/* One graph input/output as the version-`version` tensor QNN would report. */
static int fill_tensor(rs_context *c, const ref_tensor *t, uint32_t version, uint32_t type,
                       qnn_tensor_t *out) {
  const char *name = rs_strdup(c, t->name);
  uint32_t *dims = rs_alloc(c, t->rank * sizeof(uint32_t));
  qnn_quantize_params_t q;
  if (!name || !dims || fill_quant(c, t, &q) != 0) return -1;
  memcpy(dims, t->dims, t->rank * sizeof(uint32_t));
  memset(out, 0, sizeof(*out));
  out->version = version;
#define RS_FILL(m)                                        \
  out->u.m.id = t->id;                                    \
  out->u.m.name = name;                                   \
  out->u.m.type = type;                                   \
  out->u.m.data_format = t->data_format;                  \
  out->u.m.data_type = t->data_type;                      \
  out->u.m.quantize_params = q;                           \
  out->u.m.rank = t->rank;                                \
  out->u.m.dimensions = dims;                             \
  out->u.m.mem_type = QNN_TENSORMEMTYPE_RAW
  if (version == QNN_TENSOR_VERSION_2) {
    RS_FILL(v2);
    return fill_v2_extras(c, t, &out->u.v2);
  }
  RS_FILL(v1); /* V1 has no field for dynamic dimensions or sparsity: they are not reported */
#undef RS_FILL
  return 0;
}

/* Tensors in an array of `stride`-byte elements (each exactly that long, so reading past one
 * is caught by ASan at the end of the array). */
static qnn_tensor_t *fill_tensors(rs_context *c, const ref_model *m, const uint32_t *idx,
                                  uint32_t n, uint32_t version, uint32_t type, uint32_t stride) {
  unsigned char *arr = rs_alloc(c, (size_t)n * stride);
  if (!arr) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    qnn_tensor_t t;
    if (fill_tensor(c, &m->tensors[idx[i]], version, type, &t) != 0) return NULL;
    memcpy(arr + (size_t)i * stride, &t, stride);
  }
  return (qnn_tensor_t *)(void *)arr;
}

/* Graph infos in an array of `layout.graph_stride`-byte elements: the layout a system library
 * was compiled with, which the caller must stride by. */
static void *fill_graphs(rs_context *c, const ref_model *m, rs_layout layout) {
  uint32_t gv = m->meta.graph_info_version, tv = m->meta.tensor_version;
  uint32_t stride = layout.graph_stride;
  uint32_t max_gv = stride >= QNN_GRAPH_INFO_STRIDE_V3   ? QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3
                    : stride >= QNN_GRAPH_INFO_STRIDE_V2 ? QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_2
                                                         : QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_1;
  if (gv > max_gv) {
    rs_log("the binary asks for graph info v%u, but this library's %u-byte graph info has no "
           "room for it: reporting v%u", gv, stride, max_gv);
    gv = max_gv;
  }
  if (tv == QNN_TENSOR_VERSION_2 && layout.tensor_stride < QNN_TENSOR_STRIDE) {
    rs_log("the binary asks for tensor v2, but this library's %u-byte tensor has no room for "
           "it: reporting v1", layout.tensor_stride);
    tv = QNN_TENSOR_VERSION_1;
  }
  unsigned char *arr = rs_alloc(c, (size_t)m->num_graphs * stride);
  if (!arr) return NULL;
  for (uint32_t i = 0; i < m->num_graphs; i++) {
    const ref_graph *g = &m->graphs[i];
    qnn_system_context_graph_info_t gi;
    memset(&gi, 0, sizeof(gi));
    gi.version = gv;
    /* V1, V2 and V3 share their first fields, so fill through v3 and copy `stride` bytes. */
    qnn_graph_info_v3_t *v = &gi.u.v3;
    v->graph_name = rs_strdup(c, g->name);
    v->num_graph_inputs = g->num_inputs;
    v->graph_inputs = fill_tensors(c, m, g->inputs, g->num_inputs, tv, QNN_TENSOR_TYPE_APP_WRITE,
                                   layout.tensor_stride);
    v->num_graph_outputs = g->num_outputs;
    v->graph_outputs = fill_tensors(c, m, g->outputs, g->num_outputs, tv,
                                    QNN_TENSOR_TYPE_APP_READ, layout.tensor_stride);
    if (!v->graph_name || !v->graph_inputs || !v->graph_outputs) return NULL;
    if (gv == QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3 && fill_blob(c, m, i, v) != 0) return NULL;
    memcpy(arr + (size_t)i * stride, &gi, stride);
  }
  return arr;
}

static qnn_version_t ver(const uint32_t v[3]) { return (qnn_version_t){v[0], v[1], v[2]}; }

/* The device the binary was built for, as an HTP platform-info chain: one on-chip device
 * with one NSP core, whose extension carries the DSP arch, SoC model and VTCM size. */
static qnn_device_platform_info_t *fill_platform_info(rs_context *c, const ref_model_meta *mm) {
  qnn_device_platform_info_t *p = rs_alloc(c, sizeof(*p));
  qnn_device_hardware_device_info_t *dev = rs_alloc(c, sizeof(*dev));
  qnn_device_core_info_t *core = rs_alloc(c, sizeof(*core));
  qnn_htp_device_info_extension_t *ext = rs_alloc(c, sizeof(*ext));
  if (!p || !dev || !core || !ext) return NULL;
  ext->dev_type = QNN_HTP_DEVICE_TYPE_ON_CHIP;
  ext->u.on_chip_device.vtcm_size = mm->vtcm_blob; /* the same encoding as the blob info */
  ext->u.on_chip_device.soc_model = mm->soc_model;
  ext->u.on_chip_device.arch = mm->dsp_arch;
  core->version = QNN_DEVICE_CORE_INFO_VERSION_1;
  core->u.v1.core_id = 0;
  core->u.v1.core_type = 0; /* NSP */
  dev->version = QNN_DEVICE_HARDWARE_DEVICE_INFO_VERSION_1;
  dev->u.v1.device_id = 0;
  dev->u.v1.device_type = QNN_HTP_DEVICE_TYPE_ON_CHIP;
  dev->u.v1.num_cores = 1;
  dev->u.v1.cores = core;
  dev->u.v1.device_info_extension = ext;
  p->version = QNN_DEVICE_PLATFORM_INFO_VERSION_1;
  p->u.v1.num_hw_devices = 1;
  p->u.v1.hw_devices = dev;
  return p;
}

int rs_build_binary_info(rs_context *c, const ref_model *m, uint64_t len, rs_layout layout,
                         const qnn_system_context_binary_info_t **out) {
  qnn_system_context_binary_info_t *info = rs_alloc(c, sizeof(*info));
  if (!info) return -1;
  void *graphs = fill_graphs(c, m, layout);
  const char *build_id = rs_strdup(c, m->meta.build_id);
  const char *soc = rs_strdup(c, m->meta.soc_version);
  if (!graphs || !build_id || !soc) return -1;
  const ref_model_meta *mm = &m->meta;
  info->version = mm->binary_info_version;
  if (info->version == QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_3) {
    /* V3 dropped the hardware-info blob fields, so everything after soc_version moved. */
    qnn_binary_info_v3_t *v = &info->u.v3;
    v->backend_id = mm->backend_id;
    v->build_id = build_id;
    v->core_api_version = ver(mm->core_api);
    v->backend_api_version = ver(mm->backend_api);
    v->soc_version = soc;
    v->context_blob_version = ver(mm->context_blob_version);
    v->context_blob_size = len;
    v->num_graphs = m->num_graphs;
    v->graphs = graphs;
    v->soc_model = mm->soc_model;
    v->platform_info = fill_platform_info(c, mm);
    if (!v->platform_info) return -1;
  } else {
    /* V2 is V1 plus platform_info; V1 has none. */
    qnn_binary_info_v2_t *v = &info->u.v2;
    v->backend_id = mm->backend_id;
    v->build_id = build_id;
    v->core_api_version = ver(mm->core_api);
    v->backend_api_version = ver(mm->backend_api);
    v->soc_version = soc;
    v->context_blob_version = ver(mm->context_blob_version);
    v->context_blob_size = len;
    v->num_graphs = m->num_graphs;
    v->graphs = graphs;
    if (info->version == QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_2) {
      v->platform_info = fill_platform_info(c, mm);
      if (!v->platform_info) return -1;
    }
  }
  *out = info;
  return 0;
}
