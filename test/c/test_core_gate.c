/* The execute gate and the waits around it (src/gate.h): a call's deadline, cancel and close
 * end its wait at the gate and in a recovery; a load's timeout ends its own wait; a hung
 * execute plus a waiting load do not freeze other graphs. Order is asserted through events
 * (a call returning while another is still in flight, a load still waiting), wall-clock bounds
 * only seconds wide. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "base/gate.h"
#include "hexagon_tpu.h"
#include "test.h"

#define MS 1000000ull
#define WAIT_MS 10000

static const char *TWO_GRAPHS =
    "graph add_f32\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "graph mul_f32\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply a b -> y\n";

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The gate's state, white-box. */
static void gate_state(unsigned *writers_waiting, int *writer_active) {
  pthread_mutex_lock(&htpu_exec_gate.lock);
  *writers_waiting = htpu_exec_gate.writers_waiting;
  *writer_active = htpu_exec_gate.writer_active;
  pthread_mutex_unlock(&htpu_exec_gate.lock);
}

/* Waits (up to WAIT_MS) until a writer waits for the gate (want_active 0) or holds it (1). */
static int wait_for_writer(int want_active) {
  for (int ms = 0; ms < WAIT_MS; ms++) {
    unsigned waiting;
    int active;
    gate_state(&waiting, &active);
    if (want_active ? active : waiting > 0) return 0;
    usleep(1000);
  }
  return -1;
}

/* Waits until `n` executes are in graphExecute. */
static int wait_in_flight(uint64_t n) {
  for (int ms = 0; ms < WAIT_MS; ms++) {
    htpu_stats st;
    htpu_stats_get(&st);
    if (st.executes_in_flight == n) return 0;
    usleep(1000);
  }
  return -1;
}

/* One execute on its own thread: two f32 [1,4] inputs, the result, the order it ended in. */
typedef struct bg_call {
  pthread_t t;
  htpu_graph *g;
  htpu_exec_options o;
  float a[4], b[4], y[4];
  int rc;
  char msg[512];
  atomic_int done;
} bg_call;

static atomic_int g_order; /* each background end takes the next number */

static void *bg_run(void *arg) {
  bg_call *c = arg;
  htpu_io in[2] = {{c->a, sizeof c->a, HTPU_F32}, {c->b, sizeof c->b, HTPU_F32}};
  htpu_io out = {c->y, sizeof c->y, HTPU_F32};
  c->rc = htpu_graph_execute_ex(c->g, in, 2, &out, 1, &c->o, NULL);
  snprintf(c->msg, sizeof c->msg, "%s", htpu_last_error());
  atomic_store(&c->done, atomic_fetch_add(&g_order, 1) + 1);
  return NULL;
}

static void bg_start(bg_call *c, htpu_graph *g, uint64_t timeout_ns) {
  memset(c, 0, sizeof *c);
  c->g = g;
  c->o.timeout_ns = timeout_ns;
  for (int i = 0; i < 4; i++) {
    c->a[i] = (float)(i + 1);
    c->b[i] = (float)(10 * (i + 1));
  }
  atomic_init(&c->done, 0);
  pthread_create(&c->t, NULL, bg_run, c);
}

/* One load on its own thread. */
typedef struct bg_load {
  pthread_t t;
  htpu_runtime *rt;
  const char *path;
  uint64_t timeout_ns;
  htpu_context *ctx;
  int rc;
  char msg[512];
  atomic_int done;
  uint64_t a_done_then; /* executes of add_f32 the backend had finished when the load returned */
} bg_load;

static void *bg_load_run(void *arg) {
  bg_load *l = arg;
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.timeout_ns = l->timeout_ns;
  l->rc = htpu_context_open_file_ex(l->rt, l->path, &lo, &l->ctx);
  snprintf(l->msg, sizeof l->msg, "%s", htpu_last_error());
  htpu_ref_graph_state gs;
  if (fx_ref_graph_state("add_f32", &gs) == 0) l->a_done_then = gs.executes_done;
  atomic_store(&l->done, atomic_fetch_add(&g_order, 1) + 1);
  return NULL;
}

static void bg_load_start(bg_load *l, htpu_runtime *rt, const char *path, uint64_t timeout_ns) {
  memset(l, 0, sizeof *l);
  l->rt = rt;
  l->path = path;
  l->timeout_ns = timeout_ns;
  atomic_init(&l->done, 0);
  pthread_create(&l->t, NULL, bg_load_run, l);
}

/* A call with a deadline leaves the gate at it while another runtime's load holds the gate. */
TEST(gate_a_timed_call_leaves_while_a_load_holds_the_gate) {
  fx_reset_env();
  const char *path = fx_build_model_file("gate_load.bin", TWO_GRAPHS);
  CHECK(path);
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "gate_rig.bin", 1), HTPU_OK);
  htpu_runtime *rt2 = fx_open_runtime();
  CHECK(rt2);
  CHECK_EQ(fx_ref_set_latency("contextCreateFromBinary", 3000000), 0);
  bg_load l;
  bg_load_start(&l, rt2, path, 0);
  int held = wait_for_writer(1) == 0;
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 200 * MS;
  float y[4];
  uint64_t t0 = now_ns();
  int rc = fx_add(r.g, 1, &o, NULL, y);
  uint64_t took = now_ns() - t0;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  int load_done_then = atomic_load(&l.done);
  pthread_join(l.t, NULL);
  fx_ref_disarm();
  CHECK_MSG(held, "the load never held the gate");
  CHECK_MSG(rc == HTPU_ETIMEDOUT, "rc %d: %s", rc, msg);
  CHECK_MSG(!load_done_then, "the call returned only after the load (%llu ms)",
            (unsigned long long)(took / MS));
  CHECK_STR_CONTAINS(msg, "passed its 200 ms deadline (timeout) while it waited for the execute "
                          "gate (a context load, free or DSP recovery in this process held it); "
                          "it never ran");
  CHECK_EQ(l.rc, HTPU_OK);
  CHECK_EQ(fx_add(r.g, 2, NULL, NULL, y), HTPU_OK); /* the graph stays usable */
  CHECK(y[0] == 12.0f && y[3] == 44.0f);
  htpu_context_close(&l.ctx);
  htpu_runtime_close(&rt2);
  fx_rig_close(&r);
}

/* A submitted call's deadline holds at the gate too: done runs with the timeout. */
TEST(gate_a_submitted_call_leaves_at_its_deadline) {
  fx_reset_env();
  const char *path = fx_build_model_file("gate_load2.bin", TWO_GRAPHS);
  CHECK(path);
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "gate_rig2.bin", 1), HTPU_OK);
  htpu_runtime *rt2 = fx_open_runtime();
  CHECK(rt2);
  CHECK_EQ(fx_ref_set_latency("contextCreateFromBinary", 3000000), 0);
  bg_load l;
  bg_load_start(&l, rt2, path, 0);
  int held = wait_for_writer(1) == 0;
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 200 * MS;
  htpu_call *call = NULL;
  int rc = htpu_graph_submit(r.g, in, 2, &out, 1, &o, NULL, NULL, &call);
  int wrc = rc ? rc : htpu_call_wait(call, 2500 * MS);
  char msg[512] = "";
  if (!rc) htpu_call_result(call, NULL, msg, sizeof msg);
  int load_done_then = atomic_load(&l.done);
  htpu_call_release(&call);
  pthread_join(l.t, NULL);
  fx_ref_disarm();
  CHECK_MSG(held, "the load never held the gate");
  CHECK_EQ(rc, HTPU_OK);
  CHECK_MSG(wrc == HTPU_ETIMEDOUT && !load_done_then, "rc %d (load done: %d): %s", wrc,
            load_done_then, msg);
  CHECK_STR_CONTAINS(msg, "while it waited for the execute gate");
  CHECK_EQ(l.rc, HTPU_OK);
  htpu_context_close(&l.ctx);
  htpu_runtime_close(&rt2);
  fx_rig_close(&r);
}

/* A model whose graph has a name of its own: loaded beside TWO_GRAPHS, it leaves the
 * backend's view of add_f32 to the first context. */
static const char *OTHER =
    "graph other\n"
    "  input a f32 [1,4]\n  output y f32 [1,4]\n"
    "  op Relu a -> y\n";

/* Graph A hangs in graphExecute, a load waits for it: after the gate's hold, another graph's
 * calls run beside A (they do not wait for A or the load), and the load enters once A ends. */
TEST(gate_a_hung_execute_and_a_waiting_load_do_not_freeze_other_graphs) {
  fx_reset_env();
  const char *path = fx_build_model_file("gate_hung.bin", TWO_GRAPHS);
  const char *other = fx_build_model_file("gate_other.bin", OTHER);
  CHECK(path && other);
  htpu_runtime *rt = fx_open_runtime(), *rt2 = fx_open_runtime();
  CHECK(rt && rt2);
  htpu_context *ctx = NULL;
  htpu_graph *ga = NULL, *gc = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &ga), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "mul_f32", &gc), HTPU_OK);
  CHECK_EQ(fx_ref_set_graph_latency("add_f32", 5000000), 0);
  bg_call a, c1, c2;
  bg_start(&a, ga, 0); /* the runtime's default deadline: 60 s */
  int a_in = wait_in_flight(1) == 0;
  bg_load l;
  bg_load_start(&l, rt2, other, 0);
  int l_waits = wait_for_writer(0) == 0;
  bg_start(&c1, gc, 0);           /* an ordinary call of another graph */
  bg_start(&c2, gc, 2000 * MS);   /* and one with a deadline of its own */
  pthread_join(c1.t, NULL);
  pthread_join(c2.t, NULL);
  int a_then = atomic_load(&a.done), l_then = atomic_load(&l.done);
  pthread_join(a.t, NULL);
  pthread_join(l.t, NULL);
  fx_ref_disarm();
  htpu_context_close(&l.ctx);
  htpu_graph_close(&ga);
  htpu_graph_close(&gc);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  htpu_runtime_close(&rt2);
  CHECK_MSG(a_in && l_waits, "A in flight: %d, the load waiting: %d", a_in, l_waits);
  CHECK_MSG(c1.rc == HTPU_OK && c2.rc == HTPU_OK, "other graph: %d (%s), %d (%s)", c1.rc, c1.msg,
            c2.rc, c2.msg);
  CHECK_MSG(!a_then && !l_then, "the other graph's calls ended only after A (%d) or the load (%d)",
            a_then, l_then);
  CHECK(c1.y[0] == 10.0f && c1.y[3] == 160.0f && c2.y[2] == 90.0f);
  CHECK_MSG(a.rc == HTPU_OK && l.rc == HTPU_OK, "A %d (%s), load %d (%s)", a.rc, a.msg, l.rc,
            l.msg);
  CHECK_MSG(l.a_done_then == 1, "the load ran beside A (A's executes done then: %llu)",
            (unsigned long long)l.a_done_then);
}

/* A load's timeout bounds its wait for a hung execute; nothing is created. */
TEST(gate_a_load_timeout_bounds_its_wait_for_the_executes) {
  fx_reset_env();
  const char *path = fx_build_model_file("gate_loadtimeout.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *ga = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &ga), HTPU_OK);
  CHECK_EQ(fx_ref_set_graph_latency("add_f32", 3000000), 0);
  htpu_stats s0;
  htpu_stats_get(&s0);
  bg_call a;
  bg_start(&a, ga, 0);
  int a_in = wait_in_flight(1) == 0;
  bg_load l;
  bg_load_start(&l, rt, path, 200 * MS);
  pthread_join(l.t, NULL);
  int a_then = atomic_load(&a.done);
  pthread_join(a.t, NULL);
  fx_ref_disarm();
  htpu_stats s1;
  htpu_stats_get(&s1);
  CHECK(a_in);
  CHECK_MSG(l.rc == HTPU_ETIMEDOUT && !a_then, "load %d (A done: %d): %s", l.rc, a_then, l.msg);
  CHECK_STR_CONTAINS(l.msg, "passed its 200 ms deadline (timeout_ns) while it waited for the "
                            "executes in flight to end");
  CHECK(l.ctx == NULL);
  CHECK_EQ(s1.live_contexts, s0.live_contexts);
  CHECK_EQ(a.rc, HTPU_OK);
  htpu_graph_close(&ga);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

/* A runtime whose recoveries back off 5 s after a failed recreate. */
static int slow_recovery_rig(fx_rig *r, const char *file) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.recovery_retries = 3;
  o.startup_retry_delay_ms = 5000;
  return fx_rig_open(r, &o, file, 1);
}

/* A DSP restart during a timed call: the call answers at its deadline, not at the recovery's
 * end; the next call goes on with the recovery and answers right. */
TEST(gate_a_recovery_ends_at_its_calls_deadline) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(slow_recovery_rig(&r, "gate_recover.bin"), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  CHECK(fx_ref_trigger_ssr() >= 1);
  CHECK_EQ(fx_ref_arm("contextCreateFromBinary:1:1007"), 0); /* the DSP still coming back */
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 300 * MS;
  float y[4];
  uint64_t t0 = now_ns();
  int rc = fx_add(r.g, 1, &o, NULL, y);
  uint64_t took = now_ns() - t0;
  htpu_stats s_then;
  htpu_stats_get(&s_then);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  fx_ref_disarm();
  CHECK_MSG(rc == HTPU_ETIMEDOUT, "rc %d: %s", rc, msg);
  CHECK_STR_CONTAINS(msg, "passed its 300 ms deadline (timeout) while the DSP restarted and its "
                          "model was being recovered");
  /* it returned in the backoff: the recovery had not been made then (its retry would have) */
  CHECK_MSG(s_then.recoveries == s0.recoveries, "took %llu ms: the 5 s backoff was waited out",
            (unsigned long long)(took / MS));
  CHECK_EQ(fx_add(r.g, 3, NULL, NULL, y), HTPU_OK);
  CHECK(y[0] == 13.0f && y[3] == 44.0f);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  CHECK_EQ(s1.recovery_failures, s0.recovery_failures);
  fx_rig_close(&r);
}

/* A close while a submitted call recovers returns at once; the call answers cancelled. */
TEST(gate_a_close_during_a_recovery_returns) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(slow_recovery_rig(&r, "gate_close.bin"), HTPU_OK);
  CHECK(fx_ref_trigger_ssr() >= 1);
  uint64_t faults0 = fx_ref_faults();
  CHECK_EQ(fx_ref_arm("contextCreateFromBinary:1:1007"), 0);
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  htpu_call *call = NULL;
  CHECK_EQ(htpu_graph_submit(r.g, in, 2, &out, 1, NULL, NULL, NULL, &call), HTPU_OK);
  int in_backoff = 0; /* the recreate failed: the recovery sleeps its backoff now */
  for (int ms = 0; ms < WAIT_MS && !in_backoff; ms++) {
    in_backoff = fx_ref_faults() > faults0;
    if (!in_backoff) usleep(1000);
  }
  uint64_t t0 = now_ns();
  htpu_graph_close(&r.g);
  uint64_t took = now_ns() - t0;
  char msg[512] = "";
  int rc = htpu_call_wait(call, UINT64_MAX);
  htpu_call_result(call, NULL, msg, sizeof msg);
  htpu_call_release(&call);
  fx_ref_disarm();
  CHECK(in_backoff);
  CHECK_MSG(took < 4000 * MS, "the close took %llu ms", (unsigned long long)(took / MS));
  CHECK_MSG(rc == HTPU_ECANCELLED, "rc %d: %s", rc, msg);
  CHECK_STR_CONTAINS(msg, "cancelled while the DSP restarted and its model was being recovered");
  fx_rig_close(&r);
}

static const char *THREE_GRAPHS =
    "graph hang_a\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "graph hang_b\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "graph free_c\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply a b -> y\n";

typedef struct three {
  htpu_runtime *rt, *rt2;
  htpu_context *ctx;
  htpu_graph *a, *b, *c;
  const char *other; /* a model for the loads */
} three;

static int three_open(three *t) {
  memset(t, 0, sizeof *t);
  const char *path = fx_build_model_file("gate_three.bin", THREE_GRAPHS);
  t->other = fx_build_model_file("gate_three_other.bin", OTHER);
  t->rt = fx_open_runtime();
  t->rt2 = fx_open_runtime();
  if (!path || !t->other || !t->rt || !t->rt2) return -1;
  int rc = htpu_context_open_file(t->rt, path, &t->ctx);
  if (!rc) rc = htpu_graph_open(t->ctx, "hang_a", &t->a);
  if (!rc) rc = htpu_graph_open(t->ctx, "hang_b", &t->b);
  if (!rc) rc = htpu_graph_open(t->ctx, "free_c", &t->c);
  return rc;
}

static void three_close(three *t) {
  htpu_graph_close(&t->a);
  htpu_graph_close(&t->b);
  htpu_graph_close(&t->c);
  htpu_context_close(&t->ctx);
  htpu_runtime_close(&t->rt);
  htpu_runtime_close(&t->rt2);
}

/* A load that gave up at the gate leaves it as it found it: the next load waiting for the same
 * hung execute does not freeze another graph's calls. */
TEST(gate_a_load_that_timed_out_leaves_the_gate_open_beside_a_hung_execute) {
  fx_reset_env();
  three t;
  CHECK_EQ(three_open(&t), HTPU_OK);
  CHECK_EQ(fx_ref_set_graph_latency("hang_a", 5000000), 0);
  bg_call a, c;
  bg_start(&a, t.a, 0);
  int a_in = wait_in_flight(1) == 0;
  bg_load l1, l2;
  bg_load_start(&l1, t.rt2, t.other, 300 * MS);
  pthread_join(l1.t, NULL); /* timed out at the gate */
  bg_load_start(&l2, t.rt2, t.other, 0);
  int l2_waits = wait_for_writer(0) == 0;
  bg_start(&c, t.c, 2000 * MS);
  pthread_join(c.t, NULL);
  int a_then = atomic_load(&a.done), l2_then = atomic_load(&l2.done);
  pthread_join(a.t, NULL);
  pthread_join(l2.t, NULL);
  fx_ref_disarm();
  htpu_context_close(&l2.ctx);
  three_close(&t);
  CHECK_MSG(a_in && l2_waits, "A in flight %d, the second load waiting %d", a_in, l2_waits);
  CHECK_MSG(l1.rc == HTPU_ETIMEDOUT, "first load: %d %s", l1.rc, l1.msg);
  CHECK_MSG(c.rc == HTPU_OK && !a_then && !l2_then, "C %d (%s); A done %d, load done %d", c.rc,
            c.msg, a_then, l2_then);
  CHECK(c.y[0] == 10.0f && c.y[3] == 160.0f);
  CHECK_MSG(a.rc == HTPU_OK && l2.rc == HTPU_OK, "A %d, second load %d (%s)", a.rc, l2.rc,
            l2.msg);
}

/* Two hung executes that overlap: while either is stuck, a third graph's calls still run;
 * the load enters once both have ended. */
TEST(gate_two_overlapping_hung_executes_do_not_freeze_a_third_graph) {
  fx_reset_env();
  three t;
  CHECK_EQ(three_open(&t), HTPU_OK);
  CHECK_EQ(fx_ref_set_graph_latency("hang_a", 3000000), 0);
  CHECK_EQ(fx_ref_set_graph_latency("hang_b", 6000000), 0);
  bg_call a, b, c1, c2;
  bg_start(&a, t.a, 0);
  int a_in = wait_in_flight(1) == 0;
  bg_load l;
  bg_load_start(&l, t.rt2, t.other, 0);
  int l_waits = wait_for_writer(0) == 0;
  bg_start(&b, t.b, 0); /* enters beside A once A counts as stuck */
  int b_in = wait_in_flight(2) == 0;
  pthread_join(a.t, NULL); /* A ends; B hangs on */
  bg_start(&c1, t.c, 2000 * MS);
  pthread_join(c1.t, NULL);
  int b_then = atomic_load(&b.done), l_then = atomic_load(&l.done);
  pthread_join(b.t, NULL);
  pthread_join(l.t, NULL);
  bg_start(&c2, t.c, 0);
  pthread_join(c2.t, NULL);
  fx_ref_disarm();
  htpu_context_close(&l.ctx);
  three_close(&t);
  CHECK_MSG(a_in && l_waits && b_in, "A %d, load waiting %d, B %d", a_in, l_waits, b_in);
  CHECK_MSG(c1.rc == HTPU_OK && !b_then && !l_then, "C %d (%s); B done %d, load done %d",
            c1.rc, c1.msg, b_then, l_then);
  CHECK_MSG(a.rc == HTPU_OK && b.rc == HTPU_OK && l.rc == HTPU_OK && c2.rc == HTPU_OK,
            "A %d, B %d, load %d (%s), C %d", a.rc, b.rc, l.rc, l.msg, c2.rc);
}

/* A close while a submitted call's recovery sits in a slow recreate: the recreate is aborted
 * (its signal), the close returns at once and the call answers cancelled. */
TEST(gate_a_close_during_a_slow_recreate_returns) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "gate_recreate.bin", 1), HTPU_OK);
  CHECK(fx_ref_trigger_ssr() >= 1);
  CHECK_EQ(fx_ref_set_latency("contextCreateFromBinary", 5000000), 0);
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  htpu_call *call = NULL;
  CHECK_EQ(htpu_graph_submit(r.g, in, 2, &out, 1, NULL, NULL, NULL, &call), HTPU_OK);
  int recreating = wait_for_writer(1) == 0; /* the recovery holds the gate */
  uint64_t t0 = now_ns();
  htpu_graph_close(&r.g);
  uint64_t took = now_ns() - t0;
  char msg[512] = "";
  int rc = htpu_call_wait(call, UINT64_MAX);
  htpu_call_result(call, NULL, msg, sizeof msg);
  htpu_call_release(&call);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK(recreating);
  CHECK_MSG(took < 3000 * MS, "the close took %llu ms", (unsigned long long)(took / MS));
  CHECK_MSG(rc == HTPU_ECANCELLED, "rc %d: %s", rc, msg);
  CHECK_STR_CONTAINS(msg, "cancelled while the DSP restarted and its model was being recovered");
}

/* Frees have no deadline, but a close must not wait for a hung execute: the context's free is
 * done by the janitor once the execute ends, and the close returns at once. */
TEST(gate_a_close_behind_a_hung_execute_returns_and_the_free_comes_later) {
  fx_reset_env();
  three t;
  CHECK_EQ(three_open(&t), HTPU_OK);
  htpu_context *other = NULL;
  CHECK_EQ(htpu_context_open_file(t.rt2, t.other, &other), HTPU_OK);
  htpu_stats s0, s1, s2;
  htpu_stats_get(&s0);
  unsigned long v0 = fx_ref_violations();
  CHECK_EQ(fx_ref_set_graph_latency("hang_a", 3000000), 0);
  bg_call a;
  bg_start(&a, t.a, 0);
  int a_in = wait_in_flight(1) == 0;
  uint64_t t0 = now_ns();
  htpu_context_close(&other); /* its last reference: the free */
  uint64_t took = now_ns() - t0;
  htpu_stats_get(&s1);
  int a_then = atomic_load(&a.done);
  pthread_join(a.t, NULL);
  int freed = 0; /* once A ended, the janitor frees it */
  for (int ms = 0; ms < WAIT_MS && !freed; ms++) {
    htpu_stats_get(&s2);
    freed = s2.live_contexts == s0.live_contexts - 1;
    if (!freed) usleep(1000);
  }
  unsigned long v = fx_ref_violations();
  fx_ref_disarm();
  three_close(&t);
  CHECK(a_in);
  CHECK_MSG(!a_then, "the close took %llu ms, until A was done", (unsigned long long)(took / MS));
  CHECK_EQ(s1.frees_deferred - s0.frees_deferred, 1);
  CHECK_EQ(s1.live_contexts, s0.live_contexts); /* not freed while A ran */
  CHECK_MSG(freed, "the deferred free never came");
  CHECK_EQ(a.rc, HTPU_OK);
  CHECK_MSG(v == v0, "%s", fx_ref_last_violation());
}

/* A runtime's open is a QNN session's creation: it waits for the executes in flight, and its
 * open_timeout_ns bounds that wait. */
TEST(gate_a_runtime_open_is_bounded_by_its_open_timeout) {
  fx_reset_env();
  three t;
  CHECK_EQ(three_open(&t), HTPU_OK);
  CHECK_EQ(fx_ref_set_graph_latency("hang_a", 3000000), 0);
  bg_call a;
  bg_start(&a, t.a, 0);
  int a_in = wait_in_flight(1) == 0;
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.open_timeout_ns = 300 * MS;
  htpu_runtime *rt = NULL;
  uint64_t t0 = now_ns();
  int rc = htpu_runtime_open(&o, &rt);
  uint64_t took = now_ns() - t0;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  int a_then = atomic_load(&a.done);
  pthread_join(a.t, NULL);
  o.open_timeout_ns = HTPU_MAX_TIMEOUT_NS + 1;
  int bad = htpu_runtime_open(&o, &rt);
  fx_ref_disarm();
  three_close(&t);
  CHECK(a_in);
  CHECK_MSG(rc == HTPU_ETIMEDOUT && !a_then, "rc %d after %llu ms (A done %d): %s", rc,
            (unsigned long long)(took / MS), a_then, msg);
  CHECK_STR_CONTAINS(msg, "opening the runtime passed its 300 ms limit (open_timeout_ns) while "
                          "it waited for the executes in flight");
  CHECK(rt == NULL);
  CHECK_EQ(bad, HTPU_EINVAL);
}
