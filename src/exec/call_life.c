/*
 * call_life.c - a submitted call from its execute to its end (call.h): the answer of its
 * execute kept, its outputs and profile read by a finishing worker, its rc decided once (a
 * copy-mode call that ended at its deadline keeps that answer), done run, and the core's
 * reference let go. The call object has two references: the caller's (htpu_call_release) and
 * the core's, dropped when the core is done with it (call_end), after done has returned.
 *
 * Without execute signals a submitted call works on copies (copy mode): its inputs and outputs
 * live in the call's own block, so at a host-side deadline or cancel the call can end at once
 * (done runs, the caller's buffers are free) while graphExecute runs on into the copies.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "call.h"

int calls_copy_mode(const htpu_call *call) { return call->copy_mode; }

void call_unref(htpu_call *call) {
  if (atomic_fetch_sub(&call->refs, 1) != 1) return;
  htpu_profile_free(call->profile); /* never taken */
  ctl_destroy(&call->ctl);
  pthread_cond_destroy(&call->cv);
  pthread_mutex_destroy(&call->m);
  free(call->copy);
  free(call->io); /* with user_io */
  free(call);
  STAT_SUB(live_calls, 1);
}

/* Decides the call's rc once (later answers are discarded: a copy-mode call that ended at its
 * deadline), copies a copy-mode call's outputs back, runs done. */
void call_complete(htpu_call *call, int rc, const htpu_exec_stats *st, int from_worker,
                          const char *msg, uint32_t qnn_code) {
  pthread_mutex_lock(&call->m);
  if (call->completed) {
    pthread_mutex_unlock(&call->m);
    return;
  }
  if (from_worker && call->copy_mode && rc == 0) {
    for (uint32_t i = call->n_in; i < call->n_in + call->n_out; i++)
      memcpy(call->user_io[i].data, call->io[i].data, call->io[i].size);
    if (call->user_dims)
      memcpy(call->user_dims, call->opts.output_dims,
             (size_t)call->n_out * HTPU_MAX_RANK * sizeof *call->user_dims);
  }
  call->completed = 1;
  call->rc = rc;
  /* Counted here, where its rc is decided once: a call stopped on the host (ended early) may
   * meet its stop again on the worker (stopped_error) or in the list (removed_error). */
  if (rc == HTPU_ETIMEDOUT) STAT_ADD(executes_timed_out, 1);
  if (st) call->stats = *st;
  htpu_copy_message(rc ? msg : "", call->msg, sizeof call->msg);
  call->qnn_code = rc ? qnn_code : 0;
  pthread_mutex_unlock(&call->m);
  /* done runs on a core thread whose own last error is another story: it sees the call's
   * (htpu_last_error, htpu_last_qnn_code), and htpu_call_result answers from here on. */
  if (rc)
    htpu_set_error(rc, call->qnn_code, "%s", call->msg);
  else
    htpu_clear_error();
  if (call->done) call->done(call, rc, call->done_arg);
  pthread_mutex_lock(&call->m);
  call->finished = 1;
  pthread_cond_broadcast(&call->cv);
  pthread_mutex_unlock(&call->m);
}

/* The core lets go: the timer can no longer reach it, the graph reference goes (never the
 * last: the handle's close waits for live_calls first), then the close may proceed. */
void call_end(htpu_call *call) {
  pthread_mutex_lock(&call->m);
  call->ended = 1;
  pthread_mutex_unlock(&call->m);
  timer_disarm(&call->ctl.timer);
  exec_stage_discard(call->stage); /* it never ran (removed while waiting, or refused) */
  call->stage = NULL;
  graph_obj *g = call->g;
  graph_state *s = g->state;
  obj_release(&g->base);
  pthread_mutex_lock(&s->q_lock);
  if (call->prev) call->prev->next = call->next;
  else s->calls = call->next;
  if (call->next) call->next->prev = call->prev;
  /* The graph's last call: its idle workers start their linger (idle_wait). */
  if (!s->calls && s->workers_idle) pthread_cond_broadcast(&s->worker_cv);
  pthread_mutex_unlock(&s->q_lock);
  /* The core's reference goes before the close waiting for it is let go, so the live_calls
   * counter is back when the close returns (when the caller's reference went already). */
  call_unref(call);
  pthread_mutex_lock(&s->q_lock);
  g->live_calls--;
  pthread_cond_broadcast(&s->calls_cv);
  pthread_mutex_unlock(&s->q_lock);
}

void calls_end_waiting(htpu_call *call, int rc) {
  call_complete(call, rc, NULL, 0, htpu_last_error(), htpu_last_qnn_code());
  call_end(call);
}

void calls_end_early(htpu_call *call, int rc) {
  call_complete(call, rc, NULL, 0, htpu_last_error(), htpu_last_qnn_code());
}

static void call_keep_answer(htpu_call *call, int rc) {
  call->exec_rc = rc;
  htpu_copy_message(rc ? htpu_last_error() : "", call->exec_msg, sizeof call->exec_msg);
  call->exec_qnn = rc ? htpu_last_qnn_code() : 0;
}

/* Under q_lock: the call's execute ended; a worker finishes it. Woken under the lock when
 * called from a notification: once it is unlocked the call may be finished and its graph
 * freed. */
void fin_push_locked(graph_state *s, htpu_call *call, int wake) {
  /* in turn order: almost always at the tail */
  htpu_call **at = &s->fin_head;
  while (*at && (*at)->ctl.fin_seq < call->ctl.fin_seq) at = &(*at)->fin_next;
  call->fin_next = *at;
  *at = call;
  if (!call->fin_next) s->fin_tail = call;
  if (!wake || s->finisher_busy) return;
  if (s->workers_spinning)
    atomic_store_explicit(&s->worker_poke, 1, memory_order_release);
  else if (s->workers_idle)
    pthread_cond_signal(&s->worker_cv);
}

/* QNN's notification of an async execute, on a backend thread. */
static void call_notified(void *param, qnn_notify_status_t status) {
  htpu_call *call = param;
  graph_state *s = call->g->state;
  htpu_clear_error();
  call_keep_answer(call, exec_stage_notified(call->stage, status.error));
  pthread_mutex_lock(&s->q_lock);
  call->notified = 1;
  if (call->handed) fin_push_locked(s, call, 1);
  pthread_mutex_unlock(&s->q_lock);
}

/* A worker: the granted call's graphExecute (or its hand-over to QNN's async queue: 1); the
 * turn goes to the next call on the way out. */
int call_execute(htpu_call *call) {
  htpu_clear_error();
  /* It lets go of the graph on every path (its options were checked at submit). */
  int rc = exec_stage_run(call->stage, call_notified, call);
  if (rc == EXEC_PENDING) return 1;
  call_keep_answer(call, rc);
  /* Stopped before it ran (its deadline or a cancel, e.g. while it waited for room in QNN's
   * queue): it answers now, not in its turn's place behind executes still in QNN's queue;
   * its finish, in that place, only lets go. */
  if ((rc == HTPU_ECANCELLED || rc == HTPU_ETIMEDOUT) && !exec_stage_ran(call->stage))
    calls_end_early(call, rc);
  return 0;
}

/* A finisher: a call whose async execute met a DSP restart waits for another turn, unless it
 * ended already (then it finishes with the restart's error). 1: queued again. */
static int call_requeue(htpu_call *call) {
  graph_state *s = call->g->state;
  pthread_mutex_lock(&call->m);
  int ended_early = call->completed;
  pthread_mutex_unlock(&call->m);
  int rc = HTPU_EDEVICE_RESET;
  if (!ended_early) {
    pthread_mutex_lock(&s->q_lock);
    call->handed = call->notified = 0;
    pthread_mutex_unlock(&s->q_lock);
    rc = turn_requeue(&call->ctl);
    if (rc == TURN_TAKEN) return 1;
  } else {
    htpu_set_error(rc, QNN_COMMON_ERROR_SYSTEM_COMMUNICATION,
                   "graph '%s': the DSP restarted during the call", s->name);
  }
  call_keep_answer(call, rc);
  return 0;
}

/* A worker, one call at a time: outputs, stats, done, then the core lets go. */
void call_finish(htpu_call *call) {
  if (call->exec_rc == EXEC_RESTARTED && call_requeue(call)) return;
  htpu_exec_stats st;
  memset(&st, 0, sizeof st);
  htpu_clear_error();
  htpu_profile *prof = NULL;
  int prof_rc = 0;
  int rc = exec_stage_finish(call->stage, call->exec_rc, &st, &prof, &prof_rc);
  call->stage = NULL;
  /* Kept for htpu_call_take_profile from done on; a call that already ended on the host (its
   * deadline or a cancel, in copy mode) has answered without it. */
  pthread_mutex_lock(&call->m);
  if (!call->completed) {
    call->profile = prof;
    prof = NULL;
    call->profile_rc = prof_rc;
    if (prof_rc) htpu_copy_message(htpu_last_error(), call->profile_msg, sizeof call->profile_msg);
  }
  pthread_mutex_unlock(&call->m);
  htpu_profile_free(prof);
  call_complete(call, rc, &st, 1, call->exec_rc ? call->exec_msg : htpu_last_error(),
                call->exec_rc ? call->exec_qnn : htpu_last_qnn_code());
  call_end(call);
}
