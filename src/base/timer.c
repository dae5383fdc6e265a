/* timer.c - the process-wide timer thread (timer.h). */
#include "timer.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "stats.h"

static pthread_mutex_t tm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tm_cv;      /* the thread waits for the head's due time or a new head */
static pthread_cond_t tm_done_cv; /* a callback ended (timer_disarm waits for it) */
static pthread_once_t tm_once = PTHREAD_ONCE_INIT;
static htimer *tm_head;
static htimer *tm_firing;
static pthread_t tm_thread;
static int tm_running, tm_stop, tm_joining;
static unsigned tm_users;
/* What the thread sleeps until, under tm_lock: 0 while it is awake (it looks at the head
 * again before it sleeps), UINT64_MAX while it waits for any entry. An entry due later than
 * this needs no wake-up: the thread wakes by then and finds it. A futex wake costs the arming
 * thread ~10 us on a loaded host, which every execute that arms its deadline would pay. */
static uint64_t tm_sleep_until;
/* The due time of the latest arm, under tm_lock. With the list empty the thread sleeps until
 * then, not "for any entry" nor until an older, later target: a call that armed its deadline,
 * woke the thread and disarmed before the thread ran (short calls on a slow host) leaves an
 * empty list, and either sleep would make the next call's arm wake it again, and so on for
 * every call (seen under ThreadSanitizer: 93 wake-ups for 200 calls). Back-to-back calls arm
 * ever later deadlines, so after one wake-up theirs are all later than the sleep. */
static uint64_t tm_target;
static _Thread_local int tm_is_thread;

static void tm_init(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&tm_cv, &a);
  pthread_condattr_destroy(&a);
  pthread_cond_init(&tm_done_cv, NULL);
}

static void unlink_locked(htimer *t) {
  if (!t->armed) return;
  if (t->prev) t->prev->next = t->next;
  else tm_head = t->next;
  if (t->next) t->next->prev = t->prev;
  t->prev = t->next = NULL;
  t->armed = 0;
}

static void *tm_main(void *arg) {
  (void)arg;
  tm_is_thread = 1;
  pthread_mutex_lock(&tm_lock);
  while (!tm_stop) {
    htimer *t = tm_head;
    uint64_t now = htpu_now_ns();
    if (!t && tm_target <= now) {
      tm_sleep_until = UINT64_MAX;
      pthread_cond_wait(&tm_cv, &tm_lock);
      tm_sleep_until = 0;
      continue;
    }
    if (!t || t->when > now) {
      /* The head's due time, kept as the target even if the entry is disarmed meanwhile: the
       * deadlines armed after it (short calls come back to back) are later, so they wake
       * nobody. With no entry, the latest armed (tm_target). */
      uint64_t until = t ? t->when : tm_target;
      tm_sleep_until = until;
      struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
      pthread_cond_timedwait(&tm_cv, &tm_lock, &ts);
      tm_sleep_until = 0;
      continue;
    }
    unlink_locked(t);
    tm_firing = t;
    /* Read under the lock: another thread may arm the entry again while its callback runs
     * (a cancel of a call whose deadline is firing) and writes fn as it does. */
    void (*fn)(htimer *) = t->fn;
    pthread_mutex_unlock(&tm_lock);
    fn(t);
    pthread_mutex_lock(&tm_lock);
    tm_firing = NULL;
    pthread_cond_broadcast(&tm_done_cv);
  }
  pthread_mutex_unlock(&tm_lock);
  return NULL;
}

/* Under tm_lock. The thread blocks every signal: the host's handlers (the BEAM's) must never
 * run on it. */
static void start_locked(void) {
  if (tm_running || tm_joining) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  tm_stop = 0;
  if (pthread_create(&tm_thread, NULL, tm_main, NULL) == 0) tm_running = 1;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void timer_arm(htimer *t, uint64_t when, void (*fn)(htimer *)) {
  pthread_once(&tm_once, tm_init);
  pthread_mutex_lock(&tm_lock);
  unlink_locked(t);
  t->when = when;
  t->fn = fn;
  /* Sorted insert, walking from the head (the list holds the deadlines armed now: a few). */
  htimer *after = NULL;
  for (htimer *p = tm_head; p; p = p->next) {
    if (p->when > when) break;
    after = p;
  }
  t->prev = after;
  t->next = after ? after->next : tm_head;
  if (t->next) t->next->prev = t;
  if (after) after->next = t;
  else tm_head = t;
  t->armed = 1;
  start_locked();
  tm_target = when;
  if (tm_head == t && tm_sleep_until != 0 && when < tm_sleep_until) {
    STAT_ADD(timer_wakeups, 1);
    pthread_cond_signal(&tm_cv);
  }
  pthread_mutex_unlock(&tm_lock);
}

void timer_disarm(htimer *t) {
  pthread_once(&tm_once, tm_init);
  pthread_mutex_lock(&tm_lock);
  /* A callback in progress may arm its entry again (an abort retried after an idle answer):
   * taken off again once it has returned, so the owner may free the entry. */
  for (;;) {
    unlink_locked(t);
    if (tm_firing != t || tm_is_thread) break;
    pthread_cond_wait(&tm_done_cv, &tm_lock);
  }
  pthread_mutex_unlock(&tm_lock);
}

void timer_retain(void) {
  pthread_once(&tm_once, tm_init);
  pthread_mutex_lock(&tm_lock);
  tm_users++;
  pthread_mutex_unlock(&tm_lock);
}

static void stop_and_join(int only_unused) {
  pthread_mutex_lock(&tm_lock);
  int join = tm_running && !tm_joining && !tm_is_thread && (!only_unused || tm_users == 0);
  if (join) {
    tm_joining = 1;
    tm_stop = 1;
    pthread_cond_signal(&tm_cv);
  }
  pthread_mutex_unlock(&tm_lock);
  if (!join) return;
  pthread_join(tm_thread, NULL);
  pthread_mutex_lock(&tm_lock);
  tm_running = 0;
  tm_joining = 0;
  /* Something armed meanwhile (a call outliving its runtime's close): serve it. */
  if (tm_head) start_locked();
  pthread_mutex_unlock(&tm_lock);
}

void timer_release(void) {
  pthread_once(&tm_once, tm_init);
  pthread_mutex_lock(&tm_lock);
  if (tm_users) tm_users--;
  pthread_mutex_unlock(&tm_lock);
  stop_and_join(1);
}

int timer_on_thread(void) { return tm_is_thread; }

__attribute__((destructor)) static void timer_unload(void) {
  if (tm_running) stop_and_join(0);
}
