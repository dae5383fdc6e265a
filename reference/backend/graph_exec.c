/*
 * graph_exec.c - graphExecute and graphExecuteAsync: the checks the real backend makes, the
 * graph's queue (exec_queue.c), signals (signal.c), profiles (profile.c), batch multiples, then
 * the interpreter. The graph's queue is below this file and calls back up only through the
 * run/finish functions an async job carries.
 */
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"
#include "rb_profile.h"

void rb_bufs_release(rb_bufs *x) {
  if (x->pins)
    for (uint32_t i = 0; i < x->nin + x->nout; i++) rb_mem_unpin(x->pins[i]);
  free(x->pins);
  free(x->inp);
  free(x->outp);
  free(x->out_dims);
  memset(x, 0, sizeof(*x));
}

/* All tensors must carry one batch multiple (QnnGraph.h), which the backend and the graph
 * must accept. */
static qnn_error_t check_multiple(rb_log *log, const char *api, const ref_model *m,
                                  const ref_graph *rg, const uint32_t *mult, uint32_t n,
                                  uint32_t *out) {
  *out = mult[0];
  for (uint32_t i = 1; i < n; i++) {
    if (mult[i] == mult[0]) continue;
    uint32_t a = i < rg->num_inputs ? rg->inputs[i] : rg->outputs[i - rg->num_inputs];
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': tensor '%s' has batch multiple %u, "
            "input 0 has %u: all inputs and outputs must have the same batch multiple", api,
            rg->name, m->tensors[a].name, mult[i], mult[0]);
    return QNN_GRAPH_ERROR_INVALID_TENSOR;
  }
  if (*out == 1) return QNN_SUCCESS;
  if (rb_cap(QNN_PROPERTY_GRAPH_SUPPORT_BATCH_MULTIPLE) != QNN_SUCCESS) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': batch multiple %u: this backend does "
            "not support batch multiples (capability 312 off)", api, rg->name, *out);
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  int dynamic = 0;
  for (uint32_t i = 0; i < rg->num_outputs; i++)
    dynamic |= m->tensors[rg->outputs[i]].dynamic_mask != 0;
  if ((rg->flags & REF_GRAPH_NO_BATCH_MULTIPLE) || dynamic) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': batch multiple %u: this graph does not "
            "accept batch multiples (%s); execute one batch at a time", api, rg->name, *out,
            dynamic ? "an output's dims[0] is dynamic, not a batch" : "its ops fix the batch "
            "dimension");
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  return QNN_SUCCESS;
}

qnn_error_t rb_bufs_resolve(rb_log *log, const char *api, rb_context *c, uint32_t gi,
                            const qnn_tensor_t *in, uint32_t nin, const qnn_tensor_t *out,
                            uint32_t nout, rb_bufs *x) {
  const ref_model *m = c->model;
  const ref_graph *rg = &m->graphs[gi];
  memset(x, 0, sizeof(*x));
  if (nin != rg->num_inputs || nout != rg->num_outputs) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s' takes %u input(s) and %u output(s), got "
            "%u and %u", api, rg->name, rg->num_inputs, rg->num_outputs, nin, nout);
    return QNN_GRAPH_ERROR_INVALID_TENSOR;
  }
  if ((nin && !in) || (nout && !out)) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': the %s array is NULL", api, rg->name,
            nin && !in ? "input" : "output");
    return QNN_GRAPH_ERROR_INVALID_ARGUMENT;
  }
  x->nin = nin;
  x->nout = nout;
  x->inp = calloc(nin + 1, sizeof(*x->inp));
  x->outp = calloc(nout + 1, sizeof(*x->outp));
  x->pins = calloc(nin + nout + 1, sizeof(*x->pins));
  x->out_dims = calloc(nout + 1, sizeof(*x->out_dims));
  uint32_t *mult = calloc(nin + nout + 1, sizeof(*mult));
  qnn_error_t rc = x->inp && x->outp && x->pins && x->out_dims && mult ? QNN_SUCCESS
                                                                       : QNN_COMMON_ERROR_MEM_ALLOC;
  uint32_t *no_dims = NULL; /* inputs: never written */
  for (uint32_t i = 0; rc == QNN_SUCCESS && i < nin; i++)
    rc = rb_check_tensor(log, api, c, rg, 1, i, &in[i], rb_mem_resolve, &x->inp[i], &x->pins[i],
                         &mult[i], &no_dims);
  for (uint32_t i = 0; rc == QNN_SUCCESS && i < nout; i++) {
    const void *p = NULL;
    rc = rb_check_tensor(log, api, c, rg, 0, i, &out[i], rb_mem_resolve, &p, &x->pins[nin + i],
                         &mult[nin + i], &x->out_dims[i]);
    x->outp[i] = (void *)(uintptr_t)p; /* output buffers are the caller's writable memory */
  }
  if (rc == QNN_SUCCESS) rc = check_multiple(log, api, m, rg, mult, nin + nout, &x->multiple);
  free(mult);
  if (rc != QNN_SUCCESS) rb_bufs_release(x);
  return rc;
}

/* Asked by the interpreter before each op: the "graphOp" latency and rules, then the
 * call's signal. */
typedef struct op_hook_ctx {
  rb_backend *b;
  const rb_watch *w;
  rb_stop stopped;
  uint32_t code;
} op_hook_ctx;

static int op_hook(void *arg) {
  op_hook_ctx *o = arg;
  o->code = rb_fault_watched(o->b, FR_GRAPH_OP, o->b->log, o->w, &o->stopped);
  return o->stopped != RB_STOP_NONE || o->code != 0;
}

qnn_error_t rb_bufs_run(rb_log *log, const char *api, rb_context *c, uint32_t gi,
                        const rb_bufs *x, const rb_watch *w, rb_prof_call *pc,
                        rb_stop *stopped) {
  const ref_model *m = c->model;
  const ref_graph *rg = &m->graphs[gi];
  *stopped = RB_STOP_NONE;
  /* one row group: the buffers as they are; k: each group's place in them */
  const void **in = x->multiple > 1 ? calloc(x->nin + 1, sizeof(*in)) : x->inp;
  void **out = x->multiple > 1 ? calloc(x->nout + 1, sizeof(*out)) : x->outp;
  uint32_t(*dims)[REF_MAX_RANK] = calloc(x->nout + 1, sizeof(*dims));
  qnn_error_t rc = in && out && dims ? QNN_SUCCESS : QNN_COMMON_ERROR_MEM_ALLOC;
  bool hook_needed = (w && w->sig) || rb_op_faults_armed(c->backend);
  uint64_t *op_t0 = pc && pc->num_ops ? pc->op_t0 : NULL, *op_t1 = op_t0 ? pc->op_t1 : NULL;
  if (pc) pc->t_checked = pc->t_run0 = rb_mono_ns();
  /* A batch multiple k runs the graph on each of the k row groups: what a graph whose ops
   * take the batch dimension as it comes computes. Stops are checked before every op. */
  for (uint32_t r = 0; rc == QNN_SUCCESS && r < x->multiple; r++) {
    for (uint32_t i = 0; x->multiple > 1 && i < x->nin; i++)
      in[i] = (const char *)x->inp[i] + (size_t)r * m->tensors[rg->inputs[i]].nbytes;
    for (uint32_t i = 0; x->multiple > 1 && i < x->nout; i++)
      out[i] = (char *)x->outp[i] + (size_t)r * m->tensors[rg->outputs[i]].nbytes;
    char err[256];
    op_hook_ctx hook = {c->backend, w, RB_STOP_NONE, 0};
    uint64_t group_t0 = op_t0 ? rb_mono_ns() : 0;
    int run = ref_graph_run_dims(m, gi, in, out, hook_needed ? op_hook : NULL, &hook, op_t0,
                                 op_t1, dims, err, sizeof(err));
    if (run == 0 && op_t0) rb_profile_row_group(pc, group_t0);
    /* the dims each output came out in, where the caller's tensor takes them (dynamic) */
    for (uint32_t i = 0; run == 0 && dims && i < x->nout; i++)
      if (x->out_dims[i])
        memcpy(x->out_dims[i], dims[i], m->tensors[rg->outputs[i]].rank * sizeof(uint32_t));
    if (run == REF_RUN_STOPPED && hook.stopped != RB_STOP_NONE) {
      *stopped = hook.stopped;
      rc = QNN_GRAPH_ERROR_ABORTED; /* the caller's graph_stopped gives the code */
    } else if (run == REF_RUN_STOPPED) {
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s' failed: %s (graphOp fault rule)", api,
              rg->name, err);
      rc = hook.code;
    } else if (run != 0) {
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s' failed: %s", api, rg->name, err);
      rc = QNN_COMMON_ERROR_GENERAL;
    }
  }
  if (pc) pc->t_run1 = rb_mono_ns();
  free(dims);
  if (x->multiple > 1) {
    free(in);
    free(out);
  }
  return rc;
}

/* A watched call of g stopped (`where`: "during ..."): logs why, counts it and returns the
 * graph code, 6031 aborted or 6033 timed out. */
static qnn_error_t graph_stopped(rb_graph *g, const char *api, const rb_watch *w, rb_stop why,
                                 const char *where) {
  rb_log *log = g->ctx->backend->log;
  const char *name = g->ctx->model->graphs[g->index].name;
  rb_count_stop(why);
  if (why == RB_STOP_TIMEOUT) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': timed out %s: its signal's %llu us, "
            "counted from the call's start, ran out", api, name, where,
            (unsigned long long)((w->deadline_ns - w->start_ns) / 1000u));
    return QNN_GRAPH_ERROR_TIMED_OUT;
  }
  rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': aborted %s (signalTrigger on its signal)",
          api, name, where);
  return QNN_GRAPH_ERROR_ABORTED;
}

static qnn_error_t run_turn(rb_graph *g, const char *api, const qnn_tensor_t *in, uint32_t nin,
                            const qnn_tensor_t *out, uint32_t nout, const rb_bufs *pre,
                            const rb_watch *w, rb_prof_call *pc);

/* Runs one execute of g (blocking or from the worker) once it has its turn: stale check,
 * fault rules and latency, then the graph on pre's buffers (async, resolved at the call) or
 * on in/out resolved now (blocking), timing it into pc (NULL: not profiled). Returns the
 * call's QNN code (logged). */
static qnn_error_t execute_turn(rb_graph *g, const char *api, const qnn_tensor_t *in,
                                uint32_t nin, const qnn_tensor_t *out, uint32_t nout,
                                const rb_bufs *pre, const rb_watch *w, rb_prof_call *pc) {
  rb_context *c = g->ctx;
  rb_backend *b = c->backend;
  const char *name = c->model->graphs[g->index].name;
  if (pc) pc->t_locked = rb_mono_ns(); /* the graph's turn: the queue wait is over */
  if (atomic_load(&c->stale)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': context 0x%lx was lost in a DSP "
            "subsystem restart; free it and create a new one", api, name,
            (unsigned long)c->handle);
    return QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  }
  /* The weights it is about to read, where they are the caller's (a persistent binary). */
  qnn_error_t rc = rb_persist_check(c, (int)g->index, api);
  if (rc != QNN_SUCCESS) return rc;
  char why[320];
  if (rb_sf_enter(c, why, sizeof why)) /* from here to the end it uses its spill-fill buffer */
    rb_violation(b->log, "%s: graph '%s' of %s", api, name, why);
  rc = run_turn(g, api, in, nin, out, nout, pre, w, pc);
  rb_sf_leave(c);
  return rc;
}

/* execute_turn once the graph may run: fault rules and latency, then the graph. */
static qnn_error_t run_turn(rb_graph *g, const char *api, const qnn_tensor_t *in, uint32_t nin,
                            const qnn_tensor_t *out, uint32_t nout, const rb_bufs *pre,
                            const rb_watch *w, rb_prof_call *pc) {
  rb_context *c = g->ctx;
  rb_backend *b = c->backend;
  const char *name = c->model->graphs[g->index].name;
  /* An injected failure leaves the graph untouched (and, unless the rule says ssr, usable:
   * a recovered DSP restart). Its latency ends early for a stop. */
  rb_stop st = RB_STOP_NONE;
  qnn_error_t rc = rb_fault_watched(b, FR_GRAPH_EXECUTE, b->log, w, &st);
  if (st != RB_STOP_NONE) return graph_stopped(g, api, w, st, "during its injected latency");
  if (rc != QNN_SUCCESS) return rc;
  uint32_t lat = rb_graph_latency(name); /* this graph's alone (htpu_ref_set_graph_latency) */
  if (lat && w && w->sig) st = rb_watch_sleep(w, lat);
  else if (lat) usleep(lat);
  if (st != RB_STOP_NONE) return graph_stopped(g, api, w, st, "during its injected latency");
  rb_bufs own;
  const rb_bufs *x = pre;
  if (!x) {
    if ((rc = rb_bufs_resolve(b->log, api, c, g->index, in, nin, out, nout, &own)) != 0)
      return rc;
    x = &own;
  }
  if (getenv("HTPU_REF_SKIP_OUTPUTS")) {
    /* a backend that reports success without writing its outputs (tests that a client never
     * shows memory nobody wrote) */
    rb_logf(b->log, QNN_LOG_LEVEL_WARN, "%s: graph '%s': outputs not written "
            "(HTPU_REF_SKIP_OUTPUTS)", api, name);
    if (pc) pc->t_checked = pc->t_run0 = pc->t_run1 = rb_mono_ns(); /* nothing ran */
  } else {
    rc = rb_bufs_run(b->log, api, c, g->index, x, w, pc, &st);
    if (st != RB_STOP_NONE) rc = graph_stopped(g, api, w, st, "between ops");
  }
  if (rc == QNN_SUCCESS) {
    rb_count_execute();
    if (x->multiple > 1) rb_count_batch_multiple();
    atomic_fetch_add(&g->executes_done, 1);
    atomic_store(&g->last_batch_multiple, x->multiple);
  }
  if (!pre) rb_bufs_release(&own);
  return rc;
}

/* Registers a call on g under the registry lock, so contextFree/backendFree see it: released
 * in child-to-parent order (release_call). */
static void hold_call(rb_graph *g) {
  atomic_fetch_add(&g->ctx->executing, 1);
  atomic_fetch_add(&g->ctx->backend->busy, 1);
  rb_exec_in_flight_add(1);
}

/* Once c->executing drops, contextFree may free g and c; once the count of calls in flight
 * drops, neither contextFree nor a load sees this call; then the signal (the backend's) is let
 * go, so a trigger returns when the context can be freed without a complaint; once b->busy
 * drops, backendFree (and the exit-time destructor, teardown.c) may free b and its signals. */
static void release_call(rb_context *c, rb_backend *b, rb_watch *w) {
  atomic_fetch_sub(&c->executing, 1);
  rb_exec_in_flight_add(-1);
  rb_signal_release(w);
  atomic_fetch_sub(&b->busy, 1);
}

/* The signal passed to an execute: capability, handle, not in use. g_rb.lock held. */
static qnn_error_t take_signal(rb_graph *g, const char *api, uint32_t cap, const void *signal,
                               uint64_t start, rb_watch *w) {
  rb_backend *b = g->ctx->backend;
  const char *name = g->ctx->model->graphs[g->index].name;
  w->sig = NULL;
  if (signal && rb_cap(cap) != QNN_SUCCESS) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': signals are not supported on %s "
            "(capability %u off)", api, name, api, cap);
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  int r = rb_signal_acquire(b, signal, api, start, w);
  if (r == -1) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': unknown signal handle 0x%lx", api,
            name, (unsigned long)(uintptr_t)signal);
    return QNN_GRAPH_ERROR_INVALID_HANDLE;
  }
  if (r == -2) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': signal 0x%lx is in use by another "
            "call (one signal per call in flight)", api, name, (unsigned long)(uintptr_t)signal);
    return QNN_GRAPH_ERROR_SIGNAL_IN_USE;
  }
  return QNN_SUCCESS;
}

qnn_error_t rb_graph_execute(qnn_graph_handle_t gh, const qnn_tensor_t *inputs, uint32_t nin,
                             qnn_tensor_t *outputs, uint32_t nout, qnn_profile_handle_t profile,
                             qnn_signal_handle_t signal) {
  uint64_t start = rb_mono_ns(); /* a timeout counts from here, queue wait included */
  pthread_mutex_lock(&g_rb.lock);
  rb_graph *g = rb_find_graph(gh);
  if (!g) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_GRAPH_ERROR_INVALID_HANDLE;
  }
  rb_context *c = g->ctx;
  rb_backend *b = c->backend;
  rb_job j;
  memset(&j, 0, sizeof(j));
  j.g = g;
  qnn_error_t rc =
      take_signal(g, "graphExecute", QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_SIGNAL, signal, start,
                  &j.watch);
  if (rc != QNN_SUCCESS) {
    pthread_mutex_unlock(&g_rb.lock);
    return rc;
  }
  hold_call(g);
  int concurrent = atomic_fetch_add(&g->in_flight, 1) > 0;
  pthread_mutex_unlock(&g_rb.lock);

  const char *name = c->model->graphs[g->index].name;
  if (concurrent)
    rb_violation(b->log, "graphExecute of graph '%s' while another graphExecute of the same "
                 "graph is in progress (QNN queues them; callers should serialize per graph)",
                 name);
  /* The profile handle serves this call alone, from here to its return, queue wait included
   * (rb_profile.h): a second call passing it gets 6032 at once. */
  rb_prof_call pc;
  rc = rb_profile_begin(b, profile, c->model->graphs[g->index].num_ops,
                        QNN_GRAPH_ERROR_INVALID_ARGUMENT, QNN_GRAPH_ERROR_PROFILE_IN_USE, &pc);
  if (rc == QNN_SUCCESS) {
    rb_stop st = rb_queue_wait_turn(g, &j);
    if (st != RB_STOP_NONE) {
      rc = graph_stopped(g, "graphExecute", &j.watch, st, "while waiting in the graph's queue");
    } else {
      rc = execute_turn(g, "graphExecute", inputs, nin, outputs, nout, NULL, &j.watch, &pc);
      rb_queue_done(g);
    }
  }
  /* What ran (nothing for a failed, aborted or timed-out call), and the handle is free again:
   * before the backend is let go, since backendFree frees its profiles. */
  rb_profile_end_execute(&pc, c->model, g->index, rc);
  atomic_fetch_sub(&g->in_flight, 1);
  release_call(c, b, &j.watch);
  return rc;
}

/* What the graph's threads do with an async job (exec_queue.c): the worker runs it, the
 * notifier finishes it. */
static qnn_error_t async_run(rb_job *j);
static void async_finish(rb_job *j);

qnn_error_t rb_graph_execute_async(qnn_graph_handle_t gh, const qnn_tensor_t *inputs,
                                   uint32_t nin, qnn_tensor_t *outputs, uint32_t nout,
                                   qnn_profile_handle_t profile, qnn_signal_handle_t signal,
                                   qnn_notify_fn_t notify, void *notify_param) {
  static const char api[] = "graphExecuteAsync";
  uint64_t start = rb_mono_ns(); /* a timeout counts from here until the notification */
  pthread_mutex_lock(&g_rb.lock);
  rb_graph *g = rb_find_graph(gh);
  if (rb_cap(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION) != QNN_SUCCESS) {
    if (g)
      rb_logf(g->ctx->backend->log, QNN_LOG_LEVEL_ERROR, "graphExecuteAsync is not supported "
              "by this backend (capability 304 off): use graphExecute");
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  if (!g) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_GRAPH_ERROR_INVALID_HANDLE;
  }
  rb_context *c = g->ctx;
  rb_backend *b = c->backend;
  const char *name = c->model->graphs[g->index].name;
  rb_job *j = calloc(1, sizeof(*j));
  if (!j) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_COMMON_ERROR_MEM_ALLOC;
  }
  j->async = true;
  j->g = g;
  j->run = async_run;
  j->finish = async_finish;
  j->notify = notify;
  j->notify_param = notify_param;
  qnn_error_t rc = take_signal(g, api, QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_ASYNC_SIGNAL, signal,
                               start, &j->watch);
  if (rc != QNN_SUCCESS) {
    pthread_mutex_unlock(&g_rb.lock);
    free(j);
    return rc;
  }
  hold_call(g);
  uint32_t depth = c->async_depth;
  pthread_mutex_unlock(&g_rb.lock);

  /* QnnGraph.h leaves one profile handle in two enqueued executes undefined; here the second
   * gets 6032 at the call. The handle is held until the notification. */
  rc = rb_profile_begin(b, profile, c->model->graphs[g->index].num_ops,
                        QNN_GRAPH_ERROR_INVALID_ARGUMENT, QNN_GRAPH_ERROR_PROFILE_IN_USE,
                        &j->prof);
  if (rc == QNN_SUCCESS && atomic_load(&c->stale)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': context 0x%lx was lost in a DSP "
            "subsystem restart; free it and create a new one", api, name,
            (unsigned long)c->handle);
    rc = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  } else if (rc == QNN_SUCCESS) {
    /* checked at the call, so that a refused call fails here and is never notified */
    rc = rb_bufs_resolve(b->log, api, c, g->index, inputs, nin, outputs, nout, &j->bufs);
  }
  if (rc == QNN_SUCCESS) {
    bool failed = false;
    rb_stop st = rb_queue_async(g, j, depth, &failed);
    if (st != RB_STOP_NONE) {
      rc = graph_stopped(g, api, &j->watch, st, "while waiting for room in the graph's queue");
    } else if (failed) {
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: graph '%s': cannot start the thread that runs "
              "async executes", api, name);
      rc = QNN_COMMON_ERROR_SYSTEM;
    } else {
      return QNN_SUCCESS; /* the queue owns j; async_finish ends the call */
    }
  }
  rb_profile_end_execute(&j->prof, c->model, g->index, rc); /* a refused call: nothing */
  rb_bufs_release(&j->bufs);
  release_call(c, b, &j->watch);
  free(j);
  return rc;
}

/* The context and backend whose async call this thread is notifying (NULL: none). */
static _Thread_local const rb_context *tl_notifying_ctx;
static _Thread_local const rb_backend *tl_notifying_backend;

static bool context_only_notified_locked(const rb_context *c) {
  return c->notifying > 0 && c->notifying == atomic_load(&c->executing) && tl_notifying_ctx != c;
}

static bool backend_only_notified_locked(const rb_backend *b) {
  return b->notifying > 0 && b->notifying == atomic_load(&b->busy) && tl_notifying_backend != b;
}

bool rb_wait_notified_round(const rb_context *c, const rb_backend *b) {
  pthread_mutex_lock(&g_sched.lock);
  bool wait = c ? context_only_notified_locked(c) : backend_only_notified_locked(b);
  if (wait) {
    pthread_mutex_unlock(&g_rb.lock);
    rb_sched_wait_locked(NULL, rb_mono_ns() + 1000000u);
  }
  pthread_mutex_unlock(&g_sched.lock);
  if (wait) pthread_mutex_lock(&g_rb.lock);
  return wait;
}

/* The async job is over with rc: releases its buffers, records and releases its profile,
 * releases its signal, calls its notify function (this thread: the graph's notifier), then
 * lets the context go. */
static void async_complete(rb_job *j, qnn_error_t rc) {
  rb_graph *g = j->g;
  rb_context *c = g->ctx;
  rb_backend *b = c->backend;
  rb_bufs_release(&j->bufs);
  /* The profile holds what ran and the signal is idle before the notification, so the
   * callback may read, reuse or free either. Nothing runs on the DSP any more: a load after
   * the notification is not one during an execute. */
  rb_profile_end_execute(&j->prof, c->model, g->index, rc);
  rb_signal_release(&j->watch);
  rb_exec_in_flight_add(-1);
  /* From here the call only notifies and lets go: contextFree and backendFree from another
   * thread (the client woken by the notification) wait for that instead of refusing. From
   * inside the notification the call is still pending. */
  pthread_mutex_lock(&g_sched.lock);
  c->notifying++;
  b->notifying++;
  /* notified from here on (the control API's count): a client woken by the notification reads
   * 0 for its call, not a count the rest of this function has yet to lower */
  g->async_pending--;
  pthread_mutex_unlock(&g_sched.lock);
  if (j->notify) {
    qnn_notify_status_t status = {rc};
    tl_notifying_ctx = c;
    tl_notifying_backend = b;
    j->notify(j->notify_param, status);
    tl_notifying_ctx = NULL;
    tl_notifying_backend = NULL;
  }
  rb_count_async_notified();
  free(j);
  /* Only now is the call over for contextFree, backendFree and the exit-time destructor: all
   * of it under g_sched.lock, where a waiting free reads the counts, so the last touch of c
   * and b is before the free can go on. */
  pthread_mutex_lock(&g_sched.lock);
  atomic_fetch_sub(&c->executing, 1);
  c->notifying--;
  atomic_fetch_sub(&b->busy, 1);
  b->notifying--;
  pthread_cond_broadcast(&g_sched.cond);
  pthread_mutex_unlock(&g_sched.lock);
}

static qnn_error_t async_run(rb_job *j) {
  return execute_turn(j->g, "graphExecuteAsync", NULL, 0, NULL, 0, &j->bufs, &j->watch,
                      &j->prof);
}

static void async_finish(rb_job *j) {
  if (j->queued_stop != RB_STOP_NONE)
    j->rc = graph_stopped(j->g, "graphExecuteAsync", &j->watch, j->queued_stop,
                          "while waiting in the graph's queue");
  async_complete(j, j->rc);
}
