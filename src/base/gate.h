/*
 * gate.h - the execute gate: executes enter shared, QNN session lifecycle (backend and device
 * creation, context create and free, recovery) exclusive.
 *
 * One gate for the whole process, not one per runtime: the DSP process domain is shared by
 * every runtime in the process, and creating a context can tear it down and recreate it. No
 * execute is in flight while QNN creates or frees a context (on the board, loading while
 * another graph executes has coincided with device resets): that is the gate's one rule.
 *
 * How the waits share it (docs/architecture.md, "The execute gate and deadlines"):
 * - A writer (load, free, recovery) waits for the executes in flight and holds new executes
 *   back meanwhile, so a steady stream of inferences never starves it.
 * - Unless an execute in flight is stuck: in flight longer than it should be (twice its
 *   graph's usual duration, and at least GATE_HOLD_NS). While one is, new executes enter beside
 *   it: a hung graphExecute plus a waiting load must not freeze every model of the VM. The
 *   writer still enters as soon as none is in flight; executes that only take long (a model's
 *   usual second) are waited for as usual.
 * - Every wait ends at its deadline or stop: an execute waiting to enter gives up when its
 *   call's `stop` flag is raised (the timer raises it at the deadline and pokes the gate, as
 *   does a cancel or close), a writer at its own deadline or stop.
 *
 * An execute enters only once it holds its graph's turn, right before graphExecute, and
 * nothing holding the gate waits for a graph's turn: so the gate's readers are the executes in
 * flight, never the queues behind busy graphs.
 */
#ifndef HTPU_GATE_H
#define HTPU_GATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* The least time an execute is in flight before it counts as stuck (below: twice its graph's
 * usual duration when that is longer): above the ordinary executes on the board (tens of
 * milliseconds), far below any deadline worth setting. */
#define GATE_HOLD_NS 100000000ull /* 100 ms */

/* A lane of the gate: readers that enter through one lane for different owners run one owner
 * at a time (the contexts sharing one spill-fill buffer: each context's graphs may run beside
 * each other, as without a group, but not beside another context's). Guarded by the gate's
 * mutex; zeroed is idle. */
typedef struct gate_lane {
  const void *owner; /* whose readers are in it */
  unsigned count;    /* how many */
  int switch_wanted; /* another owner waits: the owner's new readers wait too (no starving) */
} gate_lane;

/* One execute in the gate, in the caller's memory from enter to leave. */
typedef struct gate_reader {
  uint64_t stuck_at; /* CLOCK_MONOTONIC ns: from then on it counts as stuck */
  struct gate_reader *prev, *next;
  gate_lane *lane; /* the lane it entered through, NULL: none */
} gate_reader;

typedef struct exec_gate {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* CLOCK_MONOTONIC: remade before the first wait (gate.c) */
  gate_reader *readers; /* the executes in flight */
  unsigned writers_waiting;
  int writer_active;
  int beside; /* a writer waits, but a reader in flight is stuck: new readers enter */
  int mono;   /* cond was remade on CLOCK_MONOTONIC */
} exec_gate;

#define EXEC_GATE_INITIALIZER {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0}

/* The process-wide gate. */
extern exec_gate htpu_exec_gate;

/* Enters shared (an execute) as r, expected to take about usual_ns (0: unknown): 1 entered; 0
 * when *stop became non-zero (NULL: never) or deadline_ns (CLOCK_MONOTONIC, 0: none) passed
 * while it waited. With a lane (NULL: none) it also waits until the lane is idle or `owner`'s,
 * and stays in it until it leaves. */
int gate_enter_shared(exec_gate *g, gate_reader *r, uint64_t usual_ns, const atomic_int *stop,
                      uint64_t deadline_ns, gate_lane *lane, const void *owner);
/* Enters shared only if that needs no wait (nor for its lane): 1 entered, 0 not. For no-wait
 * executes; the gate's own mutex is held only for bookkeeping. */
int gate_try_enter_shared(exec_gate *g, gate_reader *r, uint64_t usual_ns, gate_lane *lane,
                          const void *owner);
void gate_leave_shared(exec_gate *g, gate_reader *r);
/* Enters exclusive (a session's creation or free, a recovery): 1 entered; 0 when *stop became
 * non-zero (NULL: never) or deadline_ns (0: none) passed while it waited. */
int gate_enter_exclusive(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns);
void gate_leave_exclusive(exec_gate *g);
/* Wakes every waiter of the gate to look at its stop flag and deadline again (the timer
 * thread, after raising a call's stop). */
void gate_poke(exec_gate *g);
/* Sleeps until deadline_ns or until *stop is non-zero (a recovery's backoff, holding the gate
 * exclusively: its call's deadline, cancel or close ends it). 1: slept to the deadline. */
int gate_sleep(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns);

#endif
