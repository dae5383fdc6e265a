/*
 * sched.c - the one lock and condition variable of every wait in the backend (g_sched), the
 * monotonic clock, and how a watched call learns it must stop: its signal's abort or its
 * deadline. Below every object file (rb_internal.h's layers): a call's queue wait
 * (exec_queue.c), its injected latency (faults.c) and its run (graph_exec.c) all wait here, on
 * the signal a call took (signal.c).
 */
#include <time.h>

#include "rb_internal.h"

rb_sched g_sched = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

/* Deadlines are monotonic: the condition variable must wait on the same clock. */
__attribute__((constructor)) static void rb_sched_init(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_destroy(&g_sched.cond);
  pthread_cond_init(&g_sched.cond, &a);
  pthread_condattr_destroy(&a);
}

uint64_t rb_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- watching a call ---------------------------------------------------------------------- */

rb_stop rb_watch_check_locked(const rb_watch *w) {
  if (!w || !w->sig) return RB_STOP_NONE;
  if (w->sig->aborted_gen == w->gen) return RB_STOP_ABORT;
  if (w->deadline_ns && rb_mono_ns() >= w->deadline_ns) return RB_STOP_TIMEOUT;
  return RB_STOP_NONE;
}

rb_stop rb_watch_check(const rb_watch *w) {
  if (!w || !w->sig) return RB_STOP_NONE;
  pthread_mutex_lock(&g_sched.lock);
  rb_stop s = rb_watch_check_locked(w);
  pthread_mutex_unlock(&g_sched.lock);
  return s;
}

void rb_sched_wait_locked(const rb_watch *w, uint64_t until_ns) {
  uint64_t end = until_ns;
  if (w && w->deadline_ns && (!end || w->deadline_ns < end)) end = w->deadline_ns;
  if (!end) {
    pthread_cond_wait(&g_sched.cond, &g_sched.lock);
    return;
  }
  struct timespec ts = {(time_t)(end / 1000000000u), (long)(end % 1000000000u)};
  (void)pthread_cond_timedwait(&g_sched.cond, &g_sched.lock, &ts);
}

rb_stop rb_watch_sleep(const rb_watch *w, uint64_t usec) {
  if (!usec) return rb_watch_check(w);
  uint64_t end = rb_mono_ns() + usec * 1000u;
  pthread_mutex_lock(&g_sched.lock);
  rb_stop s;
  while ((s = rb_watch_check_locked(w)) == RB_STOP_NONE && rb_mono_ns() < end)
    rb_sched_wait_locked(w, end);
  pthread_mutex_unlock(&g_sched.lock);
  return s;
}
