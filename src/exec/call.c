/*
 * call.c - submitted calls (htpu_graph_submit): the answer comes back later, through done.
 *
 * A submitted call is an exec_ctl in its graph's waiting list like any synchronous execute
 * (turn.h). Its inputs are converted at submit, on the caller's thread, before it queues (as a
 * synchronous caller converts before it waits for its turn); when its turn comes, one of the
 * graph's worker threads (CALL_WORKERS per QNN graph, started on the first submit, joined when
 * the graph's state is freed) runs its graphExecute and lets go of the graph, and the call
 * waits in the graph's finishing queue for its outputs and done. A worker with a call granted
 * executes it before anything else; one worker at a time finishes calls, in the order they
 * executed. So while one call's outputs are converted the next call executes: the graph is
 * idle only for the hand-over. The call object has two references: the caller's (release) and
 * the core's, dropped when the core is done with it (call_end, call_life.c), after done has
 * returned. The workers are worker.c's.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "call.h"

/* What the graph's waiting list needs of a submitted call (turn.h): it knows no call. */
static const ctl_call_ops submitted_ops = {calls_copy_mode, calls_end_waiting, calls_end_early,
                                           calls_on_worker};

void calls_cancel(graph_state *s, graph_obj *g, int wait) {
  pthread_mutex_lock(&s->q_lock);
  for (htpu_call *c = s->calls; c; c = c->next) {
    if (g && c->g != g) continue;
    pthread_mutex_lock(&c->m);
    if (!c->ended && !c->completed) ctl_stop(&c->ctl, REASON_CLOSE);
    pthread_mutex_unlock(&c->m);
  }
  /* Synchronous calls holding the graph or waiting for it (under q_lock they cannot leave, so
   * their ctls, on their callers' stacks, are alive; each disarms its timer before it goes). */
  exec_ctl *r = s->running;
  if (r && !r->call && (!g || r->g == g)) ctl_stop(r, REASON_CLOSE);
  for (exec_ctl *w = s->head; w; w = w->next)
    if (!w->call && (!g || w->g == g)) ctl_stop(w, REASON_CLOSE);
  while (wait && g && g->live_calls) pthread_cond_wait(&s->calls_cv, &s->q_lock);
  pthread_mutex_unlock(&s->q_lock);
}

/* The call's own arrays, and in copy mode its own bytes. */
static int call_take_io(htpu_call *call, const htpu_io *inputs, const htpu_io *outputs) {
  uint32_t n = call->n_in + call->n_out;
  call->io = calloc(n ? 2 * (size_t)n : 1, sizeof *call->io);
  if (!call->io) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  call->user_io = call->io + n;
  for (uint32_t i = 0; i < n; i++)
    call->user_io[i] = call->io[i] = i < call->n_in ? inputs[i] : outputs[i - call->n_in];
  if (!call->copy_mode) return 0;
  size_t total = 0, dims = 0;
  if (call->opts.output_dims) dims = (size_t)call->n_out * HTPU_MAX_RANK * sizeof(uint32_t);
  for (uint32_t i = 0; i < n; i++) total += (call->io[i].size + 63) & ~(size_t)63;
  call->copy = aligned_alloc(64, total + dims ? ((total + dims + 63) & ~(size_t)63) : 64);
  if (!call->copy) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", total);
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    call->io[i].data = (char *)call->copy + at;
    if (i < call->n_in) memcpy(call->io[i].data, call->user_io[i].data, call->io[i].size);
    at += (call->io[i].size + 63) & ~(size_t)63;
  }
  if (dims) { /* the output dims too: written by the execute, copied back as the outputs are */
    call->user_dims = call->opts.output_dims;
    call->opts.output_dims = (uint32_t *)(void *)((char *)call->copy + at);
  }
  return 0;
}

/* What a submit checks at once, before anything is made: its options and every buffer. */
static int submit_checks(graph_obj *g, const htpu_io *inputs, uint32_t n_in,
                         const htpu_io *outputs, uint32_t n_out, const htpu_exec_options *opts) {
  int rc = exec_check_options(opts);
  if (!rc && opts && (opts->no_wait || opts->cancelled || opts->profile))
    rc = htpu_set_error(HTPU_EINVAL, 0,
                        "graph '%s': a submitted call takes neither no_wait, cancelled nor "
                        "profile (cancel it with htpu_call_cancel; its profile_level's events "
                        "are taken with htpu_call_take_profile)",
                        g->state->name);
  if (!rc) rc = exec_check_io(g, inputs, n_in, outputs, n_out, opts ? opts->batch_multiple : 0);
  return rc;
}

/* A new call through g (holding the caller's reference on it) with one reference, its own
 * copy of the options and its ctl in the graph's list's terms. NULL: out of memory. */
static htpu_call *call_new(graph_obj *g, uint32_t n_in, uint32_t n_out,
                           const htpu_exec_options *opts, htpu_call_done_fn done, void *done_arg,
                           uint64_t t_start) {
  htpu_call *call = calloc(1, sizeof *call);
  if (!call) return NULL;
  graph_state *s = g->state;
  STAT_ADD(live_calls, 1);
  atomic_init(&call->refs, 1);
  pthread_mutex_init(&call->m, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&call->cv, &ca);
  pthread_condattr_destroy(&ca);
  call->g = g;
  if (opts) call->opts = *opts;
  call->n_in = n_in;
  call->n_out = n_out;
  call->done = done;
  call->done_arg = done_arg;
  /* No signal reaches a call in QNN's async queue (without 309): bounded on the host. */
  pthread_mutex_lock(&s->q_lock);
  call->copy_mode = s->signal == NULL || s->async;
  pthread_mutex_unlock(&s->q_lock);
  ctl_init(&call->ctl, g, call->opts.priority, call->opts.timeout_ns, t_start);
  call->ctl.call = call;
  call->ctl.ops = &submitted_ops;
  return call;
}

/* The call's inputs converted here, outside the graph's turn (from its copies in copy mode;
 * a conversion error is the submit's), then the call listed on its graph, whose workers run. */
static int call_prepare(htpu_call *call, const htpu_io *inputs, const htpu_io *outputs,
                        uint64_t t_start) {
  graph_obj *g = call->g;
  graph_state *s = g->state;
  int rc = call_take_io(call, inputs, outputs);
  if (!rc) {
    rc = exec_stage_prepare(g, call->io, call->n_in, call->io + call->n_in, call->n_out,
                            &call->opts, &call->ctl, t_start, &call->stage);
    /* Counted as a synchronous execute that fails its checks or conversions is (executes and
     * execute_errors), so the counters do not depend on the path a call took. */
    if (rc) {
      STAT_ADD(executes, 1);
      STAT_ADD(execute_errors, 1);
    }
  }
  if (rc) return rc;
  pthread_mutex_lock(&s->q_lock);
  /* One worker for a graph's lone call; the second (which finishes a call while the first
   * executes the next) once calls overlap: a thousand models with a call each hold a thousand
   * threads, not two thousand. */
  rc = start_worker_locked(s, s->calls ? CALL_WORKERS : 1);
  if (!rc) {
    call->next = s->calls;
    if (s->calls) s->calls->prev = call;
    s->calls = call;
    g->live_calls++;
  }
  pthread_mutex_unlock(&s->q_lock);
  return rc;
}

/* The call takes its place in the graph's list (refused there when it is full: then done never
 * runs), and its deadline is armed. */
static int call_queue(htpu_call *call) {
  atomic_store(&call->refs, 2); /* the caller's and the core's */
  int rc = turn_acquire(&call->ctl, 0);
  if (rc != TURN_TAKEN) {
    char msg[512];
    htpu_copy_message(htpu_last_error(), msg, sizeof msg);
    pthread_mutex_lock(&call->m);
    call->completed = call->finished = 1;
    pthread_mutex_unlock(&call->m);
    call_end(call);
    call_unref(call);
    htpu_set_error(rc, 0, "%s", msg);
    return rc;
  }
  pthread_mutex_lock(&call->m);
  if (!call->ended) ctl_arm(&call->ctl);
  pthread_mutex_unlock(&call->m);
  return 0;
}

int htpu_graph_submit(htpu_graph *h, const htpu_io *inputs, uint32_t num_inputs,
                      const htpu_io *outputs, uint32_t num_outputs, const htpu_exec_options *opts,
                      htpu_call_done_fn done, void *done_arg, htpu_call **out) {
  htpu_clear_error();
  uint64_t t_start = htpu_now_ns();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_graph_submit: out is NULL");
  *out = NULL;
  graph_obj *g = (graph_obj *)obj_acquire(h, OBJ_GRAPH);
  if (!g) return htpu_set_error(HTPU_ECLOSED, 0, "submitting: the graph is closed");
  int rc = submit_checks(g, inputs, num_inputs, outputs, num_outputs, opts);
  htpu_call *call = rc ? NULL : call_new(g, num_inputs, num_outputs, opts, done, done_arg, t_start);
  if (!rc && !call) rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if (rc) {
    obj_keep_error(&g->base);
    obj_release(&g->base);
    return rc;
  }
  rc = call_prepare(call, inputs, outputs, t_start);
  if (rc) {
    exec_stage_discard(call->stage);
    call->stage = NULL;
    obj_release(&g->base);
    call_unref(call);
    return rc;
  }
  rc = call_queue(call);
  if (!rc) *out = call;
  return rc;
}

int htpu_call_cancel(htpu_call *call) {
  htpu_clear_error();
  if (!call) return htpu_set_error(HTPU_EINVAL, 0, "htpu_call_cancel: call is NULL");
  pthread_mutex_lock(&call->m);
  if (!call->ended && !call->completed) ctl_stop(&call->ctl, REASON_CANCEL);
  pthread_mutex_unlock(&call->m);
  return 0;
}

int htpu_call_wait(htpu_call *call, uint64_t timeout_ns) {
  htpu_clear_error();
  if (!call) return htpu_set_error(HTPU_EINVAL, 0, "htpu_call_wait: call is NULL");
  uint64_t until = timeout_ns == UINT64_MAX ? 0 : htpu_now_ns() + timeout_ns;
  pthread_mutex_lock(&call->m);
  while (!call->finished) {
    if (timeout_ns == UINT64_MAX) {
      pthread_cond_wait(&call->cv, &call->m);
      continue;
    }
    if (htpu_now_ns() >= until) break;
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    pthread_cond_timedwait(&call->cv, &call->m, &ts);
  }
  int finished = call->finished, rc = call->rc;
  pthread_mutex_unlock(&call->m);
  if (!finished)
    return htpu_set_error(HTPU_ETIMEDOUT, 0,
                          "htpu_call_wait: the call has not ended within %llu ns (it goes on)",
                          (unsigned long long)timeout_ns);
  if (rc) htpu_set_error(rc, 0, "%s", call->msg);
  return rc;
}

int htpu_call_result(htpu_call *call, htpu_exec_stats *stats, char *msg, size_t len) {
  htpu_clear_error();
  if (stats) memset(stats, 0, sizeof *stats);
  if (msg && len) msg[0] = '\0';
  if (!call) return htpu_set_error(HTPU_EINVAL, 0, "htpu_call_result: call is NULL");
  pthread_mutex_lock(&call->m);
  /* Decided once completed: readable from done itself (which runs before `finished`). */
  int finished = call->completed, rc = call->rc;
  if (finished) {
    if (stats) *stats = call->stats;
    if (msg && len) htpu_copy_message(call->msg, msg, len);
  }
  pthread_mutex_unlock(&call->m);
  if (!finished) return htpu_set_error(HTPU_EBUSY, 0, "htpu_call_result: the call has not ended");
  return rc;
}

int htpu_call_take_profile(htpu_call *call, htpu_profile **out) {
  htpu_clear_error();
  if (out) *out = NULL;
  if (!call) return htpu_set_error(HTPU_EINVAL, 0, "htpu_call_take_profile: call is NULL");
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_call_take_profile: out is NULL");
  pthread_mutex_lock(&call->m);
  int completed = call->completed, rc = call->rc ? 0 : call->profile_rc;
  if (completed && !call->rc) { /* a failed call has none (one kept meanwhile: the unref's) */
    *out = call->profile;
    call->profile = NULL;
  }
  pthread_mutex_unlock(&call->m);
  if (!completed)
    return htpu_set_error(HTPU_EBUSY, 0, "htpu_call_take_profile: the call has not ended");
  if (rc) return htpu_set_error(rc, 0, "%s", call->profile_msg);
  return 0;
}

void htpu_call_release(htpu_call **call) {
  if (!call || !*call) return;
  call_unref(*call);
  *call = NULL;
}
