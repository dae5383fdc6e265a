/*
 * introspect_validate.c - plausibility checks on a system library's binary-info answer.
 *
 * Within one entry the plain fields (versions, enum codes, counts, rank) are checked before any
 * of its pointers is followed: at a wrong stride those fields hold other fields' bytes (small
 * counts, halves of pointers, float bits), which fail the checks, while a misread pointer may
 * point anywhere. Names are read one byte at a time and reading stops at the first byte that
 * cannot be part of a name, so a pointer that lands in some other small block is not read far.
 *
 * Residual risk, accepted: an entry read at a stride larger than the library's may lie partly
 * past the end of its array, and its plain fields are read from there before they fail; and a
 * misread whose bytes pass every check would be copied as it is. Only element 0 of each array
 * is at the same place whatever the stride, so an answer with one graph and one input and one
 * output per graph is read correctly even from a library with other strides, and passes.
 */
#include "introspect_validate.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/base.h"
#include "hexagon_tpu.h"
#include "qnn/qnn_versions.h"

/* Sets the thread's error to the first failure, naming the library and its version. */
__attribute__((format(printf, 2, 3))) static int refuse(const sysinfo_answer *a,
                                                        const char *fmt, ...) {
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return htpu_set_error(
      HTPU_ESYSTEM_LAYOUT, 0,
      "unsupported system library layout: '%s' (System API %u.%u.%u): %s. The answer does not "
      "have the layout of System API %u.%u libraries (%u-byte graph infos, %u-byte tensors); "
      "use the libQnnSystem.so of the QAIRT release the backend library comes from (2.25 or "
      "newer)",
      a->lib_path ? a->lib_path : "(unknown)", a->api.major, a->api.minor, a->api.patch, what,
      a->api.major, a->api.minor, qnn_graph_info_stride(a->api), QNN_TENSOR_STRIDE);
}

/* NULL when s is a NUL-terminated name within SYSINFO_MAX_NAME bytes (non-empty unless
 * allow_empty; without control bytes), else what is wrong with it, written into buf. */
static const char *name_problem(const char *s, int allow_empty, char *buf, size_t len) {
  for (uint32_t i = 0; i < SYSINFO_MAX_NAME; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == 0) return i == 0 && !allow_empty ? "is empty" : NULL;
    if (c < 0x20 || c == 0x7F) {
      snprintf(buf, len, "has byte 0x%02x at offset %u", c, i);
      return buf;
    }
  }
  snprintf(buf, len, "has no NUL within %u bytes", SYSINFO_MAX_NAME);
  return buf;
}

#define NAME_EXPECTED "expected printable characters ending in NUL within 4096 bytes"
_Static_assert(SYSINFO_MAX_NAME == 4096, "NAME_EXPECTED quotes the bound");

/* Every data type QNN declares (QAIRT 2.25 and 2.43 headers), whether the project handles it
 * at graph I/O or not. */
static int qnn_data_type_known(uint32_t t) {
  switch (t) {
    case QNN_DATATYPE_INT_8: case QNN_DATATYPE_INT_16: case QNN_DATATYPE_INT_32:
    case QNN_DATATYPE_INT_64: case QNN_DATATYPE_UINT_8: case QNN_DATATYPE_UINT_16:
    case QNN_DATATYPE_UINT_32: case QNN_DATATYPE_UINT_64: case QNN_DATATYPE_FLOAT_16:
    case QNN_DATATYPE_BFLOAT_16: case QNN_DATATYPE_FLOAT_32: case QNN_DATATYPE_FLOAT_64:
    case QNN_DATATYPE_SFIXED_POINT_4: case QNN_DATATYPE_SFIXED_POINT_8:
    case QNN_DATATYPE_SFIXED_POINT_16: case QNN_DATATYPE_SFIXED_POINT_32:
    case QNN_DATATYPE_UFIXED_POINT_4: case QNN_DATATYPE_UFIXED_POINT_8:
    case QNN_DATATYPE_UFIXED_POINT_16: case QNN_DATATYPE_UFIXED_POINT_32:
    case QNN_DATATYPE_BOOL_8: case QNN_DATATYPE_STRING: case QNN_DATATYPE_UNDEFINED:
      return 1;
    default:
      return 0;
  }
}

/* Where a tensor sits, for messages. */
typedef struct tensor_at {
  uint32_t graph;
  const char *graph_name; /* already validated */
  const char *role;       /* "input" / "output" */
  uint32_t index;
} tensor_at;

#define AT_FMT "graph %u ('%.128s') %s %u"
#define AT_ARGS(w) (w)->graph, (w)->graph_name, (w)->role, (w)->index

static int check_tensor(const sysinfo_answer *a, const tensor_at *w, const qnn_tensor_t *src) {
  if (src->version != QNN_TENSOR_VERSION_1 && src->version != QNN_TENSOR_VERSION_2)
    return refuse(a, AT_FMT " has tensor version %u; expected 1 or 2", AT_ARGS(w), src->version);
  const qnn_tensor_v1_t *t = &src->u.v1; /* V2 shares V1's fields at the same offsets */
  if (t->type > QNN_TENSOR_TYPE_OPTIONAL_APP_READWRITE && t->type != QNN_TENSOR_TYPE_UNDEFINED)
    return refuse(a, AT_FMT " has tensor type %u; expected 0..%u or 0x%x", AT_ARGS(w), t->type,
                  QNN_TENSOR_TYPE_OPTIONAL_APP_READWRITE, QNN_TENSOR_TYPE_UNDEFINED);
  if (!qnn_data_type_known(t->data_type))
    return refuse(a, AT_FMT " has data type 0x%x, which is not a QNN data type", AT_ARGS(w),
                  t->data_type);
  const qnn_quantize_params_t *q = &t->quantize_params;
  if (q->encoding_definition != QNN_DEFINITION_IMPL_GENERATED &&
      q->encoding_definition != QNN_DEFINITION_DEFINED &&
      q->encoding_definition != QNN_DEFINITION_UNDEFINED)
    return refuse(a, AT_FMT " has quantization definition %d; expected %d, %d or 0x%x",
                  AT_ARGS(w), q->encoding_definition, QNN_DEFINITION_IMPL_GENERATED,
                  QNN_DEFINITION_DEFINED, QNN_DEFINITION_UNDEFINED);
  if (q->encoding_definition == QNN_DEFINITION_DEFINED &&
      (q->quantization_encoding < QNN_QUANTIZATION_ENCODING_SCALE_OFFSET ||
       q->quantization_encoding > QNN_QUANTIZATION_ENCODING_BW_FLOAT_BLOCK) &&
      q->quantization_encoding != QNN_QUANTIZATION_ENCODING_UNDEFINED)
    return refuse(a, AT_FMT " has quantization encoding %d; expected 0..%d or 0x%x", AT_ARGS(w),
                  q->quantization_encoding, QNN_QUANTIZATION_ENCODING_BW_FLOAT_BLOCK,
                  QNN_QUANTIZATION_ENCODING_UNDEFINED);
  /* Rank 0 is a scalar, which has no dimensions to point at. */
  if (t->rank > HTPU_MAX_RANK)
    return refuse(a, AT_FMT " has rank %u; expected 0..%d", AT_ARGS(w), t->rank, HTPU_MAX_RANK);
  if (t->rank > 0 && !t->dimensions)
    return refuse(a, AT_FMT " has rank %u but no dimensions", AT_ARGS(w), t->rank);
  /* Every plain field passed: only now is the name followed. */
  if (!t->name) return refuse(a, AT_FMT " has no name (NULL)", AT_ARGS(w));
  char why[64];
  const char *p = name_problem(t->name, 1, why, sizeof why);
  if (p) return refuse(a, AT_FMT ": its name %s; " NAME_EXPECTED, AT_ARGS(w), p);
  return 0;
}

static int check_tensor_list(const sysinfo_answer *a, uint32_t graph, const char *graph_name,
                             const char *role, uint32_t n, const qnn_tensor_t *list) {
  for (uint32_t j = 0; j < n; j++) {
    const tensor_at w = {graph, graph_name, role, j};
    /* The library's tensor stride: 144 bytes at every supported API version. */
    const qnn_tensor_t *t =
        (const qnn_tensor_t *)((const char *)list + (size_t)j * QNN_TENSOR_STRIDE);
    int rc = check_tensor(a, &w, t);
    if (rc) return rc;
  }
  return 0;
}

/* The plain fields of a graph's input or output count and array. */
static int check_count(const sysinfo_answer *a, uint32_t i, uint32_t n, const char *role,
                       const void *list) {
  if (n > SYSINFO_MAX_GRAPH_IO)
    return refuse(a, "graph %u has %u %ss; expected at most %u", i, n, role,
                  SYSINFO_MAX_GRAPH_IO);
  if (n > 0 && !list) return refuse(a, "graph %u has %u %ss but no %s array", i, n, role, role);
  return 0;
}

static int check_graph(const sysinfo_answer *a, uint32_t i,
                       const qnn_system_context_graph_info_t *g) {
  uint32_t max_version = qnn_graph_info_max_version(a->api);
  if (g->version < 1 || g->version > max_version)
    return refuse(a, "graph %u (of %u) has graph info version %u; expected 1..%u", i,
                  a->num_graphs, g->version, max_version);
  const qnn_graph_info_v1_t *p = &g->u.v1; /* V1..V3 share this prefix */
  int rc = check_count(a, i, p->num_graph_inputs, "input", p->graph_inputs);
  if (!rc) rc = check_count(a, i, p->num_graph_outputs, "output", p->graph_outputs);
  if (rc) return rc;
  if (!p->graph_name) return refuse(a, "graph %u has no name (NULL)", i);
  char why[64];
  const char *bad = name_problem(p->graph_name, 0, why, sizeof why);
  if (bad) return refuse(a, "graph %u: its name %s; " NAME_EXPECTED, i, bad);
  rc = check_tensor_list(a, i, p->graph_name, "input", p->num_graph_inputs, p->graph_inputs);
  if (!rc)
    rc = check_tensor_list(a, i, p->graph_name, "output", p->num_graph_outputs, p->graph_outputs);
  return rc;
}

int sysinfo_validate(const sysinfo_answer *a) {
  char why[64];
  const char *bad;
  if (a->build_id && (bad = name_problem(a->build_id, 1, why, sizeof why)))
    return refuse(a, "the build id %s; " NAME_EXPECTED, bad);
  if (a->soc_version && (bad = name_problem(a->soc_version, 1, why, sizeof why)))
    return refuse(a, "the SoC version %s; " NAME_EXPECTED, bad);
  if (a->num_graphs > SYSINFO_MAX_GRAPHS)
    return refuse(a, "%u graphs; expected at most %u", a->num_graphs, SYSINFO_MAX_GRAPHS);
  if (a->num_graphs > 0 && !a->graphs)
    return refuse(a, "%u graphs but no graph array", a->num_graphs);
  uint32_t stride = qnn_graph_info_stride(a->api);
  for (uint32_t i = 0; i < a->num_graphs; i++) {
    const qnn_system_context_graph_info_t *g =
        (const qnn_system_context_graph_info_t *)((const char *)a->graphs + (size_t)i * stride);
    int rc = check_graph(a, i, g);
    if (rc) return rc;
  }
  return 0;
}

int sysinfo_check_io_format(const char *where, uint32_t data_format) {
  static const char *const names[] = {
      "DENSE", "SPARSE", "CODEBOOK", "MX", "UBWC_RGBA8888", "UBWC_NV12", "UBWC_NV12_Y",
      "UBWC_NV12_UV", "HMX_WEIGHT_LAYOUT", "UBWC_NV124R", "UBWC_NV124R_Y", "UBWC_NV124R_UV"};
  _Static_assert(sizeof names / sizeof names[0] == QNN_TENSOR_DATA_FORMAT_UBWC_NV124R_UV + 1,
                 "a name per declared format");
  if (data_format == QNN_TENSOR_DATA_FORMAT_DENSE) return 0;
  if (data_format == QNN_TENSOR_DATA_FORMAT_SPARSE)
    return htpu_set_error(HTPU_EMODEL, 0,
                          "%s: data format SPARSE (%u), but sparse tensors may only be NATIVE "
                          "(QnnTypes.h), never a graph input or output: the binary is malformed "
                          "(expected DENSE, %u)",
                          where, data_format, QNN_TENSOR_DATA_FORMAT_DENSE);
  if (data_format < sizeof names / sizeof names[0])
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "%s: data format %s (%u) is not supported at graph inputs and outputs "
                          "(only DENSE, %u, whose bytes are laid out as its dims say)",
                          where, names[data_format], data_format, QNN_TENSOR_DATA_FORMAT_DENSE);
  return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                        "%s: data format %u, which QNN (up to QAIRT 2.43) does not declare "
                        "(expected DENSE, %u)",
                        where, data_format, QNN_TENSOR_DATA_FORMAT_DENSE);
}

uint32_t sysinfo_dynamic_mask(const qnn_tensor_t *t) {
  if (t->version != QNN_TENSOR_VERSION_2 || !t->u.v2.is_dynamic_dimensions) return 0;
  uint32_t mask = 0;
  for (uint32_t d = 0; d < t->u.v2.rank; d++) /* rank <= HTPU_MAX_RANK: validated */
    if (t->u.v2.is_dynamic_dimensions[d]) mask |= 1u << d;
  return mask;
}
