/*
 * nif.h - shared declarations of the NIF glue (c_src/). The glue is a client of
 * include/hexagon_tpu.h only: argument decoding, resources, binaries, scheduling. No QNN.
 */
#ifndef HTPU_NIF_H
#define HTPU_NIF_H

#include <erl_nif.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hexagon_tpu.h"

/* ---- resources (resources.c) -------------------------------------------------------------
 * A resource holds one C handle and nothing else that could outlive it: the C core already
 * keeps a graph's context and a context's runtime alive, so the resources need no links to
 * each other. The handle is swapped out atomically by close/1 or the destructor, whichever
 * comes first. A thread that loaded the handle just before a concurrent close still calls the
 * core safely: core handles are generation-checked registry ids, not pointers, so a stale one
 * is answered with HTPU_ECLOSED. */

typedef struct nif_runtime {
  _Atomic(htpu_runtime *) handle;
} nif_runtime;

typedef struct nif_context {
  _Atomic(htpu_context *) handle;
} nif_context;

/* What execute needs to size its output binaries, copied at open: the core's tensor infos are
 * borrowed from the graph handle and die with it, and a close may race with an execute. */
typedef struct nif_io_desc {
  htpu_dtype dtype;
  size_t num_elements;
} nif_io_desc;

typedef struct nif_graph {
  _Atomic(htpu_graph *) handle;
  uint32_t num_inputs, num_outputs;
  nif_io_desc *inputs;  /* enif_alloc'ed, freed by the destructor */
  nif_io_desc *outputs;
} nif_graph;

extern ErlNifResourceType *RUNTIME_RT;
extern ErlNifResourceType *CONTEXT_RT;
extern ErlNifResourceType *GRAPH_RT;

/* Opens (or takes over, on upgrade) the three resource types. Returns 0 or -1. */
int nif_resources_open(ErlNifEnv *env);

/* ---- reaper (reaper.c) ---------------------------------------------------------------------
 * A thread that runs htpu_*_close for handles dropped by garbage collection: those frees may
 * wait on the DSP (and on in-flight executes), which must never happen on a normal scheduler.
 * Started by the first load, stopped (after draining) by the last unload; when it is not
 * running the close happens inline. */
typedef enum nif_reap_kind { REAP_RUNTIME, REAP_CONTEXT, REAP_GRAPH } nif_reap_kind;

int nif_reaper_start(void);
void nif_reaper_stop(void);
void nif_reaper_push(nif_reap_kind kind, void *handle);
/* Handles queued so far, closed by the thread, and closed inline (no thread / no memory). */
void nif_reaper_counts(uint64_t *queued, uint64_t *closed, uint64_t *inline_closed);

/* ---- terms (convert.c) --------------------------------------------------------------------- */

/* {:error, {reason_atom, message, qnn_code, qnn_name}} from an HTPU_E* code and the calling
 * thread's htpu_last_error() / htpu_last_qnn_code(). */
ERL_NIF_TERM nif_make_error(ErlNifEnv *env, int code);
/* The same shape for a failure found by the glue itself. */
ERL_NIF_TERM nif_make_error_msg(ErlNifEnv *env, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

ERL_NIF_TERM nif_make_string(ErlNifEnv *env, const char *s);
ERL_NIF_TERM nif_make_version(ErlNifEnv *env, htpu_version3 v);
ERL_NIF_TERM nif_make_tensor_info(ErlNifEnv *env, const htpu_tensor_info *t);
ERL_NIF_TERM nif_make_graph_info(ErlNifEnv *env, const htpu_graph_info *g);
ERL_NIF_TERM nif_make_model_info(ErlNifEnv *env, const htpu_model_info *m);
ERL_NIF_TERM nif_make_runtime_info(ErlNifEnv *env, const htpu_runtime_info *ri);
ERL_NIF_TERM nif_make_stats(ErlNifEnv *env);

/* dtype atom (:f32, :u8, ...) <-> htpu_dtype. */
ERL_NIF_TERM nif_dtype_atom(htpu_dtype t);
int nif_get_dtype(ErlNifEnv *env, ERL_NIF_TERM term, htpu_dtype *out);

/* A NUL-terminated copy of a binary or nil (-> *out = NULL). Caller enif_free()s. 0 or -1. */
int nif_get_cstring_or_nil(ErlNifEnv *env, ERL_NIF_TERM term, char **out);

#endif
