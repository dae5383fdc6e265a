/* gate.c - writer-preferring gate between executes and context lifecycle. */
#include "gate.h"

exec_gate htpu_exec_gate = EXEC_GATE_INITIALIZER;

void gate_enter_shared(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  while (g->writer_active || g->writers_waiting) pthread_cond_wait(&g->cond, &g->lock);
  g->readers++;
  pthread_mutex_unlock(&g->lock);
}

int gate_try_enter_shared(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  int ok = !g->writer_active && !g->writers_waiting;
  if (ok) g->readers++;
  pthread_mutex_unlock(&g->lock);
  return ok;
}

void gate_leave_shared(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  if (--g->readers == 0) pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
}

void gate_enter_exclusive(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  g->writers_waiting++;
  while (g->writer_active || g->readers) pthread_cond_wait(&g->cond, &g->lock);
  g->writers_waiting--;
  g->writer_active = 1;
  pthread_mutex_unlock(&g->lock);
}

void gate_leave_exclusive(exec_gate *g) {
  pthread_mutex_lock(&g->lock);
  g->writer_active = 0;
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
}
