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
 * A resource holds one C handle: the C core already keeps a graph's context and a context's
 * runtime alive, so the resources hold no references on each other (the only exception: a
 * shared IO buffer keeps the graph resource it was laid out for, to recognise it). They do
 * share a small nif_rt_link with their runtime (below), which is not a resource. The handle is swapped out atomically by close/1 or the destructor, whichever
 * comes first. A thread that loaded the handle just before a concurrent close still calls the
 * core safely: core handles are generation-checked registry ids, not pointers, so a stale one
 * is answered with HTPU_ECLOSED. */

/* ---- live objects (live.c) -----------------------------------------------------------------
 * Every open runtime, context, graph and shared IO buffer, so that close_all can close what is
 * left when the VM stops. A node is embedded in its object: linked when the object is set up,
 * unlinked first thing in its destructor. Kinds in the order close_all closes them. */
typedef enum nif_live_kind {
  NIF_LIVE_SHARED,
  NIF_LIVE_GRAPH,
  NIF_LIVE_CONTEXT,
  NIF_LIVE_RUNTIME,
  NIF_LIVE_KINDS
} nif_live_kind;

typedef struct nif_live {
  struct nif_live *next, **pprev; /* pprev NULL: not linked */
} nif_live;

void nif_live_init(nif_live *n); /* not linked; call before anything can destroy the object */
void nif_live_add(nif_live *n, nif_live_kind kind);
void nif_live_remove(nif_live *n); /* a node never linked is fine */
/* Closes every linked object's handle as close/1 would, queueing the QNN closes to the reaper
 * (wait for them with nif_reaper_wait_idle). Returns how many handles it took. */
uint64_t nif_live_close_all(void);

/* What a runtime's context and graph resources share with it: the caller's runtime handle
 * (the runtime resource's, NULL once closed or garbage collected) and the once-per-runtime
 * fallback warning flag. Reference counted (the runtime resource and every context/graph
 * resource made from it hold one), so a graph can still ask "which runtime?" after the
 * runtime's variable is gone, without keeping the runtime resource itself alive.
 *
 * `lock` guards `handle` swaps. The close and the destructor hold it only to swap the handle
 * out; readers hold it while they copy htpu_runtime_get_info's strings (borrowed from the
 * runtime while the caller's handle is open), so the close cannot free them mid-copy. Nothing
 * called under it can block: htpu_runtime_get_info takes only the core registry's short mutex
 * (never the perf lock), and the destructor, which runs on a normal scheduler, takes this lock
 * too. (Why a shared buffer is ordinary memory is asked of the buffer, htpu_shared_note, so it
 * needs no runtime handle.) */
typedef struct nif_rt_link {
  nif_live live; /* the runtime's handle is this link's: one node per runtime */
  _Atomic unsigned refs;
  ErlNifMutex *lock;
  _Atomic(htpu_runtime *) handle;
  atomic_int fallback_warned;
  /* Open context and graph handles loaded on the runtime (a closed or collected one no longer
   * counts, unlike `refs`), and when the last of them went (CLOCK_MONOTONIC ms; the link's
   * creation before any): what HexagonTpu.Runtime.close_idle_shared/1 asks (runtime_usage). */
  _Atomic unsigned users;
  _Atomic int64_t idle_since_ms;
} nif_rt_link;

nif_rt_link *nif_link_new(htpu_runtime *h); /* refs = 1; NULL when out of memory */
void nif_link_retain(nif_rt_link *l);
void nif_link_release(nif_rt_link *l);     /* NULL is a no-op */
/* A context or graph handle on the runtime was opened / was taken out (closed, collected,
 * close_all): call once each, the latter only by whoever swapped a non-NULL handle out. */
void nif_link_user_opened(nif_rt_link *l);
void nif_link_user_left(nif_rt_link *l);
/* Open users now, and for how long (ms) there have been none (0 while there are users). */
void nif_link_usage(nif_rt_link *l, unsigned *users, int64_t *idle_ms);

typedef struct nif_runtime {
  nif_rt_link *link;
} nif_runtime;

typedef struct nif_context {
  nif_live live;
  _Atomic(htpu_context *) handle;
  nif_rt_link *link; /* of the runtime it was loaded on */
} nif_context;

/* One tensor's info, deep-copied (name, per-axis scales and zero points included): the core's
 * htpu_tensor_info is borrowed from the graph/context and may be freed by a close made by
 * another process at any moment, so the NIF never reads it after the call that returned it.
 * As a shared-buffer slot, offset/size place it in the buffer (htpu_quantize/htpu_dequantize
 * need the quantization). */
typedef struct nif_slot {
  size_t offset, size;
  htpu_tensor_info info;
  char *name;
  float *scales;
  int32_t *zero_points;
} nif_slot;

/* Deep copy of *t into *s (offset as given, size = byte_size). 0, or -1 out of memory (then
 * nif_slot_free still frees what was copied). */
int nif_slot_copy(nif_slot *s, const htpu_tensor_info *t, size_t offset);
void nif_slot_free(nif_slot *s);

typedef struct nif_graph {
  nif_live live;
  _Atomic(htpu_graph *) handle;
  uint32_t num_inputs, num_outputs;
  /* Copied once at graph_open, before the handle is published: inputs, then outputs.
   * enif_alloc'ed, freed by the destructor; immutable, so any thread holding the term reads
   * them without a lock. */
  nif_slot *tensors;
  nif_rt_link *link;
} nif_graph;

/* A graph's inputs and outputs in one htpu_shared buffer (htpu_graph_alloc_io).
 * Lifetime: `refs` counts 1 for "open" (dropped by close/1 or the destructor) + 1 per live
 * zero-copy view binary + 1 per NIF call using the memory right now. Whoever drops the last
 * reference frees the htpu_shared (close/1 inline on its dirty scheduler, everyone else through
 * the reaper), so the memory outlives every view and every in-flight execute/write/read, and a
 * close never waits for them. A call takes a reference only while refs > 0 and `closed` is 0. */
typedef struct nif_shared {
  nif_live live;
  _Atomic(htpu_shared *) handle;
  _Atomic unsigned refs;
  atomic_int closed;
  nif_graph *graph; /* enif_keep_resource'd: the graph it was laid out for */
  char *base;
  size_t size;
  int fastrpc;
  uint32_t num_inputs, num_outputs;
  nif_slot *slots; /* inputs, then outputs */
} nif_shared;

/* A zero-copy output binary (enif_make_resource_binary) keeps one of these alive, and it keeps
 * one reference on its shared buffer (and the shared resource itself). */
typedef struct nif_view {
  nif_shared *shared;
} nif_view;

extern ErlNifResourceType *RUNTIME_RT;
extern ErlNifResourceType *CONTEXT_RT;
extern ErlNifResourceType *GRAPH_RT;
extern ErlNifResourceType *SHARED_RT;
extern ErlNifResourceType *VIEW_RT;

/* Opens (or takes over, on upgrade) the resource types. Returns 0 or -1. */
int nif_resources_open(ErlNifEnv *env);

/* The kinds of handle terms, for telling a wrong handle apart from a foreign one. */
typedef enum nif_kind {
  NIF_KIND_RUNTIME,
  NIF_KIND_CONTEXT,
  NIF_KIND_GRAPH,
  NIF_KIND_SHARED,
  NIF_KIND_VIEW,
  NIF_KINDS /* none: not a resource this library made */
} nif_kind;
/* Which of this library's resource types `term` is, of this instance or (*purged = 1) of an
 * earlier instance of this very library that was purged; NIF_KINDS for anything else. */
nif_kind nif_handle_kind(ErlNifEnv *env, ERL_NIF_TERM term, int *purged);
const char *nif_kind_name(nif_kind k); /* "runtime", "context", "graph", ... */

/* ---- reaper (reaper.c) ---------------------------------------------------------------------
 * A thread that runs htpu_*_close for handles dropped by garbage collection: those frees may
 * wait on the DSP (and on in-flight executes), which must never happen on a normal scheduler.
 * Started by the first load, stopped (after draining) by the last unload; when it is not
 * running the close happens inline. */
typedef enum nif_reap_kind { REAP_RUNTIME, REAP_CONTEXT, REAP_GRAPH, REAP_SHARED } nif_reap_kind;

int nif_reaper_start(void);
void nif_reaper_stop(void);
void nif_reaper_push(nif_reap_kind kind, void *handle);
/* The VM is halting (on-halt callback, OTP 26+): stop the thread, bounded, without draining.
 * Returns 1 and fills *info for the call that did it, 0 for any later call (info zeroed). */
typedef struct nif_halt_info {
  int was_running;   /* the reaper thread was running */
  int stopped;       /* it left within the bound (so it is out of QNN) */
  uint64_t abandoned; /* queued closes dropped (the process exit reclaims them) */
} nif_halt_info;
int nif_reaper_halt(nif_halt_info *info);
/* halt.c: with HTPU_HALT_REPORT=<file> (the halt test), appends what the halt did to <file>. */
void nif_halt_report(const nif_halt_info *info);
/* Waits until the thread has closed every handle queued so far (and any queued meanwhile), at
 * most timeout_ms. 1 when it has, 0 on timeout (or when the thread is halted). */
int nif_reaper_wait_idle(unsigned timeout_ms);
/* Handles queued so far, closed by the thread, and closed inline (no thread / no memory). */
void nif_reaper_counts(uint64_t *queued, uint64_t *closed, uint64_t *inline_closed);

/* ---- shared buffers (shared.c) ----------------------------------------------------------- */

/* Takes a reference for a call (0: closed). */
int nif_shared_acquire(nif_shared *sh);
/* Drops one; the last one frees the htpu_shared: inline when `may_block`, else via the reaper. */
void nif_shared_unref(nif_shared *sh, int may_block);
/* Frees what the resource owns besides the buffer (slots, the graph reference). */
void nif_shared_dtor(ErlNifEnv *env, void *obj);
void nif_view_dtor(ErlNifEnv *env, void *obj);

ERL_NIF_TERM nif_graph_alloc_io(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_shared_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_shared_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_shared_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_execute_shared(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* Test hook (HexagonTpu.Runtime.open/1's and Graph.alloc_io/2's `env:`): applies
 * [{name, value | nil}] with setenv/unsetenv, recording the previous values in `saved` so
 * env_restore can put them back (also after a failure: what was applied is recorded). Not safe
 * against concurrent getenv in other threads. 0, or -1 with `why` saying what was wrong: more
 * than `max` entries, a name empty or with '=' or NUL, a value with NUL, not a proper list. */
typedef struct env_entry {
  char *name;
  char *old; /* NULL: was unset */
} env_entry;
#define MAX_ENV 16
int env_apply(ErlNifEnv *env, ERL_NIF_TERM list, env_entry *saved, unsigned max, unsigned *count,
              char *why, size_t why_len);
void env_restore(env_entry *saved, unsigned n);

/* nil -> HTPU_PERF_DEFAULT, an atom -> htpu_perf_profile_from_name. 0 or -1. */
int nif_get_perf_profile(ErlNifEnv *env, ERL_NIF_TERM term, htpu_perf_profile *out);
/* Execute options for the calling process: the profile (as nif_get_perf_profile) and a cancel
 * callback, so an execute whose caller was killed while it queued on the graph is skipped
 * (HTPU_ECANCELLED) instead of run for nobody. `env` must be the NIF call's own. 0 or -1. */
int nif_exec_options(ErlNifEnv *env, ERL_NIF_TERM profile, htpu_exec_options *xo);
/* The stats map of one execute: the core's figures, :nif_ns since t0, :scheduler. */
ERL_NIF_TERM nif_make_exec_stats(ErlNifEnv *env, const htpu_exec_stats *st, ErlNifTime t0,
                                 ERL_NIF_TERM scheduler);

/* ---- execute (execute.c) -------------------------------------------------------------------
 * graph_execute on a dirty IO scheduler, graph_execute_normal on a normal one (declining to
 * the dirty one wherever it would wait or run long), graph_timing. */
ERL_NIF_TERM nif_graph_execute(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_execute_normal(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_execute_batch(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_timing(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* Which scheduler graph executes were answered on, and why normal ones were declined. */
typedef struct nif_sched_counts {
  uint64_t executes_normal, executes_dirty_io;
  uint64_t declined_busy;      /* graph or execute gate held: it would have waited */
  uint64_t declined_not_short; /* :auto, and the graph's recent calls unknown or long */
  uint64_t declined_other;     /* I/O over the size bound, a per-call perf vote, a recovery */
  uint64_t declined_resource;  /* a scratch block to allocate or a buffer to register */
} nif_sched_counts;
void nif_sched_counts_get(nif_sched_counts *out);

/* ---- terms (convert.c) --------------------------------------------------------------------- */

/* {:error, {:closed, "the <what> is closed", ...}}. */
ERL_NIF_TERM nif_closed_error(ErlNifEnv *env, const char *what);
/* A handle term that is not a resource of the expected kind `want`: a :closed error for a handle
 * of that kind made by a purged copy of the library, else an :invalid_argument error saying
 * what the term is instead (a handle of another kind, a reference this library did not make,
 * not a reference). Never badarg: a forged struct reaches it through the public API. */
ERL_NIF_TERM nif_bad_handle(ErlNifEnv *env, ERL_NIF_TERM term, nif_kind want);

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
