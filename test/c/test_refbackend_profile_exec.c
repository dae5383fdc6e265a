/* test_refbackend_profile_exec.c - profiles together with the rest of graphExecute: a profiled
 * execute aborted or timed out mid-run (or while it waits in the graph's queue) returns the
 * signal's error and gives its profile handle back empty; a handle held by a queued call is
 * in use; a batch multiple's profile covers every row group; an async execute's profile holds
 * what ran when its notification comes.
 *
 * Timing is only asserted where it cannot flake: lower bounds from injected latency, and an
 * abort of a call stalled for seconds returning long before the stall would have ended.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_rig.h"
#include "qnn/qnn_profile_abi.h"
#include "qnn/qnn_signal_abi.h"
#include "refb_rig.h"
#include "test.h"

#define STALL_US 5000000u /* an injected stall no test waits for */

/* The events under id (the top-level ones of prof when id is 0): their count, types into
 * type[max] and values into value[max]; UINT32_MAX when a read fails. */
static uint32_t events(rig *r, qnn_profile_handle_t prof, uint64_t id, uint64_t *ids,
                       uint32_t *type, uint64_t *value, uint32_t max) {
  const uint64_t *list = NULL;
  uint32_t n = 0;
  if (id ? r->t->profile_get_sub_events(id, &list, &n) : r->t->profile_get_events(prof, &list, &n))
    return UINT32_MAX;
  for (uint32_t i = 0; i < n && i < max; i++) {
    qnn_profile_event_data_t d;
    if (r->t->profile_get_event_data(list[i], &d)) return UINT32_MAX;
    ids[i] = list[i];
    type[i] = d.type;
    value[i] = d.value;
  }
  return n;
}

/* The id and value of the sub-event of `parent` with type `type`; 0 when there is none. */
static uint64_t sub_of(rig *r, uint64_t parent, uint32_t type, uint64_t *value) {
  uint64_t ids[16], v[16];
  uint32_t t[16];
  uint32_t n = events(r, NULL, parent, ids, t, v, 16);
  for (uint32_t i = 0; n != UINT32_MAX && i < n && i < 16; i++)
    if (t[i] == type) {
      if (value) *value = v[i];
      return ids[i];
    }
  return 0;
}

/* The one top-level event of prof (0 when it holds another number of them). */
static uint64_t only_top(rig *r, qnn_profile_handle_t prof, uint64_t *value) {
  uint64_t ids[4], v[4];
  uint32_t t[4];
  if (events(r, prof, 0, ids, t, v, 4) != 1) return 0;
  if (value) *value = v[0];
  return ids[0];
}

static void fill_three(io *x) {
  for (int i = 0; i < 8; i++) {
    ((float *)x->buf[0])[i] = (float)(i - 4);
    ((float *)x->buf[1])[i] = -99.0f;
  }
}

/* ---- a profiled graphExecute with a signal, in another thread ----------------------------- */

typedef struct bg {
  rig *r;
  qnn_graph_handle_t g;
  io *x;
  qnn_profile_handle_t prof;
  qnn_signal_handle_t sig;
  qnn_error_t rc;
  double ms;
  pthread_t th;
} bg;

static void *bg_main(void *arg) {
  bg *e = arg;
  double t0 = now_ms();
  e->rc = e->r->t->graph_execute(e->g, e->x->in, e->x->nin, e->x->out, e->x->nout, e->prof,
                                 e->sig);
  e->ms = now_ms() - t0;
  return NULL;
}

static int bg_start(bg *e, rig *r, io *x, qnn_profile_handle_t prof, qnn_signal_handle_t s) {
  memset(e, 0, sizeof(*e));
  e->r = r;
  e->g = r->g;
  e->x = x;
  e->prof = prof;
  e->sig = s;
  e->rc = 999;
  return pthread_create(&e->th, NULL, bg_main, e);
}

TEST(refprof_detailed_profile_on_an_execute_aborted_mid_run) {
  rig r;
  CHECK_EQ(rig_open(&r, PROF_THREE_OPS, "three"), 0);
  io x;
  CHECK_EQ(io_init(&x, r.model, 0), 0);
  fill_three(&x);
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_DETAILED, &prof), QNN_SUCCESS);
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s);
  uint32_t live = r.c.live_profiles();
  htpu_ref_stats before = stats_of(&r.c);
  /* 2 s before each op: the abort lands between ops, the run half done */
  CHECK_EQ(r.c.set_latency("graphOp", 2000000), 0);
  bg e;
  CHECK_EQ(bg_start(&e, &r, &x, prof, s), 0);
  CHECK_EQ(wait_graph(&r.c, "three", 1, -1), 0);
  /* the running call holds its profile handle */
  CHECK_EQ(r.t->profile_free(prof), QNN_PROFILE_ERROR_HANDLE_IN_USE);
  CHECK_EQ(r.t->profile_set_config(prof, NULL), QNN_PROFILE_ERROR_HANDLE_IN_USE);
  log_clear();
  CHECK_EQ(r.t->signal_trigger(s), QNN_SUCCESS);
  pthread_join(e.th, NULL);
  CHECK_EQ(e.rc, QNN_GRAPH_ERROR_ABORTED);
  CHECK_MSG(e.ms < 3000.0, "aborted after %.1f ms of 6000", e.ms);
  CHECK_STR_CONTAINS(log_text(), "graph 'three': aborted between ops");
  CHECK_EQ(stats_of(&r.c).aborted_calls, before.aborted_calls + 1);
  /* the handle is free again and empty: an aborted call records nothing */
  uint64_t ids[4], v[4];
  uint32_t t[4];
  CHECK_EQ(events(&r, prof, 0, ids, t, v, 4), 0);
  CHECK_EQ(r.t->profile_set_config(prof, NULL), QNN_SUCCESS);
  CHECK_EQ(r.c.live_profiles(), live);
  /* a timeout signal mid-run: the same */
  qnn_signal_handle_t to = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, 50000);
  CHECK(to);
  double t0 = now_ms();
  CHECK_EQ(r.t->graph_execute(r.g, x.in, x.nin, x.out, x.nout, prof, to),
           QNN_GRAPH_ERROR_TIMED_OUT);
  CHECK(now_ms() - t0 >= 50.0);
  CHECK_EQ(events(&r, prof, 0, ids, t, v, 4), 0);
  CHECK_EQ(r.c.live_profiles(), live);
  /* the same handle and signal then record the execute that runs: three NODE events */
  CHECK_EQ(r.c.set_latency("graphOp", 0), 0);
  CHECK_EQ(r.t->graph_execute(r.g, x.in, x.nin, x.out, x.nout, prof, s), QNN_SUCCESS);
  CHECK(((float *)x.buf[1])[7] == (3.0f + 8.0f) * 8.0f);
  uint64_t top = only_top(&r, prof, NULL);
  CHECK(top != 0);
  uint64_t cyc = sub_of(&r, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE, NULL);
  CHECK(cyc != 0);
  CHECK_EQ(events(&r, NULL, cyc, ids, t, v, 4), 3);
  CHECK_EQ(t[0], QNN_PROFILE_EVENTTYPE_NODE);
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  CHECK_EQ(r.c.live_profiles(), live - 1);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(to), QNN_SUCCESS);
  CHECK_EQ(stats_of(&r.c).violations, before.violations);
  io_free(&x);
  rig_close(&r);
}

TEST(refprof_handle_of_a_queued_call_is_in_use_until_it_leaves) {
  rig r;
  CHECK_EQ(rig_open(&r, PROF_THREE_OPS, "three"), 0);
  io xa, xb, xc;
  CHECK_EQ(io_init(&xa, r.model, 0), 0);
  CHECK_EQ(io_init(&xb, r.model, 0), 0);
  CHECK_EQ(io_init(&xc, r.model, 0), 0);
  qnn_profile_handle_t pa = NULL, pb = NULL;
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &pa), QNN_SUCCESS);
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_DETAILED, &pb), QNN_SUCCESS);
  qnn_signal_handle_t sa = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  qnn_signal_handle_t sb = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(sa && sb);
  /* A runs (stalled), B waits behind it in the graph's queue holding pb */
  CHECK_EQ(r.c.set_latency("graphExecute", STALL_US), 0);
  bg a, b;
  CHECK_EQ(bg_start(&a, &r, &xa, pa, sa), 0);
  CHECK_EQ(wait_graph(&r.c, "three", 1, 0), 0);
  CHECK_EQ(bg_start(&b, &r, &xb, pb, sb), 0);
  CHECK_EQ(wait_graph(&r.c, "three", 1, 1), 0);
  /* a third call passing B's handle is refused at once, before any queueing */
  log_clear();
  CHECK_EQ(r.t->graph_execute(r.g, xc.in, xc.nin, xc.out, xc.nout, pb, NULL),
           QNN_GRAPH_ERROR_PROFILE_IN_USE);
  CHECK_STR_CONTAINS(log_text(), "in use by another call");
  CHECK_EQ(r.t->profile_free(pb), QNN_PROFILE_ERROR_HANDLE_IN_USE);
  /* B aborted in the queue: its handle comes back empty; then A aborted in its latency */
  CHECK_EQ(r.t->signal_trigger(sb), QNN_SUCCESS);
  pthread_join(b.th, NULL);
  CHECK_EQ(b.rc, QNN_GRAPH_ERROR_ABORTED);
  CHECK_STR_CONTAINS(log_text(), "aborted while waiting in the graph's queue");
  const uint64_t *ids = NULL;
  uint32_t n = 99;
  CHECK_EQ(r.t->profile_get_events(pb, &ids, &n), QNN_SUCCESS);
  CHECK_EQ(n, 0);
  CHECK_EQ(r.t->profile_free(pb), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_trigger(sa), QNN_SUCCESS);
  pthread_join(a.th, NULL);
  CHECK_EQ(a.rc, QNN_GRAPH_ERROR_ABORTED);
  CHECK_EQ(r.t->profile_free(pa), QNN_SUCCESS);
  /* the queue wait is inside the measured call: a queued call's execute event covers it */
  CHECK_EQ(r.c.set_latency("graphExecute", 100000), 0);
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &pa), QNN_SUCCESS);
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &pb), QNN_SUCCESS);
  CHECK_EQ(bg_start(&a, &r, &xa, pa, NULL), 0);
  CHECK_EQ(wait_graph(&r.c, "three", 1, 0), 0);
  CHECK_EQ(bg_start(&b, &r, &xb, pb, NULL), 0);
  pthread_join(a.th, NULL);
  pthread_join(b.th, NULL);
  CHECK_EQ(a.rc, QNN_SUCCESS);
  CHECK_EQ(b.rc, QNN_SUCCESS);
  uint64_t whole = 0, host = 0;
  uint64_t top = only_top(&r, pb, &whole);
  CHECK(top != 0);
  CHECK(sub_of(&r, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HOST_RPC_TIME_MICROSEC, &host));
  CHECK(host >= 100000);          /* its own turn, latency included */
  CHECK(whole >= host);           /* and the call around it */
  CHECK_EQ(r.t->profile_free(pa), QNN_SUCCESS);
  CHECK_EQ(r.t->profile_free(pb), QNN_SUCCESS);
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  CHECK_EQ(r.t->signal_free(sa), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(sb), QNN_SUCCESS);
  CHECK_EQ(r.c.live_profiles(), 0);
  io_free(&xa);
  io_free(&xb);
  io_free(&xc);
  rig_close(&r);
}

/* ---- batch multiples ---------------------------------------------------------------------- */

/* y = relu(x W^T + b), rows independent: a graph that takes batch multiples */
static const char *const RB_FC =
    "graph fc\n"
    "  input x f32 [2,3]\n"
    "  static w f32 [2,3] data=[1,-1,0.5, 2,0,-1]\n"
    "  static b f32 [2] data=[0.25,-0.5]\n"
    "  native h f32 [2,2]\n"
    "  output y f32 [2,2]\n"
    "  op FullyConnected x w b -> h name=fc_op\n"
    "  op Relu h -> y name=relu_op\n";

static float fc_ref(const float *x, int out) {
  static const float w[2][3] = {{1, -1, 0.5f}, {2, 0, -1}}, b[2] = {0.25f, -0.5f};
  float v = b[out];
  for (int k = 0; k < 3; k++) v += x[k] * w[out][k];
  return v > 0 ? v : 0;
}

TEST(refprof_batch_multiple_profile_covers_every_row_group) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_FC, "fc"), 0);
  enum { K = 3 };
  const uint64_t op_latency_us = 20000;
  io x;
  CHECK_EQ(io_init(&x, r.model, 0), 0);
  float in[6 * K], out[4 * K];
  for (int i = 0; i < 6 * K; i++) in[i] = (float)((i * 7 % 11) - 5) * 0.5f;
  for (int i = 0; i < 4 * K; i++) out[i] = -99.0f;
  x.dims[0][0] = 2 * K;
  x.dims[1][0] = 2 * K;
  x.in[0].u.v1.u.client_buf.data = in;
  x.in[0].u.v1.u.client_buf.data_size = sizeof in;
  x.out[0].u.v1.u.client_buf.data = out;
  x.out[0].u.v1.u.client_buf.data_size = sizeof out;
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(r.t->profile_create(r.be, QNN_HTP_PROFILE_LEVEL_LINTING, &prof), QNN_SUCCESS);
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s);
  /* graphOp latency falls between ops: the linting level's per-op wait, once per row group */
  CHECK_EQ(r.c.set_latency("graphOp", (unsigned)op_latency_us), 0);
  CHECK_EQ(r.t->graph_execute(r.g, x.in, x.nin, x.out, x.nout, prof, s), QNN_SUCCESS);
  CHECK_EQ(r.c.set_latency("graphOp", 0), 0);
  for (int row = 0; row < 2 * K; row++)
    for (int o = 0; o < 2; o++) CHECK(out[row * 2 + o] == fc_ref(&in[row * 3], o));
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("fc", &st), 0);
  CHECK_EQ(st.last_batch_multiple, K);
  uint64_t top = only_top(&r, prof, NULL);
  CHECK(top != 0);
  uint64_t run_us = 0;
  CHECK(sub_of(&r, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_EXCL_WAIT_TIME_MICROSEC,
               &run_us));
  CHECK(run_us >= K * 2 * op_latency_us); /* every row group's run */
  uint64_t crit =
      sub_of(&r, top, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_CRITICAL_ACCEL_TIME_CYCLE, NULL);
  CHECK(crit != 0);
  uint64_t ids[4], v[4];
  uint32_t t[4];
  CHECK_EQ(events(&r, NULL, crit, ids, t, v, 4), 2); /* one NODE per op, not per row group */
  for (int o = 0; o < 2; o++) {
    CHECK_EQ(t[o], QNN_PROFILE_EVENTTYPE_NODE);
    uint64_t wait = 0;
    CHECK(sub_of(&r, ids[o], QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT, &wait));
    /* cycles are nanoseconds here: K waits of op_latency_us each */
    CHECK_MSG(wait >= K * op_latency_us * 1000u, "op %d waited %llu cycles", o,
              (unsigned long long)wait);
  }
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

/* ---- graphExecuteAsync -------------------------------------------------------------------- */

typedef struct async_seen {
  pthread_mutex_t lock;
  int done;
  qnn_error_t status;
  uint32_t top_events; /* what the profile held when the notification came */
  uint64_t top_value;
  rig *r;
  qnn_profile_handle_t prof;
} async_seen;

static void on_done(void *param, qnn_notify_status_t status) {
  async_seen *a = param;
  const uint64_t *ids = NULL;
  uint32_t n = UINT32_MAX;
  uint64_t value = 0;
  if (a->r->t->profile_get_events(a->prof, &ids, &n) == QNN_SUCCESS && n == 1) {
    qnn_profile_event_data_t d;
    if (a->r->t->profile_get_event_data(ids[0], &d) == QNN_SUCCESS) value = d.value;
  }
  pthread_mutex_lock(&a->lock);
  a->status = status.error;
  a->top_events = n;
  a->top_value = value;
  a->done = 1;
  pthread_mutex_unlock(&a->lock);
}

static int wait_done(async_seen *a) {
  for (int i = 0; i < 30000; i++) {
    pthread_mutex_lock(&a->lock);
    int d = a->done;
    pthread_mutex_unlock(&a->lock);
    if (d) return 0;
    usleep(1000);
  }
  return -1;
}

TEST(refprof_async_execute_profile_held_until_notified) {
  rig r;
  CHECK_EQ(rig_open(&r, PROF_THREE_OPS, "three"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  io x, x2;
  CHECK_EQ(io_init(&x, r.model, 0), 0);
  CHECK_EQ(io_init(&x2, r.model, 0), 0);
  fill_three(&x);
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_DETAILED, &prof), QNN_SUCCESS);
  async_seen a;
  memset(&a, 0, sizeof a);
  pthread_mutex_init(&a.lock, NULL);
  a.r = &r;
  a.prof = prof;
  CHECK_EQ(r.c.set_latency("graphExecute", 100000), 0);
  CHECK_EQ(r.t->graph_execute_async(r.g, x.in, x.nin, x.out, x.nout, prof, NULL, on_done, &a),
           QNN_SUCCESS);
  /* pending: a second call with the handle is refused and never notified */
  log_clear();
  CHECK_EQ(r.t->graph_execute_async(r.g, x2.in, x2.nin, x2.out, x2.nout, prof, NULL, on_done, &a),
           QNN_GRAPH_ERROR_PROFILE_IN_USE);
  CHECK_EQ(r.t->graph_execute(r.g, x2.in, x2.nin, x2.out, x2.nout, prof, NULL),
           QNN_GRAPH_ERROR_PROFILE_IN_USE);
  CHECK_EQ(r.t->profile_free(prof), QNN_PROFILE_ERROR_HANDLE_IN_USE);
  CHECK_EQ(wait_done(&a), 0);
  CHECK_EQ(a.status, QNN_SUCCESS);
  CHECK_EQ(a.top_events, 1);      /* recorded before the notification */
  CHECK(a.top_value >= 100000);   /* from the call to its end, the latency inside */
  CHECK(((float *)x.buf[1])[7] == (3.0f + 8.0f) * 8.0f);
  /* the handle was given back before the notification */
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  CHECK_EQ(r.c.live_profiles(), 0);
  pthread_mutex_destroy(&a.lock);
  io_free(&x);
  io_free(&x2);
  rig_close(&r);
}
