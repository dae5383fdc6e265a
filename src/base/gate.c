/* gate.c - the execute gate between executes and context lifecycle (gate.h). */
#include "gate.h"

#include <time.h>

#include "stats.h"

exec_gate htpu_exec_gate = EXEC_GATE_INITIALIZER;

/* The gate's condition variable on CLOCK_MONOTONIC: a wall-clock step (the board sets its
 * clock over NTP after boot) must not stretch a timed wait. Made once, before any timed wait;
 * untimed waits and broadcasts before that use the statically initialised one, which this
 * replaces only while nobody can be waiting on it (under the lock, no waiter yet). */
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

/* A reader may enter: no writer active, and no writer holding readers back. */
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

static void lane_enter(gate_lane *lane, const void *owner) {
  if (!lane) return;
  if (lane->owner != owner) lane->switch_wanted = 0;
  lane->owner = owner;
  lane->count++;
}

int gate_enter_shared(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns,
                      unsigned *round, gate_lane *lane, const void *owner) {
  pthread_mutex_lock(&g->lock);
  while (!readers_may_enter(g) || lane_taken(lane, owner)) {
    if (stopped(stop, deadline_ns)) {
      pthread_mutex_unlock(&g->lock);
      return 0;
    }
    wait_until(g, deadline_ns);
  }
  *round = g->round & 1u;
  g->readers[*round]++;
  lane_enter(lane, owner);
  pthread_mutex_unlock(&g->lock);
  return 1;
}

int gate_try_enter_shared(exec_gate *g, unsigned *round, gate_lane *lane, const void *owner) {
  pthread_mutex_lock(&g->lock);
  /* a no-wait reader never raises switch_wanted: it does not wait */
  int ok = readers_may_enter(g) &&
           !(lane && lane->count && (lane->owner != owner || lane->switch_wanted));
  if (ok) {
    *round = g->round & 1u;
    g->readers[*round]++;
    lane_enter(lane, owner);
  }
  pthread_mutex_unlock(&g->lock);
  return ok;
}

void gate_leave_shared(exec_gate *g, unsigned round, gate_lane *lane) {
  pthread_mutex_lock(&g->lock);
  /* a reader waiting for the lane waits on the gate's condition variable too */
  int wake = --g->readers[round] == 0 && g->writers_waiting;
  if (lane && --lane->count == 0) {
    lane->owner = NULL;
    lane->switch_wanted = 0; /* a waiter still there says so again */
    wake = 1;
  }
  if (wake) pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
}

/* Under the lock, for a waiting writer with no writer active: moves the hold on. Returns when
 * the writer should look again at once (0) or the time to wake up at (its hold's end), and
 * UINT64_MAX for "until a reader leaves". */
static uint64_t writer_step(exec_gate *g, uint64_t now) {
  if (g->beside) {
    /* The round it waited for has ended: hold new readers back again, now until it enters. */
    if (g->readers[(g->round + 1u) & 1u] == 0) {
      g->beside = 0;
      return 0;
    }
    return UINT64_MAX;
  }
  if (g->opened) return UINT64_MAX;
  if (now < g->hold_until) return g->hold_until;
  /* The readers it holds the gate for overran the hold: new ones enter beside them, in the
   * next round, while it waits for this one. */
  g->beside = 1;
  g->opened = 1;
  g->round++;
  pthread_cond_broadcast(&g->cond);
  return UINT64_MAX;
}

int gate_enter_exclusive(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns) {
  STAT_ADD(gate_writers, 1);
  pthread_mutex_lock(&g->lock);
  if (g->writers_waiting++ == 0 && !g->writer_active) {
    g->hold_until = htpu_now_ns() + GATE_HOLD_NS;
    g->beside = g->opened = 0;
  }
  while (g->writer_active || g->readers[0] + g->readers[1]) {
    if (stopped(stop, deadline_ns)) {
      if (--g->writers_waiting == 0) g->beside = g->opened = 0;
      pthread_cond_broadcast(&g->cond); /* readers held back for it may enter */
      pthread_mutex_unlock(&g->lock);
      STAT_SUB(gate_writers, 1);
      return 0;
    }
    uint64_t until = g->writer_active ? UINT64_MAX : writer_step(g, htpu_now_ns());
    if (until == 0) continue;
    if (deadline_ns && (until == UINT64_MAX || deadline_ns < until)) until = deadline_ns;
    wait_until(g, until == UINT64_MAX ? 0 : until);
  }
  g->writers_waiting--;
  g->writer_active = 1;
  g->beside = g->opened = 0; /* the next waiting writer gets a hold of its own */
  pthread_mutex_unlock(&g->lock);
  return 1;
}

void gate_leave_exclusive(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  g->writer_active = 0;
  /* The next writer's hold starts now: the time it waited behind this one was not readers'. */
  if (g->writers_waiting) g->hold_until = htpu_now_ns() + GATE_HOLD_NS;
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
