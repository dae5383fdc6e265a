/* Deadlines, aborts, priorities and submitted calls (issues 20 + 21): the graph's waiting list
 * (order by priority with aging, bounded), the timer's deadlines with and without execute
 * signals, cancels, no-wait bounds, load priority and timeout, bad inputs (closes under a
 * stall: test_core_deadline_close.c). Order is asserted through the done-callback log, and a
 * stall being stopped through the backend's count of the calls it was made to stop, never
 * through wall-clock bounds. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "submitted.h"
#include "hexagon_tpu.h"
#include "test.h"



TEST(deadline_bad_inputs) {
  fx_reset_env();
  submitted_baseline();
  htpu_priority p = HTPU_PRIORITY_DEFAULT;
  CHECK_EQ(htpu_priority_from_name("normal_high", &p), 0);
  CHECK_EQ(p, HTPU_PRIORITY_NORMAL_HIGH);
  CHECK_EQ(htpu_priority_from_name("urgent", &p), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "unknown priority 'urgent': expected low, normal");
  CHECK(htpu_priority_name(HTPU_PRIORITY_COUNT) == NULL);
  CHECK(strcmp(htpu_priority_name(HTPU_PRIORITY_LOW), "low") == 0);
  CHECK(strcmp(htpu_strerror(HTPU_ETIMEDOUT), "the call passed its deadline") == 0);

  htpu_runtime_options ro;
  fx_ref_options(&ro);
  ro.default_timeout_ns = HTPU_MAX_TIMEOUT_NS + 1;
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&ro, &rt), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "default_timeout_ns");

  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_bad.bin", 1), HTPU_OK);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  float y[4];
  o.timeout_ns = HTPU_MAX_TIMEOUT_NS + 1;
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "above the limit of 86400000000000 ns (24 h)");
  o.timeout_ns = HTPU_MAX_TIMEOUT_NS; /* the limit itself is fine */
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_OK);
  o.timeout_ns = 0; /* the default */
  o.priority = HTPU_PRIORITY_COUNT;
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "priority 5 is out of range");
  o.priority = -1;
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_EINVAL);
  /* submit checks at once: no done, no call */
  sub s;
  htpu_exec_options so;
  memset(&so, 0, sizeof so);
  so.priority = 7;
  memset(&s, 0, sizeof s);
  htpu_call *c = (htpu_call *)&s;
  CHECK_EQ(htpu_graph_submit(r.g, s.in, 2, &s.out, 1, &so, done_log_add, &s, &c), HTPU_EINVAL);
  CHECK(c == NULL);
  CHECK_EQ(htpu_graph_submit(r.g, s.in, 1, &s.out, 1, NULL, done_log_add, &s, &c), HTPU_EMISMATCH);
  so.priority = 0;
  so.no_wait = 1;
  CHECK_EQ(submit(r.g, &s, 1, 0, 0), HTPU_OK); /* a valid one for comparison */
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), HTPU_OK);
  CHECK(sub_ok(&s));
  htpu_call_release(&s.call);
  CHECK_EQ(htpu_graph_submit(r.g, s.in, 2, &s.out, 1, &so, done_log_add, &s, &c), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "takes neither no_wait");
  CHECK_EQ(htpu_call_cancel(NULL), HTPU_EINVAL);
  htpu_call_release(NULL);
  /* load options */
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.priority = 9;
  htpu_context *ctx = NULL;
  size_t len = 0;
  void *bin = fx_build_model(FX_ADD_F32, &len);
  CHECK(bin);
  CHECK_EQ(htpu_context_open_buffer_ex(r.rt, bin, len, &lo, &ctx), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "priority 9 is out of range");
  lo.priority = 0;
  lo.timeout_ns = HTPU_MAX_TIMEOUT_NS + 1;
  CHECK_EQ(htpu_context_open_buffer_ex(r.rt, bin, len, &lo, &ctx), HTPU_EINVAL);
  free(bin);
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* A stalled execute with a deadline: aborted through the graph's signal, the graph usable. */
TEST(deadline_aborts_a_stalled_execute) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_stall.bin", 1), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(r.rt, &info), 0);
  CHECK_EQ(info.execute_signals, 1);
  CHECK_EQ(info.load_signals, 1);
  CHECK_EQ(info.priority_control, 1);
  uint64_t aborted0 = fx_ref_aborted_calls();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 5000000), 0);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 200 * MS;
  float y[4];
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_ETIMEDOUT); /* the 5 s stall stopped: below */
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "graph 'add_f32': the call passed its 200 ms deadline (timeout); the graph "
                     "stays usable");
  CHECK_EQ(fx_ref_aborted_calls(), aborted0 + 1);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  CHECK_EQ(fx_add(r.g, 5, &o, NULL, y), HTPU_OK);
  CHECK(y[0] == 15.0f);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* Every execute arms its deadline (the 60 s default here), but back-to-back calls must not
 * each wake the timer thread: a wake-up costs the calling thread a syscall (~10 us on a loaded
 * host, as much as a small graph's whole call). Only the first of a run does. */
TEST(deadline_back_to_back_calls_do_not_wake_the_timer_each) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_wakes.bin", 1), HTPU_OK);
  float y[4];
  CHECK_EQ(fx_add(r.g, 1, NULL, NULL, y), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  int failed = 0;
  for (int i = 0; i < 200; i++) failed += fx_add(r.g, i, NULL, NULL, y) != HTPU_OK;
  htpu_stats_get(&s1);
  fx_rig_close(&r); /* before any CHECK: a failure here must not leak into later tests */
  CHECK_EQ(failed, 0);
  CHECK_MSG(s1.timer_wakeups - s0.timer_wakeups <= 2, "%llu timer wake-ups for 200 calls",
            (unsigned long long)(s1.timer_wakeups - s0.timer_wakeups));
  CHECK(y[0] == 199.0f + 10.0f);
  CHECK_BASELINE();
}

/* Without execute signals: the caller still gets its deadline (host-side, copy mode). */
TEST(deadline_without_signals_is_host_side) {
  fx_reset_env();
  submitted_baseline();
  CHECK_EQ(fx_ref_set_capability(308, 1000), 0);
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_nosig.bin", 1), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(r.rt, &info), 0);
  CHECK_EQ(info.execute_signals, 0);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 1000000), 0);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 100 * MS;
  float y[4] = {-1, -1, -1, -1};
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(htpu_last_error(), "host-side: this backend has no execute signals");
  CHECK(y[0] == -1.0f); /* the caller's buffer is untouched: the execute ran on copies */
  /* no-wait calls cannot be bounded: declined */
  htpu_exec_options nw;
  memset(&nw, 0, sizeof nw);
  nw.no_wait = 1;
  htpu_exec_stats st;
  CHECK_EQ(fx_add(r.g, 1, &nw, &st, y), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_UNBOUNDED);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  fx_rig_close(&r); /* waits for the background execute of the timed-out call */
  fx_ref_disarm();
  CHECK_BASELINE();
}

static int never_cancelled(void *arg) {
  (void)arg;
  return 0;
}

static int cancelled_at_once(void *arg) {
  (void)arg;
  return 1;
}

/* The model's default timeout (exec_timeout_ns of its load, htpu --timeout) bounds a call
 * without signals as a per-call timeout does: the call names no timeout of its own. */
TEST(deadline_without_signals_model_default_is_host_side) {
  fx_reset_env();
  submitted_baseline();
  CHECK_EQ(fx_ref_set_capability(308, 1000), 0);
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_nosig_default.bin", 0), HTPU_OK);
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.exec_timeout_ns = 100 * MS;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  const char *path = fx_build_model_file("deadline_nosig_default.bin", FX_ADD_F32);
  CHECK(path != NULL);
  CHECK_EQ(htpu_context_open_file_ex(r.rt, path, &lo, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &g), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 1000000), 0);
  float y[4] = {-1, -1, -1, -1};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_EQ(fx_add(g, 1, NULL, NULL, y), HTPU_ETIMEDOUT);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  /* ended at its deadline, long before the execute's end (1 s) */
  CHECK((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec) < 900ll * (long long)MS);
  CHECK_STR_CONTAINS(htpu_last_error(), "host-side: this backend has no execute signals");
  CHECK(y[0] == -1.0f);
  /* the same for a call that carries a caller-gone check (every dirty call from Elixir does):
   * bounded as well, and cancelled when the check says so */
  /* on a graph of its own (the first one runs on for its 1 s in the background) */
  htpu_context *ctx2 = NULL;
  htpu_graph *g2 = NULL;
  CHECK_EQ(htpu_context_open_file_ex(r.rt, path, &lo, &ctx2), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx2, "add_f32", &g2), HTPU_OK);
  htpu_exec_options co;
  memset(&co, 0, sizeof co);
  co.cancelled = never_cancelled;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_EQ(fx_add(g2, 1, &co, NULL, y), HTPU_ETIMEDOUT);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  CHECK((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec) < 900ll * (long long)MS);
  CHECK_STR_CONTAINS(htpu_last_error(), "host-side: this backend has no execute signals");
  co.cancelled = cancelled_at_once;
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  CHECK_EQ(fx_add(g2, 1, &co, NULL, y), HTPU_ECANCELLED);
  htpu_stats_get(&s1);
  /* it waited behind the first call's background execute and never ran: counted as the
   * synchronous path counts a caller-gone skip */
  CHECK_EQ(s1.executes_cancelled - s0.executes_cancelled, 1);
  CHECK_EQ(s1.executes - s0.executes, 0);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  htpu_graph_close(&g2);
  htpu_context_close(&ctx2);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK_BASELINE();
}

/* A call waiting behind a held graph leaves the list at its deadline, never having run. */
TEST(deadline_while_waiting_never_runs) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_wait.bin", 1), HTPU_OK);
  fx_holder h;
  fx_holder_start(&h, r.g);
  uint64_t backend0 = fx_ref_executes();
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 50 * MS;
  float y[4];
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(htpu_last_error(), "while it waited behind other calls of the graph; it "
                                        "never ran");
  sub s;
  done_log_reset();
  CHECK_EQ(submit(r.g, &s, 7, 0, 50 * MS), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), HTPU_ETIMEDOUT);
  CHECK_EQ(done_n, 1);
  CHECK_EQ(done_rcs[0], HTPU_ETIMEDOUT);
  char msg[256];
  CHECK_EQ(htpu_call_result(s.call, NULL, msg, sizeof msg), HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(msg, "never ran");
  htpu_call_release(&s.call);
  fx_holder_end(&h);
  CHECK_EQ(h.rc, HTPU_OK);
  CHECK_EQ(fx_ref_executes(), backend0 + 1); /* the holder's only */
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* Priority order with aging: calls queued behind a held graph run by priority, then arrival;
 * a LOW call waits behind at most 12 HIGH calls that arrived after it. */
TEST(deadline_priority_order_and_aging) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_prio.bin", 1), HTPU_OK);
  static sub s[20];
  fx_holder h;
  /* 8 LOW, then one HIGH: the HIGH one runs first. */
  done_log_reset();
  fx_holder_start(&h, r.g);
  for (int i = 0; i < 8; i++) CHECK_EQ(submit(r.g, &s[i], i, HTPU_PRIORITY_LOW, 0), HTPU_OK);
  CHECK_EQ(submit(r.g, &s[8], 8, HTPU_PRIORITY_HIGH, 0), HTPU_OK);
  fx_holder_end(&h);
  for (int i = 0; i < 9; i++) CHECK_EQ(htpu_call_wait(s[i].call, UINT64_MAX), HTPU_OK);
  CHECK_EQ(done_n, 9);
  CHECK_EQ(done_ids[0], 8);
  for (int i = 1; i < 9; i++) CHECK_EQ(done_ids[i], i - 1);
  for (int i = 0; i < 9; i++) {
    CHECK(sub_ok(&s[i]));
    htpu_call_release(&s[i].call);
  }
  /* 1 LOW then 13 HIGH: HIGH 1..12, then the aged LOW (12 passes: 3 levels), then HIGH 13. */
  done_log_reset();
  fx_holder_start(&h, r.g);
  CHECK_EQ(submit(r.g, &s[0], 100, HTPU_PRIORITY_LOW, 0), HTPU_OK);
  for (int i = 1; i <= 13; i++)
    CHECK_EQ(submit(r.g, &s[i], i, HTPU_PRIORITY_HIGH, 0), HTPU_OK);
  fx_holder_end(&h);
  for (int i = 0; i <= 13; i++) CHECK_EQ(htpu_call_wait(s[i].call, UINT64_MAX), HTPU_OK);
  CHECK_EQ(done_n, 14);
  for (int i = 0; i < 12; i++) CHECK_EQ(done_ids[i], i + 1);
  CHECK_EQ(done_ids[12], 100);
  CHECK_EQ(done_ids[13], 13);
  for (int i = 0; i <= 13; i++) htpu_call_release(&s[i].call);
  fx_rig_close(&r);
  CHECK_BASELINE();
}

TEST(deadline_queue_full) {
  fx_reset_env();
  submitted_baseline();
  htpu_runtime_options ro;
  fx_ref_options(&ro);
  ro.queue_limit = 2;
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, &ro, "deadline_full.bin", 1), HTPU_OK);
  fx_holder h;
  fx_holder_start(&h, r.g);
  sub s[3];
  CHECK_EQ(submit(r.g, &s[0], 0, 0, 0), HTPU_OK);
  CHECK_EQ(submit(r.g, &s[1], 1, 0, 0), HTPU_OK);
  CHECK_EQ(submit(r.g, &s[2], 2, 0, 0), HTPU_EBUSY);
  CHECK_STR_CONTAINS(htpu_last_error(), "graph 'add_f32': its queue of 2 calls is full");
  CHECK(s[2].call == NULL);
  float y[4];
  CHECK_EQ(fx_add(r.g, 1, NULL, NULL, y), HTPU_EBUSY); /* synchronous calls share the list */
  fx_holder_end(&h);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(htpu_call_wait(s[i].call, UINT64_MAX), HTPU_OK);
    htpu_call_release(&s[i].call);
  }
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* Cancel of a waiting, a running and a finished call; wait with a limit. */
TEST(deadline_cancel_waiting_running_finished) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_cancel.bin", 1), HTPU_OK);
  sub s[3];
  /* finished */
  CHECK_EQ(submit(r.g, &s[0], 0, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s[0].call, UINT64_MAX), HTPU_OK);
  CHECK_EQ(htpu_call_cancel(s[0].call), 0);
  CHECK_EQ(htpu_call_result(s[0].call, NULL, NULL, 0), HTPU_OK);
  CHECK(sub_ok(&s[0]));
  htpu_call_release(&s[0].call);
  CHECK(s[0].call == NULL);
  /* running (stalled 5 s) and one waiting behind it */
  uint64_t aborted0 = fx_ref_aborted_calls();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 5000000), 0);
  done_log_reset();
  CHECK_EQ(submit(r.g, &s[1], 1, 0, 0), HTPU_OK);
  htpu_ref_graph_state gs;
  for (int i = 0; i < 2000; i++) {
    if (fx_ref_graph_state("add_f32", &gs) == 0 && gs.running) break;
    usleep(1000);
  }
  CHECK_EQ(gs.running, 1);
  CHECK_EQ(submit(r.g, &s[2], 2, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s[2].call, 1 * MS), HTPU_ETIMEDOUT); /* not ended: goes on */
  CHECK_STR_CONTAINS(htpu_last_error(), "has not ended within");
  CHECK_EQ(htpu_call_result(s[2].call, NULL, NULL, 0), HTPU_EBUSY);
  CHECK_EQ(htpu_call_cancel(s[2].call), 0);
  CHECK_EQ(htpu_call_wait(s[2].call, UINT64_MAX), HTPU_ECANCELLED);
  CHECK_EQ(htpu_call_cancel(s[1].call), 0);
  CHECK_EQ(htpu_call_wait(s[1].call, UINT64_MAX), HTPU_ECANCELLED);
  char msg[256];
  CHECK_EQ(htpu_call_result(s[1].call, NULL, msg, sizeof msg), HTPU_ECANCELLED);
  CHECK_STR_CONTAINS(msg, "cancelled while it ran (aborted)");
  CHECK_EQ(fx_ref_aborted_calls(), aborted0 + 1);
  CHECK_EQ(done_n, 2);
  CHECK_EQ(done_ids[0], 2); /* the waiting one left first */
  htpu_call_release(&s[1].call);
  htpu_call_release(&s[2].call);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  float y[4];
  CHECK_EQ(fx_add(r.g, 1, NULL, NULL, y), HTPU_OK);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* A DSP restart during a timed call: recovered and retried under the same deadline. */
TEST(deadline_dsp_restart_during_a_timed_call) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_ssr.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007:ssr"), 0);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 10000 * MS;
  float y[4];
  CHECK_EQ(fx_add(r.g, 2, &o, NULL, y), HTPU_OK);
  CHECK(y[0] == 12.0f);
  sub s;
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007:ssr"), 0);
  CHECK_EQ(submit(r.g, &s, 3, 0, 10000 * MS), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), HTPU_OK);
  CHECK(sub_ok(&s));
  htpu_call_release(&s.call);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* No-wait calls are bounded: a stall stops them (STALLED) and demotes the runtime. Decisions
 * and the backend's own count of the executes it was made to stop, never the clock: the calls
 * that must run give themselves a timeout (their bound is then short_ns x 4, or that timeout,
 * instead of 1 ms, which a loaded machine can pass), and the stalls last seconds against a
 * 1 ms bound. */
TEST(deadline_no_wait_stall_bound_demotes) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_nowait.bin", 1), HTPU_OK);
  float y[4];
  for (int i = 0; i < HTPU_TIMING_WINDOW; i++) CHECK_EQ(fx_add(r.g, 1, NULL, NULL, y), HTPU_OK);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.no_wait = 1;
  o.short_ns = 100 * MS;
  o.timeout_ns = 10000 * MS;
  htpu_exec_stats st;
  CHECK_EQ(fx_add(r.g, 1, &o, &st, y), HTPU_OK);
  o.timeout_ns = 0; /* the bound: 1 ms */
  uint64_t stopped0 = fx_ref_aborted_calls() + fx_ref_timed_out_calls();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 3000000), 0);
  CHECK_EQ(fx_add(r.g, 1, &o, &st, y), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_STALLED);
  CHECK_STR_CONTAINS(htpu_last_error(), "stopped at its short-call bound");
  CHECK_EQ(fx_ref_aborted_calls() + fx_ref_timed_out_calls() - stopped0, 1);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  CHECK_EQ(fx_add(r.g, 1, &o, &st, y), HTPU_EBUSY); /* demoted, runtime-wide */
  CHECK_EQ(st.declined, HTPU_DECLINE_LONG);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* A no-wait call that did not ask for the duration check (short_ns 0, the NIF's forced normal
 * scheduler) is bounded all the same: its thread must stay responsive whatever the DSP does.
 * Bounded is an event here: the backend stopped the 3 s execute (its count of stopped calls),
 * rather than the call lasting the 3 s. */
TEST(deadline_no_wait_without_short_ns_is_bounded) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_nowait0.bin", 1), HTPU_OK);
  float y[4];
  for (int i = 0; i < HTPU_TIMING_WINDOW; i++) CHECK_EQ(fx_add(r.g, 1, NULL, NULL, y), HTPU_OK);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.no_wait = 1;
  o.timeout_ns = 10000 * MS; /* runs: its bound is its own timeout */
  htpu_exec_stats st;
  CHECK_EQ(fx_add(r.g, 1, &o, &st, y), HTPU_OK);
  CHECK_EQ(st.declined, HTPU_DECLINE_NONE);
  o.timeout_ns = 0; /* the bound: 1 ms */
  uint64_t stopped0 = fx_ref_aborted_calls() + fx_ref_timed_out_calls();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 3000000), 0);
  CHECK_EQ(fx_add(r.g, 1, &o, &st, y), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_STALLED);
  CHECK_EQ(fx_ref_aborted_calls() + fx_ref_timed_out_calls() - stopped0, 1);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* Loads: the priority reaches QNN as a context config; the timeout bounds the load. */
TEST(deadline_load_priority_and_timeout) {
  fx_reset_env();
  submitted_baseline();
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  size_t len = 0;
  void *bin = fx_build_model(FX_ADD_F32, &len);
  CHECK(bin);
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.priority = HTPU_PRIORITY_HIGH;
  htpu_context *ctx = NULL;
  CHECK_EQ(htpu_context_open_buffer_ex(rt, bin, len, &lo, &ctx), HTPU_OK);
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), HTPU_OK);
  htpu_ref_graph_state gs;
  CHECK_EQ(fx_ref_graph_state("add_f32", &gs), 0);
  CHECK_EQ(gs.context_priority, 200);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  /* a stalled load with a timeout */
  CHECK_EQ(fx_ref_set_latency("contextCreateFromBinary", 5000000), 0);
  lo.priority = 0;
  lo.timeout_ns = 100 * MS;
  CHECK_EQ(htpu_context_open_buffer_ex(rt, bin, len, &lo, &ctx), HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(htpu_last_error(), "the load passed its 100 ms deadline");
  CHECK(ctx == NULL);
  CHECK_EQ(fx_ref_set_latency("contextCreateFromBinary", 0), 0);
  htpu_runtime_close(&rt);
  /* without priority control the load still works (no config passed) */
  CHECK_EQ(fx_ref_set_capability(306, 1000), 0);
  rt = fx_open_runtime();
  CHECK(rt);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), 0);
  CHECK_EQ(info.priority_control, 0);
  lo.priority = HTPU_PRIORITY_HIGH;
  lo.timeout_ns = 0;
  CHECK_EQ(htpu_context_open_buffer_ex(rt, bin, len, &lo, &ctx), HTPU_OK);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  free(bin);
  fx_ref_disarm();
  CHECK_BASELINE();
}

/* A signal the backend refuses at create: that graph falls back to host-side deadlines. */
TEST(deadline_signal_refused_falls_back) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_refused.bin", 0), HTPU_OK);
  /* abort signals announced when the runtime opened, refused when the graph makes its own */
  CHECK_EQ(fx_ref_set_capability(1202, 1000), 0);
  CHECK_EQ(htpu_graph_open(r.ctx, NULL, &r.g), HTPU_OK);
  fx_ref_reset_capabilities();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 1000000), 0);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.timeout_ns = 100 * MS;
  float y[4];
  CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(htpu_last_error(), "host-side");
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  fx_rig_close(&r);
  fx_ref_disarm();
  CHECK_BASELINE();
}

/* A submitted call's outputs and done run off the graph's turn: while the first call's done
 * is still running, the next call executes (a second worker takes it), and dones still come
 * in execute order. With one worker doing everything in series, the first done would wait
 * for an execute that cannot start until it returns. */
static atomic_int overlap_seen;
static uint64_t overlap_target;

static void on_done_waiting_for_next(htpu_call *call, int rc, void *arg) {
  for (int i = 0; i < 10000 && fx_ref_executes() < overlap_target; i++) usleep(1000);
  atomic_store(&overlap_seen, fx_ref_executes() >= overlap_target);
  done_log_add(call, rc, arg);
}

TEST(deadline_next_call_executes_while_a_call_finishes) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_overlap.bin", 1), HTPU_OK);
  fx_holder h;
  fx_holder_start(&h, r.g); /* both calls queue behind it */
  sub s[2];
  done_log_reset();
  atomic_store(&overlap_seen, 0);
  overlap_target = fx_ref_executes() + 3; /* the holder's, then both calls' */
  CHECK_EQ(submit_with(r.g, &s[0], 0, 0, 0, on_done_waiting_for_next), HTPU_OK);
  CHECK_EQ(submit(r.g, &s[1], 1, 0, 0), HTPU_OK);
  fx_holder_end(&h);
  CHECK_EQ(h.rc, HTPU_OK);
  for (int i = 0; i < 2; i++) CHECK_EQ(htpu_call_wait(s[i].call, UINT64_MAX), HTPU_OK);
  CHECK_EQ(atomic_load(&overlap_seen), 1);
  CHECK_EQ(done_n, 2);
  CHECK_EQ(done_ids[0], 0); /* dones in execute order */
  CHECK_EQ(done_ids[1], 1);
  for (int i = 0; i < 2; i++) {
    CHECK(sub_ok(&s[i]));
    htpu_call_release(&s[i].call);
  }
  fx_rig_close(&r);
  CHECK_BASELINE();
}
