/*
 * turn.c - one QNN graph's waiting list, deadlines and aborts (turn.h).
 *
 * A deadline (or a cancel, a close, a no-wait call's short-call bound) reaches a call through
 * its timer entry, on the timer thread: a waiting call leaves the list (a synchronous waiter
 * is woken to return, a submitted call is ended there); a running one has the graph's abort
 * signal triggered under q_lock, where `running` says whose call it is. QnnSignal's trigger of
 * an idle signal (the call holds the graph but has not reached graphExecute yet, or has just
 * left it) is retried shortly until the call starts or ends, so an abort is never lost.
 */
#include <stddef.h>
#include <stdio.h>

#include "base/base.h"
#include "internal.h"
#include "qnn/qnn_signal_abi.h"


#define RETRY_IDLE_NS 100000u /* trigger again after an idle answer */

void ctl_init(exec_ctl *x, graph_obj *g, int priority, uint64_t timeout_ns, uint64_t start_ns) {
  context_obj *c = g->ctx;
  x->s = g->state;
  x->g = g;
  x->call = NULL;
  x->ops = NULL;
  x->priority = priority ? priority : c->priority;
  if (!timeout_ns) timeout_ns = c->exec_timeout_ns ? c->exec_timeout_ns : c->rt->default_timeout_ns;
  x->timeout_ns = timeout_ns;
  x->deadline_ns = timeout_ns ? start_ns + timeout_ns : 0;
  x->stall_bound = 0;
  x->seq = x->passes = 0;
  x->state = CTL_NEW;
  atomic_init(&x->reason, REASON_NONE);
  x->removed_rc = 0;
  x->enqueued = 0;
  x->requeued = 0;
  x->gate_poked = 0;
  x->load_signal = NULL;
  atomic_init(&x->reached_qnn, 0);
  pthread_cond_init(&x->cv, NULL);
  x->timer.armed = 0;
  x->timer.prev = x->timer.next = NULL;
  x->prev = x->next = NULL;
}

void ctl_destroy(exec_ctl *x) {
  timer_disarm(&x->timer);
  pthread_cond_destroy(&x->cv);
}

static int effective(const exec_ctl *w) {
  uint64_t p = (uint64_t)w->priority + w->passes / HTPU_PRIORITY_AGING;
  return p > HTPU_PRIORITY_HIGH ? HTPU_PRIORITY_HIGH : (int)p;
}

static void unlink_waiter(graph_state *s, exec_ctl *w) {
  if (w->prev) w->prev->next = w->next;
  else s->head = w->next;
  if (w->next) w->next->prev = w->prev;
  else s->tail = w->prev;
  w->prev = w->next = NULL;
  s->waiting--;
  STAT_SUB(executes_waiting, 1);
}

/* Under q_lock: the next holder, by effective priority then arrival; every earlier arrival
 * it passes over counts one pass. A waiter already stopped (deadline, cancel, close: the timer
 * is about to take it off the list) is never granted the graph. */
static exec_ctl *pick_next(graph_state *s) {
  exec_ctl *best = NULL;
  for (exec_ctl *w = s->head; w; w = w->next)
    if (ctl_why(w) == REASON_NONE && (!best || effective(w) > effective(best))) best = w;
  if (!best) return NULL;
  for (exec_ctl *w = s->head; w && w != best; w = w->next) w->passes++;
  return best;
}

/* Under q_lock: hands the graph to `w` (already unlinked). */
static void grant(graph_state *s, exec_ctl *w) {
  s->running = w;
  w->state = CTL_RUNNING;
  if (w->call) {
    w->fin_seq = s->fin_assign++; /* its done comes after those of the calls granted before */
    s->worker_ctl = w;
    /* A worker of this graph letting go of it takes the next call itself, with no wake-up
     * between the two executes. */
    if (!w->ops->on_worker(s)) pthread_cond_signal(&s->worker_cv);
  } else {
    pthread_cond_signal(&w->cv);
  }
}

/* Under q_lock, with the graph free: hands it to the next waiter, if any may have it. */
static void grant_next(graph_state *s) {
  exec_ctl *next = pick_next(s);
  if (next) {
    unlink_waiter(s, next);
    grant(s, next);
  }
}

static int removed_error(graph_state *s, exec_ctl *x, ctl_reason why) {
  if (why == REASON_CLOSE)
    return htpu_set_error(HTPU_ECANCELLED, 0,
                          "graph '%s': the call was cancelled while it waited for its turn: "
                          "its graph handle, context or runtime was closed",
                          s->name);
  if (why == REASON_CANCEL)
    return htpu_set_error(HTPU_ECANCELLED, 0,
                          "graph '%s': the call was cancelled while it waited for its turn",
                          s->name);
  if (!x->call) STAT_ADD(executes_timed_out, 1); /* a submitted call's: when it completes */
  return htpu_set_error(HTPU_ETIMEDOUT, 0,
                        "graph '%s': the call passed its %llu ms deadline (timeout) while it "
                        "waited behind %s; it never ran",
                        s->name, (unsigned long long)(x->timeout_ns / 1000000u),
                        "other calls of the graph");
}

int turn_acquire(exec_ctl *x, int try_only) {
  graph_state *s = x->s;
  atomic_fetch_add(&s->contenders, 1);
  pthread_mutex_lock(&s->q_lock);
  if (x->state == CTL_RUNNING) { /* granted before (a submitted call on the worker) */
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_sub(&s->contenders, 1); /* counted once, at its submit */
    return TURN_TAKEN;
  }
  if (atomic_load(&x->g->closing)) { /* its handle is being closed: it never runs, free or not */
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_sub(&s->contenders, 1);
    return removed_error(s, x, REASON_CLOSE);
  }
  /* A no-wait call would wait in QNN's queue behind the calls handed to graphExecuteAsync
   * (one FIFO with graphExecute): the graph is busy until they are notified. */
  if (try_only && s->async_in_flight) {
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_sub(&s->contenders, 1);
    return TURN_BUSY;
  }
  if (!s->running && !s->head) {
    if (x->call) {
      grant(s, x); /* the worker runs it */
    } else {
      s->running = x;
      x->state = CTL_RUNNING;
    }
    pthread_mutex_unlock(&s->q_lock);
    return TURN_TAKEN;
  }
  if (try_only) {
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_sub(&s->contenders, 1);
    return TURN_BUSY;
  }
  if (s->queue_limit && s->waiting >= s->queue_limit && !x->requeued) {
    uint32_t n = s->waiting;
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_sub(&s->contenders, 1);
    return htpu_set_error(HTPU_EBUSY, 0,
                          "graph '%s': its queue of %u calls is full (the queue_limit option "
                          "of its load or runtime: Elixir's load_model/2 :queue_limit); try "
                          "again later",
                          s->name, n);
  }
  ctl_reason why = ctl_why(x);
  if (why != REASON_NONE) { /* stopped before it queued */
    pthread_mutex_unlock(&s->q_lock);
    atomic_fetch_sub(&s->contenders, 1);
    return removed_error(s, x, why);
  }
  x->seq = s->next_seq++;
  x->prev = s->tail;
  if (s->tail) s->tail->next = x;
  else s->head = x;
  s->tail = x;
  s->waiting++;
  x->state = CTL_WAITING;
  STAT_ADD(executes_waiting, 1);
  /* The graph is free but only stopped calls (leaving) were ahead: not theirs to hold up. */
  if (!s->running) grant_next(s);
  if (x->call) { /* the worker runs it when granted */
    pthread_mutex_unlock(&s->q_lock);
    return TURN_TAKEN;
  }
  while (x->state == CTL_WAITING) pthread_cond_wait(&x->cv, &s->q_lock);
  int rc = x->state == CTL_RUNNING ? TURN_TAKEN : -1;
  pthread_mutex_unlock(&s->q_lock);
  if (rc == TURN_TAKEN) return rc;
  atomic_fetch_sub(&s->contenders, 1);
  return removed_error(s, x, ctl_why(x));
}

void turn_release(exec_ctl *x) {
  graph_state *s = x->s;
  pthread_mutex_lock(&s->q_lock);
  if (s->running == x) s->running = NULL;
  x->state = CTL_DONE;
  grant_next(s);
  pthread_mutex_unlock(&s->q_lock);
  atomic_fetch_sub(&s->contenders, 1);
}

int turn_requeue(exec_ctl *x) {
  pthread_mutex_lock(&x->s->q_lock);
  x->state = CTL_NEW;
  x->requeued = 1;
  pthread_mutex_unlock(&x->s->q_lock);
  return turn_acquire(x, 0);
}

/* The error of a copy-mode call ended on the host: its execute runs on in the background, or
 * (stopped at the gate or in a recovery) it never ran. */
static int copy_stop_error(exec_ctl *x, ctl_reason why) {
  graph_state *s = x->s;
  int cancelled = why == REASON_CANCEL || why == REASON_CLOSE;
  if (!atomic_load(&x->reached_qnn))
    return cancelled ? htpu_set_error(HTPU_ECANCELLED, 0,
                                      "graph '%s': the call was cancelled before it ran (it "
                                      "waited for the execute gate or a recovery)",
                                      s->name)
                     : htpu_set_error(HTPU_ETIMEDOUT, 0,
                                      "graph '%s': the call passed its %llu ms deadline "
                                      "(timeout) before it ran (it waited for the execute gate "
                                      "or a recovery); the graph stays usable",
                                      s->name, (unsigned long long)(x->timeout_ns / 1000000u));
  const char *no_signal = s->signal ? "no signal reaches a call in QNN's async queue"
                                    : "this backend has no execute signals";
  return cancelled
                 ? htpu_set_error(HTPU_ECANCELLED, 0,
                                  "graph '%s': the call was cancelled while it ran (%s: the "
                                  "execute finishes in the background, its outputs discarded)",
                                  s->name, no_signal)
                 : htpu_set_error(HTPU_ETIMEDOUT, 0,
                                  "graph '%s': the call passed its %llu ms deadline (timeout; "
                                  "host-side: %s, the execute finishes in the background, its "
                                  "outputs discarded)",
                                  s->name, (unsigned long long)(x->timeout_ns / 1000000u),
                                  no_signal);
}

/* The timer thread: a deadline passed, or a stop (cancel, close, bound) was asked. */
static void ctl_fire(htimer *t) {
  exec_ctl *x = (exec_ctl *)((char *)t - offsetof(exec_ctl, timer));
  graph_state *s = x->s;
  int expected = REASON_NONE;
  atomic_compare_exchange_strong(&x->reason, &expected,
                                 x->stall_bound ? REASON_STALL : REASON_TIMEOUT);
  ctl_reason why = ctl_why(x);
  pthread_mutex_lock(&s->q_lock);
  if (x->state == CTL_WAITING) {
    unlink_waiter(s, x);
    x->state = CTL_DONE;
    if (!s->running) grant_next(s); /* it was what stood between the free graph and others */
    if (x->call) {
      atomic_fetch_sub(&s->contenders, 1); /* a synchronous waiter gives its own back */
      pthread_mutex_unlock(&s->q_lock);
      int rc = removed_error(s, x, why);
      x->ops->end_waiting(x->call, rc); /* done runs here, on the timer thread */
      return;
    }
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&s->q_lock);
    return;
  }
  /* A call in copy mode ends at once, whether it holds the graph or is in QNN's async queue
   * (no signal reaches it there); otherwise only the call holding the graph is aborted. */
  struct htpu_call *call = x->call;
  int copy = call && x->ops->copy_mode(call);
  int holds = x->state == CTL_RUNNING && s->running == x;
  if (!holds && !(copy && x->enqueued)) {
    pthread_mutex_unlock(&s->q_lock);
    return;
  }
  /* A call holding the graph may wait at the execute gate, or sleep in a recovery's backoff:
   * both look at its reason when the gate is poked (gate.h). Once is enough. */
  int poke = holds && !x->gate_poked;
  x->gate_poked = 1;
  if (poke) gate_poke(&htpu_exec_gate);
  if (call) pthread_cond_broadcast(&s->async_cv); /* a worker waiting for room looks again */
  /* A recreate in progress stops too (idle: not started yet, or done: asked again shortly). */
  if (holds && x->load_signal &&
      QNN_ERROR_CODE(s->lib->signal_trigger(x->load_signal)) == QNN_SIGNAL_ERROR_SIGNAL_IDLE)
    timer_arm(&x->timer, htpu_now_ns() + RETRY_IDLE_NS, ctl_fire);
  if (s->signal && !copy) {
    /* Under q_lock: the signal is this call's as long as `running` says so. The trigger
     * returns once the call is about to return from graphExecute. */
    qnn_error_t e = s->lib->signal_trigger(s->signal);
    pthread_mutex_unlock(&s->q_lock);
    if (QNN_ERROR_CODE(e) == QNN_SIGNAL_ERROR_SIGNAL_IDLE)
      timer_arm(&x->timer, htpu_now_ns() + RETRY_IDLE_NS, ctl_fire);
    return;
  }
  /* No signal for it: a submitted call in copy mode ends now; its execute runs on in the
   * background on the call's own copies. A synchronous call cannot be bounded. */
  pthread_mutex_unlock(&s->q_lock);
  if (copy) x->ops->end_early(call, copy_stop_error(x, why));
}


int ctl_set_load_signal(exec_ctl *x, qnn_signal_handle_t signal) {
  pthread_mutex_lock(&x->s->q_lock);
  x->load_signal = signal;
  int go = !signal || ctl_why(x) == REASON_NONE;
  if (!go) x->load_signal = NULL;
  pthread_mutex_unlock(&x->s->q_lock);
  return go;
}

void ctl_arm(exec_ctl *x) {
  if (x->deadline_ns) timer_arm(&x->timer, x->deadline_ns, ctl_fire);
}

void ctl_stop(exec_ctl *x, ctl_reason why) {
  int expected = REASON_NONE;
  atomic_compare_exchange_strong(&x->reason, &expected, (int)why);
  timer_arm(&x->timer, 0, ctl_fire);
}
