/*
 * call.h - a submitted call (htpu_call) as the files of exec/ that make, run and finish it
 * see it: call.c (the public API: submit, wait, result, cancel, release), call_life.c (its
 * answer decided once, done run, the core letting go) and worker.c (the graph's worker
 * threads that execute and finish calls).
 */
#ifndef HTPU_EXEC_CALL_H
#define HTPU_EXEC_CALL_H

#include "exec_internal.h"

struct htpu_call {
  atomic_uint refs;
  pthread_mutex_t m;
  pthread_cond_t cv; /* finished (CLOCK_MONOTONIC, for htpu_call_wait's limit) */
  graph_obj *g;      /* the core's reference, until call_end */
  exec_ctl ctl;
  htpu_exec_options opts;
  uint32_t n_in, n_out;
  htpu_io *io;       /* n_in + n_out: what the execute uses */
  htpu_io *user_io;  /* the caller's (copy of the arrays) */
  void *copy;        /* copy mode: the inputs' and outputs' bytes, and the output dims */
  uint32_t *user_dims; /* copy mode: the caller's opts.output_dims (the call writes its own) */
  int copy_mode;
  exec_staged *stage; /* its pipeline, prepared at submit; NULL once finished or discarded */
  int exec_rc;        /* the execute's answer, and its message (made on the executing worker) */
  uint32_t exec_qnn;  /* and its QNN code */
  char exec_msg[1024];
  htpu_call *fin_next; /* the graph's finishing queue, under s->q_lock */
  /* In QNN's async queue (execute.c, "executeAsync"), under s->q_lock: the worker that handed
   * it over is done with it, and its notification came. Whichever is second puts it in the
   * finishing queue, so the worker's last touch (its turn's release) is before the finish. */
  int handed, notified;
  htpu_call_done_fn done;
  void *done_arg;
  int completed;     /* its rc is decided (under m) */
  int finished;      /* done has returned */
  int ended;         /* the core is done with it */
  int rc;
  uint32_t qnn_code; /* of the failure, with msg */
  htpu_exec_stats stats;
  char msg[1024];
  /* A profiled call's events (htpu_call_take_profile), read on the worker before done; or why
   * they could not be (profile_rc, profile_msg). Under m. */
  htpu_profile *profile;
  int profile_rc;
  char profile_msg[1024];
  htpu_call *prev, *next; /* the graph's live calls, under s->q_lock */
};

/* ---- call_life.c ---- */
/* Drops one of the call's two references (the caller's, the core's); the last frees it. */
void call_unref(htpu_call *call);
/* Decides the call's rc once (later answers are discarded), copies a copy-mode call's outputs
 * back when from_worker, runs done. */
void call_complete(htpu_call *call, int rc, const htpu_exec_stats *st, int from_worker,
                   const char *msg, uint32_t qnn_code);
/* The core lets go of the call (after done): timer, stage, graph reference, live list. */
void call_end(htpu_call *call);
/* For the waiting list (turn.h, ctl_call_ops): removed while waiting; ended early (copy mode);
 * whether it works on copies. */
void calls_end_waiting(htpu_call *call, int rc);
void calls_end_early(htpu_call *call, int rc);
int calls_copy_mode(const htpu_call *call);
/* Under q_lock: the call's execute ended; a worker finishes it (wake: wake one up). */
void fin_push_locked(graph_state *s, htpu_call *call, int wake);
/* A worker with the call's turn: its execute (1: handed to QNN's async queue). */
int call_execute(htpu_call *call);
/* A worker, one call at a time: outputs, stats, done, then the core lets go. */
void call_finish(htpu_call *call);

/* ---- worker.c ---- */
/* 1 on a worker thread of s (it takes a call granted to the workers without being woken). */
int calls_on_worker(const graph_state *s);
/* Under q_lock: `want` (1 or CALL_WORKERS) of the graph's workers running (exited ones joined,
 * missing ones started). 0, or HTPU_ENOMEM (error set) when not one could start. */
int start_worker_locked(graph_state *s, int want);

#endif
