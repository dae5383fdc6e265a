/*
 * internal.h - the objects behind htpu_runtime, htpu_context and htpu_graph.
 *
 *   runtime  (owns: libraries, QNN log, backend, device)
 *     ^ referenced by
 *   context  (owns: QNN context, its binary (mapped, copied or lent), the model info)
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

#include "base/base.h"
#include "board/board.h"
#include "device/device.h"
/* The types a graph_state holds (its waiting list, scratch pool, timing window), not exec/'s
 * door: exec.h comes after this layout (batch_multiple.h needs it), so it cannot come first. */
#include "exec/scratch.h"
#include "exec/timing.h"
#include "exec/turn.h"
#include "hexagon_tpu.h"
#include "model/model.h"
#include "loader/loader.h"

/* Worker threads per QNN graph with submitted calls (call.c): one executes while the other
 * finishes the previous call. They exit once the graph has had no submitted call for
 * CALL_WORKER_LINGER_NS, so idle models hold no threads (thousands of models may be loaded). */
#define CALL_WORKERS 2
#define CALL_WORKER_LINGER_NS 1000000000ull /* 1 s */
/* A worker slot: free, running, or exited and not yet joined (the next start joins it). */
enum { WORKER_FREE, WORKER_LIVE, WORKER_GONE };

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
  /* Deadlines and priorities (capabilities asked once at open). */
  int execute_signals;        /* 1201, 308 and 1202 all announced */
  int load_signals;           /* 211, 1201 and 1203 */
  int priority_control;       /* 205 and 306: a PRIORITY context config reaches QNN */
  int execute_async;          /* 304 and graphExecuteAsync: submitted calls go to QNN's queue */
  uint64_t default_timeout_ns;
  uint32_t queue_limit;
  /* Loading (capabilities asked once at open; context_load.c, spill_group.c). */
  int persistent_binary;      /* 205 and 208: PERSISTENT_BINARY reaches QNN */
  int enable_graphs;          /* 205 and 206: ENABLE_GRAPHS */
  int memory_limit_hint;      /* 205 and 207: MEMORY_LIMIT_HINT */
  int list_load;              /* 212 and slot 56: contextCreateFromBinaryListAsync */
  int context_configs;        /* 205: context configs at all */
  /* Spill-fill sharing: the option, cleared (with the note saying why) when the backend
   * refuses the config; the anchor is the context new loads join, not owned (every member
   * holds a reference on its group's anchor). Changed under the execute gate, exclusively. */
  atomic_int sf_sharing;      /* read by htpu_runtime_get_info without the gate */
  char sf_note[200];          /* written once: before sf_sharing goes to 0 */
  context_obj *sf_anchor;
  /* A no-wait call stopped at its short-call bound demotes the short path of every graph of
   * the runtime until then (CLOCK_MONOTONIC ns). */
  _Atomic uint64_t short_demoted_until;
  npu_lock_cfg npu_lock; /* the cross-process lock around creations (src/board/) */
} runtime_obj;

struct context_obj {
  htpu_object base;
  runtime_obj *rt;
  qnn_context_handle_t qnn;   /* replaced by a recovery; read under the execute gate */
  uint64_t generation;        /* bumped by each recovery */
  atomic_int dead;            /* recovery failed or 1011: every call gives HTPU_EDEVICE_RESET;
                                 set by executes outside the gate, hence atomic */
  atomic_int stale;           /* a recovery stopped at its call's deadline, cancel or close: no
                                 QNN context; the next call (or graph open) recovers first */
  model_binary bin; /* mapped, copied or lent; QNN's until contextFree, and a recovery's */
  model_info *info;
  /* What its load asked for (context_load.c), kept for a recovery's recreate (create.c). */
  const char **enabled;       /* NULL-terminated names of the graphs deserialized; NULL: all */
  uint8_t *graph_on;          /* per graph of info: may be opened (all 1 without `enabled`) */
  uint32_t num_enabled;
  int enable_passed;          /* ENABLE_GRAPHS given to QNN */
  int persistent;             /* PERSISTENT_BINARY given to QNN */
  uint64_t memory_limit_mb;
  int memory_limit_passed;
  uint64_t spill_fill;        /* the largest of its enabled graphs' (graph blob info); 0 unknown */
  /* Its spill-fill group (spill_group.c): set by its load and never changed after, so an
   * execute reads it without a lock. */
  context_obj *sf_anchor;     /* the group's first context: itself, or another (a reference is
                                 held on it); NULL: none */
  uint64_t sf_bytes;          /* the group's buffer */
  uint64_t sf_id;             /* the group's id (the anchor's) */
  atomic_int sf_joined;       /* its QNN context is in the group now (a recovery that cannot
                                 rejoin runs it on its own buffer) */
  gate_lane sf_lane;          /* the anchor's: the group's executes, one at a time */
  char sf_note[200];          /* why it shares no buffer */
  context_obj *sf_drop;       /* an anchor its load chose and then left: released after the
                                 gate (its last reference would take the gate) */
  int list_loaded;
  int published;              /* its load ended with a handle (counted in htpu_stats) */
  uint64_t load_ns;
  int priority;               /* htpu_priority of its load (never DEFAULT: NORMAL then) */
  int priority_explicit;      /* the load named one: passed to QNN as a context config */
  uint64_t exec_timeout_ns;   /* default of its executes; 0: the runtime's */
  uint32_t queue_limit;       /* of its graphs' waiting lists; 0: the runtime's */
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
  /* The waiting list (turn.h): QNN executes of one graph are serialized through it. */
  pthread_mutex_t q_lock;
  exec_ctl *running;          /* the ctl holding the graph; NULL: free */
  exec_ctl *head, *tail;      /* waiting, in arrival order */
  uint32_t waiting;
  uint64_t next_seq;
  uint32_t queue_limit;
  const char *name;           /* the graph's name, for messages */
  /* The graph's abort signal (one execute at a time, so one suffices); NULL: no signals
   * (the backend has none, or refused this one: signal_note says why). */
  qnn_signal_handle_t signal;
  char signal_note[160];
  const qnn_backend_lib *lib;
  /* Calls holding the graph, waiting for it or in QNN's async queue for it (not those still
   * converting, which run outside it): a no-wait call looks here before converting anything. */
  atomic_uint contenders;
  /* Submitted calls (call.c): run by CALL_WORKERS worker threads, started on the first
   * submit and joined when the state is freed; the live ones are listed for the closes that
   * cancel. A worker executes the call granted the turn (worker_ctl) before anything else;
   * the calls whose execute ended wait in `finishing` (FIFO) for their outputs and done, which
   * one worker at a time gives, in execute order, while another executes the next call. */
  pthread_cond_t worker_cv;   /* under q_lock: a call was granted or executed, or stop */
  exec_ctl *worker_ctl;
  pthread_t workers[CALL_WORKERS];
  int worker_slot[CALL_WORKERS]; /* WORKER_*; under q_lock */
  int worker_stop;
  unsigned workers_idle;
  /* Idle workers spinning before they sleep (under q_lock), and the flag an executing worker
   * raises instead of a wake-up when one spins: on a loaded host a futex wake costs the waker
   * ~10 us, which would sit between two executes (call.c, worker_main). */
  unsigned workers_spinning;
  atomic_int worker_poke;
  /* When the graph's current graphExecute started (CLOCK_MONOTONIC ns): an idle worker spins
   * until a little past its expected end, so the executing worker finds it spinning. */
  _Atomic uint64_t exec_started_ns;
  _Atomic uint64_t last_exec_ns; /* the graph's last graphExecute took (0: none yet) */
  int finisher_busy;          /* a worker is finishing a call (dones stay in order) */
  struct htpu_call *fin_head, *fin_tail; /* ordered by their turns (exec_ctl.fin_seq) */
  /* The turn number of the next submitted call granted, and of the next to finish: a worker that
   * executed a call may push it after the next call (executed by the other worker) was pushed,
   * and the finisher waits for it rather than run the dones out of order. */
  uint64_t fin_assign, fin_next;
  struct htpu_call *calls;    /* live submitted calls, under q_lock */
  pthread_cond_t calls_cv;    /* a call ended (a close waits for its handle's) */
  scratch_pool scratch;       /* conversion buffers, one per call in progress on the graph */
  call_window timing;         /* recent call durations (htpu_graph_get_timing) */
  /* executeAsync (execute.c): where the runtime has it and the graph has not refused it,
   * submitted calls are handed to QNN's queue and let go of the turn at once; async_in_flight
   * of them are not notified yet (at most HTPU_ASYNC_DEPTH; a worker waits on async_cv for
   * room). Under q_lock. */
  int async;
  unsigned async_in_flight;
  pthread_cond_t async_cv;
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
  unsigned live_calls; /* submitted through it and not ended; under state->q_lock */
  atomic_int closing;  /* htpu_graph_close began: its calls are refused at their turn */
};

/* Spill-fill groups (spill_group.c), under the execute gate, exclusively. sf_choose picks c's
 * group for its load: the runtime's current one when its buffer holds both c's graphs and
 * `bytes` (a list's largest), else a new one with c first; none when sharing is off or the
 * size is unknown (c->sf_note says why). sf_make_first: joining failed, c starts its own.
 * sf_refused: the backend refused the config: sharing off for the runtime, c on its own.
 * sf_loaded: c's QNN context exists (a first context becomes the runtime's current group).
 * sf_leave: c's destroy; returns the anchor to release after the gate (NULL: none). */
void sf_choose(context_obj *c, uint64_t bytes);
void sf_make_first(context_obj *c);
void sf_refused(context_obj *c, uint32_t code);
void sf_loaded(context_obj *c);
context_obj *sf_leave(context_obj *c);

/* Cancels every submitted call of every graph open on c (context and runtime close). */
void context_cancel_calls(context_obj *c);

/* Non-owning registries (registry.c). */
int runtime_add_context(runtime_obj *rt, context_obj *c);
void runtime_remove_context(runtime_obj *rt, context_obj *c);
/* Every live context of rt deregisters its handles in the region of `fd`. Call it with the
 * execute gate held exclusively. */
void runtime_release_registrations(runtime_obj *rt, int fd);

/* Frees FastRPC memory from shared_region_alloc on rt (runtime.c): deregistered from every
 * context and taken off rt's list under the execute gate (no execute may be using a handle
 * meanwhile), then given back. Takes the gate exclusively (the caller holds no gate); behind a
 * stuck execute the free is done later by the janitor (base/janitor.h) and this returns. */
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

#endif
