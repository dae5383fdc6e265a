/*
 * gate.h - the execute gate: executes enter shared, context create/free exclusive.
 *
 * One gate for the whole process, not one per runtime: the DSP process domain is shared by
 * every runtime in the process, and creating a context can tear it down and recreate it.
 *
 * A writer-preferring reader/writer lock: once a context load or free is waiting, new
 * executes wait behind it, so a load is never starved by a steady stream of inferences, and
 * no execute is in flight while QNN creates or frees a context (on the board, loading while
 * another graph executes has coincided with device resets).
 *
 * An execute enters only once it holds its graph's lock, right before graphExecute, and nothing
 * holding the gate waits for a graph lock: so the gate's readers are the executes in flight,
 * never the queues behind busy graphs, and a load waits for those alone.
 */
#ifndef HTPU_GATE_H
#define HTPU_GATE_H

#include <pthread.h>

typedef struct exec_gate {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  unsigned readers;
  unsigned writers_waiting;
  int writer_active;
} exec_gate;

#define EXEC_GATE_INITIALIZER {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0}

/* The process-wide gate. */
extern exec_gate htpu_exec_gate;

void gate_enter_shared(exec_gate *g);
/* Enters shared only if that needs no wait (no writer active or waiting): 1 entered, 0 not.
 * For no-wait executes; the gate's own mutex is held only for bookkeeping. */
int gate_try_enter_shared(exec_gate *g);
void gate_leave_shared(exec_gate *g);
void gate_enter_exclusive(exec_gate *g);
void gate_leave_exclusive(exec_gate *g);

#endif
