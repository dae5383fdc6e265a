/*
 * worker.c - the graph's worker threads (call.h): CALL_WORKERS per QNN graph, started by its
 * submits and gone about a second after its last call. A worker with a call granted executes it
 * before anything else; one worker at a time finishes calls, in the order they executed. So
 * while one call's outputs are converted the next call executes: the graph is idle only for
 * the hand-over.
 */
#include <sched.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "call.h"

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

/* Under q_lock: the call to finish next has come (its predecessor in turn order is done). */
static int fin_ready(const graph_state *s) {
  return s->fin_head && s->fin_head->ctl.fin_seq == s->fin_next;
}

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
  return poked || fin_ready(s) || s->worker_ctl || s->worker_stop;
}

/* Under q_lock, with nothing to do: waits for work. While the graph has no submitted call it
 * waits at most CALL_WORKER_LINGER_NS: 1 when that passed with still nothing to do (the worker
 * exits; the next submit starts workers again), 0 to look for work again. */
static int idle_wait(graph_state *s) {
  if (s->calls) {
    pthread_cond_wait(&s->worker_cv, &s->q_lock);
    return 0;
  }
  uint64_t until = htpu_now_ns() + CALL_WORKER_LINGER_NS;
  struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
  pthread_cond_timedwait(&s->worker_cv, &s->q_lock, &ts);
  return !s->calls && !s->worker_ctl && !s->fin_head && htpu_now_ns() >= until;
}

/* Under q_lock: this worker's slot is left to be joined (by the next start or the stop). */
static void exit_slot_locked(graph_state *s) {
  for (int i = 0; i < CALL_WORKERS; i++)
    if (s->worker_slot[i] == WORKER_LIVE && pthread_equal(s->workers[i], pthread_self()))
      s->worker_slot[i] = WORKER_GONE;
}

/* Under q_lock: the call granted to this worker, taken from the control slot. */
static htpu_call *take_granted_locked(graph_state *s) {
  htpu_call *call = s->worker_ctl->call;
  s->worker_ctl = NULL;
  return call;
}

/* Under q_lock (released while it executes, held again on return): executes call, then puts it
 * on the finishing queue (or leaves that to its notification). Returns the call granted
 * meanwhile, which this worker executes at once, or NULL; *wake is then set when an idle worker
 * is to be woken to finish this one (the caller signals it outside q_lock, before that
 * execute, so the woken worker does not contend for q_lock with this thread). */
static htpu_call *execute_granted(graph_state *s, htpu_call *call, int *wake) {
  pthread_mutex_unlock(&s->q_lock);
  if (*wake) pthread_cond_signal(&s->worker_cv);
  *wake = 0;
  int pending = call_execute(call);
  pthread_mutex_lock(&s->q_lock);
  if (!pending || call->notified) fin_push_locked(s, call, 0);
  else call->handed = 1; /* its notification puts it there */
  if (!s->worker_ctl) return NULL;
  htpu_call *next = take_granted_locked(s);
  if (s->workers_spinning && !s->finisher_busy)
    atomic_store_explicit(&s->worker_poke, 1, memory_order_release); /* no syscall */
  else
    *wake = s->workers_idle && !s->finisher_busy;
  return next;
}

/* Under q_lock (released while finishing), with fin_ready and no finisher: this worker is the
 * finisher of the next call in execute order. */
static void finish_next_locked(graph_state *s) {
  htpu_call *done = s->fin_head;
  s->fin_head = done->fin_next;
  if (!s->fin_head) s->fin_tail = NULL;
  s->fin_next = done->ctl.fin_seq + 1;
  s->finisher_busy = 1;
  pthread_mutex_unlock(&s->q_lock);
  call_finish(done);
  pthread_mutex_lock(&s->q_lock);
  s->finisher_busy = 0;
}

/* Under q_lock, with nothing to execute or finish: while another call executes, its end will
 * need a finisher, so this worker sleeps until near that end and spins around it. 1 when it
 * waited (the caller looks for work again), 0 when there is nothing to wait near: the caller
 * goes idle. Nothing held while sleeping or spinning; an execute that overran its expected end
 * by more than the edge (a stall) is waited for without spinning. */
static int wait_near_execute_locked(graph_state *s) {
  uint64_t est = atomic_load_explicit(&s->last_exec_ns, memory_order_relaxed);
  if (!s->running || s->finisher_busy || !est) return 0;
  uint64_t started = atomic_load_explicit(&s->exec_started_ns, memory_order_relaxed);
  uint64_t edge = CALL_SPIN_EDGE_NS + est / 8, end = started + est, now = htpu_now_ns();
  if (edge > CALL_SPIN_EDGE_MAX_NS) edge = CALL_SPIN_EDGE_MAX_NS;
  if (now + edge < end) {
    uint64_t at = end - edge;
    struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
    s->workers_idle++; /* an execute that ends sooner wakes it */
    pthread_cond_timedwait(&s->worker_cv, &s->q_lock, &ts);
    s->workers_idle--;
    return 1;
  }
  if (now >= end + edge) return 0;
  if (spin_for_poke(s, end + edge)) return 1;
  /* the next execute began meanwhile (the one it waited for ended elsewhere) */
  return atomic_load_explicit(&s->exec_started_ns, memory_order_relaxed) != started;
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
    if (!call && s->worker_ctl) call = take_granted_locked(s);
    if (call) {
      call = execute_granted(s, call, &wake);
      continue;
    }
    if (fin_ready(s) && !s->finisher_busy) {
      finish_next_locked(s);
      continue;
    }
    if (s->worker_stop) break;
    if (wait_near_execute_locked(s)) continue;
    s->workers_idle++;
    int linger_over = idle_wait(s);
    s->workers_idle--;
    if (linger_over) break;
  }
  exit_slot_locked(s);
  pthread_mutex_unlock(&s->q_lock);
  STAT_SUB(worker_threads, 1); /* nothing of s is touched from here */
  return NULL;
}

/* A worker's stack: graphExecute on the host side is FastRPC calls (the BEAM's dirty IO
 * schedulers run it on 320 KB); a small stack keeps thousands of busy models affordable. */
#define CALL_WORKER_STACK (1024u * 1024u)

/* Under q_lock: every free slot gets a running worker; exited ones are joined first (they
 * have let go of q_lock for good, so the join is short). */
int start_worker_locked(graph_state *s, int want) {
  int live = 0, e = 0;
  for (int i = 0; i < CALL_WORKERS; i++) {
    if (s->worker_slot[i] == WORKER_GONE) {
      pthread_join(s->workers[i], NULL);
      s->worker_slot[i] = WORKER_FREE;
    }
    live += s->worker_slot[i] == WORKER_LIVE;
  }
  if (live >= want) return 0;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the host's signal handlers never run on them */
  pthread_attr_t attr;
  int has_attr = pthread_attr_init(&attr) == 0;
  if (has_attr) (void)pthread_attr_setstacksize(&attr, CALL_WORKER_STACK);
  for (int i = 0; !e && live < want && i < CALL_WORKERS; i++) {
    if (s->worker_slot[i] != WORKER_FREE) continue;
    e = pthread_create(&s->workers[i], has_attr ? &attr : NULL, worker_main, s);
    if (!e) {
      s->worker_slot[i] = WORKER_LIVE;
      live++;
      STAT_ADD(worker_threads, 1);
    }
  }
  if (has_attr) pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!live)
    return htpu_set_error(HTPU_ENOMEM, 0, "graph '%s': could not start its worker thread (%s)",
                          s->name, strerror(e));
  return 0; /* one worker is enough to run every call, only without overlap */
}

void calls_stop_worker(graph_state *s) {
  /* No submit can come now (the state's last handle is gone): a slot not free now is a thread
   * to join, whether it exits for the stop or has exited already. */
  int join[CALL_WORKERS];
  pthread_mutex_lock(&s->q_lock);
  s->worker_stop = 1;
  for (int i = 0; i < CALL_WORKERS; i++) join[i] = s->worker_slot[i] != WORKER_FREE;
  pthread_cond_broadcast(&s->worker_cv);
  pthread_mutex_unlock(&s->q_lock);
  for (int i = 0; i < CALL_WORKERS; i++)
    if (join[i]) pthread_join(s->workers[i], NULL);
}
