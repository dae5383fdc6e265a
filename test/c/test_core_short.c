/* Short calls: a graph's recent call durations (htpu_graph_get_timing) and no-wait executes
 * (htpu_exec_options.no_wait / short_ns), the core of the NIF's normal-scheduler path. Every
 * assertion is on a decision or a counter; the latencies injected only make a call long or
 * short by a margin of hundreds of milliseconds against a 100 ms limit. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "base/gate.h"
#include "hexagon_tpu.h"
#include "test.h"

#define LIMIT_NS 100000000ull /* 100 ms: calls of the small graph take microseconds */

static int rig_open(fx_rig *r) { return fx_rig_open(r, NULL, "short.bin", 1); }

/* One add through handle g; checks the result when it ran. opts NULL: an ordinary call. */
static int add_on(htpu_graph *g, const htpu_exec_options *opts, htpu_exec_stats *st) {
  float y[4] = {0};
  int rc = fx_add(g, 1, opts, st, y);
  if (rc == 0 && (y[0] != 11 || y[3] != 44)) return -1000;
  return rc;
}

static int add(fx_rig *r, const htpu_exec_options *opts, htpu_exec_stats *st) {
  return add_on(r->g, opts, st);
}

/* A no-wait call. Its own timeout lifts the stall bound from 1 ms (which a loaded machine's
 * execute of this graph can pass, declining a call these tests expect to run) to short_ns x 4,
 * or the timeout for short_ns 0; the stall bound itself is test_core_deadline.c's. */
static htpu_exec_options short_opts(uint64_t short_ns) {
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.no_wait = 1;
  o.short_ns = short_ns;
  o.timeout_ns = 10000000000ull;
  return o;
}

TEST(short_timing_window_counts_calls) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  htpu_graph_timing t;
  CHECK_EQ(htpu_graph_get_timing(r.g, NULL), HTPU_EINVAL);
  CHECK_EQ(htpu_graph_get_timing(r.g, &t), HTPU_OK);
  CHECK(t.samples == 0 && t.window == 0 && t.max_ns == 0 && t.last_ns == 0);
  for (int i = 0; i < 5; i++) CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(htpu_graph_get_timing(r.g, &t), HTPU_OK);
  CHECK(t.samples == 5 && t.window == 5);
  CHECK(t.last_ns > 0 && t.max_ns >= t.last_ns);
  for (int i = 0; i < HTPU_TIMING_WINDOW; i++) CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(htpu_graph_get_timing(r.g, &t), HTPU_OK);
  CHECK_EQ(t.samples, 5 + HTPU_TIMING_WINDOW);
  CHECK_EQ(t.window, HTPU_TIMING_WINDOW);
  /* A call with a bad input never reaches graphExecute: not recorded. */
  htpu_io bad = {NULL, 16, HTPU_F32};
  float y[4];
  htpu_io out = {y, sizeof y, HTPU_F32};
  htpu_io ins[2] = {bad, bad};
  CHECK_EQ(htpu_graph_execute(r.g, ins, 2, &out, 1, NULL), HTPU_EINVAL);
  CHECK_EQ(htpu_graph_get_timing(r.g, &t), HTPU_OK);
  CHECK_EQ(t.samples, 5 + HTPU_TIMING_WINDOW);
  htpu_graph *closed = r.g;
  fx_rig_close(&r);
  CHECK_EQ(htpu_graph_get_timing(closed, &t), HTPU_ECLOSED);
}

TEST(short_unknown_duration_is_declined_until_the_window_fills) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  htpu_exec_options o = short_opts(LIMIT_NS);
  htpu_exec_stats st;
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  uint64_t backend0 = fx_ref_executes();
  CHECK_EQ(add(&r, &o, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_UNKNOWN);
  CHECK_STR_CONTAINS(htpu_last_error(), "duration unknown");
  CHECK_EQ(fx_ref_executes(), backend0); /* nothing reached the backend */
  htpu_stats_get(&s1);
  CHECK_EQ(s1.executes_declined - s0.executes_declined, 1);
  CHECK_EQ(s1.executes - s0.executes, 0);
  CHECK_EQ(s1.execute_errors - s0.execute_errors, 0);
  /* Ordinary calls fill the window; one short of full is still unknown. */
  for (int i = 0; i < HTPU_TIMING_WINDOW - 1; i++) CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(add(&r, &o, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_UNKNOWN);
  CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(add(&r, &o, &st), HTPU_OK);
  CHECK_EQ(st.declined, HTPU_DECLINE_NONE);
  /* short_ns 0: no duration requirement (the NIF's forced :normal). Its own timeout is its
   * bound (without one the bound is 1 ms, which a fresh graph's first execute can pass under
   * emulation, as the aarch64 run under qemu showed). */
  htpu_exec_options forced = short_opts(0);
  fx_rig_close(&r);
  CHECK_EQ(rig_open(&r), HTPU_OK);
  int forced_rc = add(&r, &forced, &st);
  fx_rig_close(&r); /* before the checks: a failure must not leave handles to later tests */
  CHECK_EQ(forced_rc, HTPU_OK);
  CHECK_EQ(st.declined, HTPU_DECLINE_NONE);
}

TEST(short_graph_that_grows_is_declined_after_one_overrun) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  htpu_exec_options o = short_opts(LIMIT_NS);
  /* With a timeout of its own the short-call bound is short_ns x 4 (400 ms), so the 300 ms
   * overrun below ends normally instead of at the 1 ms default bound (test_core_deadline.c). */
  o.timeout_ns = 1000000000ull;
  htpu_exec_stats st;
  for (int i = 0; i < HTPU_TIMING_WINDOW; i++) CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(add(&r, &o, &st), HTPU_OK);
  /* The graph becomes slow: the first no-wait call cannot know and runs (the one overrun). */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 300000), 0);
  CHECK_EQ(add(&r, &o, &st), HTPU_OK);
  htpu_graph_timing t;
  CHECK_EQ(htpu_graph_get_timing(r.g, &t), HTPU_OK);
  CHECK(t.max_ns > LIMIT_NS && t.last_ns == t.max_ns);
  /* Every no-wait call after it is declined before converting, and reaches nothing. */
  uint64_t backend0 = fx_ref_executes();
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(add(&r, &o, &st), HTPU_EBUSY);
    CHECK_EQ(st.declined, HTPU_DECLINE_LONG);
  }
  CHECK_STR_CONTAINS(htpu_last_error(), "longer than the short-call limit");
  CHECK_EQ(fx_ref_executes(), backend0);
  /* Fast again: it stays declined until a full window of short calls pushed the long one
   * out (those run as ordinary calls, i.e. on a thread that may block). */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  for (int i = 0; i < HTPU_TIMING_WINDOW - 1; i++) {
    CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
    CHECK_EQ(add(&r, &o, &st), HTPU_EBUSY);
    CHECK_EQ(st.declined, HTPU_DECLINE_LONG);
  }
  CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(add(&r, &o, &st), HTPU_OK);
  fx_ref_disarm();
  fx_rig_close(&r);
}

/* Holds the graph's execute lock from inside an ordinary call (the cancelled callback runs
 * under it) until the test lets go: deterministic contention, no sleeps. */
typedef struct holder {
  fx_hold gate;
  fx_rig *r;
  int rc;
} holder;

static void *holder_main(void *arg) {
  holder *h = arg;
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.cancelled = fx_hold_cancelled;
  o.cancel_arg = &h->gate;
  h->rc = add(h->r, &o, NULL);
  return NULL;
}

TEST(short_no_wait_never_waits_for_a_busy_graph) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  for (int i = 0; i < HTPU_TIMING_WINDOW; i++) CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  holder h = {.r = &r};
  fx_hold_init(&h.gate);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, holder_main, &h) == 0);
  fx_hold_wait(&h.gate);
  /* The graph is held: a no-wait call returns instead of queueing, short-checked or forced. */
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  htpu_exec_stats st;
  htpu_exec_options known = short_opts(LIMIT_NS), forced = short_opts(0);
  CHECK_EQ(add(&r, &known, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_BUSY);
  CHECK_STR_CONTAINS(htpu_last_error(), "another execute holds the graph");
  CHECK_EQ(add(&r, &forced, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_BUSY);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.executes_declined - s0.executes_declined, 2);
  CHECK_EQ(s1.executes_waiting, s0.executes_waiting); /* neither queued */
  fx_hold_release(&h.gate);
  pthread_join(th, NULL);
  CHECK_EQ(h.rc, HTPU_OK);
  CHECK_EQ(add(&r, &forced, &st), HTPU_OK);
  fx_hold_destroy(&h.gate);
  fx_rig_close(&r);
}

TEST(short_no_wait_declines_the_gate_perf_votes_and_recovery) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  htpu_exec_options o = short_opts(0);
  htpu_exec_stats st;
  uint64_t backend0 = fx_ref_executes();
  /* A context load or free holds the gate (here: the test itself). */
  gate_enter_exclusive(&htpu_exec_gate, NULL, 0);
  int rc = add(&r, &o, &st);
  gate_leave_exclusive(&htpu_exec_gate);
  CHECK_EQ(rc, HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_GATE);
  CHECK_EQ(fx_ref_executes(), backend0);
  /* A per-call vote may call setPowerConfig; an out-of-range one stays an EINVAL. */
  o.perf_profile = HTPU_PERF_BURST;
  CHECK_EQ(add(&r, &o, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_PERF);
  o.perf_profile = (htpu_perf_profile)999;
  CHECK_EQ(add(&r, &o, &st), HTPU_EINVAL);
  CHECK_EQ(st.declined, HTPU_DECLINE_NONE);
  o.perf_profile = HTPU_PERF_DEFAULT;
  /* A DSP restart: the no-wait call leaves the recovery to an ordinary call. */
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  CHECK(fx_ref_trigger_ssr() >= 1);
  CHECK_EQ(add(&r, &o, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_RECOVERY);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries, s0.recoveries);
  CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  CHECK_EQ(add(&r, &o, &st), HTPU_OK);
  fx_rig_close(&r);
}

/* A no-wait call held inside the graph's lock (by its cancelled callback) while another
 * thread closes the graph and its context: the no-wait call must not end up with the last
 * reference, or the graph's destroy (FastRPC frees under the exclusive gate, the context's
 * contextFree) would run on its thread, a BEAM normal scheduler in the NIF. Which thread made
 * contextFree is the reference backend's per-thread count; ordering, not timing. */
typedef struct pinned_call {
  holder h;
  int rc;
  uint64_t context_frees; /* contextFree calls made by the no-wait call's thread */
} pinned_call;

static void *pinned_main(void *arg) {
  pinned_call *p = arg;
  htpu_exec_options o = short_opts(0);
  o.cancelled = fx_hold_cancelled;
  o.cancel_arg = &p->h.gate;
  /* It holds the graph for as long as the test needs: a timeout of its own lifts the no-wait
   * bound (1 ms otherwise), so the close is what stops it. */
  o.timeout_ns = 30000000000ull;
  uint64_t before = fx_ref_thread_calls("contextFree");
  p->rc = add(p->h.r, &o, NULL);
  p->context_frees = fx_ref_thread_calls("contextFree") - before;
  return NULL;
}

typedef struct closer {
  htpu_graph *g;
  int rc;
  uint64_t context_frees;
} closer;

static void *closer_main(void *arg) {
  closer *c = arg;
  uint64_t before = fx_ref_thread_calls("contextFree");
  c->rc = htpu_graph_close(&c->g);
  c->context_frees = fx_ref_thread_calls("contextFree") - before;
  return NULL;
}

TEST(short_no_wait_call_never_drops_the_last_reference) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  CHECK(fx_ref_thread_calls("contextFree") != UINT64_MAX);
  pinned_call p = {.h = {.r = &r}, .rc = -1};
  fx_hold_init(&p.h.gate);
  pthread_t ta, tb;
  CHECK(pthread_create(&ta, NULL, pinned_main, &p) == 0);
  fx_hold_wait(&p.h.gate);
  /* The graph's and the context's handles go while the no-wait call holds the graph. */
  closer c = {.g = r.g, .rc = -1};
  int started = pthread_create(&tb, NULL, closer_main, &c) == 0;
  int unregistered = 0;
  for (int ms = 0; started && ms < 5000 && !unregistered; ms++) {
    unregistered = htpu_graph_get_info(r.g) == NULL;
    if (!unregistered) usleep(1000);
  }
  htpu_context_close(&r.ctx);
  fx_hold_release(&p.h.gate);
  pthread_join(ta, NULL);
  if (started) pthread_join(tb, NULL);
  fx_hold_destroy(&p.h.gate);
  r.g = NULL;
  htpu_runtime_close(&r.rt);
  CHECK(started);
  CHECK_MSG(unregistered, "the close never unregistered the graph's handle");
  CHECK_EQ(p.rc, HTPU_ECANCELLED); /* the context's close stopped it while it held the graph */
  CHECK_EQ(c.rc, HTPU_OK);
  CHECK_MSG(p.context_frees == 0, "the no-wait call freed the context: it dropped the last "
            "reference");
  CHECK_EQ(c.context_frees, 1); /* the close did, once the no-wait call was done */
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

/* Issue 18: two handles of one graph (htpu_graph_open twice on one context). The graph is
 * held through one: a no-wait call through the other declines as it would through the
 * first, instead of running the graph beside the holder or waiting for it. */
TEST(short_no_wait_through_another_handle_declines_while_the_graph_is_held) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  htpu_graph *b = NULL;
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &b), HTPU_OK);
  for (int i = 0; i < HTPU_TIMING_WINDOW; i++) CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  unsigned long v0 = fx_ref_violations();
  uint64_t backend0 = fx_ref_executes();
  holder h = {.r = &r};
  fx_hold_init(&h.gate);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, holder_main, &h) == 0);
  fx_hold_wait(&h.gate);
  htpu_exec_stats st_forced, st_known;
  htpu_exec_options known = short_opts(LIMIT_NS), forced = short_opts(0);
  int rc_forced = add_on(b, &forced, &st_forced);
  int rc_known = add_on(b, &known, &st_known);
  uint64_t ran_while_held = fx_ref_executes() - backend0;
  fx_hold_release(&h.gate);
  pthread_join(th, NULL);
  fx_hold_destroy(&h.gate);
  CHECK_MSG(rc_forced == HTPU_EBUSY, "a no-wait call through the second handle ran while the "
            "first held the graph: %s", htpu_err_name(rc_forced));
  CHECK_EQ(st_forced.declined, HTPU_DECLINE_BUSY);
  CHECK_EQ(rc_known, HTPU_EBUSY);
  CHECK_EQ(st_known.declined, HTPU_DECLINE_BUSY);
  CHECK_EQ(ran_while_held, 0);
  CHECK_EQ(h.rc, HTPU_OK);
  /* Free again: both no-wait calls run through the second handle. */
  CHECK_EQ(add_on(b, &forced, NULL), HTPU_OK);
  CHECK_EQ(add_on(b, &known, NULL), HTPU_OK);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  htpu_graph_close(&b);
  fx_rig_close(&r);
}

/* The window of recent durations is the graph's, not the handle's: calls through one handle
 * fill it for the other, and a long call through one demotes the graph for no-wait calls
 * through every handle. */
TEST(short_timing_is_the_graphs_whatever_handle_the_calls_came_through) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r), HTPU_OK);
  htpu_graph *b = NULL;
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &b), HTPU_OK);
  htpu_graph_timing ta, tb;
  for (int i = 0; i < HTPU_TIMING_WINDOW; i++) CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(htpu_graph_get_timing(r.g, &ta), HTPU_OK);
  CHECK_EQ(htpu_graph_get_timing(b, &tb), HTPU_OK);
  CHECK_EQ(tb.samples, HTPU_TIMING_WINDOW);
  CHECK(memcmp(&ta, &tb, sizeof ta) == 0);
  /* Known and short through the other handle too. */
  htpu_exec_options o = short_opts(LIMIT_NS);
  htpu_exec_stats st;
  CHECK_EQ(add_on(b, &o, &st), HTPU_OK);
  CHECK_EQ(st.declined, HTPU_DECLINE_NONE);
  /* One long call through the first handle ... */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 300000), 0);
  CHECK_EQ(add(&r, NULL, NULL), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  CHECK_EQ(htpu_graph_get_timing(b, &tb), HTPU_OK);
  CHECK(tb.max_ns > LIMIT_NS && tb.last_ns == tb.max_ns);
  CHECK_EQ(tb.samples, HTPU_TIMING_WINDOW + 2);
  /* ... and the short-call check through the second sees it. */
  uint64_t backend0 = fx_ref_executes();
  CHECK_EQ(add_on(b, &o, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_LONG);
  CHECK_EQ(fx_ref_executes(), backend0);
  /* The window stays with the graph while any handle of it is open ... */
  htpu_graph_close(&r.g);
  CHECK_EQ(htpu_graph_get_timing(b, &tb), HTPU_OK);
  CHECK_EQ(tb.samples, HTPU_TIMING_WINDOW + 2);
  CHECK_EQ(add_on(b, NULL, NULL), HTPU_OK);
  CHECK_EQ(htpu_graph_get_timing(b, &tb), HTPU_OK);
  CHECK_EQ(tb.samples, HTPU_TIMING_WINDOW + 3);
  /* ... and a handle opened then joins it. */
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &r.g), HTPU_OK);
  CHECK_EQ(htpu_graph_get_timing(r.g, &ta), HTPU_OK);
  CHECK_EQ(ta.samples, HTPU_TIMING_WINDOW + 3);
  /* Once every handle is closed, the graph opened again starts a new window. */
  htpu_graph_close(&r.g);
  htpu_graph_close(&b);
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &r.g), HTPU_OK);
  CHECK_EQ(htpu_graph_get_timing(r.g, &ta), HTPU_OK);
  CHECK_EQ(ta.samples, 0);
  fx_ref_disarm();
  fx_rig_close(&r);
}
