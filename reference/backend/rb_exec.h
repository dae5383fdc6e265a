/*
 * rb_exec.h - what the execute files of the reference backend declare: the tensor checks
 * (tensor_check.c, layer 1 of rb_internal.h's), the graph's queue and its threads
 * (exec_queue.c, layer 4) and the execute calls (graph_exec.c, layer 6). rb_internal.h
 * includes it at its end (the types they use are there).
 */
#ifndef HTPU_RB_EXEC_H
#define HTPU_RB_EXEC_H

/* One execute's resolved buffers: checked against the graph, MEMHANDLEs pinned. */
typedef struct rb_bufs {
  uint32_t nin, nout;
  const void **inp;
  void **outp;
  rb_mem **pins;
  uint32_t multiple; /* batch multiple: k row groups of the graph's batch */
  /* per output: the caller's dimensions array, where an output with dynamic dimensions gets
   * the dims its execute produced (QnnGraph.h); NULL for the others */
  uint32_t **out_dims;
} rb_bufs;

/* ---- tensor_check.c (layer 1) ---- */
/* How a MEMHANDLE tensor's handle becomes its bytes (rb_mem_resolve), passed in so that the
 * checks below stay outside the registries they would otherwise call into. */
typedef void *(*rb_handle_resolver)(rb_context *c, const void *handle, const ref_tensor *want,
                                    rb_mem **pin, char *why, size_t whylen);
/* Checks tensor t against graph input/output i of context c, logging why it is refused.
 * *data: where its bytes are; a MEMHANDLE tensor's handle is resolved with `resolve` and pinned
 * in *pin until the execute ends. *multiple: the batch multiple its dims give (1 when they are
 * the graph's or NULL). *out_dims: an output with dynamic dimensions' dimensions array (which
 * it must have, QnnGraph.h), where the execute writes the dims it produced; else NULL. */
qnn_error_t rb_check_tensor(rb_log *log, const char *api, rb_context *c, const ref_graph *rg,
                            int is_input, uint32_t i, const qnn_tensor_t *t,
                            rb_handle_resolver resolve, const void **data, rb_mem **pin,
                            uint32_t *multiple, uint32_t **out_dims);

/* ---- exec_queue.c (layer 4) ---- */
/* A place in a graph's queue: a blocking caller's (on its stack) or an async execute's. */
struct rb_job {
  struct rb_job *next;
  bool async;
  rb_graph *g;
  rb_watch watch;
  /* async only */
  rb_bufs bufs;
  rb_prof_call prof;    /* its profile recording (prof.p NULL: none), held until notified */
  qnn_notify_fn_t notify;
  void *notify_param;
  qnn_error_t rc;       /* its result, once over */
  rb_stop queued_stop;  /* it left the queue for this stop without running */
  /* What the graph's threads do with it, set by its caller (graph_exec.c) before
   * rb_queue_async: the queue calls back up through these, never by name. */
  qnn_error_t (*run)(rb_job *j); /* the worker, once it has the graph's turn: its result */
  void (*finish)(rb_job *j);     /* the notifier, once it ran or left the queue (queued_stop):
                                    notifies, lets the call go and frees j */
};
/* Blocking execute: queues j and waits for its turn. 0: it is running now (call
 * rb_queue_done after); else the stop that ended the wait (j left the queue). */
rb_stop rb_queue_wait_turn(rb_graph *g, rb_job *j);
void rb_queue_done(rb_graph *g);
/* Async execute: waits while g's queue holds `depth` async executes (or w says stop), then
 * queues j (heap, owned by the queue from then on) and starts g's worker if needed. Returns
 * the stop that ended the wait, j not queued, or RB_STOP_NONE. *failed is set when the worker
 * thread could not be started (j not queued). */
rb_stop rb_queue_async(rb_graph *g, rb_job *j, uint32_t depth, bool *failed);
/* Stops and joins g's worker (it must be idle: no async execute pending). g_rb.lock held. */
void rb_queue_stop_worker(rb_graph *g);

/* ---- graph_exec.c (layer 6) ---- */
qnn_error_t rb_graph_execute(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t, qnn_tensor_t *,
                             uint32_t, qnn_profile_handle_t, qnn_signal_handle_t);
qnn_error_t rb_graph_execute_async(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                                   qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                                   qnn_signal_handle_t, qnn_notify_fn_t, void *);
/* Checks the tensors of an execute of graph gi of c (logging why one is refused, `api` naming
 * the call) and resolves their buffers into *x. */
qnn_error_t rb_bufs_resolve(rb_log *log, const char *api, rb_context *c, uint32_t gi,
                            const qnn_tensor_t *in, uint32_t nin, const qnn_tensor_t *out,
                            uint32_t nout, rb_bufs *x);
void rb_bufs_release(rb_bufs *x);
/* contextFree / backendFree, g_rb.lock held: when every call keeping c (or b, when c is NULL)
 * is an async call past its notification (its last steps are near) and this thread is not
 * inside one of their notifications, waits one round for them (at most 1 ms, g_rb.lock let go
 * meanwhile and held again: the caller looks its object up again) and returns true; else
 * returns false at once. */
bool rb_wait_notified_round(const rb_context *c, const rb_backend *b);
/* Runs graph gi of c on x's buffers, row group after row group, stopping between ops when w
 * says so; times the run (and, when pc has per-op arrays, each op) into pc. Returns 0,
 * 6031/6033 with *stopped set, or the failure code (logged). */
qnn_error_t rb_bufs_run(rb_log *log, const char *api, rb_context *c, uint32_t gi,
                        const rb_bufs *x, const rb_watch *w, struct rb_prof_call *pc,
                        rb_stop *stopped);

#endif /* HTPU_RB_EXEC_H */
