/* janitor.c - deferred frees on a thread of their own (janitor.h). */
#include "janitor.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "gate.h"
#include "stats.h"

#define JANITOR_LINGER_NS 1000000000ull /* an idle janitor goes after a second */

typedef struct task {
  janitor_fn fn;
  void *arg;
  int gated; /* the execute gate entered (exclusively) before fn runs */
  struct task *next;
} task;

static pthread_mutex_t jn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jn_cv;
static pthread_once_t jn_once = PTHREAD_ONCE_INIT;
static task *jn_head, *jn_tail;
static pthread_t jn_thread;
static int jn_state; /* 0 none, 1 running, 2 exited (to be joined) */
static unsigned jn_pending;
static int jn_stop; /* unload: an idle janitor goes now */

static void jn_init(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&jn_cv, &a);
  pthread_condattr_destroy(&a);
}

/* Under jn_lock: the next task, waiting for one up to the linger. NULL: time to go. */
static task *next_task(void) {
  uint64_t until = htpu_now_ns() + JANITOR_LINGER_NS;
  while (!jn_head && !jn_stop && htpu_now_ns() < until) {
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    pthread_cond_timedwait(&jn_cv, &jn_lock, &ts);
  }
  task *t = jn_head;
  if (t && !(jn_head = t->next)) jn_tail = NULL;
  return t;
}

static void *jn_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&jn_lock);
  for (task *t; (t = next_task());) {
    pthread_mutex_unlock(&jn_lock);
    if (t->gated) gate_enter_exclusive(&htpu_exec_gate, NULL, 0);
    t->fn(t->arg);
    free(t);
    pthread_mutex_lock(&jn_lock);
    jn_pending--;
  }
  jn_state = 2;
  pthread_mutex_unlock(&jn_lock);
  return NULL;
}

/* Under jn_lock: the thread running (an exited one joined first: it let go of jn_lock for
 * good). 0, or -1 when it cannot start. */
static int ensure_thread(void) {
  if (jn_state == 1) return 0;
  if (jn_state == 2) pthread_join(jn_thread, NULL);
  jn_state = 0;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the host's signal handlers never run on it */
  int e = pthread_create(&jn_thread, NULL, jn_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e) return -1;
  jn_state = 1;
  return 0;
}

static int defer(janitor_fn fn, void *arg, int gated) {
  pthread_once(&jn_once, jn_init);
  task *t = malloc(sizeof *t);
  if (!t) return -1;
  t->fn = fn;
  t->arg = arg;
  t->gated = gated;
  t->next = NULL;
  pthread_mutex_lock(&jn_lock);
  if (ensure_thread() != 0) {
    pthread_mutex_unlock(&jn_lock);
    free(t);
    return -1;
  }
  if (jn_tail) jn_tail->next = t;
  else jn_head = t;
  jn_tail = t;
  jn_pending++;
  pthread_cond_signal(&jn_cv);
  pthread_mutex_unlock(&jn_lock);
  return 0;
}

int janitor_defer(janitor_fn fn, void *arg) { return defer(fn, arg, 0); }

void janitor_run_gated(janitor_fn fn, void *arg) {
  if (gate_enter_exclusive(&htpu_exec_gate, NULL, htpu_now_ns() + GATE_HOLD_NS)) {
    fn(arg);
    return;
  }
  STAT_ADD(frees_deferred, 1);
  if (defer(fn, arg, 1) != 0) { /* no thread: wait here, as before */
    gate_enter_exclusive(&htpu_exec_gate, NULL, 0);
    fn(arg);
  }
}

unsigned janitor_pending(void) {
  pthread_mutex_lock(&jn_lock);
  unsigned n = jn_pending;
  pthread_mutex_unlock(&jn_lock);
  return n;
}

/* Library unload: what was handed over is finished first (its code is about to go). */
__attribute__((destructor)) static void janitor_unload(void) {
  pthread_mutex_lock(&jn_lock);
  int state = jn_state;
  jn_state = 0;
  jn_stop = 1;
  if (state == 1) pthread_cond_signal(&jn_cv);
  pthread_mutex_unlock(&jn_lock);
  if (state) pthread_join(jn_thread, NULL);
}
