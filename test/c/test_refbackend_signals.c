/* test_refbackend_signals.c - QnnSignal in the reference backend: the capability answers and
 * their switches, signal create/setConfig/trigger/free and their rules, aborts and timeouts of
 * graphExecute (during injected latency and between ops) and of
 * contextCreateFromBinaryWithSignal.
 *
 * Timing is only asserted where it cannot flake: a timeout never ends a call before its limit,
 * and an abort of a call stalled for 5 s (or 2 s per op) returns long before the stall would
 * have ended.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "qnn/qnn_signal_abi.h"
#include "refb_rig.h"
#include "test.h"

#define STALL_US 5000000u /* an injected stall no test waits for */
#define STALL_MS 5000.0

/* y = ((a + b) + b) + b: three ops, so an abort can land between them */
static const char *const RB_THREE_OPS =
    "graph add3\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  native t1 f32 [1,4]\n"
    "  native t2 f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> t1\n"
    "  op ElementWiseAdd t1 b -> t2\n"
    "  op ElementWiseAdd t2 b -> y\n";

static qnn_error_t cap(const rig *r, uint32_t key) { return r->t->property_has_capability(key); }

TEST(refb_signals_capability_defaults_and_switches) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  /* the real HTP's answers (../shared/research/platform.md); 303 was not observed */
  static const struct {
    uint32_t key;
    qnn_error_t want;
  } real[] = {{205, 0},    {211, 0},    {302, 0}, {303, 1000}, {304, 2000}, {306, 0},
              {308, 0},    {309, 1000}, {312, 0}, {1201, 0},   {1202, 0},   {1203, 0},
              {1501, 0},   {1104, 1000}};
  for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++)
    CHECK_MSG(cap(&r, real[i].key) == real[i].want, "key %u: %llu, want %llu", real[i].key,
              (unsigned long long)cap(&r, real[i].key), (unsigned long long)real[i].want);
  /* the control API switches a key; unknown keys are refused */
  CHECK_EQ(r.c.set_capability(304, 0), 0);
  CHECK_EQ(cap(&r, 304), 0);
  CHECK_EQ(r.c.set_capability(4242, 0), -1);
  /* HTPU_REF_CAPS, read at every call; the control API wins over it */
  setenv("HTPU_REF_CAPS", "309=0,312=1000,304=2000", 1);
  CHECK_EQ(cap(&r, 309), 0);
  CHECK_EQ(cap(&r, 312), 1000);
  CHECK_EQ(cap(&r, 304), 0);
  r.c.reset_capabilities();
  CHECK_EQ(cap(&r, 304), 2000);
  unsetenv("HTPU_REF_CAPS");
  CHECK_EQ(cap(&r, 312), 0);
  /* disarm (every test's clean start) forgets the switches */
  CHECK_EQ(r.c.set_capability(1202, 1000), 0);
  r.c.disarm();
  CHECK_EQ(cap(&r, 1202), 0);
  /* a bad HTPU_REF_CAPS is refused where the backend starts, naming the entry */
  setenv("HTPU_REF_CAPS", "309=0,777=0", 1);
  log_clear();
  qnn_backend_handle_t b2 = NULL;
  CHECK_EQ(r.t->backend_create(r.log, NULL, &b2), QNN_BACKEND_ERROR_CANNOT_INITIALIZE);
  CHECK_STR_CONTAINS(log_text(), "HTPU_REF_CAPS: bad entry '777=0'");
  CHECK_EQ(cap(&r, 309), 1000); /* and ignored meanwhile */
  unsetenv("HTPU_REF_CAPS");
  rig_close(&r);
}

TEST(refb_signals_create_and_config_rules) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  uint32_t base = stats_of(&r.c).live_signals;
  qnn_signal_config_t ab = {QNN_SIGNAL_CONFIG_OPTION_ABORT, {NULL}};
  qnn_signal_config_t to = {QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, {NULL}};
  to.u.timeout_duration_us = 1000;
  qnn_signal_config_t zero = to, custom = {QNN_SIGNAL_CONFIG_OPTION_CUSTOM, {NULL}};
  zero.u.timeout_duration_us = 0;
  const qnn_signal_config_t *both[] = {&ab, &to, NULL}, *zero_l[] = {&zero, NULL},
                            *custom_l[] = {&custom, NULL}, *ab_l[] = {&ab, NULL},
                            *to_l[] = {&to, NULL};
  qnn_signal_handle_t s = NULL;
  log_clear();
  CHECK_EQ(r.t->signal_create(r.be, both, &s), QNN_SIGNAL_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(log_text(), "mutually exclusive");
  CHECK_EQ(r.t->signal_create(r.be, zero_l, &s), QNN_SIGNAL_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(log_text(), "timeout of 0 us");
  CHECK_EQ(r.t->signal_create(r.be, custom_l, &s), QNN_SIGNAL_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->signal_create(r.be, ab_l, NULL), QNN_SIGNAL_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->signal_create((void *)0x77, ab_l, &s), QNN_SIGNAL_ERROR_INVALID_HANDLE);
  CHECK_EQ(stats_of(&r.c).live_signals, base);
  /* NULL configs: a signal that does nothing; setConfig changes and resets it */
  CHECK_EQ(r.t->signal_create(r.be, NULL, &s), QNN_SUCCESS);
  CHECK_EQ(stats_of(&r.c).live_signals, base + 1);
  CHECK_EQ(r.t->signal_set_config(s, ab_l), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_set_config(s, both), QNN_SIGNAL_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->signal_set_config(s, to_l), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_set_config(s, NULL), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_set_config((void *)0x77, NULL), QNN_SIGNAL_ERROR_INVALID_HANDLE);
  /* an idle signal cannot be triggered */
  log_clear();
  CHECK_EQ(r.t->signal_trigger(s), QNN_SIGNAL_ERROR_SIGNAL_IDLE);
  CHECK_STR_CONTAINS(log_text(), "is idle");
  CHECK_EQ(r.t->signal_trigger((void *)0x77), QNN_SIGNAL_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(s), QNN_SIGNAL_ERROR_INVALID_HANDLE);
  /* capabilities: the API (1201), abort (1202), timeout (1203) */
  CHECK_EQ(r.c.set_capability(1202, 1000), 0);
  CHECK_EQ(r.t->signal_create(r.be, ab_l, &s), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(r.t->signal_create(r.be, to_l, &s), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  CHECK_EQ(r.c.set_capability(1203, 1000), 0);
  CHECK_EQ(r.t->signal_create(r.be, to_l, &s), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(r.c.set_capability(1201, 1000), 0);
  CHECK_EQ(r.t->signal_create(r.be, NULL, &s), QNN_COMMON_ERROR_NOT_SUPPORTED);
  r.c.reset_capabilities();
  /* a signal left alive at backendFree is a leak: counted and freed */
  CHECK(sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0));
  htpu_ref_stats before = stats_of(&r.c);
  CHECK_EQ(r.t->device_free(r.dev), QNN_SUCCESS);
  r.dev = NULL;
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = NULL;
  htpu_ref_stats after = stats_of(&r.c);
  CHECK_EQ(after.leaked_handles, before.leaked_handles + 1);
  CHECK_EQ(after.live_signals, base);
  CHECK_STR_CONTAINS(r.c.last_violation(), "signal 0x");
  rig_close(&r);
}

/* ---- a graphExecute in another thread ----------------------------------------------------- */

typedef struct bg_exec {
  rig *r;
  io *x;
  qnn_signal_handle_t s;
  qnn_error_t rc;
  double ms; /* how long the call took */
  pthread_t th;
} bg_exec;

static void *bg_main(void *arg) {
  bg_exec *e = arg;
  double t0 = now_ms();
  e->rc = exec_sig(e->r, e->x, e->s);
  e->ms = now_ms() - t0;
  return NULL;
}

static int bg_start(bg_exec *e, rig *r, io *x, qnn_signal_handle_t s) {
  e->r = r;
  e->x = x;
  e->s = s;
  e->rc = 999;
  return pthread_create(&e->th, NULL, bg_main, e);
}

static void set_inputs(io *x, float a, float b) {
  for (int i = 0; i < 4; i++) {
    ((float *)x->buf[0])[i] = a + (float)i;
    ((float *)x->buf[1])[i] = b;
    ((float *)x->buf[2])[i] = -99.0f;
  }
}

TEST(refb_signals_abort_during_latency_and_in_use_rules) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  set_inputs(&x, 1.0f, 10.0f);
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s);
  htpu_ref_stats before = stats_of(&r.c);
  CHECK_EQ(r.c.set_latency("graphExecute", STALL_US), 0);
  bg_exec e;
  CHECK_EQ(bg_start(&e, &r, &x, s), 0);
  CHECK_EQ(wait_graph(&r.c, "add", 1, -1), 0); /* it runs (sleeping in its latency) */
  /* in use by that call: a second call, setConfig and free are refused */
  io x2;
  CHECK(io_init(&x2, r.model, 0) == 0);
  log_clear();
  CHECK_EQ(exec_sig(&r, &x2, s), QNN_GRAPH_ERROR_SIGNAL_IN_USE);
  CHECK_STR_CONTAINS(log_text(), "is in use by another call");
  CHECK_EQ(r.t->signal_set_config(s, NULL), QNN_SIGNAL_ERROR_SIGNAL_IN_USE);
  CHECK_EQ(r.t->signal_free(s), QNN_SIGNAL_ERROR_SIGNAL_IN_USE);
  /* trigger returns once the call is ready to return: the context can be freed right after */
  double t0 = now_ms();
  CHECK_EQ(r.t->signal_trigger(s), QNN_SUCCESS);
  double trigger_ms = now_ms() - t0;
  pthread_join(e.th, NULL);
  CHECK_EQ(e.rc, QNN_GRAPH_ERROR_ABORTED);
  CHECK_MSG(e.ms < STALL_MS / 2 && trigger_ms < STALL_MS / 2,
            "abort took %.1f ms (trigger %.1f ms) of a %.0f ms stall", e.ms, trigger_ms, STALL_MS);
  CHECK_STR_CONTAINS(log_text(), "graph 'add': aborted during its injected latency");
  CHECK(((float *)x.buf[2])[0] == -99.0f); /* outputs untouched */
  htpu_ref_stats after = stats_of(&r.c);
  CHECK_EQ(after.aborted_calls, before.aborted_calls + 1);
  CHECK_EQ(after.total_executes, before.total_executes);
  CHECK_EQ(after.violations, before.violations);
  /* idle again, and reusable with its configuration */
  CHECK_EQ(r.t->signal_trigger(s), QNN_SIGNAL_ERROR_SIGNAL_IDLE);
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  CHECK_EQ(exec_sig(&r, &x, s), QNN_SUCCESS);
  CHECK(((float *)x.buf[2])[3] == 14.0f);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  io_free(&x);
  io_free(&x2);
  rig_close(&r);
}

TEST(refb_signals_abort_frees_the_context_at_once) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s);
  CHECK_EQ(r.c.set_latency("graphExecute", STALL_US), 0);
  bg_exec e;
  CHECK_EQ(bg_start(&e, &r, &x, s), 0);
  CHECK_EQ(wait_graph(&r.c, "add", 1, -1), 0);
  unsigned long v0 = stats_of(&r.c).violations;
  CHECK_EQ(r.t->signal_trigger(s), QNN_SUCCESS);
  /* QnnSignal.h: the call has released its resources once trigger returns */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  pthread_join(e.th, NULL);
  CHECK_EQ(e.rc, QNN_GRAPH_ERROR_ABORTED);
  CHECK_EQ(stats_of(&r.c).violations, v0);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_signals_timeout_counts_from_the_call) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  set_inputs(&x, 0.0f, 1.0f);
  const uint64_t limit_us = 100000;
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, limit_us);
  CHECK(s);
  /* a timeout signal cannot be triggered while in use */
  CHECK_EQ(r.c.set_latency("graphExecute", STALL_US), 0);
  bg_exec e;
  CHECK_EQ(bg_start(&e, &r, &x, s), 0);
  CHECK_EQ(wait_graph(&r.c, "add", 1, -1), 0);
  log_clear();
  qnn_error_t trig = r.t->signal_trigger(s);
  pthread_join(e.th, NULL);
  /* the trigger raced the timeout: idle if the call was over, else the wrong type */
  CHECK_MSG(trig == QNN_SIGNAL_ERROR_INCOMPATIBLE_SIGNAL_TYPE ||
                trig == QNN_SIGNAL_ERROR_SIGNAL_IDLE, "trigger of a timeout signal: %llu",
            (unsigned long long)trig);
  CHECK_EQ(e.rc, QNN_GRAPH_ERROR_TIMED_OUT);
  CHECK_MSG(e.ms >= limit_us / 1000.0 && e.ms < STALL_MS / 2, "timed out after %.1f ms", e.ms);
  CHECK_STR_CONTAINS(log_text(), "its signal's 100000 us, counted from the call's start");
  CHECK(((float *)x.buf[2])[0] == -99.0f);
  /* measured anew for each call: a fast call with the same signal succeeds */
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  htpu_ref_stats before = stats_of(&r.c);
  CHECK_EQ(exec_sig(&r, &x, s), QNN_SUCCESS);
  CHECK(((float *)x.buf[2])[2] == 3.0f);
  CHECK_EQ(stats_of(&r.c).timed_out_calls, before.timed_out_calls);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_signals_stop_between_ops_and_graph_op_rules) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_THREE_OPS, "add3"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  set_inputs(&x, 1.0f, 2.0f);
  /* graphOp latency: a slow graph, op after op (a lower bound only) */
  CHECK_EQ(r.c.set_latency("graphOp", 20000), 0);
  double t0 = now_ms();
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK(now_ms() - t0 >= 60.0);
  CHECK(((float *)x.buf[2])[1] == 8.0f);
  /* an abort lands between ops, long before the remaining ops' 2 s each */
  CHECK_EQ(r.c.set_latency("graphOp", 2000000), 0);
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s);
  bg_exec e;
  set_inputs(&x, 1.0f, 2.0f);
  log_clear();
  CHECK_EQ(bg_start(&e, &r, &x, s), 0);
  CHECK_EQ(wait_graph(&r.c, "add3", 1, -1), 0);
  CHECK_EQ(r.t->signal_trigger(s), QNN_SUCCESS);
  pthread_join(e.th, NULL);
  CHECK_EQ(e.rc, QNN_GRAPH_ERROR_ABORTED);
  CHECK_MSG(e.ms < 3000.0, "aborted after %.1f ms of 6000", e.ms);
  CHECK_STR_CONTAINS(log_text(), "graph 'add3': aborted between ops");
  /* a timeout ends the run between ops too */
  qnn_signal_handle_t t = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, 50000);
  CHECK(t);
  t0 = now_ms();
  CHECK_EQ(exec_sig(&r, &x, t), QNN_GRAPH_ERROR_TIMED_OUT);
  CHECK(now_ms() - t0 >= 50.0);
  CHECK_STR_CONTAINS(log_text(), "graph 'add3': timed out between ops");
  /* a graphOp fault rule fails the execute at that op */
  CHECK_EQ(r.c.set_latency("graphOp", 0), 0);
  CHECK_EQ(r.c.arm("graphOp:2:1100"), 0);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_GENERAL);
  CHECK_STR_CONTAINS(log_text(), "(graphOp fault rule)");
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(t), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_signals_execute_signal_capability_and_foreign_signals) {
  rig r, other;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s);
  /* 308 off: a graphExecute with a signal is refused, one without works */
  CHECK_EQ(r.c.set_capability(308, 1000), 0);
  log_clear();
  CHECK_EQ(exec_sig(&r, &x, s), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 308 off");
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  r.c.reset_capabilities();
  /* a freed signal and another backend's are unknown handles */
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  CHECK_EQ(exec_sig(&r, &x, s), QNN_GRAPH_ERROR_INVALID_HANDLE);
  memset(&other, 0, sizeof(other));
  qnn_backend_handle_t b2 = NULL;
  CHECK_EQ(r.t->backend_create(r.log, NULL, &b2), QNN_SUCCESS);
  other = r;
  other.be = b2;
  qnn_signal_handle_t s2 = sig_new(&other, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s2);
  CHECK_EQ(exec_sig(&r, &x, s2), QNN_GRAPH_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->signal_free(s2), QNN_SUCCESS);
  CHECK_EQ(r.t->backend_free(b2), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

/* ---- contextCreateFromBinaryWithSignal ---------------------------------------------------- */

typedef struct bg_load {
  rig *r;
  const void *bin;
  size_t len;
  qnn_signal_handle_t s;
  qnn_context_handle_t ctx;
  qnn_error_t rc;
  double ms;
  pthread_t th;
} bg_load;

static void *load_main(void *arg) {
  bg_load *l = arg;
  double t0 = now_ms();
  l->rc = l->r->t->context_create_from_binary_with_signal(l->r->be, l->r->dev, NULL, l->bin,
                                                           l->len, &l->ctx, NULL, l->s);
  l->ms = now_ms() - t0;
  return NULL;
}

TEST(refb_signals_context_create_with_signal) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  uint32_t contexts = stats_of(&r.c).live_contexts;
  /* NULL signal: a plain load */
  qnn_context_handle_t ctx = NULL;
  CHECK_EQ(r.t->context_create_from_binary_with_signal(r.be, r.dev, NULL, bin, len, &ctx, NULL,
                                                       NULL),
           QNN_SUCCESS);
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(r.t->graph_retrieve(ctx, "add", &g), QNN_SUCCESS);
  CHECK_EQ(r.t->context_free(ctx, NULL), QNN_SUCCESS);
  /* an abort during a stalled load: nothing created */
  qnn_signal_handle_t ab = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(ab);
  CHECK_EQ(r.c.set_latency("contextCreateFromBinary", STALL_US), 0);
  bg_load l = {&r, bin, len, ab, NULL, 999, 0, 0};
  CHECK_EQ(pthread_create(&l.th, NULL, load_main, &l), 0);
  /* wait until the load holds its signal (a trigger before that is refused as idle) */
  qnn_error_t trig = QNN_SIGNAL_ERROR_SIGNAL_IDLE;
  for (int i = 0; i < 30000 && trig == QNN_SIGNAL_ERROR_SIGNAL_IDLE; i++) {
    trig = r.t->signal_trigger(ab);
    if (trig == QNN_SIGNAL_ERROR_SIGNAL_IDLE) usleep(1000);
  }
  pthread_join(l.th, NULL);
  CHECK_EQ(trig, QNN_SUCCESS);
  CHECK_EQ(l.rc, QNN_CONTEXT_ERROR_ABORTED);
  CHECK_MSG(l.ms < STALL_MS / 2, "load aborted after %.1f ms", l.ms);
  CHECK_EQ(stats_of(&r.c).live_contexts, contexts);
  /* a timeout: 5013 no earlier than its limit */
  qnn_signal_handle_t to = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, 80000);
  CHECK(to);
  double t0 = now_ms();
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary_with_signal(r.be, r.dev, NULL, bin, len, &ctx, NULL,
                                                       to),
           QNN_CONTEXT_ERROR_TIMED_OUT);
  double ms = now_ms() - t0;
  CHECK_MSG(ms >= 80.0 && ms < STALL_MS / 2, "load timed out after %.1f ms", ms);
  CHECK_STR_CONTAINS(log_text(), "contextCreateFromBinaryWithSignal: timed out");
  CHECK_EQ(stats_of(&r.c).live_contexts, contexts);
  /* WithSignal counts as contextCreateFromBinary in fault rules */
  CHECK_EQ(r.c.set_latency("contextCreateFromBinary", 0), 0);
  CHECK_EQ(r.c.arm("contextCreateFromBinary:1:1002"), 0);
  CHECK_EQ(r.t->context_create_from_binary_with_signal(r.be, r.dev, NULL, bin, len, &ctx, NULL,
                                                       ab),
           QNN_COMMON_ERROR_MEM_ALLOC);
  CHECK_EQ(r.c.arm(NULL), 0);
  /* unknown signal 5002; capability 211 off 1000 */
  CHECK_EQ(r.t->context_create_from_binary_with_signal(r.be, r.dev, NULL, bin, len, &ctx, NULL,
                                                       (void *)0x77),
           QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.c.set_capability(211, 1000), 0);
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary_with_signal(r.be, r.dev, NULL, bin, len, &ctx, NULL,
                                                       NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 211 off");
  r.c.reset_capabilities();
  CHECK_EQ(stats_of(&r.c).live_contexts, contexts);
  CHECK_EQ(r.t->signal_free(ab), QNN_SUCCESS);
  CHECK_EQ(r.t->signal_free(to), QNN_SUCCESS);
  free(bin);
  rig_close(&r);
}

TEST(refb_signals_load_signal_in_use_by_an_execute) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  qnn_signal_handle_t s = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_ABORT, 0);
  CHECK(s);
  CHECK_EQ(r.c.set_latency("graphExecute", STALL_US), 0);
  bg_exec e;
  CHECK_EQ(bg_start(&e, &r, &x, s), 0);
  CHECK_EQ(wait_graph(&r.c, "add", 1, -1), 0);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t ctx = NULL;
  /* the context calls have no in-use code of their own: the signal family's */
  CHECK_EQ(r.t->context_create_from_binary_with_signal(r.be, r.dev, NULL, bin, len, &ctx, NULL,
                                                       s),
           QNN_SIGNAL_ERROR_SIGNAL_IN_USE);
  free(bin);
  CHECK_EQ(r.t->signal_trigger(s), QNN_SUCCESS);
  pthread_join(e.th, NULL);
  CHECK_EQ(e.rc, QNN_GRAPH_ERROR_ABORTED);
  CHECK_EQ(r.t->signal_free(s), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}
