/*
 * vision_detect.c - HexagonTpu.Vision.detect/3's NIF: frame -> input -> execute -> detections in
 * one call, over htpu_preprocess, htpu_graph_execute_ex and htpu_decode.
 *
 * The input and outputs stay out of the BEAM: the frame binary is read in place, the input is
 * written into a buffer of the NIF's own (or into a HexagonTpu.SharedIO's FastRPC memory, which
 * nothing copies again), the outputs are decoded where the backend wrote them, in the shapes the
 * execute produced them in (an output with a dynamic dimension holds only that many elements),
 * and only the detections come back as terms.
 *
 * Scheduler: dirty IO, as graph_execute (it waits for the graph's turn and the DSP; its
 * conversions are a few hundred microseconds of a 1080p frame).
 */
#include <string.h>

#include "atoms.h"
#include "nif.h"
#include "shapes.h"
#include "terms.h"
#include "vision_terms.h"

/* One detect's buffers: the graph's input and outputs in their own types, in a shared IO
 * buffer (held for the call, and marked busy: its input and outputs are this call's until it
 * ends) or in one block, the graph's kept one when no other call has it (so a frame's megabytes
 * are not mapped and faulted in again on every call). */
typedef struct detect_io {
  htpu_io io[1 + VISION_MAX_OUTPUTS];
  void *block;
  nif_graph *g;
  nif_shared *sh;
} detect_io;

#define BLOCK_ALIGN 64u

static size_t aligned(size_t n) { return (n + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN; }

static void io_free(detect_io *x) {
  if (x->block) {
    void *none = NULL;
    if (!atomic_compare_exchange_strong(&x->g->vision_block, &none, x->block))
      enif_free(x->block);
  }
  if (x->sh) {
    atomic_store(&x->sh->detect_busy, 0);
    nif_shared_unref(x->sh, 1);
  }
  memset(x, 0, sizeof *x);
}

/* x->io[0..n) placed in the graph's kept block, or a new one. 0, or -1 out of memory. */
static int io_block(nif_graph *g, uint32_t n, detect_io *x) {
  size_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += aligned(g->tensors[i].info.byte_size + 1);
  x->block = atomic_exchange(&g->vision_block, NULL);
  if (!x->block) x->block = enif_alloc(total);
  if (!x->block) return -1;
  x->g = g;
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    x->io[i].data = (uint8_t *)x->block + at;
    at += aligned(g->tensors[i].info.byte_size + 1);
  }
  return 0;
}

/* The SharedIO `shared` of g, taken for this call (a reference, and its busy mark). 0, or -1
 * with the error term. */
static int io_shared(ErlNifEnv *env, nif_graph *g, ERL_NIF_TERM shared, detect_io *x,
                     ERL_NIF_TERM *err) {
  nif_shared *sh;
  if (!enif_get_resource(env, shared, NIF_RT(SHARED), (void **)&sh)) {
    *err = nif_bad_handle(env, shared, NIF_KIND_SHARED);
    return -1;
  }
  if (sh->graph != g) {
    *err = nif_make_error_msg(env, HTPU_EINVAL,
                              "the SharedIO was allocated for another loaded graph (one of the "
                              "same name from another load?): expected a SharedIO of this model "
                              "(alloc_io of it)");
    return -1;
  }
  if (!nif_shared_acquire(sh)) {
    *err = nif_make_error_msg(env, HTPU_ECLOSED, "the SharedIO is closed: expected an open SharedIO of this "
                              "model");
    return -1;
  }
  int idle = 0;
  if (!atomic_compare_exchange_strong(&sh->detect_busy, &idle, 1)) {
    nif_shared_unref(sh, 1);
    *err = nif_make_error_msg(env, HTPU_EBUSY,
                              "the SharedIO is in use by another detect call: one call at a time "
                              "per SharedIO (give each caller its own, or serialize the calls)");
    return -1;
  }
  x->sh = sh;
  return 0;
}

static int io_take(ErlNifEnv *env, nif_graph *g, ERL_NIF_TERM shared, detect_io *x,
                   ERL_NIF_TERM *err) {
  uint32_t n = g->num_inputs + g->num_outputs;
  memset(x, 0, sizeof *x);
  if (g->num_inputs != 1 || g->num_outputs > VISION_MAX_OUTPUTS) {
    *err = nif_make_error_msg(env, HTPU_EINVAL,
                              "detect runs a graph of one image input and at most %d outputs; "
                              "this one has %u input(s) and %u output(s)",
                              VISION_MAX_OUTPUTS, g->num_inputs, g->num_outputs);
    return -1;
  }
  if (!enif_is_identical(shared, ATOMS.nil) && io_shared(env, g, shared, x, err)) return -1;
  if (!x->sh && io_block(g, n, x)) {
    *err = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (the graph's inputs and outputs)");
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *t = &g->tensors[i].info;
    x->io[i].dtype = t->dtype;
    x->io[i].size = t->byte_size;
    if (x->sh) x->io[i].data = x->sh->base + x->sh->slots[i].offset;
  }
  return 0;
}

/* outs[i]: output i as the execute produced it (`dims`, NULL for a graph without dynamic
 * outputs: as declared). */
static void produced_infos(const nif_graph *g, const uint32_t *dims, htpu_tensor_info *outs) {
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    outs[i] = g->tensors[g->num_inputs + i].info;
    if (!dims) continue;
    size_t n = 1;
    for (uint32_t k = 0; k < outs[i].rank && k < HTPU_MAX_RANK; k++)
      n *= outs[i].dims[k] = dims[(size_t)i * HTPU_MAX_RANK + k];
    outs[i].num_elements = n;
    outs[i].byte_size = n * htpu_dtype_size(outs[i].dtype);
  }
}

typedef struct detect_times {
  uint64_t start, pre, exec, dec;
} detect_times;

static ERL_NIF_TERM detect_stats(ErlNifEnv *env, const detect_times *t, const htpu_exec_stats *st,
                                 const htpu_geometry *geo, const vision_dets *d) {
  ERL_NIF_TERM k[] = {ATOMS.preprocess_ns, ATOMS.execute_ns, ATOMS.decode_ns, ATOMS.total_ns,
                      ATOMS.geometry, ATOMS.candidates, ATOMS.scheduler};
  ERL_NIF_TERM v[] = {enif_make_uint64(env, t->pre), enif_make_uint64(env, st->execute_ns),
                      enif_make_uint64(env, t->dec),
                      enif_make_uint64(env, vision_now_ns() - t->start),
                      vision_make_geometry(env, geo), enif_make_uint(env, d->info.candidates),
                      ATOMS.dirty_io};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}

/* Preprocess, execute, decode over x's buffers. 0, or the error term in *err. */
static int detect_run(ErlNifEnv *env, nif_graph *g, htpu_graph *h, const ERL_NIF_TERM argv[],
                      detect_io *x, htpu_geometry *geo, vision_dets *d, detect_times *t,
                      htpu_exec_stats *st, ERL_NIF_TERM *err) {
  htpu_frame f;
  htpu_preprocess_options po;
  htpu_decode_options dopt;
  htpu_exec_options xo;
  uint32_t input, dims[VISION_MAX_OUTPUTS * HTPU_MAX_RANK];
  memset(d, 0, sizeof *d);
  if (!vision_get_frame(env, argv[1], &f) || !vision_get_pre(env, argv[2], &po, &input) ||
      !vision_get_dec(env, argv[3], &dopt) || nif_exec_options(env, ATOMS.nil, &xo) ||
      nif_get_call_options(env, argv[4], &xo)) {
    *err = enif_make_badarg(env);
    return -1;
  }
  if (io_take(env, g, argv[5], x, err)) return -1;
  /* outputs with dynamic dimensions: decoded in the shape this execute wrote (the rest of
   * their buffers holds an earlier call's values) */
  if (nif_shapes_dynamic_output(g) >= 0) xo.output_dims = dims;
  uint64_t a = vision_now_ns();
  int rc = htpu_preprocess(&f, &g->tensors[0].info, &po, x->io[0].data, x->io[0].size, geo);
  t->pre = vision_now_ns() - a;
  if (!rc) rc = htpu_graph_execute_ex(h, x->io, 1, x->io + 1, g->num_outputs, &xo, st);
  if (rc) {
    *err = nif_make_error(env, rc);
    return -1;
  }
  const void *data[VISION_MAX_OUTPUTS];
  htpu_tensor_info outs[VISION_MAX_OUTPUTS];
  for (uint32_t i = 0; i < g->num_outputs; i++) data[i] = x->io[1 + i].data;
  produced_infos(g, xo.output_dims, outs);
  a = vision_now_ns();
  rc = vision_decode_into(env, outs, g->num_outputs, data, &dopt, geo, d, err);
  t->dec = vision_now_ns() - a;
  return rc;
}

/* vision_detect(graph_ref, frame_map, pre_opts, dec_opts, call_opts, shared_ref | nil,
 *               labels_tuple, :maps | :rows) -> {:ok, detections, stats} | error
 * call_opts as graph_submit's (timeout_ns, priority, perf_profile); the call is skipped when
 * its caller died while it waited (nif_exec_options). A SharedIO another detect is using is
 * {:error, {:busy, message}}. */
ERL_NIF_TERM nif_vision_detect(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  detect_times t = {vision_now_ns(), 0, 0, 0};
  htpu_graph *h;
  ERL_NIF_TERM err, ret;
  nif_graph *g = vision_graph_of(env, argv[0], &h, &err);
  if (!g) return err;
  detect_io x;
  vision_dets d;
  htpu_geometry geo;
  htpu_exec_stats st;
  memset(&x, 0, sizeof x); /* a malformed term returns before io_take sets it */
  memset(&st, 0, sizeof st);
  if (detect_run(env, g, h, argv, &x, &geo, &d, &t, &st, &err))
    ret = err;
  else
    ret = enif_make_tuple3(env, ATOMS.ok, vision_make_dets(env, &d, argv[6], argv[7]),
                           detect_stats(env, &t, &st, &geo, &d));
  vision_dets_free(&d);
  io_free(&x);
  return ret;
}
