/*
 * exec_queue.c - one FIFO per graph, shared by graphExecute and graphExecuteAsync (QnnGraph.h:
 * "both functions operate on the same queue"), and the backend-owned thread per graph that
 * runs the async executes and calls their notify functions.
 *
 * A blocking caller queues a job on its own stack and runs the execute itself when its job is
 * at the head and nothing of the graph runs; the graph's worker thread does the same for async
 * jobs, and its notifier thread calls their notify functions in the order they ended. Waits
 * end early when the job's signal says stop (an abort, or a timeout counted from the call's
 * start): a queued job leaves the queue then, and an async one is notified with 6031/6033.
 *
 * The queue knows nothing of what an execute is: the worker and the notifier call the run and
 * finish functions the async job carries (graph_exec.c's), so this file calls only sched.c.
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

static void push_done(rb_graph *g, rb_job *j) {
  j->next = NULL;
  if (g->done_tail)
    g->done_tail->next = j;
  else
    g->done_head = j;
  g->done_tail = j;
}

/* Runs the async job at the head of the queue whenever the graph is free. A stopped job at
 * the head is the notifier's to take out. */
static void *worker_main(void *arg) {
  rb_graph *g = arg;
  pthread_mutex_lock(&g_sched.lock);
  while (!g->worker_stop) {
    rb_job *h = g->q_head;
    if (h && h->async && !g->running && rb_watch_check_locked(&h->watch) == RB_STOP_NONE) {
      q_unlink(g, h);
      g->async_waiting--;
      g->running = true;
      pthread_cond_broadcast(&g_sched.cond);
      pthread_mutex_unlock(&g_sched.lock);
      h->rc = h->run(h);
      pthread_mutex_lock(&g_sched.lock);
      g->running = false;
      push_done(g, h);
      pthread_cond_broadcast(&g_sched.cond);
      continue;
    }
    rb_sched_wait_locked(NULL, 0);
  }
  pthread_mutex_unlock(&g_sched.lock);
  return NULL;
}

/* Calls the notify functions in the order the executes ended, and takes queued async jobs
 * whose signal fired out of the queue at once (QnnGraph.h: "all pending executions in the
 * queue are affected by Signal control"), also while the worker is busy running one. */
static void *notifier_main(void *arg) {
  rb_graph *g = arg;
  pthread_mutex_lock(&g_sched.lock);
  for (;;) {
    for (rb_job *j = g->q_head, *next; j; j = next) {
      next = j->next;
      rb_stop why;
      if (!j->async || (why = rb_watch_check_locked(&j->watch)) == RB_STOP_NONE) continue;
      q_unlink(g, j);
      g->async_waiting--;
      j->queued_stop = why;
      push_done(g, j);
      pthread_cond_broadcast(&g_sched.cond);
    }
    rb_job *d = g->done_head;
    if (d) {
      g->done_head = d->next;
      if (!g->done_head) g->done_tail = NULL;
      pthread_mutex_unlock(&g_sched.lock);
      d->finish(d); /* notifies, lets the call go and frees d */
      pthread_mutex_lock(&g_sched.lock);
      continue;
    }
    if (g->worker_stop) break;
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
    if (pthread_create(&g->worker, NULL, worker_main, g) != 0) {
      *failed = true;
    } else if (pthread_create(&g->notifier, NULL, notifier_main, g) != 0) {
      g->worker_stop = true;
      pthread_cond_broadcast(&g_sched.cond);
      pthread_mutex_unlock(&g_sched.lock);
      pthread_join(g->worker, NULL);
      pthread_mutex_lock(&g_sched.lock);
      g->worker_stop = false;
      *failed = true;
    } else {
      g->worker_started = true;
    }
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
  if (started) {
    pthread_join(g->worker, NULL);
    pthread_join(g->notifier, NULL);
  }
  g->worker_started = false;
}
