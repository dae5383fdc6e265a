/*
 * validate.c - the semantic rules of a reference model, shared by the parser (a file that breaks
 * them is rejected), the writer (never emits one) and the builder (reports the line). Once a model
 * passes, the interpreter can trust every shape: run-time code does no size arithmetic that could
 * overflow or index out of bounds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_abi.h"
#include "refmodel_priv.h"

static const char *kind_name(ref_tensor_kind k) {
  switch (k) {
  case REF_TENSOR_INPUT:
    return "input";
  case REF_TENSOR_OUTPUT:
    return "output";
  case REF_TENSOR_NATIVE:
    return "native";
  case REF_TENSOR_STATIC:
    return "static";
  }
  return "unknown";
}

/* "[1,3,224,224]" into buf. */
static const char *dims_str(char *buf, size_t len, uint32_t rank, const uint32_t *dims) {
  size_t at = 0;
  buf[0] = '\0';
  at += (size_t)snprintf(buf + at, len - at, "[");
  for (uint32_t i = 0; i < rank && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, i ? ",%u" : "%u", dims[i]);
  if (at < len) snprintf(buf + at, len - at, "]");
  return buf;
}

/* Range of a zero point (= -offset) for a storage type, so that requantization never needs a
 * zero point the type cannot hold and negating an offset cannot overflow. */
static void zero_point_range(htpu_dtype t, int64_t *lo, int64_t *hi) {
  switch (t) {
  case HTPU_U8:
    *lo = 0, *hi = UINT8_MAX;
    break;
  case HTPU_I8:
    *lo = INT8_MIN, *hi = INT8_MAX;
    break;
  case HTPU_U16:
    *lo = 0, *hi = UINT16_MAX;
    break;
  case HTPU_I16:
    *lo = INT16_MIN, *hi = INT16_MAX;
    break;
  case HTPU_U32:
    *lo = 0, *hi = INT32_MAX;
    break;
  default:
    *lo = -(int64_t)INT32_MAX, *hi = INT32_MAX;
    break;
  }
}

static int check_scale_offset(const ref_tensor *t, float scale, int32_t offset, const char *what,
                              char *err, size_t errlen) {
  if (!isfinite(scale) || !(scale > 0.0f))
    return refm_err(err, errlen, "%sscale %g must be finite and > 0", what, (double)scale);
  int64_t lo, hi, zp = -(int64_t)offset;
  zero_point_range(refm_storage_dtype(t->data_type), &lo, &hi);
  if (zp < lo || zp > hi)
    return refm_err(err, errlen, "%szero point %lld outside [%lld, %lld] of %s", what,
                    (long long)zp, (long long)lo, (long long)hi, refm_dtype_name(t->data_type));
  return 0;
}

/* The data format and the dynamic dimensions (refmodel.h). */
static int check_layout(const ref_tensor *t, char *err, size_t errlen) {
  if (t->data_format != QNN_TENSOR_DATA_FORMAT_DENSE &&
      t->data_format != QNN_TENSOR_DATA_FORMAT_SPARSE)
    return refm_err(err, errlen, "data format %u (known: %u dense, %u sparse)", t->data_format,
                    QNN_TENSOR_DATA_FORMAT_DENSE, QNN_TENSOR_DATA_FORMAT_SPARSE);
  if (t->data_format == QNN_TENSOR_DATA_FORMAT_SPARSE && t->kind == REF_TENSOR_STATIC)
    return refm_err(err, errlen, "a static tensor cannot be sparse (its data is dense)");
  if (t->dynamic_mask >> t->rank)
    return refm_err(err, errlen, "dynamic dimensions 0x%x beyond rank %u", t->dynamic_mask,
                    t->rank);
  if (t->dynamic_mask && t->kind != REF_TENSOR_OUTPUT)
    return refm_err(err, errlen, "dynamic dimensions on a tensor of kind %s (only a graph "
                    "output produced by NonZero has one)", kind_name(t->kind));
  return 0;
}

int refm_check_tensor(const ref_tensor *t, char *err, size_t errlen) {
  if (!t->name || !t->name[0]) return refm_err(err, errlen, "empty tensor name");
  if ((uint32_t)t->kind > REF_TENSOR_STATIC)
    return refm_err(err, errlen, "unknown tensor kind %u", (unsigned)t->kind);
  size_t esize = ref_dtype_size(t->data_type);
  if (esize == 0) return refm_err(err, errlen, "unknown data type 0x%04x", t->data_type);
  if (t->rank == 0) return refm_err(err, errlen, "rank 0 (write scalars as [1])");
  if (t->rank > REF_MAX_RANK)
    return refm_err(err, errlen, "rank %u > %u", t->rank, (unsigned)REF_MAX_RANK);
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->dims[i] == 0) return refm_err(err, errlen, "dimension %u is 0", i);
  uint64_t n;
  if (refm_elements(t->rank, t->dims, &n) != 0 || n > REFM_MAX_TENSOR_BYTES / esize) {
    char d[128];
    return refm_err(err, errlen, "dims %s x %zu-byte elements exceed the 2^31-byte limit",
                    dims_str(d, sizeof d, t->rank, t->dims), esize);
  }
  uint64_t bytes = n * esize;
  if (check_layout(t, err, errlen)) return -1;
  if (t->kind == REF_TENSOR_STATIC) {
    if (!t->data) return refm_err(err, errlen, "static tensor without data");
    if (t->nbytes != bytes) {
      char d[128];
      return refm_err(err, errlen, "static data is %zu bytes, dims %s x %zu-byte %s is %llu",
                      t->nbytes, dims_str(d, sizeof d, t->rank, t->dims), esize,
                      refm_dtype_name(t->data_type), (unsigned long long)bytes);
    }
  } else {
    if (t->data) return refm_err(err, errlen, "%s tensor with static data", kind_name(t->kind));
    if (t->nbytes != bytes)
      return refm_err(err, errlen, "byte size %zu != %llu", t->nbytes, (unsigned long long)bytes);
  }

  int fixed = refm_dtype_is_fixed(t->data_type);
  switch (t->quant) {
  case REF_QUANT_NONE:
    if (fixed)
      return refm_err(err, errlen, "quantized type %s without quantization parameters",
                      refm_dtype_name(t->data_type));
    return 0;
  case REF_QUANT_SCALE_OFFSET:
  case REF_QUANT_AXIS_SCALE_OFFSET:
    if (!fixed)
      return refm_err(err, errlen, "quantization parameters on non-quantized type %s",
                      refm_dtype_name(t->data_type));
    break;
  default:
    return refm_err(err, errlen, "unknown quantization encoding %u", (unsigned)t->quant);
  }
  if (t->quant == REF_QUANT_SCALE_OFFSET) return check_scale_offset(t, t->scale, t->offset, "", err, errlen);

  if (t->axis < 0 || (uint32_t)t->axis >= t->rank)
    return refm_err(err, errlen, "quantization axis %d outside [0, %u)", t->axis, t->rank);
  if (t->num_axis != t->dims[t->axis])
    return refm_err(err, errlen, "%u per-axis scales but dims[%d] is %u", t->num_axis, t->axis,
                    t->dims[t->axis]);
  if (!t->scales || !t->offsets) return refm_err(err, errlen, "per-axis parameters missing");
  for (uint32_t c = 0; c < t->num_axis; c++) {
    char what[48];
    snprintf(what, sizeof what, "channel %u: ", c);
    if (check_scale_offset(t, t->scales[c], t->offsets[c], what, err, errlen)) return -1;
  }
  return 0;
}

int refm_check_meta(const ref_model_meta *meta, char *err, size_t errlen) {
  if (meta->binary_info_version < 1 || meta->binary_info_version > 3)
    return refm_err(err, errlen, "binary info version %u (supported: 1..3)",
                    meta->binary_info_version);
  if (meta->graph_info_version < 1 || meta->graph_info_version > 3)
    return refm_err(err, errlen, "graph info version %u (supported: 1..3)",
                    meta->graph_info_version);
  if (meta->tensor_version < 1 || meta->tensor_version > 2)
    return refm_err(err, errlen, "tensor version %u (supported: 1..2)", meta->tensor_version);
  if (meta->graph_blob_version > 2)
    return refm_err(err, errlen, "graph blob info version %u (supported: 1..2)",
                    meta->graph_blob_version);
  if (!meta->build_id || !meta->soc_version)
    return refm_err(err, errlen, "build id or soc version missing");
  return 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int refm_check_unique(const ref_model *m, char *err, size_t errlen) {
  int rc = 0;
  /* sorting copies keeps hostile files with many entries at n log n */
  uint32_t *ids = malloc(((size_t)m->num_tensors + 1) * sizeof *ids);
  const char **names = malloc(((size_t)m->num_graphs + 1) * sizeof *names);
  if (!ids || !names) {
    rc = refm_err(err, errlen, "out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < m->num_tensors; i++) {
    ids[i] = m->tensors[i].id;
    if (ids[i] == 0) {
      rc = refm_err(err, errlen, "tensor '%s' has id 0", m->tensors[i].name);
      goto out;
    }
  }
  qsort(ids, m->num_tensors, sizeof *ids, cmp_u32);
  for (uint32_t i = 1; i < m->num_tensors; i++)
    if (ids[i] == ids[i - 1]) {
      rc = refm_err(err, errlen, "duplicate tensor id %u", ids[i]);
      goto out;
    }
  for (uint32_t i = 0; i < m->num_graphs; i++) names[i] = m->graphs[i].name;
  qsort(names, m->num_graphs, sizeof *names, cmp_str);
  for (uint32_t i = 1; i < m->num_graphs; i++)
    if (strcmp(names[i], names[i - 1]) == 0) {
      rc = refm_err(err, errlen, "duplicate graph name '%s'", names[i]);
      goto out;
    }
out:
  free(ids);
  free(names);
  return rc;
}

/* ---- ops ------------------------------------------------------------------------------- */

typedef struct op_arity {
  uint32_t min_in, max_in;
} op_arity;

static op_arity arity_of(ref_op_type t) {
  switch (t) {
  case REF_OP_ADD:
  case REF_OP_MUL:
    return (op_arity){2, 2};
  case REF_OP_FULLY_CONNECTED:
  case REF_OP_CONV2D:
    return (op_arity){2, 3}; /* bias optional */
  case REF_OP_CONCAT:
    return (op_arity){1, REF_MAX_OP_IO};
  default:
    return (op_arity){1, 1};
  }
}

static int same_dims(const ref_tensor *a, const ref_tensor *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

static int check_broadcast(const ref_tensor *a, const ref_tensor *b, const ref_tensor *y,
                           char *err, size_t errlen) {
  uint32_t rank = a->rank > b->rank ? a->rank : b->rank;
  uint32_t dims[REF_MAX_RANK];
  char da[128], db[128], dy[128];
  for (uint32_t i = 0; i < rank; i++) {
    /* align from the right, as numpy does; a missing dimension acts as 1 */
    uint32_t xa = i + a->rank >= rank ? a->dims[i + a->rank - rank] : 1;
    uint32_t xb = i + b->rank >= rank ? b->dims[i + b->rank - rank] : 1;
    if (xa != xb && xa != 1 && xb != 1)
      return refm_err(err, errlen, "shapes %s and %s do not broadcast",
                      dims_str(da, sizeof da, a->rank, a->dims),
                      dims_str(db, sizeof db, b->rank, b->dims));
    dims[i] = xa == 1 ? xb : xa;
  }
  if (y->rank != rank || memcmp(y->dims, dims, rank * sizeof dims[0]) != 0)
    return refm_err(err, errlen, "output shape %s != broadcast shape %s",
                    dims_str(dy, sizeof dy, y->rank, y->dims), dims_str(da, sizeof da, rank, dims));
  return 0;
}

static int check_bias(const ref_tensor *bias, uint32_t channels, char *err, size_t errlen) {
  if (bias->rank != 1 || bias->dims[0] != channels) {
    char d[128];
    return refm_err(err, errlen, "bias '%s' shape %s, expected [%u]", bias->name,
                    dims_str(d, sizeof d, bias->rank, bias->dims), channels);
  }
  return 0;
}

static int check_fully_connected(const ref_tensor *const *in, uint32_t nin, const ref_tensor *y,
                                 char *err, size_t errlen) {
  const ref_tensor *x = in[0], *w = in[1];
  char d[128];
  if (w->rank != 2)
    return refm_err(err, errlen, "weights '%s' shape %s, expected [M,K]", w->name,
                    dims_str(d, sizeof d, w->rank, w->dims));
  uint32_t m = w->dims[0], k = w->dims[1];
  uint64_t xe = ref_tensor_elements(x);
  if (x->dims[x->rank - 1] != k || xe % k != 0)
    return refm_err(err, errlen, "input '%s' shape %s does not flatten to [N,%u]", x->name,
                    dims_str(d, sizeof d, x->rank, x->dims), k);
  uint64_t n = xe / k;
  if (nin == 3 && check_bias(in[2], m, err, errlen)) return -1;
  if (y->rank != 2 || y->dims[0] != n || y->dims[1] != m)
    return refm_err(err, errlen, "output shape %s, expected [%llu,%u]",
                    dims_str(d, sizeof d, y->rank, y->dims), (unsigned long long)n, m);
  return 0;
}

static int check_conv2d(const ref_op *op, const ref_tensor *const *in, uint32_t nin,
                        const ref_tensor *y, char *err, size_t errlen) {
  const ref_tensor *x = in[0], *w = in[1];
  char d[128];
  if (x->rank != 4)
    return refm_err(err, errlen, "input '%s' shape %s, expected NHWC", x->name,
                    dims_str(d, sizeof d, x->rank, x->dims));
  if (w->rank != 4 || w->dims[2] != x->dims[3])
    return refm_err(err, errlen, "weights '%s' shape %s, expected [KH,KW,%u,Cout]", w->name,
                    dims_str(d, sizeof d, w->rank, w->dims), x->dims[3]);
  if (op->stride[0] == 0 || op->stride[1] == 0)
    return refm_err(err, errlen, "stride [%u,%u] must be >= 1", op->stride[0], op->stride[1]);
  uint32_t cout = w->dims[3];
  if (nin == 3 && check_bias(in[2], cout, err, errlen)) return -1;
  uint64_t ph = (uint64_t)x->dims[1] + op->pad[0] + op->pad[2];
  uint64_t pw = (uint64_t)x->dims[2] + op->pad[1] + op->pad[3];
  if (ph < w->dims[0] || pw < w->dims[1])
    return refm_err(err, errlen, "kernel %ux%u larger than padded input %llux%llu", w->dims[0],
                    w->dims[1], (unsigned long long)ph, (unsigned long long)pw);
  uint64_t oh = (ph - w->dims[0]) / op->stride[0] + 1;
  uint64_t ow = (pw - w->dims[1]) / op->stride[1] + 1;
  if (y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[1] != oh || y->dims[2] != ow ||
      y->dims[3] != cout)
    return refm_err(err, errlen, "output shape %s, expected [%u,%llu,%llu,%u]",
                    dims_str(d, sizeof d, y->rank, y->dims), x->dims[0],
                    (unsigned long long)oh, (unsigned long long)ow, cout);
  return 0;
}

/* NonZero: y [N, rank(x)] of plain i32 or u32, N = x's element count, dims[0] dynamic. */
static int check_non_zero(const ref_tensor *x, const ref_tensor *y, char *err, size_t errlen) {
  char d[128];
  uint64_t n = ref_tensor_elements(x);
  if ((y->data_type != QNN_DATATYPE_INT_32 && y->data_type != QNN_DATATYPE_UINT_32) ||
      y->quant != REF_QUANT_NONE)
    return refm_err(err, errlen, "output '%s' is %s; expected plain i32 or u32 (indices)",
                    y->name, refm_dtype_name(y->data_type));
  if (y->rank != 2 || y->dims[0] != n || y->dims[1] != x->rank)
    return refm_err(err, errlen, "output shape %s, expected [%llu,%u] (every element of '%s' "
                    "may be nonzero)", dims_str(d, sizeof d, y->rank, y->dims),
                    (unsigned long long)n, x->rank, x->name);
  if (y->dynamic_mask != 1u)
    return refm_err(err, errlen, "output '%s' must have exactly its dims[0] dynamic "
                    "(dynamic=[0]): how many elements are nonzero is known only when it runs",
                    y->name);
  return 0;
}

/* Arity was checked by the caller; in[] and y are valid tensors. */
static int check_op_shapes(const ref_op *op, const ref_tensor *const *in, const ref_tensor *y,
                           char *err, size_t errlen) {
  char d1[128], d2[128];
  int is_softmax = op->type == REF_OP_SOFTMAX;
  if (!refm_op_takes_window(op->type) &&
      (op->stride[0] | op->stride[1] | op->pad[0] | op->pad[1] | op->pad[2] | op->pad[3]))
    return refm_err(err, errlen, "%s takes no stride/pad", refm_op_name(op->type));
  if (!is_softmax && op->beta != 0.0f)
    return refm_err(err, errlen, "%s takes no beta", refm_op_name(op->type));
  switch (op->type) {
  case REF_OP_ADD:
  case REF_OP_MUL:
    return check_broadcast(in[0], in[1], y, err, errlen);
  case REF_OP_FULLY_CONNECTED:
    return check_fully_connected(in, op->num_inputs, y, err, errlen);
  case REF_OP_CONV2D:
    return check_conv2d(op, in, op->num_inputs, y, err, errlen);
  case REF_OP_SOFTMAX:
  case REF_OP_RELU:
    if (is_softmax && !isfinite(op->beta))
      return refm_err(err, errlen, "beta %g is not finite", (double)op->beta);
    if (!same_dims(in[0], y))
      return refm_err(err, errlen, "output shape %s != input shape %s",
                      dims_str(d1, sizeof d1, y->rank, y->dims),
                      dims_str(d2, sizeof d2, in[0]->rank, in[0]->dims));
    return 0;
  case REF_OP_RESHAPE:
    if (ref_tensor_elements(in[0]) != ref_tensor_elements(y))
      return refm_err(err, errlen, "cannot reshape %s to %s (element counts differ)",
                      dims_str(d2, sizeof d2, in[0]->rank, in[0]->dims),
                      dims_str(d1, sizeof d1, y->rank, y->dims));
    return 0;
  case REF_OP_NON_ZERO:
    return check_non_zero(in[0], y, err, errlen);
  default:
    if (op->type >= REF_OP_FIRST_V2) return refm_check_op_v2(op, in, y, err, errlen);
  }
  return refm_err(err, errlen, "unknown op type %u", (unsigned)op->type);
}

/* Per-tensor state while walking one graph. Stamps (graph index + 1) avoid clearing the
 * arrays between graphs, which would be quadratic for a file with many graphs. */
typedef struct walk_state {
  uint32_t *listed;   /* in this graph's input or output list */
  uint32_t *produced; /* available: graph input or output of an earlier op */
} walk_state;

static int check_op(const ref_model *m, uint32_t g, const ref_op *op, walk_state *ws, char *err,
                    size_t errlen) {
  uint32_t stamp = g + 1;
  if (!refm_op_name(op->type)) return refm_err(err, errlen, "unknown op type %u", (unsigned)op->type);
  op_arity ar = arity_of(op->type);
  if (op->num_inputs < ar.min_in || op->num_inputs > ar.max_in) {
    if (ar.min_in == ar.max_in)
      return refm_err(err, errlen, "takes %u input%s, got %u", ar.min_in, ar.min_in == 1 ? "" : "s",
                      op->num_inputs);
    return refm_err(err, errlen, "takes %u or %u inputs, got %u", ar.min_in, ar.max_in,
                    op->num_inputs);
  }
  if (op->num_outputs != 1) return refm_err(err, errlen, "takes 1 output, got %u", op->num_outputs);
  const ref_tensor *in[REF_MAX_OP_IO];
  for (uint32_t i = 0; i < op->num_inputs; i++) {
    uint32_t ti = op->inputs[i];
    if (ti >= m->num_tensors) return refm_err(err, errlen, "input %u: no tensor index %u", i, ti);
    in[i] = &m->tensors[ti];
    if (in[i]->dynamic_mask)
      return refm_err(err, errlen, "'%s' has dynamic dimensions: no op can read it (it is a "
                      "graph output only)", in[i]->name);
    if (in[i]->kind == REF_TENSOR_STATIC) continue;
    if (ws->produced[ti] != stamp) {
      if (in[i]->kind == REF_TENSOR_INPUT)
        return refm_err(err, errlen, "input tensor '%s' is not an input of this graph",
                        in[i]->name);
      return refm_err(err, errlen, "tensor '%s' is not produced by an earlier op", in[i]->name);
    }
  }
  uint32_t yi = op->outputs[0];
  if (yi >= m->num_tensors) return refm_err(err, errlen, "output: no tensor index %u", yi);
  const ref_tensor *y = &m->tensors[yi];
  if (y->kind != REF_TENSOR_OUTPUT && y->kind != REF_TENSOR_NATIVE)
    return refm_err(err, errlen, "output '%s' has kind %s, not output or native", y->name,
                    kind_name(y->kind));
  if (ws->produced[yi] == stamp) return refm_err(err, errlen, "'%s' is produced twice", y->name);
  if (op->type != REF_OP_NON_ZERO && y->dynamic_mask)
    return refm_err(err, errlen, "output '%s' has dynamic dimensions, which only NonZero "
                    "produces", y->name);
  if (check_op_shapes(op, in, y, err, errlen)) return -1;
  ws->produced[yi] = stamp;
  return 0;
}

static int check_one_graph(const ref_model *m, uint32_t g, walk_state *ws, uint32_t *bad_op,
                           char *err, size_t errlen) {
  const ref_graph *gr = &m->graphs[g];
  uint32_t stamp = g + 1;
  *bad_op = UINT32_MAX;
  if (!gr->name || !gr->name[0]) return refm_err(err, errlen, "graph %u has an empty name", g);
  if (gr->num_inputs == 0) return refm_err(err, errlen, "graph '%s' has no inputs", gr->name);
  if (gr->num_outputs == 0) return refm_err(err, errlen, "graph '%s' has no outputs", gr->name);
  if (gr->flags & ~REF_GRAPH_FLAGS_KNOWN)
    return refm_err(err, errlen, "graph '%s': unknown flags 0x%x (known: 0x%x)", gr->name,
                    gr->flags & ~REF_GRAPH_FLAGS_KNOWN, REF_GRAPH_FLAGS_KNOWN);
  for (uint32_t i = 0; i < gr->num_inputs; i++) {
    uint32_t ti = gr->inputs[i];
    if (ti >= m->num_tensors) return refm_err(err, errlen, "graph '%s': bad input index", gr->name);
    const ref_tensor *t = &m->tensors[ti];
    if (t->kind != REF_TENSOR_INPUT)
      return refm_err(err, errlen, "graph '%s': input '%s' has kind %s, not input", gr->name,
                      t->name, kind_name(t->kind));
    if (ws->listed[ti] == stamp)
      return refm_err(err, errlen, "graph '%s': input '%s' listed twice", gr->name, t->name);
    ws->listed[ti] = ws->produced[ti] = stamp;
  }
  for (uint32_t o = 0; o < gr->num_ops; o++) {
    if (check_op(m, g, &gr->ops[o], ws, err, errlen)) {
      const char *tn = refm_op_name(gr->ops[o].type);
      refm_err_prefix(err, errlen, "graph '%s' op %u (%s): ", gr->name, o, tn ? tn : "?");
      *bad_op = o;
      return -1;
    }
  }
  for (uint32_t i = 0; i < gr->num_outputs; i++) {
    uint32_t ti = gr->outputs[i];
    if (ti >= m->num_tensors) return refm_err(err, errlen, "graph '%s': bad output index", gr->name);
    const ref_tensor *t = &m->tensors[ti];
    if (t->kind != REF_TENSOR_OUTPUT)
      return refm_err(err, errlen, "graph '%s': output '%s' has kind %s, not output", gr->name,
                      t->name, kind_name(t->kind));
    if (ws->listed[ti] == stamp)
      return refm_err(err, errlen, "graph '%s': output '%s' listed twice", gr->name, t->name);
    ws->listed[ti] = stamp;
    if (ws->produced[ti] != stamp)
      return refm_err(err, errlen, "graph '%s': output '%s' is never produced", gr->name, t->name);
  }
  return 0;
}

uint64_t refm_max_activation_bytes(void) {
  const char *env = getenv("HTPU_REF_MAX_ACTIVATION_BYTES");
  if (env && env[0] >= '0' && env[0] <= '9') {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (errno == 0 && *end == '\0' && v > 0) return v;
  }
  return REFM_DEFAULT_MAX_ACTIVATION_BYTES;
}

/* What running graph g needs besides the model itself: every tensor it reads or writes other
 * than static ones (inputs, outputs, intermediates), at its f32 size, which is at least its
 * native size and what the interpreter and an f32 caller hold. A valid few-hundred-byte model
 * can declare a Conv2d whose padding makes a 2 GB output; it is refused here, by name, instead
 * of asking its user (htpu run, the interpreter) for gigabytes. */
static int check_activation_memory(const ref_model *m, uint32_t g, const walk_state *ws,
                                   char *err, size_t errlen) {
  uint32_t stamp = g + 1;
  uint64_t total = 0, biggest = 0;
  const ref_tensor *big = NULL;
  for (uint32_t ti = 0; ti < m->num_tensors; ti++) {
    if (ws->produced[ti] != stamp) continue;
    uint64_t bytes = (uint64_t)ref_tensor_elements(&m->tensors[ti]) * sizeof(float);
    total += bytes; /* no overflow: each tensor is below 2^31 bytes, tensors below 2^32 */
    if (bytes > biggest) biggest = bytes, big = &m->tensors[ti];
  }
  uint64_t limit = refm_max_activation_bytes();
  if (total <= limit) return 0;
  return refm_err(err, errlen,
                  "graph '%s': its tensors need %llu bytes as f32 (the largest, '%s', %llu), "
                  "more than the reference backend's limit of %llu bytes "
                  "(HTPU_REF_MAX_ACTIVATION_BYTES)",
                  m->graphs[g].name, (unsigned long long)total, big ? big->name : "?",
                  (unsigned long long)biggest, (unsigned long long)limit);
}

int refm_check_graphs(const ref_model *m, uint32_t *bad_graph, uint32_t *bad_op, char *err,
                      size_t errlen) {
  walk_state ws;
  *bad_graph = *bad_op = UINT32_MAX;
  ws.listed = calloc((size_t)m->num_tensors + 1, sizeof(uint32_t));
  ws.produced = calloc((size_t)m->num_tensors + 1, sizeof(uint32_t));
  int rc = 0;
  if (!ws.listed || !ws.produced) {
    rc = refm_err(err, errlen, "out of memory");
  } else {
    for (uint32_t g = 0; g < m->num_graphs && rc == 0; g++) {
      rc = check_one_graph(m, g, &ws, bad_op, err, errlen);
      if (rc == 0) rc = check_activation_memory(m, g, &ws, err, errlen);
      if (rc) *bad_graph = g;
    }
  }
  free(ws.listed);
  free(ws.produced);
  return rc;
}

int refm_check_model(const ref_model *m, char *err, size_t errlen) {
  if (refm_check_meta(&m->meta, err, errlen)) return -1;
  for (uint32_t i = 0; i < m->num_tensors; i++) {
    const ref_tensor *t = &m->tensors[i];
    if (refm_check_tensor(t, err, errlen)) {
      refm_err_prefix(err, errlen, "tensor '%s' (id %u): ", t->name ? t->name : "", t->id);
      return -1;
    }
  }
  if (refm_check_unique(m, err, errlen)) return -1;
  uint32_t bg, bo;
  return refm_check_graphs(m, &bg, &bo, err, errlen);
}
