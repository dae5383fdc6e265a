/*
 * gate.h - the execute gate: executes enter shared, context create/free and recovery
 * exclusive.
 *
 * One gate for the whole process, not one per runtime: the DSP process domain is shared by
 * every runtime in the process, and creating a context can tear it down and recreate it. No
 * execute is in flight while QNN creates or frees a context (on the board, loading while
 * another graph executes has coincided with device resets): that is the gate's one rule.
 *
 * How the waits share it (docs/architecture.md, "The execute gate"):
 * - A writer (load, free, recovery) that must wait holds new executes back for GATE_HOLD_NS,
 *   so a steady stream of inferences never starves it. If the executes it waits for have not
 *   ended by then (one is hung, or simply long), new executes enter beside them (they count in
 *   the next round): one stuck graphExecute plus a waiting load must not freeze every model of
 *   the VM. Once the executes it waited for have ended, the writer holds new ones back for good
 *   and waits for the ones admitted meanwhile (once per writer: letting executes in again
 *   could starve it when every execute is longer than the hold); it enters when none is in
 *   flight.
 * - Every wait ends at its deadline or stop: an execute waiting to enter gives up when its
 *   call's `stop` flag is raised (the timer raises it at the deadline and pokes the gate, as
 *   does a cancel or close), a writer at its own deadline.
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

/* How long a waiting writer holds new executes back before it lets them in beside the ones it
 * waits for: above the longest ordinary execute on the board (tens of milliseconds), far below
 * any deadline worth setting. */
#define GATE_HOLD_NS 100000000ull /* 100 ms */

typedef struct exec_gate {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* CLOCK_MONOTONIC: made on first use (gate_wait_until) */
  unsigned readers[2]; /* executes in flight, by the round they entered in */
  unsigned round;      /* new readers count in readers[round & 1] */
  unsigned writers_waiting;
  int writer_active;
  /* A waiting writer's hold ran out: new readers enter beside the round it waits for
   * (readers[(round + 1) & 1]). */
  int beside;
  int opened;          /* the waiting writer let readers in beside once already */
  uint64_t hold_until; /* CLOCK_MONOTONIC ns */
  int mono;            /* cond was remade on CLOCK_MONOTONIC (before the first wait) */
} exec_gate;

#define EXEC_GATE_INITIALIZER \
  {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0, 0}, 0, 0, 0, 0, 0, 0, 0}

/* The process-wide gate. */
extern exec_gate htpu_exec_gate;

/* A lane of the gate: readers that enter through one lane for different owners run one owner
 * at a time (the contexts sharing one spill-fill buffer: each context's graphs may run beside
 * each other, as without a group, but not beside another context's). Guarded by the gate's
 * mutex; zeroed is idle. */
typedef struct gate_lane {
  const void *owner; /* whose readers are in it */
  unsigned count;    /* how many */
  int switch_wanted; /* another owner waits: the owner's new readers wait too (no starving) */
} gate_lane;

/* Enters shared (an execute): 1 entered, *round set for the leave; 0 when *stop became
 * non-zero (NULL: never) or deadline_ns (CLOCK_MONOTONIC, 0: none) passed while it waited.
 * With a lane (NULL: none) it also waits until the lane is idle or `owner`'s, and stays in it
 * until it leaves. */
int gate_enter_shared(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns,
                      unsigned *round, gate_lane *lane, const void *owner);
/* Enters shared only if that needs no wait (nor for its lane): 1 entered, 0 not. For no-wait
 * executes; the gate's own mutex is held only for bookkeeping. */
int gate_try_enter_shared(exec_gate *g, unsigned *round, gate_lane *lane, const void *owner);
void gate_leave_shared(exec_gate *g, unsigned round, gate_lane *lane);
/* Enters exclusive (a load, free or recovery): 1 entered; 0 when *stop became non-zero (NULL:
 * never) or deadline_ns (0: none) passed while it waited. */
int gate_enter_exclusive(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns);
void gate_leave_exclusive(exec_gate *g);
/* Wakes every waiter of the gate to look at its stop flag and deadline again (the timer
 * thread, after raising a call's stop). */
void gate_poke(exec_gate *g);
/* Sleeps until deadline_ns or until *stop is non-zero (a recovery's backoff, holding the gate
 * exclusively: its call's deadline, cancel or close ends it). 1: slept to the deadline. */
int gate_sleep(exec_gate *g, const atomic_int *stop, uint64_t deadline_ns);

#endif
