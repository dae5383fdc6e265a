/*
 * internal.h - the objects behind htpu_runtime, htpu_context and htpu_graph.
 *
 *   runtime  (owns: libraries, QNN log, backend, device)
 *     ^ referenced by
 *   context  (owns: QNN context, its copy of the binary, the model info)
 *     ^ referenced by
 *   graph    (one handle; holds the graph_state of its QNN graph: QNN graph handle,
 *             execute lock, timing window, scratch pool, shared by every handle of it)
 *
 * A child holds a reference on its parent, so the parent's teardown can only run after the
 * child's: QNN teardown is context -> device -> backend -> log -> dlclose whatever order
 * callers close in.
 */
#ifndef HTPU_INTERNAL_H
#define HTPU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "gate.h"
#include "hexagon_tpu.h"
#include "loader.h"
#include "mem_cache.h"
#include "model_info.h"
#include "object.h"
#include "perf.h"
#include "scratch.h"
#include "shared_regions.h"
#include "timing.h"

typedef struct context_obj context_obj;
typedef struct graph_obj graph_obj;
typedef struct graph_state graph_state;

typedef struct device_facts {
  uint32_t arch, soc_model;
  uint64_t vtcm_bytes; /* normalized (vtcm.h) */
} device_facts;

typedef struct runtime_obj {
  htpu_object base;
  qnn_backend_lib backend_lib;
  qnn_system_lib system_lib;
  qnn_log_handle_t log;
  qnn_backend_handle_t backend;
  qnn_device_handle_t device;
  device_facts device_facts;
  char *build_id;
  char *dsp_library_path;
  uint32_t recovery_retries;
  uint64_t retry_delay_ms;    /* first backoff of start-up and recovery retries */
  uint32_t startup_attempts;
  char log_note[320]; /* why there is no QNN log handle; "" when there is one */
  perf_state perf;
  shared_registry shared; /* FastRPC library and the live shared buffers */
  /* Live contexts, not owned: each leaves in its own teardown. Shared-buffer frees use it to
   * deregister everywhere. */
  pthread_mutex_t contexts_lock;
  context_obj **contexts;
  size_t num_contexts, cap_contexts;
  int batch_multiple; /* capability 312 announced at open (batch_multiple.h) */
} runtime_obj;

struct context_obj {
  htpu_object base;
  runtime_obj *rt;
  qnn_context_handle_t qnn;   /* replaced by a recovery; read under the execute gate */
  uint64_t generation;        /* bumped by each recovery */
  atomic_int dead;            /* recovery failed or 1011: every call gives HTPU_EDEVICE_RESET;
                                 set by executes outside the gate, hence atomic */
  void *binary; /* our copy, retained to recreate the context after a DSP restart */
  size_t binary_len;
  model_info *info;
  mem_cache mem;              /* registered shared buffers of this context */
  /* The states of the graphs open on this context (one per QNN graph, however many handles),
   * not owned: the handles own them. A recovery re-retrieves their QNN handles; an open of a
   * graph already open joins its state. */
  pthread_mutex_t graphs_lock;
  graph_state **graphs;
  size_t num_graphs, cap_graphs;
};

/* What belongs to a QNN graph rather than to a handle of it: htpu_graph_open twice on one
 * context and graph gives two handles of one QNN graph, whose executes must still be
 * serialized (QNN queues them; the reference backend counts a violation) and whose calls'
 * durations are the same graph's. Made by the first open of the graph on the context and
 * shared by every handle opened on it while one is open; freed with the last of them. */
struct graph_state {
  uint32_t index;             /* into ctx->info */
  unsigned handles;           /* graph_obj holding it; under the context's graphs_lock */
  qnn_graph_handle_t qnn;     /* replaced by a recovery; read under the execute gate */
  pthread_mutex_t exec_lock;  /* QNN executes of one graph are serialized */
  /* Calls holding exec_lock or waiting for it (not those still converting, which run
   * outside it): a no-wait call looks here before converting anything. */
  atomic_uint contenders;
  scratch_pool scratch;       /* conversion buffers, one per call in progress on the graph */
  call_window timing;         /* recent call durations (htpu_graph_get_timing) */
  /* BATCH_* (batch_multiple.h): whether the graph took a batch multiple or refused one; a
   * refusal sends its later calls of k row groups straight to k executes; 0 (calloc): untried */
  atomic_int batch_state;
};

/* One graph handle. Its own: the reference on its context and the last error; the rest is
 * its QNN graph's (state). */
struct graph_obj {
  htpu_object base;
  context_obj *ctx;
  uint32_t index;      /* into ctx->info; state->index */
  graph_state *state;  /* this handle's hold on it (graph_state.handles) */
};

/* Non-owning registries (registry.c). */
int runtime_add_context(runtime_obj *rt, context_obj *c);
void runtime_remove_context(runtime_obj *rt, context_obj *c);
/* Every live context of rt deregisters its handles in the region of `fd`. Call it with the
 * execute gate held exclusively. */
void runtime_release_registrations(runtime_obj *rt, int fd);

/* Frees FastRPC memory from shared_region_alloc on rt (runtime.c): deregistered from every
 * context and taken off rt's list under the execute gate (no execute may be using a handle
 * meanwhile), then given back. Takes the gate exclusively: the caller holds no gate. */
void runtime_free_region(runtime_obj *rt, void *p, int fd);
/* Joins the state of graph `index` already open on c (one more handle on it), else adds
 * *fresh to c's list with `qnn` as its handle and one handle, and takes it (*fresh = NULL).
 * Call it under the execute gate (shared), where `qnn` (retrieved there) is current. NULL:
 * out of memory. */
graph_state *context_attach_graph(context_obj *c, uint32_t index, qnn_graph_handle_t qnn,
                                  graph_state **fresh);
/* Drops one handle's hold on s; returns 1 when it was the last: s has then left c's list and
 * is the caller's to free. */
int context_detach_graph(context_obj *c, graph_state *s);

/* Recreates a context after a DSP restart seen at `seen_generation` (nothing to do if another
 * call recovered it since): deregisters and frees the stale QNN context, creates it again from
 * the retained binary and re-retrieves its graphs. A transient failure (the DSP still coming
 * back) is retried up to rt->recovery_retries times with the start-up backoff. Takes the
 * execute gate exclusively: the caller holds no gate (a graph's execute lock is fine: nothing
 * waits for one while holding the gate). Returns 0 or HTPU_EDEVICE_RESET (error set;
 * c->dead = 1). */
int context_recover(context_obj *c, uint64_t seen_generation);

/* Compatibility preflight of a binary against this runtime's device and backend: returns 0
 * or HTPU_EINCOMPATIBLE with one message naming both sides. */
int compat_check(runtime_obj *rt, const model_info *info, void *binary, size_t len);

#endif
