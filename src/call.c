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
 * the core's, dropped when the core is done with it (call_end), after done has returned.
 *
 * Without execute signals a submitted call works on copies (copy mode): its inputs and outputs
 * live in the call's own block, so at a host-side deadline or cancel the call can end at once
 * (done runs, the caller's buffers are free) while graphExecute runs on into the copies.
 */
#include <sched.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errors.h"
#include "internal.h"
#include "stats.h"

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

int calls_copy_mode(const htpu_call *call) { return call->copy_mode; }

static void call_unref(htpu_call *call) {
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
static void call_complete(htpu_call *call, int rc, const htpu_exec_stats *st, int from_worker,
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
static void call_end(htpu_call *call) {
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
static void fin_push_locked(graph_state *s, htpu_call *call, int wake) {
  call->fin_next = NULL;
  if (s->fin_tail) s->fin_tail->fin_next = call;
  else s->fin_head = call;
  s->fin_tail = call;
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
static int call_execute(htpu_call *call) {
  htpu_clear_error();
  /* It lets go of the graph on every path (its options were checked at submit). */
  int rc = exec_stage_run(call->stage, call_notified, call);
  if (rc == EXEC_PENDING) return 1;
  call_keep_answer(call, rc);
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
static void call_finish(htpu_call *call) {
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

/* Granted calls first (the graph must not wait for a worker), then the finishing queue, one
 * finisher at a time so dones run in execute order. The worker that executed a call goes on
 * with the next granted one at once and wakes an idle worker to finish the call it ran. */
static _Thread_local graph_state *tl_worker_of; /* the state whose worker this thread is */

int calls_on_worker(const graph_state *s) { return tl_worker_of == s; }

/* An idle worker while another executes: it sleeps until shortly before the running execute's
 * expected end (it began at exec_started_ns; the graph's last graphExecute took
 * last_exec_ns), then spins until shortly after it, so the executing worker hands it the
 * finished call through worker_poke instead of a wake-up (~10 us on a loaded host, which would
 * sit between two executes). Spinning only around the end keeps the CPU it burns to about
 * 2 x (CALL_SPIN_EDGE_NS + 1/8 of an execute, at most CALL_SPIN_EDGE_MAX_NS) per call, whatever
 * the execute's length: a board on battery does not pay a core for every inference. */
#define CALL_SPIN_EDGE_NS 30000ull
#define CALL_SPIN_EDGE_MAX_NS 100000ull
#define CALL_SPIN_MAX_NS 250000ull

/* Under q_lock (released while spinning, held again on return): spins until an executing
 * worker pokes this one or `until` (at most CALL_SPIN_MAX_NS from now). 1 when poked: the
 * caller looks for work again. The caller sleeps otherwise, and any work that came meanwhile
 * is seen under q_lock before it does. */
static int spin_for_poke(graph_state *s, uint64_t until) {
  uint64_t cap = htpu_now_ns() + CALL_SPIN_MAX_NS;
  if (until > cap) until = cap;
  s->workers_spinning++;
  pthread_mutex_unlock(&s->q_lock);
  int poked = 0;
  for (unsigned i = 1;; i++) {
    if (atomic_exchange_explicit(&s->worker_poke, 0, memory_order_acquire)) {
      poked = 1;
      break;
    }
    if ((i & 63) == 0) {
      if (htpu_now_ns() >= until) break;
      sched_yield(); /* a 2-core host: let the submitter and the executor run */
    }
  }
  pthread_mutex_lock(&s->q_lock);
  s->workers_spinning--;
  return poked || s->fin_head || s->worker_ctl || s->worker_stop;
}

static void *worker_main(void *arg) {
  graph_state *s = arg;
  tl_worker_of = s;
#ifdef __linux__
  /* Its timed sleeps end just before an execute does: the default 50 us of timer slack would
   * often wake it after the execute ended, when a wake-up is needed anyway. */
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
  htpu_call *call = NULL; /* granted: this worker executes it next */
  int wake = 0;           /* an idle worker is to finish the call this one just executed */
  pthread_mutex_lock(&s->q_lock);
  for (;;) {
    if (!call && s->worker_ctl) {
      call = s->worker_ctl->call;
      s->worker_ctl = NULL;
    }
    if (call) {
      pthread_mutex_unlock(&s->q_lock);
      /* Woken outside q_lock, so it does not contend for it with this thread. */
      if (wake) pthread_cond_signal(&s->worker_cv);
      wake = 0;
      int pending = call_execute(call);
      pthread_mutex_lock(&s->q_lock);
      if (!pending || call->notified) fin_push_locked(s, call, 0);
      else call->handed = 1; /* its notification puts it there */
      call = NULL;
      if (s->worker_ctl) { /* the next call, at once; another worker finishes this one */
        call = s->worker_ctl->call;
        s->worker_ctl = NULL;
        if (s->workers_spinning && !s->finisher_busy)
          atomic_store_explicit(&s->worker_poke, 1, memory_order_release); /* no syscall */
        else
          wake = s->workers_idle && !s->finisher_busy;
      }
      continue;
    }
    if (s->fin_head && !s->finisher_busy) {
      htpu_call *done = s->fin_head;
      s->fin_head = done->fin_next;
      if (!s->fin_head) s->fin_tail = NULL;
      s->finisher_busy = 1;
      pthread_mutex_unlock(&s->q_lock);
      call_finish(done);
      pthread_mutex_lock(&s->q_lock);
      s->finisher_busy = 0;
      continue;
    }
    if (s->worker_stop) break;
    /* While another call executes, its end will need a finisher (above). Nothing held while
     * sleeping or spinning; an execute that overran its expected end by more than the edge
     * (a stall) is waited for without spinning. */
    uint64_t est = atomic_load_explicit(&s->last_exec_ns, memory_order_relaxed);
    if (s->running && !s->finisher_busy && est) {
      uint64_t started = atomic_load_explicit(&s->exec_started_ns, memory_order_relaxed);
      uint64_t edge = CALL_SPIN_EDGE_NS + est / 8, end = started + est, now = htpu_now_ns();
      if (edge > CALL_SPIN_EDGE_MAX_NS) edge = CALL_SPIN_EDGE_MAX_NS;
      if (now + edge < end) {
        uint64_t at = end - edge;
        struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
        s->workers_idle++; /* an execute that ends sooner wakes it */
        pthread_cond_timedwait(&s->worker_cv, &s->q_lock, &ts);
        s->workers_idle--;
        continue;
      }
      if (now < end + edge) {
        if (spin_for_poke(s, end + edge)) continue;
        /* the next execute began meanwhile (the one it waited for ended elsewhere) */
        if (atomic_load_explicit(&s->exec_started_ns, memory_order_relaxed) != started) continue;
      }
    }
    s->workers_idle++;
    pthread_cond_wait(&s->worker_cv, &s->q_lock);
    s->workers_idle--;
  }
  pthread_mutex_unlock(&s->q_lock);
  return NULL;
}

/* Under q_lock. */
static int start_worker_locked(graph_state *s) {
  if (s->workers_started == CALL_WORKERS) return 0;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the host's signal handlers never run on them */
  int e = 0;
  while (!e && s->workers_started < CALL_WORKERS) {
    e = pthread_create(&s->workers[s->workers_started], NULL, worker_main, s);
    if (!e) s->workers_started++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e && !s->workers_started)
    return htpu_set_error(HTPU_ENOMEM, 0, "graph '%s': could not start its worker thread",
                          s->name);
  return 0; /* one worker is enough to run every call, only without overlap */
}

void calls_stop_worker(graph_state *s) {
  pthread_mutex_lock(&s->q_lock);
  int started = s->workers_started;
  s->worker_stop = 1;
  pthread_cond_broadcast(&s->worker_cv);
  pthread_mutex_unlock(&s->q_lock);
  for (int i = 0; i < started; i++) pthread_join(s->workers[i], NULL);
}

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

int htpu_graph_submit(htpu_graph *h, const htpu_io *inputs, uint32_t num_inputs,
                      const htpu_io *outputs, uint32_t num_outputs, const htpu_exec_options *opts,
                      htpu_call_done_fn done, void *done_arg, htpu_call **out) {
  htpu_clear_error();
  uint64_t t_start = htpu_now_ns();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_graph_submit: out is NULL");
  *out = NULL;
  graph_obj *g = (graph_obj *)obj_acquire(h, OBJ_GRAPH);
  if (!g) return htpu_set_error(HTPU_ECLOSED, 0, "submitting: the graph is closed");
  graph_state *s = g->state;
  int rc = exec_check_options(opts);
  if (!rc && opts && (opts->no_wait || opts->cancelled || opts->profile))
    rc = htpu_set_error(HTPU_EINVAL, 0,
                        "graph '%s': a submitted call takes neither no_wait, cancelled nor "
                        "profile (cancel it with htpu_call_cancel; its profile_level's events "
                        "are taken with htpu_call_take_profile)",
                        s->name);
  if (!rc) rc = exec_check_io(g, inputs, num_inputs, outputs, num_outputs,
                         opts ? opts->batch_multiple : 0);
  htpu_call *call = rc ? NULL : calloc(1, sizeof *call);
  if (!rc && !call) rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if (rc) {
    obj_keep_error(&g->base);
    obj_release(&g->base);
    return rc;
  }
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
  call->n_in = num_inputs;
  call->n_out = num_outputs;
  call->done = done;
  call->done_arg = done_arg;
  /* No signal reaches a call in QNN's async queue (without 309): bounded on the host. */
  pthread_mutex_lock(&s->q_lock);
  call->copy_mode = s->signal == NULL || s->async;
  pthread_mutex_unlock(&s->q_lock);
  ctl_init(&call->ctl, g, call->opts.priority, call->opts.timeout_ns, t_start);
  call->ctl.call = call;
  rc = call_take_io(call, inputs, outputs);
  /* The inputs are converted here, outside the graph's turn (from the call's copies in copy
   * mode); a conversion error is the submit's. */
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
  if (!rc) {
    pthread_mutex_lock(&s->q_lock);
    rc = start_worker_locked(s);
    if (!rc) {
      call->next = s->calls;
      if (s->calls) s->calls->prev = call;
      s->calls = call;
      g->live_calls++;
    }
    pthread_mutex_unlock(&s->q_lock);
  }
  if (rc) {
    exec_stage_discard(call->stage);
    call->stage = NULL;
    obj_release(&g->base);
    call_unref(call);
    return rc;
  }
  atomic_store(&call->refs, 2); /* the caller's and the core's */
  rc = turn_acquire(&call->ctl, 0);
  if (rc != TURN_TAKEN) { /* the queue is full: refused here, done never runs */
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
  *out = call;
  return 0;
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
