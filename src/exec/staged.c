/*
 * staged.c - a submitted call's pipeline in stages (exec_internal.h; the calls themselves are
 * call.c's): its inputs converted at its submit and its outputs after it let go of the graph,
 * on whichever thread, so neither conversion runs while the call holds the graph's turn; and
 * where the runtime has graphExecuteAsync, the call handed to QNN's queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "batch_multiple.h"
#include "exec_internal.h"
#include "loader/loader.h"

/* A submitted call's pipeline in stages (call.c): the same steps as exec_run(), but the call's
 * inputs are converted at its submit and its outputs after it let go of the graph, on
 * whichever thread, so neither conversion runs while the call holds the graph's turn. */
struct exec_staged {
  exec_call x;
  htpu_decline declined; /* never set: submitted calls are not no-wait calls */
  uint64_t t_start;
};

int exec_stage_prepare(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
                       uint32_t n_out, const htpu_exec_options *opts, exec_ctl *ctl,
                       uint64_t t_start, exec_staged **out) {
  *out = NULL;
  exec_staged *st = malloc(sizeof *st);
  if (!st) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  exec_call_init(&st->x, g, inputs, n_in, outputs, n_out, opts, &st->declined);
  st->declined = HTPU_DECLINE_NONE;
  st->t_start = t_start;
  st->x.ctl = ctl;
  int rc = 0;
  if ((unsigned)st->x.vote >= HTPU_PERF_PROFILE_COUNT)
    rc = htpu_set_error(HTPU_EINVAL, 0, "perf_profile %d is out of range", (int)st->x.vote);
  if (!rc) rc = exec_plan(&st->x);
  if (!rc && opts && opts->profile_level) rc = exec_begin_profile(&st->x);
  if (!rc) rc = exec_convert_inputs(&st->x);
  if (rc) {
    profile_call_end(st->x.rt, &st->x.prof, 0, "", &(htpu_profile *){NULL});
    exec_finish_call(&st->x, NULL, t_start);
    free(st);
    return rc;
  }
  *out = st;
  return 0;
}

int exec_stage_execute(exec_staged *st) { return exec_voted(&st->x); }

/* ---- executeAsync ----------------------------------------------------------------------------
 * Where the runtime has it (htpu_runtime_info.execute_async), a submitted call of one row group
 * is handed to QNN's queue for the graph and lets go of its turn at once: the next call is
 * handed over while this one runs, and QNN runs them in FIFO order (QnnGraph.h: one queue,
 * shared with graphExecute). Until its notification the call holds the gate (shared: no load,
 * free or recovery meanwhile), its perf vote and its buffers. At most HTPU_ASYNC_DEPTH calls
 * of a graph are in QNN's queue; the others wait in the graph's own list, where priorities,
 * deadlines and cancels act. graphExecuteAsync always gets a NULL signal (309, which would allow
 * one, is never asked), so calls on this path are in copy mode (call.c): a deadline or cancel
 * ends them on the host while QNN's execute runs on into the call's copies.
 * Anything else (k row groups) runs synchronously on the worker, and a graph whose
 * graphExecuteAsync refuses (1000, 6004) gets graphExecute from then on. */


/* Under the turn: hands the call to QNN's queue. 0 (the notification will come), or what the
 * call's execute answered at once: an error, EXEC_RESTARTED, or EXEC_SYNC (run it with
 * graphExecute). */
static int enqueue_once(exec_call *x, qnn_notify_fn_t notify, void *param) {
  context_obj *c = x->c;
  graph_state *s = x->s;
  x->mark = qnn_log_mark();
  if (!exec_enter_gate(x)) return exec_stopped_at(x, AT_GATE);
  if (c->dead) {
    exec_leave_gate(x);
    return htpu_set_error(HTPU_EDEVICE_RESET, 0,
                          "graph '%s': the DSP restarted and this model could not be recovered; "
                          "close it and load it again",
                          x->gi->name);
  }
  x->generation = c->generation;
  if (atomic_load(&c->stale)) { /* a recovery was left unfinished: this call goes on with it */
    exec_leave_gate(x);
    return EXEC_RESTARTED;
  }
  exec_bind_buffers(x); /* a waiting call registers what it needs: never declines */
  if (ctl_why(x->ctl) != REASON_NONE) {
    exec_leave_gate(x);
    return exec_stopped(x);
  }
  STAT_ADD(executes_in_flight, 1);
  pthread_mutex_lock(&s->q_lock);
  s->async_in_flight++;
  x->ctl->enqueued = 1;
  pthread_mutex_unlock(&s->q_lock);
  atomic_store(&x->ctl->reached_qnn, 1);
  x->enqueued_ns = x->exec_start_ns = x->prof.exec_start_ns = htpu_now_ns();
  qnn_error_t e = x->rt->backend_lib.graph_execute_async(s->qnn, x->tensors, x->n_in,
                                                         x->tensors + x->n_in, x->n_out,
                                                         x->prof.handle, NULL, notify, param);
  if (e == QNN_SUCCESS) return 0; /* x is the notification's from here */
  /* Refused at the call: never notified. */
  pthread_mutex_lock(&s->q_lock);
  s->async_in_flight--;
  x->ctl->enqueued = 0;
  pthread_mutex_unlock(&s->q_lock);
  STAT_SUB(executes_in_flight, 1);
  exec_leave_gate(x);
  /* Not supported (UNSUPPORTED_FEATURE is 1000): remembered, graphExecute from now on. A full
   * queue (which the header also says blocks instead): this call waits in graphExecute. */
  if (QNN_ERROR_CODE(e) == QNN_COMMON_ERROR_NOT_SUPPORTED) {
    pthread_mutex_lock(&s->q_lock);
    s->async = 0;
    pthread_mutex_unlock(&s->q_lock);
    return EXEC_SYNC;
  }
  if (QNN_ERROR_CODE(e) == QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL) return EXEC_SYNC;
  x->ran = 1;
  x->executes++;
  return exec_answer(x, e);
}

int exec_stage_run(exec_staged *st, qnn_notify_fn_t notify, void *param) {
  exec_call *x = &st->x;
  graph_state *s = x->s;
  pthread_mutex_lock(&s->q_lock);
  int async = s->async && x->rows == 1;
  pthread_mutex_unlock(&s->q_lock);
  if (!async) return exec_voted(x);
  (void)perf_call_enter(&x->rt->perf, x->vote);
  htpu_clear_error();
  int rc = exec_lock_graph(x); /* granted before it reached the worker */
  if (rc == TURN_TAKEN && x->recover_due) {
    /* A DSP restart notified for its last hand-over: the context is stale until recovered
     * (a no-op where another call recovered it since). */
    x->recover_due = 0;
    x->restarts++;
    rc = exec_recover(x, x->generation);
    if (rc) exec_unlock_graph(x);
  }
  if (rc != TURN_TAKEN) {
    perf_call_leave(&x->rt->perf, x->vote);
    return rc;
  }
  /* Room in QNN's queue (a stop ends the wait: the timer wakes it). */
  pthread_mutex_lock(&s->q_lock);
  while (s->async_in_flight >= HTPU_ASYNC_DEPTH && ctl_why(x->ctl) == REASON_NONE)
    pthread_cond_wait(&s->async_cv, &s->q_lock);
  pthread_mutex_unlock(&s->q_lock);
  rc = enqueue_once(x, notify, param);
  if (rc == 0) {
    /* Still a contender until notified: a no-wait call's first look sees the graph busy. */
    atomic_fetch_add(&s->contenders, 1);
    exec_unlock_graph(x); /* the ctl is the call's: alive until its notification is handled */
    return EXEC_PENDING;
  }
  /* Not queued: the call runs here with graphExecute, a restart recovered first. */
  uint64_t t_locked = htpu_now_ns();
  if (rc == EXEC_RESTARTED) { /* refused at the call: a restart like graphExecute's */
    rc = exec_recover_for_retry(x, x->restarts, x->generation);
    if (!rc) rc = exec_attempts(x, ++x->restarts);
  } else if (rc == EXEC_SYNC) {
    htpu_clear_error();
    rc = exec_attempts(x, x->restarts);
  }
  if (x->ran && !x->prof.handle) /* a profiled call stays out of the window (execute_locked) */
    window_record(&s->timing, x->quant_ns + (htpu_now_ns() - t_locked));
  exec_unlock_graph(x);
  perf_call_leave(&x->rt->perf, x->vote);
  return rc;
}

int exec_stage_notified(exec_staged *st, qnn_error_t e) {
  exec_call *x = &st->x;
  graph_state *s = x->s;
  x->exec_ns = htpu_now_ns() - x->enqueued_ns; /* its time in QNN's queue included */
  x->ran = 1;
  x->executes++;
  if (!x->prof.handle) window_record(&s->timing, x->quant_ns + x->exec_ns);
  STAT_SUB(executes_in_flight, 1);
  exec_leave_gate(x);
  perf_call_leave(&x->rt->perf, x->vote);
  pthread_mutex_lock(&s->q_lock);
  s->async_in_flight--;
  x->ctl->enqueued = 0;
  pthread_cond_signal(&s->async_cv);
  pthread_mutex_unlock(&s->q_lock);
  atomic_fetch_sub(&s->contenders, 1);
  int rc = exec_answer(x, e);
  if (rc != EXEC_RESTARTED) return rc;
  if (x->restarts < x->rt->recovery_retries) {
    x->recover_due = 1;
    return EXEC_RESTARTED; /* queued again: its next turn recovers the context and runs it */
  }
  const uint32_t code = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  STAT_ADD(recovery_failures, 1);
  return htpu_set_error(HTPU_EDEVICE_RESET, code,
                        "executing graph '%s': the DSP restarted again after %u recover%s: QNN "
                        "error %u (%s)",
                        x->gi->name, x->restarts, x->restarts == 1 ? "y" : "ies", code,
                        htpu_qnn_error_name(code));
}

int exec_stage_finish(exec_staged *st, int rc, htpu_exec_stats *stats, htpu_profile **profile,
                      int *profile_rc) {
  *profile = NULL;
  *profile_rc = 0;
  if (!rc) rc = exec_convert_outputs(&st->x);
  if (st->x.prof.handle) {
    /* Read here, on the worker, before the call's done runs; a failed read is the profile's
     * (*profile_rc, its message the last error), never the call's. */
    *profile_rc = exec_finish_profile(&st->x, rc, st->t_start, profile);
  }
  exec_finish_call(&st->x, stats, st->t_start);
  free(st);
  int ran = rc != HTPU_ECANCELLED && rc != HTPU_ETIMEDOUT;
  if (ran) STAT_ADD(executes, 1);
  if (rc && ran) STAT_ADD(execute_errors, 1);
  return rc;
}

int exec_stage_ran(const exec_staged *st) { return st->x.ran; }

void exec_stage_discard(exec_staged *st) {
  if (!st) return;
  profile_call_end(st->x.rt, &st->x.prof, 0, "", &(htpu_profile *){NULL});
  exec_finish_call(&st->x, NULL, st->t_start);
  free(st);
}
