/*
 * handles.h - the handle resources (resources.c): what each holds, the one way to take its core
 * handle and close it, telling a handle's kind apart. Above terms, the reaper and the live lists;
 * below the NIF functions.
 */
#ifndef HTPU_NIF_HANDLES_H
#define HTPU_NIF_HANDLES_H

#include <erl_nif.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "kinds.h"
#include "live.h"

/* A resource holds one C handle: the C core already keeps a graph's context and a context's
 * runtime alive, so the resources hold no references on each other (the only exception: a
 * shared IO buffer keeps the graph resource it was laid out for, to recognise it). They do
 * share a small nif_rt_link with their runtime (below), which is not a resource. The handle is
 * swapped out atomically by close/1, the destructor or close_all, whichever comes first
 * (nif_handle_close). A thread that loaded the handle just before a concurrent close still calls
 * the core safely: core handles are generation-checked registry ids, not pointers, so a stale
 * one is answered with HTPU_ECLOSED. */

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
  /* The runtime resource it was loaded from (kept): garbage collection never closes a parent
   * handle before its children, since the core's runtime and context closes cancel the
   * submitted calls under them (an explicit close/1 still does). */
  void *parent;
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
  void *parent; /* the context resource it was opened from (kept): as nif_context.parent */
  /* vision_detect's input and output buffers when the call brings none (vision_detect.c): one
   * enif_alloc'ed block kept between calls, taken by exchange (a concurrent call allocates its
   * own), freed by the destructor. */
  _Atomic(void *) vision_block;
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
  /* 1 while a vision_detect writes, executes and decodes in this buffer (vision_detect.c): a
   * second one meanwhile is refused, HTPU_EBUSY, rather than decoding the other's frame */
  atomic_int detect_busy;
} nif_shared;

/* A zero-copy output binary (enif_make_resource_binary) keeps one of these alive, and it keeps
 * one reference on its shared buffer (and the shared resource itself). */
typedef struct nif_view {
  nif_shared *shared;
} nif_view;

/* The resource types, one per kind (kinds.h); NIF_RT(GRAPH) is the graph's. */
extern ErlNifResourceType *nif_resource_types[NIF_KINDS];
#define NIF_RT(K) (nif_resource_types[NIF_KIND_##K])
/* The execute NIF's carried call (execute.c): not a handle, never seen by Elixir code. */
extern ErlNifResourceType *nif_exec_call_type;

/* Opens (or takes over, on upgrade) the resource types. `exec_call_dtor` is the destructor of
 * nif_exec_call_type, which belongs to execute.c. Returns 0 or -1. */
int nif_resources_open(ErlNifEnv *env, ErlNifResourceDtor *exec_call_dtor);

/* Takes the core handle out of `obj` (a nif_shared, nif_graph, nif_context, or a runtime's
 * nif_rt_link) and closes it: now when `may_block` (close/1, on its dirty scheduler), else
 * through the reaper (destructors, close_all). For a shared buffer the "open" reference is what
 * is taken: views and calls in progress keep the memory until they end. The one place that
 * does this for close/1, the destructors and close_all. 1 if there was a handle to take. */
int nif_handle_close(nif_kind kind, void *obj, int may_block);
/* An open handle of this library: `term` a resource of an owning kind whose handle is there. */
int nif_handle_is_open(ErlNifEnv *env, ERL_NIF_TERM term);
/* Closes every linked object's handle as close/1 would, queueing the QNN closes to the reaper
 * (wait for them with nif_reaper_wait_idle). Returns how many handles it took. */
uint64_t nif_handles_close_all(void);

/* Which of this library's resource types `term` is, of this instance or (*purged = 1) of an
 * earlier instance of this very library that was purged; NIF_KINDS for anything else. */
nif_kind nif_handle_kind(ErlNifEnv *env, ERL_NIF_TERM term, int *purged);
const char *nif_kind_name(nif_kind k); /* "runtime", "context", "graph", ... */
/* A handle term that is not a resource of the expected kind `want`: a :closed error for a handle
 * of that kind made by a purged copy of the library, else an :invalid_argument error saying
 * what the term is instead (a handle of another kind, a reference this library did not make,
 * not a reference). Never badarg: a forged struct reaches it through the public API. */
ERL_NIF_TERM nif_bad_handle(ErlNifEnv *env, ERL_NIF_TERM term, nif_kind want);

/* Shared buffers' reference count. Takes a reference for a call (0: closed). */
int nif_shared_acquire(nif_shared *sh);
/* Drops one; the last one frees the htpu_shared: inline when `may_block`, else via the reaper. */
void nif_shared_unref(nif_shared *sh, int may_block);

#endif
