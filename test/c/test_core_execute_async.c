/* Submitted calls through graphExecuteAsync (execute.c, "executeAsync"), where the backend
 * announces it (the reference backend with capability 304 switched on; no HTP release does):
 * the same answers as graphExecute, in order, at most HTPU_ASYNC_DEPTH calls in QNN's queue,
 * deadlines and cancels on the host, a refusal after open remembered, a DSP restart while calls
 * are queued, closes with calls in QNN's queue. The same calls without 304 are the synchronous
 * path's tests (test_core_deadline.c). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "submitted.h"
#include "test.h"

#define N_CALLS 8

/* A rig on a backend that announces graphExecuteAsync (or not: async 0). */
static int open_async_rig(fx_rig *r, const char *file, int async) {
  fx_reset_env();
  if (async && fx_ref_set_capability(304, 0) != 0) return -1;
  return fx_rig_open(r, NULL, file, 1);
}

/* Waits for every call; the most executes of add_f32 the backend held queued or running
 * meanwhile (one in its notification counts no more: its execute is over). */
static uint32_t wait_all(sub *s, int n) {
  uint32_t most = 0;
  for (int i = 0; i < n; i++) {
    while (htpu_call_wait(s[i].call, 1 * MS) == HTPU_ETIMEDOUT) {
      htpu_ref_graph_state gs;
      if (fx_ref_graph_state("add_f32", &gs) != 0) continue;
      if (gs.queued + gs.running > most) most = gs.queued + gs.running;
    }
  }
  return most;
}

TEST(async_calls_are_queued_in_qnn_and_answer_in_order) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_async_rig(&r, "async_order.bin", 1), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(r.rt, &info), HTPU_OK);
  CHECK_EQ(info.execute_async, 1);
  /* long enough that the next calls are handed over while one runs */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 20000), 0);
  uint64_t notified0 = fx_ref_async_notified();
  unsigned long v0 = fx_ref_violations();
  static sub s[N_CALLS];
  done_log_reset();
  int submitted = 0;
  for (int i = 0; i < N_CALLS; i++) submitted += submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
  uint32_t most = submitted == N_CALLS ? wait_all(s, N_CALLS) : 0;
  htpu_exec_stats st;
  int rc0 = submitted ? htpu_call_result(s[0].call, &st, NULL, 0) : -1;
  for (int i = 0; i < submitted; i++) htpu_call_release(&s[i].call);
  fx_ref_set_latency("graphExecute", 0);
  fx_rig_close(&r); /* the backend counts a notification once its notify function returned:
                       after the context's free, every one is counted */
  uint64_t notified = fx_ref_async_notified() - notified0;
  fx_ref_disarm();

  CHECK_EQ(submitted, N_CALLS);
  CHECK_EQ(rc0, HTPU_OK);
  CHECK_EQ(st.executes, 1);
  CHECK(st.execute_ns >= 20 * MS);
  /* every call went through QNN's async queue, never more than the depth at once */
  CHECK_EQ(notified, N_CALLS);
  CHECK_MSG(most == HTPU_ASYNC_DEPTH, "at most %u calls in QNN's queue at once (expected %d)",
            most, HTPU_ASYNC_DEPTH);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  /* right answers for inputs that differ per call, in submission order (FIFO, one priority) */
  CHECK_EQ(done_n, N_CALLS);
  for (int i = 0; i < N_CALLS; i++) {
    CHECK_EQ(done_ids[i], i + 1);
    CHECK_EQ(done_rcs[i], HTPU_OK);
    CHECK_MSG(sub_ok(&s[i]), "call %d: y = %g %g %g %g", i + 1, s[i].y[0], s[i].y[1], s[i].y[2],
              s[i].y[3]);
  }
  CHECK_BASELINE();
}

/* Without 304 the same calls never reach graphExecuteAsync. */
TEST(async_not_announced_uses_graph_execute) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_async_rig(&r, "async_off.bin", 0), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(r.rt, &info), HTPU_OK);
  uint64_t notified0 = fx_ref_async_notified();
  static sub s[4];
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
  if (ok) wait_all(s, 4);
  for (int i = 0; i < 4; i++) {
    ok &= htpu_call_result(s[i].call, NULL, NULL, 0) == HTPU_OK && sub_ok(&s[i]);
    htpu_call_release(&s[i].call);
  }
  fx_rig_close(&r);
  CHECK_EQ(info.execute_async, 0);
  CHECK(ok);
  CHECK_EQ(fx_ref_async_notified() - notified0, 0);
  CHECK_BASELINE();
}

/* No signal reaches a call in QNN's async queue (309 is not announced): a deadline or a cancel
 * ends it on the host before QNN notifies it; the execute runs on into the call's own copies
 * and the graph stays usable. */
TEST(async_deadline_and_cancel_end_on_the_host) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_async_rig(&r, "async_deadline.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 400000), 0);
  uint64_t notified0 = fx_ref_async_notified();
  static sub s[3];
  done_log_reset();
  CHECK_EQ(submit(r.g, &s[0], 1, 0, 50 * MS), HTPU_OK); /* in QNN's queue, times out */
  CHECK_EQ(submit(r.g, &s[1], 2, 0, 0), HTPU_OK);       /* in QNN's queue, cancelled */
  CHECK_EQ(submit(r.g, &s[2], 3, 0, 0), HTPU_OK);       /* waits on the host, cancelled */
  int queued = wait_async_pending(HTPU_ASYNC_DEPTH);
  CHECK_EQ(htpu_call_cancel(s[1].call), HTPU_OK);
  CHECK_EQ(htpu_call_cancel(s[2].call), HTPU_OK);
  int rc[3];
  for (int i = 0; i < 3; i++) rc[i] = htpu_call_wait(s[i].call, UINT64_MAX);
  /* all three ended before QNN notified the first */
  uint64_t notified_then = fx_ref_async_notified() - notified0;
  char msg[1024];
  htpu_call_result(s[0].call, NULL, msg, sizeof msg);
  for (int i = 0; i < 3; i++) htpu_call_release(&s[i].call);
  fx_ref_set_latency("graphExecute", 0);
  /* the graph stays usable: a call after them gets its answer */
  sub after;
  int after_rc = submit(r.g, &after, 9, 0, 0);
  if (!after_rc) after_rc = htpu_call_wait(after.call, UINT64_MAX);
  int after_ok = !after_rc && sub_ok(&after);
  htpu_call_release(&after.call);
  fx_rig_close(&r); /* waits for the two executes still in QNN's queue */
  fx_ref_disarm();

  CHECK(queued);
  CHECK_EQ(rc[0], HTPU_ETIMEDOUT);
  CHECK_EQ(rc[1], HTPU_ECANCELLED);
  CHECK_EQ(rc[2], HTPU_ECANCELLED);
  CHECK_MSG(strstr(msg, "async queue") != NULL, "message: %s", msg);
  CHECK_EQ(notified_then, 0);
  CHECK(after_ok);
  CHECK_EQ(fx_ref_async_notified() - notified0, 3); /* the two ended early, then `after` */
  CHECK_BASELINE();
}

/* 304 announced at open, refused later (1000): the call runs with graphExecute and the graph
 * remembers it. */
TEST(async_refused_after_open_falls_back_to_graph_execute) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_async_rig(&r, "async_refused.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_set_capability(304, 1000), 0);
  uint64_t notified0 = fx_ref_async_notified();
  static sub s[3];
  int ok = 1;
  for (int i = 0; i < 3; i++) {
    ok &= submit(r.g, &s[i], i + 4, 0, 0) == HTPU_OK;
    ok &= htpu_call_wait(s[i].call, UINT64_MAX) == HTPU_OK && sub_ok(&s[i]);
    htpu_call_release(&s[i].call);
  }
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK(ok);
  CHECK_EQ(fx_ref_async_notified() - notified0, 0);
  CHECK_BASELINE();
}

/* A DSP restart (1007) while calls are in QNN's queue: each is queued again, the context is
 * recovered once, and every call gets its own right answer. */
TEST(async_dsp_restart_while_calls_are_queued) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_async_rig(&r, "async_ssr.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 20000), 0);
  htpu_stats before;
  htpu_stats_get(&before);
  static sub s[6];
  done_log_reset();
  int ok = 1;
  for (int i = 0; i < 6; i++) ok &= submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
  ok = ok && wait_async_pending(HTPU_ASYNC_DEPTH);
  uint32_t stale = fx_ref_trigger_ssr();
  if (ok) wait_all(s, 6);
  int rcs[6], right[6];
  for (int i = 0; i < 6; i++) {
    rcs[i] = htpu_call_result(s[i].call, NULL, NULL, 0);
    right[i] = sub_ok(&s[i]);
    htpu_call_release(&s[i].call);
  }
  fx_ref_set_latency("graphExecute", 0);
  htpu_stats after;
  htpu_stats_get(&after);
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK(ok);
  CHECK_EQ(stale, 1);
  for (int i = 0; i < 6; i++) {
    CHECK_MSG(rcs[i] == HTPU_OK, "call %d: %s", i + 1, htpu_err_name(rcs[i]));
    CHECK_MSG(right[i], "call %d: a wrong answer", i + 1);
  }
  CHECK(after.recoveries > before.recoveries);
  CHECK_BASELINE();
}

/* Closing the graph and its context with calls in QNN's queue and behind it: the queued ones
 * are cancelled at once, the closes wait for QNN's notifications, nothing is left and the
 * backend sees no context freed under a pending call. */
TEST(async_close_with_calls_in_qnn_queue) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_async_rig(&r, "async_close.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 100000), 0);
  unsigned long v0 = fx_ref_violations();
  static sub s[6];
  done_log_reset();
  int ok = 1;
  for (int i = 0; i < 6; i++) ok &= submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
  ok = ok && wait_async_pending(HTPU_ASYNC_DEPTH);
  int close_rc = htpu_graph_close(&r.g);
  uint32_t pending_after_close = fx_ref_async_pending();
  int rcs[6];
  for (int i = 0; i < 6; i++) {
    rcs[i] = htpu_call_result(s[i].call, NULL, NULL, 0);
    htpu_call_release(&s[i].call);
  }
  fx_ref_set_latency("graphExecute", 0);
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK(ok);
  CHECK_EQ(close_rc, HTPU_OK);
  CHECK_EQ(pending_after_close, 0); /* the close waited for QNN's notifications */
  /* the ones still on the host never ran; the ones in QNN's queue ended with the close */
  for (int i = 0; i < 6; i++)
    CHECK_MSG(rcs[i] == HTPU_ECANCELLED || rcs[i] == HTPU_OK, "call %d: %s", i + 1,
              htpu_err_name(rcs[i]));
  for (int i = HTPU_ASYNC_DEPTH + 1; i < 6; i++) CHECK_EQ(rcs[i], HTPU_ECANCELLED);
  CHECK_EQ(done_n, 6);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  CHECK_BASELINE();
}

/* A call of k row groups (batch_multiple) on an async graph runs on the worker with
 * graphExecute, one execute of all rows where the backend takes the multiple. */
TEST(async_graph_runs_batch_multiple_calls_synchronously) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_async_rig(&r, "async_batch.bin", 1), HTPU_OK);
  uint64_t notified0 = fx_ref_async_notified();
  float a[8], b[8], y[8];
  for (int k = 0; k < 8; k++) {
    a[k] = (float)(k * 3);
    b[k] = (float)(100 - k);
  }
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.batch_multiple = 2;
  htpu_call *call = NULL;
  int rc = htpu_graph_submit(r.g, in, 2, &out, 1, &o, NULL, NULL, &call);
  if (!rc) rc = htpu_call_wait(call, UINT64_MAX);
  htpu_exec_stats st;
  memset(&st, 0, sizeof st);
  if (call) htpu_call_result(call, &st, NULL, 0);
  htpu_call_release(&call);
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK_EQ(rc, HTPU_OK);
  for (int k = 0; k < 8; k++) CHECK(y[k] == a[k] + b[k]);
  CHECK_EQ(st.executes, 1);
  CHECK_EQ(fx_ref_async_notified() - notified0, 0);
  CHECK_BASELINE();
}

/* A call queued again after a DSP restart was accepted once: it is not refused as "queue full"
 * when queue_limit calls wait meanwhile. */
TEST(async_requeue_after_a_restart_is_never_refused_as_full) {
  submitted_baseline();
  fx_reset_env();
  CHECK_EQ(fx_ref_set_capability(304, 0), 0);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.queue_limit = 1;
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, &o, "async_requeue_full.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 50000), 0);
  static sub s[3];
  int ok = 1;
  for (int i = 0; i < HTPU_ASYNC_DEPTH; i++) ok &= submit(r.g, &s[i], i + 1, 0, 0) == HTPU_OK;
  ok = ok && wait_async_pending(HTPU_ASYNC_DEPTH);
  ok &= submit(r.g, &s[2], 3, 0, 0) == HTPU_OK; /* waits on the host: the queue is full */
  uint32_t stale = fx_ref_trigger_ssr();
  int rcs[3], right[3];
  for (int i = 0; i < 3; i++) {
    rcs[i] = ok ? htpu_call_wait(s[i].call, UINT64_MAX) : -1;
    right[i] = sub_ok(&s[i]);
    htpu_call_release(&s[i].call);
  }
  fx_ref_set_latency("graphExecute", 0);
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK(ok);
  CHECK_EQ(stale, 1);
  for (int i = 0; i < 3; i++) {
    CHECK_MSG(rcs[i] == HTPU_OK, "call %d: %s", i + 1, htpu_err_name(rcs[i]));
    CHECK_MSG(right[i], "call %d: a wrong answer", i + 1);
  }
  CHECK_BASELINE();
}
