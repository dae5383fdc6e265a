/*
 * interp.c - ref_graph_run: executes a graph's op list on the CPU.
 *
 * Every tensor keeps its own storage type between ops, as on the NPU: each op dequantizes its
 * operands to f32, computes in f32 and requantizes its result into the output tensor's type
 * (round half to even, saturating, via the shared qc_* kernels), so intermediate rounding is
 * the same as a real quantized graph's. All scratch is allocated per call; the model is only
 * read, which makes concurrent runs of any graphs safe.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "refmodel_priv.h"

typedef struct run_state {
  const void **rd;    /* per tensor index: where its current value is read from */
  void **wr;          /* per tensor index: graph output buffers */
  void **owned;       /* per op: the native buffer it produced */
  uint32_t *produced; /* per tensor index: a dynamic dims[0]'s value this run (NonZero's k) */
} run_state;

/* Dequantizes tensor t (its bytes at src) into a new f32 array. */
static float *load_f32(const ref_tensor *t, const void *src) {
  size_t n = ref_tensor_elements(t);
  float *f = malloc(n * sizeof *f);
  refm_qparams q;
  if (!f || refm_qparams_init(t, &q) != 0) {
    free(f);
    return NULL;
  }
  qc_dequantize(refm_storage_dtype(t->data_type), &q.p, src, f, n);
  refm_qparams_free(&q);
  return f;
}

/* Requantizes f32 results into tensor t's type at dst. */
static int store(const ref_tensor *t, const float *f, void *dst, char *err, size_t errlen) {
  size_t n = ref_tensor_elements(t);
  htpu_dtype dt = refm_storage_dtype(t->data_type);
  if (dt == HTPU_F32) { /* a float graph may carry NaN/Inf through, as the hardware does */
    memcpy(dst, f, n * sizeof *f);
    return 0;
  }
  refm_qparams q;
  if (refm_qparams_init(t, &q) != 0) return refm_err(err, errlen, "out of memory");
  ptrdiff_t bad = qc_quantize(dt, &q.p, f, dst, n);
  refm_qparams_free(&q);
  if (bad >= 0)
    return refm_err(err, errlen, "output '%s' element %td is NaN, which %s cannot represent",
                    t->name, bad, refm_dtype_name(t->data_type));
  return 0;
}

static int run_op(const ref_model *m, const ref_op *op, uint32_t op_index, run_state *rs,
                  char *err, size_t errlen) {
  float *in[REF_MAX_OP_IO] = {NULL};
  float *y = NULL;
  int rc = -1;
  for (uint32_t i = 0; i < op->num_inputs; i++) {
    const ref_tensor *t = &m->tensors[op->inputs[i]];
    const void *src = t->kind == REF_TENSOR_STATIC ? t->data : rs->rd[op->inputs[i]];
    if (!(in[i] = load_f32(t, src))) {
      refm_err(err, errlen, "out of memory");
      goto out;
    }
  }
  uint32_t yi = op->outputs[0];
  const ref_tensor *ty = &m->tensors[yi];
  /* an output tensor that is not in this graph's output list is kept like a native one */
  void *dst = rs->wr[yi];
  if (!dst && !(dst = rs->owned[op_index] = malloc(ty->nbytes))) {
    refm_err(err, errlen, "out of memory");
    goto out;
  }
  if (op->type == REF_OP_NON_ZERO) { /* integer indices, written as they are */
    rs->produced[yi] = refm_op_non_zero(&m->tensors[op->inputs[0]], in[0], ty, dst);
  } else {
    if (!(y = malloc(ref_tensor_elements(ty) * sizeof *y))) {
      refm_err(err, errlen, "out of memory");
      goto out;
    }
    refm_op_compute(m, op, (const float *const *)in, y);
    if (store(ty, y, dst, err, errlen)) goto out;
  }
  rs->rd[yi] = dst;
  rc = 0;
out:
  for (uint32_t i = 0; i < op->num_inputs; i++) free(in[i]);
  free(y);
  return rc;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ref_graph_run(const ref_model *m, uint32_t graph_index, const void *const *in,
                  void *const *out, char *err, size_t errlen) {
  return ref_graph_run_ex(m, graph_index, in, out, NULL, NULL, NULL, NULL, err, errlen);
}

int ref_graph_run_ex(const ref_model *m, uint32_t graph_index, const void *const *in,
                     void *const *out, ref_stop_fn stop, void *stop_arg, uint64_t *op_start,
                     uint64_t *op_end, char *err, size_t errlen) {
  return ref_graph_run_dims(m, graph_index, in, out, stop, stop_arg, op_start, op_end, NULL, err,
                            errlen);
}

/* Each output's dims as this run produced them (ref_graph_run_dims). */
static void produced_dims(const ref_model *m, const ref_graph *g, const run_state *rs,
                          uint32_t (*out_dims)[REF_MAX_RANK]) {
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    const ref_tensor *t = &m->tensors[g->outputs[i]];
    memset(out_dims[i], 0, sizeof out_dims[i]);
    memcpy(out_dims[i], t->dims, t->rank * sizeof t->dims[0]);
    if (t->dynamic_mask & 1u) out_dims[i][0] = rs->produced[g->outputs[i]];
  }
}

int ref_graph_run_dims(const ref_model *m, uint32_t graph_index, const void *const *in,
                       void *const *out, ref_stop_fn stop, void *stop_arg, uint64_t *op_start,
                       uint64_t *op_end, uint32_t (*out_dims)[REF_MAX_RANK], char *err,
                       size_t errlen) {
  if (!m) return refm_err(err, errlen, "no model");
  if (graph_index >= m->num_graphs)
    return refm_err(err, errlen, "graph index %u out of range (model has %u)", graph_index,
                    m->num_graphs);
  const ref_graph *g = &m->graphs[graph_index];
  if (!in || !out) return refm_err(err, errlen, "graph '%s': no input or output array", g->name);
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (!in[i])
      return refm_err(err, errlen, "graph '%s': input %u ('%s') is NULL", g->name, i,
                      m->tensors[g->inputs[i]].name);
  for (uint32_t i = 0; i < g->num_outputs; i++)
    if (!out[i])
      return refm_err(err, errlen, "graph '%s': output %u ('%s') is NULL", g->name, i,
                      m->tensors[g->outputs[i]].name);

  run_state rs;
  rs.rd = calloc((size_t)m->num_tensors + 1, sizeof *rs.rd);
  rs.wr = calloc((size_t)m->num_tensors + 1, sizeof *rs.wr);
  rs.owned = calloc((size_t)g->num_ops + 1, sizeof *rs.owned);
  rs.produced = calloc((size_t)m->num_tensors + 1, sizeof *rs.produced);
  int rc = -1;
  if (!rs.rd || !rs.wr || !rs.owned || !rs.produced) {
    refm_err(err, errlen, "out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < g->num_inputs; i++) rs.rd[g->inputs[i]] = in[i];
  for (uint32_t i = 0; i < g->num_outputs; i++) rs.wr[g->outputs[i]] = out[i];
  rc = 0;
  for (uint32_t o = 0; o < g->num_ops && rc == 0; o++) {
    if (stop && stop(stop_arg)) {
      rc = REF_RUN_STOPPED;
      refm_err(err, errlen, "graph '%s': stopped before op %u", g->name, o);
      break;
    }
    /* after the stop check: its time (and a graphOp latency) falls between ops */
    if (op_start) op_start[o] = now_ns();
    rc = run_op(m, &g->ops[o], o, &rs, err, errlen);
    if (op_end) op_end[o] = now_ns();
    if (rc) {
      const char *tn = refm_op_name(g->ops[o].type);
      refm_err_prefix(err, errlen, "graph '%s' op %u (%s): ", g->name, o, tn ? tn : "?");
    }
  }
  if (rc == 0 && out_dims) produced_dims(m, g, &rs, out_dims);
out:
  if (rs.owned)
    for (uint32_t o = 0; o < g->num_ops; o++) free(rs.owned[o]);
  free(rs.produced);
  free(rs.rd);
  free(rs.wr);
  free(rs.owned);
  return rc;
}
