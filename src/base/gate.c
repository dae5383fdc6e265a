/* gate.c - the execute gate between executes and QNN session lifecycle (gate.h). */
#include "gate.h"

#include <time.h>

#include "stats.h"

exec_gate htpu_exec_gate = EXEC_GATE_INITIALIZER;

/* The gate's condition variable on CLOCK_MONOTONIC: a wall-clock step (the board sets its
 * clock over NTP after boot) must not stretch a timed wait. Remade under the lock before the
 * first wait of all, when nobody can be waiting on the statically initialised one. */
static pthread_once_t mono_once = PTHREAD_ONCE_INIT;
static pthread_condattr_t mono_attr;
static void mono_init(void) {
  pthread_condattr_init(&mono_attr);
  pthread_condattr_setclock(&mono_attr, CLOCK_MONOTONIC);
}

/* Under the lock: waits on the gate until `until` (0: no limit) or a broadcast. */
static void wait_until(exec_gate *g, uint64_t until) {
  if (!g->mono) {
    pthread_once(&mono_once, mono_init);
    pthread_cond_destroy(&g->cond);
    pthread_cond_init(&g->cond, &mono_attr);
    g->mono = 1;
  }
  if (!until) {
    pthread_cond_wait(&g->cond, &g->lock);
    return;
  }
  struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
  pthread_cond_timedwait(&g->cond, &g->lock, &ts);
}

static int stopped(const atomic_int *stop, uint64_t deadline_ns) {
  if (stop && atomic_load(stop)) return 1;
  return deadline_ns && htpu_now_ns() >= deadline_ns;
}

/* A reader may enter: no writer active, and none waiting unless a reader in flight is stuck. */
static int readers_may_enter(const exec_gate *g) {
  return !g->writer_active && (!g->writers_waiting || g->beside);
}

/* Whether owner's reader must wait for the lane: another owner is in it (and then wants it
 * back), or this owner is but another waits for it. */
static int lane_taken(gate_lane *lane, const void *owner) {
  if (!lane || !lane->count) return 0;
  if (lane->owner == owner) return lane->switch_wanted;
  lane->switch_wanted = 1;
  return 1;
}

/* Under the lock: r joins the readers in flight (and its lane), stuck after twice its usual
 * time. */
static void reader_add(exec_gate *g, gate_reader *r, uint64_t usual_ns, gate_lane *lane,
                       const void *owner) {
  uint64_t after = usual_ns > GATE_HOLD_NS / 2 ? 2 * usual_ns : GATE_HOLD_NS;
  r->stuck_at = htpu_now_ns() + after;
  r->prev = NULL;
  r->next = g->readers;
  if (g->readers) g->readers->prev = r;
  g->readers = r;
  r->lane = lane;
  if (!lane) return;
  if (lane->owner != owner) lane->switch_wanted = 0;
  lane->owner = owner;
  lane->count++;
}

int gate_enter_shared(exec_gate *g, gate_reader *r, uint64_t usual_ns, const atomic_int *stop,
                      uint64_t deadline_ns, gate_lane *lane, const void *owner) {
  pthread_mutex_lock(&g->lock);
  while (!readers_may_enter(g) || lane_taken(lane, owner)) {
    if (stopped(stop, deadline_ns)) {
      pthread_mutex_unlock(&g->lock);
      return 0;
    }
    wait_until(g, deadline_ns);
  }
  reader_add(g, r, usual_ns, lane, owner);
  pthread_mutex_unlock(&g->lock);
  return 1;
}

int gate_try_enter_shared(exec_gate *g, gate_reader *r, uint64_t usual_ns, gate_lane *lane,
                          const void *owner) {
  pthread_mutex_lock(&g->lock);
  /* a no-wait reader never raises switch_wanted: it does not wait */
  int ok = readers_may_enter(g) &&
           !(lane && lane->count && (lane->owner != owner || lane->switch_wanted));
  if (ok) reader_add(g, r, usual_ns, lane, owner);
  pthread_mutex_unlock(&g->lock);
  return ok;
}

void gate_leave_shared(exec_gate *g, gate_reader *r) {
  pthread_mutex_lock(&g->lock);
  if (r->prev) r->prev->next = r->next;
  else g->readers = r->next;
  if (r->next) r->next->prev = r->prev;
  int wake = g->writers_waiting != 0; /* it may enter, or hold back again */
  gate_lane *lane = r->lane;
  if (lane && --lane->count == 0) { /* readers waiting for the lane wait on the gate's cond */
    lane->owner = NULL;
    lane->switch_wanted = 0; /* a waiter still there says so again */
    wake = 1;
  }
  if (wake) pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
}

/* Under the lock, for waiting writers with no writer active: whether a reader in flight is
 * stuck (new readers then enter beside it; they are woken when that changes), and the time
 * the next one will be (0: none, or one is already). */
static uint64_t update_beside(exec_gate *g, uint64_t now) {
  int stuck = 0;
  uint64_t next = 0;
  for (gate_reader *r = g->readers; r; r = r->next) {
    if (now >= r->stuck_at) stuck = 1;
    else if (!next || r->stuck_at < next) next = r->stuck_at;
  }
  if (stuck != g->beside) {
    g->beside = stuck;
    pthread_cond_broadcast(&g->cond);
  }
  return stuck ? 0 : next;
}

int gate_enter_exclusive(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns) {
  STAT_ADD(gate_writers, 1);
  pthread_mutex_lock(&g->lock);
  g->writers_waiting++;
  while (g->writer_active || g->readers) {
    if (stopped(stop, deadline_ns)) {
      if (--g->writers_waiting == 0) g->beside = 0;
      pthread_cond_broadcast(&g->cond); /* readers held back for it may enter */
      pthread_mutex_unlock(&g->lock);
      STAT_SUB(gate_writers, 1);
      return 0;
    }
    uint64_t until = g->writer_active ? 0 : update_beside(g, htpu_now_ns());
    if (deadline_ns && (!until || deadline_ns < until)) until = deadline_ns;
    wait_until(g, until);
  }
  g->writers_waiting--;
  g->writer_active = 1;
  g->beside = 0;
  pthread_mutex_unlock(&g->lock);
  return 1;
}

void gate_leave_exclusive(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  g->writer_active = 0;
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
  STAT_SUB(gate_writers, 1);
}

void gate_poke(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
}

int gate_sleep(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns) {
  pthread_mutex_lock(&g->lock);
  while (!stopped(stop, 0) && htpu_now_ns() < deadline_ns) wait_until(g, deadline_ns);
  int slept = !(stop && atomic_load(stop));
  pthread_mutex_unlock(&g->lock);
  return slept;
}
