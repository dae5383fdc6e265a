/* test_refbackend_async.c - graphExecuteAsync in the reference backend: off by default as on
 * the HTP, then (capability 304 on) notifications on a backend-owned thread in FIFO order, one
 * queue shared with graphExecute, the queue depth and its blocking, signals on async calls
 * (309), refused calls never notified, and contextFree's rule while calls are pending.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qnn/qnn_signal_abi.h"
#include "refb_rig.h"
#include "test.h"

#define MAX_CALLS 8

/* What the notify functions saw. */
typedef struct notes {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  unsigned count;
  int order[MAX_CALLS];               /* call index, in notification order */
  qnn_error_t status[MAX_CALLS];      /* by call index */
  pthread_t thread[MAX_CALLS];        /* by call index */
  rig *r;                             /* for a callback that calls back into QNN */
  qnn_error_t free_in_notify;         /* contextFree from inside a notification */
} notes;

typedef struct call {
  notes *n;
  int index;
} call;

static void notes_init(notes *n, rig *r) {
  memset(n, 0, sizeof(*n));
  pthread_mutex_init(&n->lock, NULL);
  pthread_cond_init(&n->cond, NULL);
  n->r = r;
  n->free_in_notify = 999;
}

static void notes_destroy(notes *n) {
  pthread_mutex_destroy(&n->lock);
  pthread_cond_destroy(&n->cond);
}

static void on_done(void *param, qnn_notify_status_t status) {
  call *c = param;
  notes *n = c->n;
  pthread_mutex_lock(&n->lock);
  n->order[n->count++] = c->index;
  n->status[c->index] = status.error;
  n->thread[c->index] = pthread_self();
  pthread_cond_broadcast(&n->cond);
  pthread_mutex_unlock(&n->lock);
}

/* Waits (up to 30 s) for `count` notifications. */
static int notes_wait(notes *n, unsigned count) {
  int ok = 1;
  pthread_mutex_lock(&n->lock);
  for (int i = 0; i < 30000 && n->count < count; i++) {
    pthread_mutex_unlock(&n->lock);
    usleep(1000);
    pthread_mutex_lock(&n->lock);
  }
  ok = n->count >= count;
  pthread_mutex_unlock(&n->lock);
  return ok ? 0 : -1;
}

static unsigned notes_count(notes *n) {
  pthread_mutex_lock(&n->lock);
  unsigned c = n->count;
  pthread_mutex_unlock(&n->lock);
  return c;
}

static qnn_error_t submit(rig *r, io *x, qnn_signal_handle_t s, call *c) {
  return r->t->graph_execute_async(r->g, x->in, x->nin, x->out, x->nout, NULL, s, on_done, c);
}

static void fill(io *x, float a) {
  for (int i = 0; i < 4; i++) {
    ((float *)x->buf[0])[i] = a;
    ((float *)x->buf[1])[i] = (float)i;
    ((float *)x->buf[2])[i] = -99.0f;
  }
}

TEST(refb_async_off_by_default) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  notes n;
  notes_init(&n, &r);
  call c = {&n, 0};
  log_clear();
  CHECK_EQ(r.t->property_has_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION),
           QNN_PROPERTY_ERROR_UNKNOWN_KEY);
  CHECK_EQ(submit(&r, &x, NULL, &c), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 304 off");
  CHECK_EQ(notes_count(&n), 0);
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.worker_started, 0);
  notes_destroy(&n);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_async_fifo_notifications_on_a_backend_thread) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  io x[5];
  notes n;
  notes_init(&n, &r);
  call c[5];
  htpu_ref_stats before = stats_of(&r.c);
  CHECK_EQ(r.c.set_latency("graphExecute", 20000), 0); /* so that calls queue up */
  for (int i = 0; i < 5; i++) {
    CHECK(io_init(&x[i], r.model, 0) == 0);
    fill(&x[i], (float)(10 * i));
    c[i] = (call){&n, i};
    CHECK_EQ(submit(&r, &x[i], NULL, &c[i]), QNN_SUCCESS);
  }
  CHECK_EQ(notes_wait(&n, 5), 0);
  for (int i = 0; i < 5; i++) {
    CHECK_EQ(n.order[i], i); /* FIFO */
    CHECK_EQ(n.status[i], QNN_SUCCESS);
    CHECK(!pthread_equal(n.thread[i], pthread_self()));
    CHECK(pthread_equal(n.thread[i], n.thread[0])); /* the graph's one worker */
    for (int k = 0; k < 4; k++) CHECK(((float *)x[i].buf[2])[k] == (float)(10 * i + k));
  }
  htpu_ref_stats after = stats_of(&r.c);
  CHECK_EQ(after.async_notified, before.async_notified + 5);
  CHECK_EQ(after.total_executes, before.total_executes + 5);
  CHECK_EQ(after.violations, before.violations);
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.worker_started, 1);
  CHECK_EQ(st.executes_done, 5);
  /* the notification is optional: NULL is accepted */
  CHECK_EQ(r.t->graph_execute_async(r.g, x[0].in, 2, x[0].out, 1, NULL, NULL, NULL, NULL),
           QNN_SUCCESS);
  for (int i = 0; i < 30000 && stats_of(&r.c).async_pending; i++) usleep(1000);
  CHECK_EQ(stats_of(&r.c).async_pending, 0);
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.executes_done, 6);
  for (int i = 0; i < 5; i++) io_free(&x[i]);
  notes_destroy(&n);
  rig_close(&r);
  CHECK_EQ(stats_of(&r.c).live_contexts, 0);
}

TEST(refb_async_one_queue_with_blocking_executes) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  io xa, xb;
  CHECK(io_init(&xa, r.model, 0) == 0);
  CHECK(io_init(&xb, r.model, 0) == 0);
  fill(&xa, 1.0f);
  fill(&xb, 2.0f);
  notes n;
  notes_init(&n, &r);
  call c = {&n, 0};
  unsigned long v0 = stats_of(&r.c).violations;
  /* a blocking execute with a timeout, queued behind a stalled async one, times out in the
   * queue: its limit counts the wait */
  CHECK_EQ(r.c.set_latency("graphExecute", 400000), 0);
  CHECK_EQ(submit(&r, &xa, NULL, &c), QNN_SUCCESS);
  CHECK_EQ(wait_graph(&r.c, "add", 1, 0), 0);
  qnn_signal_handle_t to = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, 50000);
  CHECK(to);
  log_clear();
  double t0 = now_ms();
  CHECK_EQ(exec_sig(&r, &xb, to), QNN_GRAPH_ERROR_TIMED_OUT);
  CHECK(now_ms() - t0 >= 50.0);
  CHECK_STR_CONTAINS(log_text(), "timed out while waiting in the graph's queue");
  CHECK(((float *)xb.buf[2])[0] == -99.0f);
  /* a blocking execute without a limit waits its turn behind the async one and runs after */
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  uint64_t done0 = st.executes_done;
  CHECK_EQ(exec(&r, &xb), QNN_SUCCESS);
  CHECK_EQ(notes_wait(&n, 1), 0);
  CHECK_EQ(n.status[0], QNN_SUCCESS);
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.executes_done, done0 + 2);
  CHECK(((float *)xa.buf[2])[3] == 4.0f && ((float *)xb.buf[2])[3] == 5.0f);
  /* a blocking execute beside queued async ones is no violation: QNN queues both */
  CHECK_EQ(stats_of(&r.c).violations, v0);
  CHECK_EQ(r.t->signal_free(to), QNN_SUCCESS);
  notes_destroy(&n);
  io_free(&xa);
  io_free(&xb);
  rig_close(&r);
}

/* executeAsync in its own thread: whether it is still blocked on a full queue */
typedef struct bg_submit {
  rig *r;
  io *x;
  call *c;
  notes *n;
  qnn_error_t rc;
  uint64_t done_at_return; /* executes of the graph over when it returned */
  pthread_t th;
} bg_submit;

static void *submit_main(void *arg) {
  bg_submit *b = arg;
  b->rc = submit(b->r, b->x, NULL, b->c);
  htpu_ref_graph_state st;
  b->done_at_return = b->r->c.graph_state("add", &st) == 0 ? st.executes_done : 0;
  return NULL;
}

TEST(refb_async_queue_depth_blocks_the_caller) {
  rig r;
  qnn_context_config_t depth = {QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH, {NULL}};
  depth.u.async_queue_depth.type = QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_NUMERIC;
  depth.u.async_queue_depth.depth = 2;
  const qnn_context_config_t *cfg[] = {&depth, NULL};
  CHECK_EQ(rig_open_cfg(&r, RB_ADD, "add", cfg), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.async_queue_depth, 2);
  io x[4];
  notes n;
  notes_init(&n, &r);
  call c[4];
  for (int i = 0; i < 4; i++) {
    CHECK(io_init(&x[i], r.model, 0) == 0);
    fill(&x[i], (float)i);
    c[i] = (call){&n, i};
  }
  CHECK_EQ(r.c.set_latency("graphExecute", 150000), 0);
  CHECK_EQ(submit(&r, &x[0], NULL, &c[0]), QNN_SUCCESS);
  CHECK_EQ(wait_graph(&r.c, "add", 1, 0), 0); /* the first runs */
  CHECK_EQ(submit(&r, &x[1], NULL, &c[1]), QNN_SUCCESS);
  CHECK_EQ(submit(&r, &x[2], NULL, &c[2]), QNN_SUCCESS); /* two wait: the queue is full */
  bg_submit b = {&r, &x[3], &c[3], &n, 999, 0, 0};
  CHECK_EQ(pthread_create(&b.th, NULL, submit_main, &b), 0);
  pthread_join(b.th, NULL);
  CHECK_EQ(b.rc, QNN_SUCCESS);
  /* it returned only once a queued call had started, i.e. after the first had run */
  CHECK_MSG(b.done_at_return >= 1, "executeAsync returned with %llu executes over",
            (unsigned long long)b.done_at_return);
  CHECK_EQ(notes_wait(&n, 4), 0);
  for (int i = 0; i < 4; i++) CHECK_EQ(n.order[i], i);
  for (int i = 0; i < 4; i++) io_free(&x[i]);
  notes_destroy(&n);
  rig_close(&r);
}

TEST(refb_async_queue_depth_config_rules) {
  static const struct {
    uint32_t type, depth;
    qnn_error_t want;
  } cases[] = {{0, 1, 0}, {0, 64, 0}, {0, 0, 5010}, {0, 65, 5010}, {1, 4, 5010}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    rig r;
    qnn_context_config_t d = {QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH, {NULL}};
    d.u.async_queue_depth.type = cases[i].type;
    d.u.async_queue_depth.depth = cases[i].depth;
    const qnn_context_config_t *cfg[] = {&d, NULL};
    log_clear();
    qnn_error_t rc = rig_open_cfg(&r, RB_ADD, "add", cfg);
    CHECK_MSG(rc == cases[i].want, "case %zu: %llu", i, (unsigned long long)rc);
    if (rc) CHECK_STR_CONTAINS(log_text(), "async queue depth");
    rig_close(&r);
  }
}

TEST(refb_async_signals_need_309) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  io x0, x1, x2;
  CHECK(io_init(&x0, r.model, 0) == 0);
  CHECK(io_init(&x1, r.model, 0) == 0);
  CHECK(io_init(&x2, r.model, 0) == 0);
  fill(&x0, 1.0f);
  fill(&x1, 2.0f);
  fill(&x2, 3.0f);
  notes n;
  notes_init(&n, &r);
  call c[3] = {{&n, 0}, {&n, 1}, {&n, 2}};
  qnn_signal_handle_t ab = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  qnn_signal_handle_t to = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, 50000);
  CHECK(ab && to);
  /* 309 off (the HTP's answer): a signal on an async call is refused, never notified */
  log_clear();
  CHECK_EQ(submit(&r, &x1, ab, &c[1]), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 309 off");
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_ASYNC_SIGNAL, 0), 0);
  /* queued calls behind a stalled one: an abort and a timeout take them out of the queue */
  CHECK_EQ(r.c.set_latency("graphExecute", 5000000), 0);
  qnn_signal_handle_t ab0 = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(ab0);
  CHECK_EQ(submit(&r, &x0, ab0, &c[0]), QNN_SUCCESS);
  CHECK_EQ(wait_graph(&r.c, "add", 1, 0), 0);
  CHECK_EQ(submit(&r, &x1, ab, &c[1]), QNN_SUCCESS);
  CHECK_EQ(submit(&r, &x2, to, &c[2]), QNN_SUCCESS);
  CHECK_EQ(submit(&r, &x2, to, &c[2]), QNN_GRAPH_ERROR_SIGNAL_IN_USE); /* one call per signal */
  CHECK_EQ(notes_wait(&n, 1), 0); /* the timeout, after 50 ms */
  CHECK_EQ(n.order[0], 2);
  CHECK_EQ(n.status[2], QNN_GRAPH_ERROR_TIMED_OUT);
  CHECK_EQ(r.t->signal_trigger(ab), QNN_SUCCESS);
  CHECK_EQ(notes_wait(&n, 2), 0);
  CHECK_EQ(n.status[1], QNN_GRAPH_ERROR_ABORTED);
  /* and the running one is aborted in its stall */
  double t0 = now_ms();
  CHECK_EQ(r.t->signal_trigger(ab0), QNN_SUCCESS);
  CHECK_EQ(notes_wait(&n, 3), 0);
  CHECK(now_ms() - t0 < 2500.0);
  CHECK_EQ(n.status[0], QNN_GRAPH_ERROR_ABORTED);
  for (int i = 0; i < 3; i++) CHECK(!pthread_equal(n.thread[i], pthread_self()));
  CHECK(((float *)x1.buf[2])[0] == -99.0f && ((float *)x2.buf[2])[0] == -99.0f);
  /* the signals are idle again once notified */
  CHECK_EQ(r.t->signal_free(ab), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(ab0), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(to), QNN_SUCCESS);
  notes_destroy(&n);
  io_free(&x0);
  io_free(&x1);
  io_free(&x2);
  rig_close(&r);
}

TEST(refb_async_refused_calls_are_not_notified) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  notes n;
  notes_init(&n, &r);
  call c = {&n, 0};
  log_clear();
  CHECK_EQ(r.t->graph_execute_async(r.g, x.in, 1, x.out, 1, NULL, NULL, on_done, &c),
           QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(log_text(), "graphExecuteAsync: graph 'add' takes 2 input(s)");
  x.in[0].u.v1.u.client_buf.data_size = 3;
  CHECK_EQ(submit(&r, &x, NULL, &c), QNN_GRAPH_ERROR_INVALID_TENSOR);
  x.in[0].u.v1.u.client_buf.data_size = 16;
  CHECK_EQ(r.t->graph_execute_async((void *)0x77, x.in, 2, x.out, 1, NULL, NULL, on_done, &c),
           QNN_GRAPH_ERROR_INVALID_HANDLE);
  /* a handle that is no profile: QnnGraph.h lists it under INVALID_ARGUMENT */
  CHECK_EQ(r.t->graph_execute_async(r.g, x.in, 2, x.out, 1, (void *)0x77, NULL, on_done, &c),
           QNN_GRAPH_ERROR_INVALID_ARGUMENT);
  CHECK(r.c.trigger_ssr() >= 1);
  CHECK_EQ(submit(&r, &x, NULL, &c), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  usleep(20000);
  CHECK_EQ(notes_count(&n), 0);
  CHECK_EQ(stats_of(&r.c).async_pending, 0);
  notes_destroy(&n);
  io_free(&x);
  rig_close(&r);
}

static void free_from_notify(void *param, qnn_notify_status_t status) {
  call *c = param;
  c->n->free_in_notify = c->n->r->t->context_free(c->n->r->ctx, NULL);
  on_done(param, status);
}

TEST(refb_async_context_free_waits_for_notifications) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  notes n;
  notes_init(&n, &r);
  call c = {&n, 0};
  CHECK_EQ(r.c.set_latency("graphExecute", 100000), 0);
  unsigned long v0 = stats_of(&r.c).violations;
  CHECK_EQ(r.t->graph_execute_async(r.g, x.in, 2, x.out, 1, NULL, NULL, free_from_notify, &c),
           QNN_SUCCESS);
  /* a call pending until notified keeps its context */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_STR_CONTAINS(r.c.last_violation(), "async ones: until notified");
  CHECK_EQ(notes_wait(&n, 1), 0);
  /* inside its own notification the call is still pending */
  CHECK_EQ(n.free_in_notify, QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_EQ(stats_of(&r.c).violations, v0 + 2);
  for (int i = 0; i < 30000 && stats_of(&r.c).async_pending; i++) usleep(1000);
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  notes_destroy(&n);
  io_free(&x);
  rig_close(&r);
}

/* A notification tells the client the call is over: a client woken by it that frees the
 * context and the backend at once (while the notifying thread is still finishing the call)
 * is waited for, not refused, and nothing is left alive. The notification here lingers after
 * waking the client, so the free always meets the call's last steps. */
typedef struct linger {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int notified;
} linger;

static void notify_then_linger(void *param, qnn_notify_status_t status) {
  (void)status;
  linger *l = param;
  pthread_mutex_lock(&l->lock);
  l->notified = 1;
  pthread_cond_broadcast(&l->cond);
  pthread_mutex_unlock(&l->lock);
  usleep(30000);
}

TEST(refb_async_free_right_after_the_notification_waits_for_the_call_to_end) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  linger l = {.notified = 0};
  pthread_mutex_init(&l.lock, NULL);
  pthread_cond_init(&l.cond, NULL);
  unsigned long v0 = stats_of(&r.c).violations;
  CHECK_EQ(r.t->graph_execute_async(r.g, x.in, 2, x.out, 1, NULL, NULL, notify_then_linger, &l),
           QNN_SUCCESS);
  pthread_mutex_lock(&l.lock);
  while (!l.notified) pthread_cond_wait(&l.cond, &l.lock);
  pthread_mutex_unlock(&l.lock);
  /* the notification is still running on the backend's thread */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  CHECK_EQ(r.t->device_free(r.dev), QNN_SUCCESS);
  r.dev = NULL;
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = NULL;
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.violations, v0);
  CHECK_EQ(s.live_contexts, 0);
  CHECK_EQ(s.async_pending, 0);
  CHECK_EQ(s.executes_in_flight, 0);
  pthread_cond_destroy(&l.cond);
  pthread_mutex_destroy(&l.lock);
  io_free(&x);
  rig_close(&r);
  CHECK_EQ(stats_of(&r.c).live_logs, 0);
}
