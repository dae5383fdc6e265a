/* Submitted calls through graphExecuteAsync (execute.c, "executeAsync") on their error and
 * teardown paths: a stop while a call waits for room in QNN's queue, a no-wait call behind
 * calls in QNN's queue, a DSP restart notified with recoveries off, closes in any order with
 * released calls still in QNN's queue, a stale context refusing the enqueue, and every per-call
 * resource (perf vote, execute gate, counters) back where it was afterwards. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "submitted.h"
#include "test.h"

static int open_rig(fx_rig *r, const char *file, const htpu_runtime_options *o) {
  fx_reset_env();
  if (fx_ref_set_capability(304, 0) != 0) return -1;
  return fx_rig_open(r, o, file, 1);
}

/* submit_with, and the call's perf vote. */
static int submit_voted(htpu_graph *g, sub *s, int id, uint64_t timeout_ns,
                        htpu_perf_profile vote) {
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = timeout_ns;
  o.perf_profile = vote;
  return submit_opts(g, s, id, &o, done_log_add);
}

/* The third call holds the graph's turn while it waits for room in QNN's queue (two are
 * there); its deadline ends it there: one timeout counted, its perf vote let go, nothing
 * left in flight, and a context load (the gate, exclusively) still goes through. */
TEST(async_review_deadline_while_waiting_for_room) {
  submitted_baseline();
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.perf_profile = HTPU_PERF_POWER_SAVER;
  fx_rig r;
  CHECK_EQ(open_rig(&r, "async_rv_room.bin", &o), HTPU_OK);
  uint32_t power_id = fx_ref_last_power_id();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 150000), 0);
  htpu_stats before;
  htpu_stats_get(&before);
  static sub s[3];
  done_log_reset();
  CHECK_EQ(submit_voted(r.g, &s[0], 1, 0, HTPU_PERF_BURST), HTPU_OK);
  CHECK_EQ(submit_voted(r.g, &s[1], 2, 0, HTPU_PERF_BURST), HTPU_OK);
  wait_async_pending(HTPU_ASYNC_DEPTH);
  CHECK_EQ(submit_voted(r.g, &s[2], 3, 20 * MS, HTPU_PERF_BURST), HTPU_OK);
  int rc2 = htpu_call_wait(s[2].call, UINT64_MAX);
  uint32_t pending_then = fx_ref_async_pending();
  int rc0 = htpu_call_wait(s[0].call, UINT64_MAX);
  int rc1 = htpu_call_wait(s[1].call, UINT64_MAX);
  for (int i = 0; i < 3; i++) htpu_call_release(&s[i].call);
  fx_ref_set_latency("graphExecute", 0);
  htpu_stats after;
  htpu_stats_get(&after);
  htpu_ref_power_state ps;
  int ps_rc = fx_ref_power_state(power_id, &ps);
  /* the gate is free: a second load of the model goes through */
  htpu_context *ctx2 = NULL;
  int load_rc = htpu_context_open_file(r.rt, fx_build_model_file("async_rv_room2.bin",
                                                                  FX_ADD_F32), &ctx2);
  htpu_context_close(&ctx2);
  fx_rig_close(&r);
  fx_ref_disarm();

  CHECK_EQ(rc2, HTPU_ETIMEDOUT);
  CHECK_EQ(pending_then, HTPU_ASYNC_DEPTH); /* it never reached QNN */
  CHECK_EQ(rc0, HTPU_OK);
  CHECK_EQ(rc1, HTPU_OK);
  CHECK(sub_ok(&s[0]) && sub_ok(&s[1]));
  CHECK_EQ(after.executes_timed_out - before.executes_timed_out, 1);
  CHECK_EQ(after.executes - before.executes, 2);
  CHECK_EQ(after.execute_errors - before.execute_errors, 0);
  CHECK_EQ(after.executes_in_flight, 0);
  /* every BURST vote is gone: the runtime's power_saver corners again */
  CHECK_EQ(ps_rc, 0);
  CHECK_MSG(ps.core_corner_target == 0x40, "core corner 0x%x (a call's vote is left)",
            ps.core_corner_target);
  CHECK_EQ(load_rc, HTPU_OK);
  CHECK_BASELINE();
}

/* A no-wait call on a graph with calls in QNN's queue would wait in QNN's queue behind them
 * (one FIFO for graphExecute and graphExecuteAsync): declined as busy at once, without a
 * stall that would demote every no-wait call of the runtime. */
TEST(async_review_no_wait_behind_qnn_queue_is_declined_busy) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, "async_rv_nowait.bin", NULL), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 100000), 0);
  static sub s[2];
  done_log_reset();
  CHECK_EQ(submit(r.g, &s[0], 1, 0, 0), HTPU_OK);
  CHECK_EQ(submit(r.g, &s[1], 2, 0, 0), HTPU_OK);
  wait_async_pending(HTPU_ASYNC_DEPTH);
  htpu_exec_options nw;
  memset(&nw, 0, sizeof nw);
  nw.no_wait = 1;
  htpu_exec_stats st;
  memset(&st, 0, sizeof st);
  float y[4] = {0};
  int rc = fx_add(r.g, 1, &nw, &st, y);
  uint32_t pending_then = fx_ref_async_pending();
  for (int i = 0; i < 2; i++) {
    htpu_call_wait(s[i].call, UINT64_MAX);
    htpu_call_release(&s[i].call);
  }
  fx_ref_set_latency("graphExecute", 0);
  fx_rig_close(&r);
  fx_ref_disarm();

  CHECK_EQ(rc, HTPU_EBUSY);
  CHECK_MSG(st.declined == HTPU_DECLINE_BUSY, "declined %d (expected busy, %d)", (int)st.declined,
            (int)HTPU_DECLINE_BUSY);
  CHECK(pending_then > 0); /* declined while they were still in QNN's queue */
  CHECK_BASELINE();
}

/* A DSP restart notified for calls in QNN's queue with recoveries off: each fails with the
 * restart's error, once, and every counter is back. */
TEST(async_review_restart_notified_without_recovery) {
  submitted_baseline();
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.recovery_retries = 0;
  fx_rig r;
  CHECK_EQ(open_rig(&r, "async_rv_noretry.bin", &o), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 30000), 0);
  htpu_stats before;
  htpu_stats_get(&before);
  static sub s[4];
  done_log_reset();
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
  if (ok) wait_async_pending(HTPU_ASYNC_DEPTH);
  fx_ref_trigger_ssr();
  int rcs[4];
  for (int i = 0; i < 4; i++) {
    rcs[i] = ok ? htpu_call_wait(s[i].call, UINT64_MAX) : -1;
    htpu_call_release(&s[i].call);
  }
  fx_ref_set_latency("graphExecute", 0);
  htpu_stats after;
  htpu_stats_get(&after);
  fx_rig_close(&r);
  fx_ref_disarm();

  CHECK(ok);
  int failed = 0;
  for (int i = 0; i < 4; i++) {
    CHECK_MSG(rcs[i] == HTPU_OK || rcs[i] == HTPU_EQNN || rcs[i] == HTPU_EDEVICE_RESET,
              "call %d: %s", i + 1, htpu_err_name(rcs[i]));
    failed += rcs[i] != HTPU_OK;
  }
  CHECK(failed >= 1);
  CHECK_EQ(done_n, 4);
  CHECK_EQ(after.executes - before.executes, 4);
  CHECK_EQ(after.execute_errors - before.execute_errors, (uint64_t)failed);
  CHECK_EQ(after.recoveries - before.recoveries, 0);
  CHECK_EQ(after.executes_in_flight, 0);
  CHECK_BASELINE();
}

/* The runtime, then the context, then the graph closed while calls are in QNN's queue and
 * behind it, with every call handle released first: the closes cancel them, the last close
 * waits for QNN's notifications, nothing is left (under ASan: nothing used after its free). */
TEST(async_review_close_parents_first_with_released_calls) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, "async_rv_parents.bin", NULL), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 60000), 0);
  unsigned long v0 = fx_ref_violations();
  static sub s[5];
  done_log_reset();
  int ok = 1;
  for (int i = 0; i < 5; i++) ok &= submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
  if (ok) wait_async_pending(HTPU_ASYNC_DEPTH);
  for (int i = 0; i < 5; i++) htpu_call_release(&s[i].call);
  int rc_rt = htpu_runtime_close(&r.rt);
  int rc_ctx = htpu_context_close(&r.ctx);
  int rc_g = htpu_graph_close(&r.g);
  uint32_t pending_after = fx_ref_async_pending();
  fx_ref_set_latency("graphExecute", 0);
  fx_ref_disarm();

  CHECK(ok);
  CHECK_EQ(rc_rt, HTPU_OK);
  CHECK_EQ(rc_ctx, HTPU_OK);
  CHECK_EQ(rc_g, HTPU_OK);
  CHECK_EQ(pending_after, 0);
  CHECK_EQ(done_n, 5);
  for (int i = 0; i < 5; i++)
    CHECK_MSG(done_rcs[i] == HTPU_OK || done_rcs[i] == HTPU_ECANCELLED, "call %d: %s",
              done_ids[i], htpu_err_name(done_rcs[i]));
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  htpu_stats now;
  htpu_stats_get(&now);
  CHECK_EQ(now.executes_in_flight, 0);
  CHECK_BASELINE();
}

/* A DSP restart with nothing in flight: the next call's graphExecuteAsync is refused at the
 * call (1007, never notified); the call recovers the context once and runs, and the calls
 * after it go through QNN's queue again. */
TEST(async_review_stale_context_refuses_the_enqueue) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, "async_rv_stale.bin", NULL), HTPU_OK);
  htpu_stats before;
  htpu_stats_get(&before);
  CHECK_EQ(fx_ref_trigger_ssr(), 1);
  uint64_t notified0 = fx_ref_async_notified();
  static sub s[3];
  done_log_reset();
  int ok = 1;
  for (int i = 0; i < 3; i++) {
    ok &= submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
    ok &= htpu_call_wait(s[i].call, UINT64_MAX) == HTPU_OK && sub_ok(&s[i]);
    htpu_call_release(&s[i].call);
  }
  htpu_stats after;
  htpu_stats_get(&after);
  fx_rig_close(&r); /* after the notify functions returned */
  uint64_t notified = fx_ref_async_notified() - notified0;
  fx_ref_disarm();
  CHECK(ok);
  CHECK_EQ(after.recoveries - before.recoveries, 1);
  CHECK_EQ(after.executes - before.executes, 3);
  CHECK_EQ(after.execute_errors - before.execute_errors, 0);
  CHECK_EQ(notified, 2); /* the first ran with graphExecute after the recovery */
  CHECK_BASELINE();
}

/* Every execute meets a DSP restart: a submitted call gets as many recoveries as the runtime
 * allows (recovery_retries), on the graphExecuteAsync path as on graphExecute (the oracle,
 * the same call with 304 off), and then the restart's error. */
static int restart_every_execute(int async, uint64_t *recoveries, uint64_t *failures) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.recovery_retries = 1;
  o.startup_retry_delay_ms = 1;
  fx_rig r;
  fx_reset_env();
  if (async && fx_ref_set_capability(304, 0) != 0) return -1;
  int rc = fx_rig_open(&r, &o, async ? "async_rv_ssr_on.bin" : "async_rv_ssr_off.bin", 1);
  htpu_stats before, after;
  htpu_stats_get(&before);
  if (!rc) rc = fx_ref_arm("graphExecute:*:1007:ssr");
  sub s;
  if (!rc) rc = submit(r.g, &s, 1, 0, 0);
  if (!rc) {
    rc = htpu_call_wait(s.call, UINT64_MAX);
    htpu_call_release(&s.call);
  }
  htpu_stats_get(&after);
  fx_ref_disarm();
  fx_rig_close(&r);
  *recoveries = after.recoveries - before.recoveries;
  *failures = after.recovery_failures - before.recovery_failures;
  return rc;
}

TEST(async_review_restart_recoveries_bounded_as_graph_execute) {
  submitted_baseline();
  uint64_t rec_sync = 0, fail_sync = 0, rec_async = 0, fail_async = 0;
  int rc_sync = restart_every_execute(0, &rec_sync, &fail_sync);
  int rc_async = restart_every_execute(1, &rec_async, &fail_async);
  CHECK_EQ(rc_sync, HTPU_EDEVICE_RESET);
  CHECK_EQ(rec_sync, 1);
  CHECK_EQ(fail_sync, 1);
  CHECK_MSG(rc_async == HTPU_EDEVICE_RESET, "async: %s", htpu_err_name(rc_async));
  CHECK_MSG(rec_async == rec_sync, "async: %llu recoveries with recovery_retries 1",
            (unsigned long long)rec_async);
  CHECK_EQ(fail_async, fail_sync);
  CHECK_BASELINE();
}

/* Submitted calls with cancels, short deadlines and synchronous executes on one graph whose
 * calls go through QNN's queue, with a DSP restart in the middle: every call answers once,
 * right where it says OK, and every counter is back (the threaded paths for TSan). */
static void *sync_caller(void *arg) {
  htpu_graph *g = arg;
  long bad = 0;
  for (int i = 0; i < 12; i++) {
    float y[4] = {0};
    int rc = fx_add(g, (float)i, NULL, NULL, y);
    if (rc == HTPU_OK && !(y[0] == (float)i + 10 && y[3] == 44)) bad++;
    if (rc != HTPU_OK && rc != HTPU_EDEVICE_RESET) bad++;
  }
  return (void *)bad;
}

TEST(async_review_mixed_stops_sync_and_restart) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, "async_rv_mixed.bin", NULL), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 3000), 0);
  htpu_stats before;
  htpu_stats_get(&before);
  enum { N = 40 };
  static sub s[N];
  done_log_reset();
  pthread_t t;
  int started = pthread_create(&t, NULL, sync_caller, r.g) == 0;
  int submitted = 0;
  for (int i = 0; i < N; i++) {
    uint64_t timeout = i % 5 == 1 ? 2 * MS : 0;
    if (submit(r.g, &s[i], i + 1, 0, timeout) != HTPU_OK) break;
    submitted++;
    if (i % 4 == 2) htpu_call_cancel(s[i].call);
    if (i % 7 == 3) htpu_call_release(&s[i].call); /* answers through done only */
    if (i == N / 2) fx_ref_trigger_ssr();
  }
  long sync_bad = 0;
  if (started) {
    void *ret = NULL;
    pthread_join(t, &ret);
    sync_bad = (long)ret;
  }
  int wrong = 0;
  for (int i = 0; i < submitted; i++) {
    if (!s[i].call) continue;
    int rc = htpu_call_wait(s[i].call, UINT64_MAX);
    if (rc == HTPU_OK && !sub_ok(&s[i])) wrong++;
    htpu_call_release(&s[i].call);
  }
  fx_ref_set_latency("graphExecute", 0);
  fx_rig_close(&r); /* every done ran before the close returned */
  htpu_stats after;
  htpu_stats_get(&after);
  fx_ref_disarm();
  CHECK(started);
  CHECK_EQ(submitted, N);
  CHECK_EQ(sync_bad, 0);
  CHECK_EQ(wrong, 0);
  CHECK_EQ(done_n, N);
  int seen[N + 1];
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < done_n; i++) {
    CHECK(done_ids[i] >= 1 && done_ids[i] <= N);
    seen[done_ids[i]]++;
    CHECK_MSG(done_rcs[i] == HTPU_OK || done_rcs[i] == HTPU_ECANCELLED ||
                  done_rcs[i] == HTPU_ETIMEDOUT || done_rcs[i] == HTPU_EDEVICE_RESET,
              "call %d: %s", done_ids[i], htpu_err_name(done_rcs[i]));
  }
  for (int i = 1; i <= N; i++) CHECK_MSG(seen[i] == 1, "call %d answered %d times", i, seen[i]);
  CHECK_EQ(after.executes_in_flight, 0);
  CHECK_EQ(after.executes_waiting, 0);
  CHECK_BASELINE();
}

/* A synchronous call with a deadline waits in QNN's queue (one FIFO) behind two submitted
 * calls there; its deadline triggers the graph's signal from the timer under the graph's lock,
 * which QNN's notifications of those calls also take: the abort returns, the notifications go
 * through, and every call has its answer. */
TEST(async_review_sync_deadline_behind_qnn_queue) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, "async_rv_syncdl.bin", NULL), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 80000), 0);
  static sub s[2];
  done_log_reset();
  CHECK_EQ(submit(r.g, &s[0], 1, 0, 0), HTPU_OK);
  CHECK_EQ(submit(r.g, &s[1], 2, 0, 0), HTPU_OK);
  wait_async_pending(HTPU_ASYNC_DEPTH);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 10 * MS;
  float y[4] = {0};
  int rc = fx_add(r.g, 1, &o, NULL, y);
  int rc0 = htpu_call_wait(s[0].call, UINT64_MAX);
  int rc1 = htpu_call_wait(s[1].call, UINT64_MAX);
  int ok = sub_ok(&s[0]) && sub_ok(&s[1]);
  for (int i = 0; i < 2; i++) htpu_call_release(&s[i].call);
  fx_ref_set_latency("graphExecute", 0);
  float y2[4] = {0};
  int after_rc = fx_add(r.g, 5, NULL, NULL, y2);
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK_EQ(rc, HTPU_ETIMEDOUT);
  CHECK_EQ(rc0, HTPU_OK);
  CHECK_EQ(rc1, HTPU_OK);
  CHECK(ok);
  CHECK_EQ(after_rc, HTPU_OK);
  CHECK(y2[0] == 15 && y2[3] == 44);
  CHECK_BASELINE();
}
