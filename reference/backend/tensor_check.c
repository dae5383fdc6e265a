/*
 * tensor_check.c - what graphExecute and graphExecuteAsync check on each tensor they are
 * given, against the graph's: version, id (in graph order), type, data type, rank, dims (a batch
 * multiple; an output's dynamic dimensions are the backend's to write, so not compared, and
 * need an array), memory type and buffer size; and where its bytes are.
 */
#include <stdio.h>
#include <string.h>

#include "rb_internal.h"

/* The fields graphExecute looks at, read through the member the version selects. */
typedef struct tview {
  uint32_t id, type, data_type, rank, mem_type, data_size;
  uint32_t *dims; /* the caller's array: an output's dynamic dimensions are written there */
  const void *data;
} tview;

static int view(const qnn_tensor_t *t, tview *v) {
#define RB_VIEW(m)                              \
  v->id = t->u.m.id;                            \
  v->type = t->u.m.type;                        \
  v->data_type = t->u.m.data_type;              \
  v->rank = t->u.m.rank;                        \
  v->dims = t->u.m.dimensions;                  \
  v->mem_type = t->u.m.mem_type;                \
  v->data = t->u.m.u.client_buf.data;           \
  v->data_size = t->u.m.u.client_buf.data_size
  if (t->version == QNN_TENSOR_VERSION_1) {
    RB_VIEW(v1);
  } else if (t->version == QNN_TENSOR_VERSION_2) {
    RB_VIEW(v2);
  } else {
    return -1;
  }
#undef RB_VIEW
  return 0;
}

static void shape_str(char *buf, size_t len, uint32_t rank, const uint32_t *dims) {
  size_t used = (size_t)snprintf(buf, len, "[");
  for (uint32_t i = 0; i < rank && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "," : "", dims[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

/* Index of id among list[0..n) (tensor indices into m), or -1. */
static int position_of(const ref_model *m, const uint32_t *list, uint32_t n, uint32_t id) {
  for (uint32_t i = 0; i < n; i++)
    if (m->tensors[list[i]].id == id) return (int)i;
  return -1;
}

/* The caller's dims against the graph's: 0 when they match, the dynamic dimensions (mask)
 * being the backend's to write and so not compared; else the batch multiple dims[0] makes
 * (only dims[0] may differ, as an integer multiple), or 0 when they do not fit at all. */
static uint32_t dims_multiple(const ref_tensor *want, const uint32_t *dims) {
  int same = 1, rest_same = 1;
  for (uint32_t d = 0; d < want->rank; d++) {
    if ((want->dynamic_mask >> d) & 1u) continue;
    if (dims[d] != want->dims[d]) {
      same = 0;
      if (d > 0) rest_same = 0;
    }
  }
  if (same) return 1;
  if (!rest_same || want->dynamic_mask || dims[0] < want->dims[0] ||
      dims[0] % want->dims[0] != 0)
    return 0;
  return dims[0] / want->dims[0];
}

qnn_error_t rb_check_tensor(rb_log *log, const char *api, rb_context *c, const ref_graph *rg,
                            int is_input, uint32_t i, const qnn_tensor_t *t,
                            rb_handle_resolver resolve, const void **data, rb_mem **pin,
                            uint32_t *multiple, uint32_t **out_dims) {
  const ref_model *m = c->model;
  const char *role = is_input ? "input" : "output";
  const ref_tensor *want = &m->tensors[is_input ? rg->inputs[i] : rg->outputs[i]];
  tview v;
  *multiple = 1;
#define REJECT(...)                                                                         \
  do {                                                                                      \
    char why_[384];                                                                         \
    snprintf(why_, sizeof(why_), __VA_ARGS__);                                              \
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s' %s %u ('%s', id %u): %s", api,        \
            rg->name, role, i, want->name, want->id, why_);                                 \
    return QNN_GRAPH_ERROR_INVALID_TENSOR;                                                  \
  } while (0)
  if (view(t, &v) != 0) REJECT("tensor version %u (expected 1 or 2)", t->version);
  if (v.id != want->id) {
    int in_pos = position_of(m, rg->inputs, rg->num_inputs, v.id);
    int out_pos = position_of(m, rg->outputs, rg->num_outputs, v.id);
    if ((is_input ? in_pos : out_pos) >= 0)
      REJECT("got id %u, which is %s %d: tensors must be passed in graph order", v.id, role,
             is_input ? in_pos : out_pos);
    if ((is_input ? out_pos : in_pos) >= 0)
      REJECT("got id %u, which is a graph %s", v.id, is_input ? "output" : "input");
    REJECT("got id %u, which is not a graph %s", v.id, role);
  }
  uint32_t want_type = is_input ? QNN_TENSOR_TYPE_APP_WRITE : QNN_TENSOR_TYPE_APP_READ;
  if (v.type != want_type)
    REJECT("tensor type %u, expected %u (%s)", v.type, want_type,
           is_input ? "APP_WRITE" : "APP_READ");
  if (v.data_type != want->data_type)
    REJECT("data type 0x%04x, the graph has 0x%04x", v.data_type, want->data_type);
  if (v.rank != want->rank) REJECT("rank %u, the graph has %u", v.rank, want->rank);
  if (want->dynamic_mask && !v.dims)
    REJECT("dimensions NULL: an output with dynamic dimensions needs a dimensions array, "
           "where the execute writes the dims it produced (QnnGraph.h)");
  *out_dims = want->dynamic_mask ? v.dims : NULL;
  /* QnnGraph.h: dimensions may be NULL; when given they must match, except that the batch
   * dimension (dims[0] here) may be an integer multiple of the graph's (batch multiple). */
  if (v.dims && (*multiple = dims_multiple(want, v.dims)) == 0) {
    char got[128], exp[128];
    shape_str(got, sizeof(got), v.rank, v.dims);
    shape_str(exp, sizeof(exp), want->rank, want->dims);
    REJECT("dimensions %s, the graph has %s (only the batch dimension, dims[0], may differ: "
           "an integer multiple of %u)", got, exp, want->dims[0]);
  }
  if (v.mem_type == QNN_TENSORMEMTYPE_MEMHANDLE) {
    if (*multiple > 1)
      REJECT("batch multiple %u with a MEMHANDLE tensor: a registered buffer holds one batch "
             "of the graph here; pass RAW buffers for batch multiples", *multiple);
    /* The handle shares the union's first word with clientBuf.data. */
    char why[320];
    void *p = resolve(c, v.data, want, pin, why, sizeof(why));
    if (!p) REJECT("%s", why);
    *data = p;
    return QNN_SUCCESS;
  }
  if (v.mem_type != QNN_TENSORMEMTYPE_RAW)
    REJECT("memType %u: expected RAW (0) or MEMHANDLE (1)", v.mem_type);
  if (!v.data) REJECT("clientBuf.data is NULL");
  size_t esize = ref_dtype_size(want->data_type), n = ref_tensor_elements(want);
  uint64_t need = (uint64_t)n * esize * *multiple;
  if ((uint64_t)v.data_size != need) {
    if (*multiple > 1)
      REJECT("clientBuf.dataSize %u, expected %llu (batch multiple %u x %zu elements x %zu "
             "bytes)", v.data_size, (unsigned long long)need, *multiple, n, esize);
    REJECT("clientBuf.dataSize %u, expected %zu (%zu elements x %zu bytes)", v.data_size,
           n * esize, n, esize);
  }
#undef REJECT
  *data = v.data;
  return QNN_SUCCESS;
}
