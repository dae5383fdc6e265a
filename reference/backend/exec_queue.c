/*
 * exec_queue.c - one FIFO per graph, shared by graphExecute and graphExecuteAsync (QnnGraph.h:
 * "both functions operate on the same queue"), and the backend-owned thread per graph that
 * runs the async executes and calls their notify functions.
 *
 * A blocking caller queues a job on its own stack and runs the execute itself when its job is
 * at the head and nothing of the graph runs; the worker does the same for async jobs. Waits
 * end early when the job's signal says stop (an abort, or a timeout counted from the call's
 * start): a queued job leaves the queue then, and an async one is notified with 6031/6033.
 */
#include <stdlib.h>

#include "rb_internal.h"

static void q_append(rb_graph *g, rb_job *j) {
  j->next = NULL;
  if (g->q_tail)
    g->q_tail->next = j;
  else
    g->q_head = j;
  g->q_tail = j;
}

static void q_unlink(rb_graph *g, rb_job *j) {
  rb_job *prev = NULL;
  for (rb_job *p = g->q_head; p; prev = p, p = p->next) {
    if (p != j) continue;
    if (prev)
      prev->next = j->next;
    else
      g->q_head = j->next;
    if (g->q_tail == j) g->q_tail = prev;
    j->next = NULL;
    return;
  }
}

rb_stop rb_queue_wait_turn(rb_graph *g, rb_job *j) {
  pthread_mutex_lock(&g_sched.lock);
  q_append(g, j);
  rb_stop s;
  for (;;) {
    if (g->q_head == j && !g->running) {
      q_unlink(g, j);
      g->running = true;
      s = RB_STOP_NONE;
      break;
    }
    if ((s = rb_watch_check_locked(&j->watch)) != RB_STOP_NONE) {
      q_unlink(g, j);
      pthread_cond_broadcast(&g_sched.cond); /* the job behind may be next now */
      break;
    }
    rb_sched_wait_locked(&j->watch, 0);
  }
  pthread_mutex_unlock(&g_sched.lock);
  return s;
}

void rb_queue_done(rb_graph *g) {
  pthread_mutex_lock(&g_sched.lock);
  g->running = false;
  pthread_cond_broadcast(&g_sched.cond);
  pthread_mutex_unlock(&g_sched.lock);
}

/* The earliest deadline of the async jobs queued on g (0: none); g_sched.lock held. */
static uint64_t next_deadline(const rb_graph *g) {
  uint64_t until = 0;
  for (const rb_job *j = g->q_head; j; j = j->next)
    if (j->async && j->watch.deadline_ns && (!until || j->watch.deadline_ns < until))
      until = j->watch.deadline_ns;
  return until;
}

static void *worker_main(void *arg) {
  rb_graph *g = arg;
  pthread_mutex_lock(&g_sched.lock);
  while (!g->worker_stop) {
    /* QnnGraph.h: "all pending executions in the queue are affected by Signal control" */
    rb_job *stopped = NULL;
    rb_stop why = RB_STOP_NONE;
    for (rb_job *j = g->q_head; j && !stopped; j = j->next)
      if (j->async && (why = rb_watch_check_locked(&j->watch)) != RB_STOP_NONE) stopped = j;
    if (stopped) {
      q_unlink(g, stopped);
      g->async_waiting--;
      pthread_cond_broadcast(&g_sched.cond);
      pthread_mutex_unlock(&g_sched.lock);
      rb_async_complete(stopped, rb_graph_stopped(stopped->g, "graphExecuteAsync",
                                                  &stopped->watch, why,
                                                  "while waiting in the graph's queue"));
      pthread_mutex_lock(&g_sched.lock);
      continue;
    }
    rb_job *h = g->q_head;
    if (h && h->async && !g->running) {
      q_unlink(g, h);
      g->async_waiting--;
      g->running = true;
      pthread_cond_broadcast(&g_sched.cond);
      pthread_mutex_unlock(&g_sched.lock);
      qnn_error_t rc =
          rb_execute_turn(g, "graphExecuteAsync", NULL, 0, NULL, 0, &h->bufs, &h->watch);
      rb_queue_done(g);
      rb_async_complete(h, rc);
      pthread_mutex_lock(&g_sched.lock);
      continue;
    }
    rb_sched_wait_locked(NULL, next_deadline(g));
  }
  pthread_mutex_unlock(&g_sched.lock);
  return NULL;
}

rb_stop rb_queue_async(rb_graph *g, rb_job *j, uint32_t depth, bool *failed) {
  *failed = false;
  pthread_mutex_lock(&g_sched.lock);
  rb_stop s = RB_STOP_NONE;
  /* QnnGraph.h: "if the execution queue is full, this function will block until space is
   * available" */
  while (g->async_waiting >= depth && (s = rb_watch_check_locked(&j->watch)) == RB_STOP_NONE)
    rb_sched_wait_locked(&j->watch, 0);
  if (s == RB_STOP_NONE && !g->worker_started) {
    if (pthread_create(&g->worker, NULL, worker_main, g) != 0)
      *failed = true;
    else
      g->worker_started = true;
  }
  if (s == RB_STOP_NONE && !*failed) {
    q_append(g, j);
    g->async_waiting++;
    g->async_pending++;
    pthread_cond_broadcast(&g_sched.cond);
  }
  pthread_mutex_unlock(&g_sched.lock);
  return s;
}

void rb_queue_stop_worker(rb_graph *g) {
  pthread_mutex_lock(&g_sched.lock);
  bool started = g->worker_started;
  g->worker_stop = true;
  pthread_cond_broadcast(&g_sched.cond);
  pthread_mutex_unlock(&g_sched.lock);
  if (started) pthread_join(g->worker, NULL);
  g->worker_started = false;
}
