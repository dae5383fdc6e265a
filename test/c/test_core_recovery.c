/* DSP restart recovery (QNN 1007) and transient start-up failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

static int rig_open(fx_rig *r, uint32_t recovery_retries) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.recovery_retries = recovery_retries;
  return fx_rig_open(r, &o, "recover.bin", 1);
}

static int add(fx_rig *r, float base, float *y) { return fx_add(r->g, base, NULL, NULL, y); }

TEST(recovery_dsp_restart_is_transparent) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r, 1), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  unsigned long v0 = fx_ref_violations();
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007"), 0);
  float y[4];
  CHECK_MSG(add(&r, 5, y) == HTPU_OK, "%s", htpu_last_error());
  CHECK(y[0] == 15 && y[3] == 44);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  CHECK_EQ(s1.live_contexts, s0.live_contexts);
  fx_ref_disarm();
  CHECK_EQ(add(&r, 6, y), HTPU_OK);
  /* The stale context was freed after its handles, under the gate. */
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  fx_rig_close(&r);
}

TEST(recovery_off_reports_the_qnn_error) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r, 0), HTPU_OK);
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007"), 0);
  float y[4];
  CHECK_EQ(add(&r, 1, y), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 1007);
  CHECK_STR_CONTAINS(htpu_last_error(), "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION");
  fx_ref_disarm();
  CHECK_EQ(add(&r, 1, y), HTPU_OK);
  fx_rig_close(&r);
}

TEST(recovery_second_restart_is_a_device_reset) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r, 1), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007:2"), 0);
  float y[4];
  CHECK_EQ(add(&r, 1, y), HTPU_EDEVICE_RESET);
  CHECK_EQ(htpu_last_qnn_code(), 1007);
  CHECK_STR_CONTAINS(htpu_last_error(), "restarted again after 1 recovery");
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  CHECK_EQ(s1.recovery_failures - s0.recovery_failures, 1);
  fx_ref_disarm();
  /* The one recovery that did happen left a working context. */
  CHECK_EQ(add(&r, 2, y), HTPU_OK);
  fx_rig_close(&r);
}

TEST(recovery_that_cannot_recreate_leaves_safe_handles) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r, 1), HTPU_OK);
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007,contextCreateFromBinary:1:5005"), 0);
  float y[4];
  CHECK_EQ(add(&r, 1, y), HTPU_EDEVICE_RESET);
  CHECK_STR_CONTAINS(htpu_last_error(), "recreating the context failed");
  CHECK_EQ(htpu_last_qnn_code(), 5005);
  fx_ref_disarm();
  CHECK_EQ(add(&r, 1, y), HTPU_EDEVICE_RESET);
  CHECK_STR_CONTAINS(htpu_last_error(), "could not be recovered");
  htpu_graph *g2 = NULL;
  CHECK(htpu_graph_open(r.ctx, "add_f32", &g2) != HTPU_OK);
  fx_rig_close(&r);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_contexts, 0);
  CHECK_EQ(s.live_runtimes, 0);
}

TEST(recovery_a_thousand_restarts_leak_nothing) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r, 1), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  unsigned long v0 = fx_ref_violations();
  int n = test_under_valgrind() ? 50 : 1000;
  float y[4];
  for (int i = 0; i < n; i++) {
    CHECK_EQ(fx_ref_arm("graphExecute:1:1007"), 0);
    CHECK_EQ(add(&r, (float)i, y), HTPU_OK);
    CHECK(y[0] == (float)i + 10);
  }
  fx_ref_disarm();
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, (uint64_t)n);
  CHECK_EQ(s1.live_contexts, s0.live_contexts);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  fx_rig_close(&r);
}

/* Where no DSP is reachable the real libQnnHtp fails logCreate (11002) and then backendCreate
 * with 4000, a start-up code: the log failure must not stop the retries. */
TEST(startup_retries_run_when_log_create_fails_too) {
  fx_reset_env();
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.startup_retry_delay_ms = 1;
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  CHECK_EQ(fx_ref_arm("logCreate:*:11002,backendCreate:1:4000:2"), 0);
  htpu_runtime *rt = NULL;
  CHECK_MSG(htpu_runtime_open(&o, &rt) == HTPU_OK, "%s", htpu_last_error());
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK_EQ(info.startup_attempts, 3);
  CHECK_STR_CONTAINS(info.log_note, "logCreate returned 11002");
  htpu_stats_get(&s1);
  CHECK_EQ(s1.startup_retries - s0.startup_retries, 2);
  htpu_runtime_close(&rt);
  /* every attempt fails: the 4000 is reported, with the attempts and the log note */
  o.startup_retries = 1;
  CHECK_EQ(fx_ref_arm("logCreate:*:11002,backendCreate:*:4000"), 0);
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 4000);
  CHECK_STR_CONTAINS(htpu_last_error(), "creating the QNN backend");
  CHECK_STR_CONTAINS(htpu_last_error(), "QNN log unavailable: logCreate returned 11002");
  CHECK_STR_CONTAINS(htpu_last_error(), "after 2 attempts");
  fx_ref_disarm();
  htpu_stats_get(&s1);
  CHECK_EQ(s1.live_runtimes, 0);
}

TEST(startup_transient_failures_are_retried_with_backoff) {
  fx_reset_env();
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.startup_retry_delay_ms = 1;
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  /* The first two device creations fail as the first FastRPC session after boot can. */
  CHECK_EQ(fx_ref_arm("deviceCreate:1:14002:2"), 0);
  htpu_runtime *rt = NULL;
  CHECK_MSG(htpu_runtime_open(&o, &rt) == HTPU_OK, "%s", htpu_last_error());
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), HTPU_OK);
  CHECK_EQ(info.startup_attempts, 3);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.startup_retries - s0.startup_retries, 2);
  htpu_runtime_close(&rt);
  /* More failures than the bound: the staged message, with the attempts. */
  o.startup_retries = 2;
  CHECK_EQ(fx_ref_arm("backendCreate:1:1003:5"), 0);
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EQNN);
  CHECK_STR_CONTAINS(htpu_last_error(), "creating the QNN backend");
  CHECK_STR_CONTAINS(htpu_last_error(), "after 3 attempts");
  /* A configuration error is never retried. */
  CHECK_EQ(fx_ref_arm("deviceCreate:1:14001:1"), 0);
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 14001);
  CHECK(strstr(htpu_last_error(), "attempts") == NULL);
  fx_ref_disarm();
  htpu_stats_get(&s1);
  CHECK_EQ(s1.live_runtimes, 0);
}

static int rig_open_context(fx_rig *r, uint32_t recovery_retries) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.recovery_retries = recovery_retries;
  o.startup_retry_delay_ms = 1;
  return fx_rig_open(r, &o, "recover.bin", 0);
}

TEST(recovery_graph_open_on_a_restarted_context) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open_context(&r, 1), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  unsigned long v0 = fx_ref_violations();
  /* A restart while no graph of the context is open: nothing executes to notice it, so the
   * graph open must recover the context itself. */
  CHECK(fx_ref_trigger_ssr() >= 1);
  CHECK_MSG(htpu_graph_open(r.ctx, "add_f32", &r.g) == HTPU_OK, "%s", htpu_last_error());
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  float y[4];
  CHECK_MSG(add(&r, 5, y) == HTPU_OK, "%s", htpu_last_error());
  CHECK(y[0] == 15 && y[3] == 44);
  /* A second graph handle on the recovered context: no further recovery. */
  htpu_graph *g2 = NULL;
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &g2), HTPU_OK);
  htpu_graph_close(&g2);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  fx_rig_close(&r);

  /* With recovery off, the restart is reported as the QNN error it is. */
  CHECK_EQ(rig_open_context(&r, 0), HTPU_OK);
  CHECK(fx_ref_trigger_ssr() >= 1);
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &r.g), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 1007);
  fx_rig_close(&r);
}

TEST(recovery_graph_open_with_a_graph_open_elsewhere) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open(&r, 1), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  CHECK(fx_ref_trigger_ssr() >= 1);
  /* The open recovers the context, and with it the graph that was already open. */
  htpu_graph *g2 = NULL;
  CHECK_MSG(htpu_graph_open(r.ctx, "add_f32", &g2) == HTPU_OK, "%s", htpu_last_error());
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  float y[4];
  CHECK_MSG(add(&r, 1, y) == HTPU_OK, "%s", htpu_last_error());
  htpu_graph *keep = r.g;
  r.g = g2;
  CHECK_MSG(add(&r, 2, y) == HTPU_OK, "%s", htpu_last_error());
  CHECK(y[0] == 12);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  htpu_graph_close(&keep);
  fx_rig_close(&r);
}

TEST(recovery_retries_a_recreate_that_meets_the_dsp_restarting) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open_context(&r, 3), HTPU_OK);
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &r.g), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  uint64_t f0 = fx_ref_faults();
  unsigned long v0 = fx_ref_violations();
  /* A restart, and the DSP still coming back for the first two re-creates. */
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007:ssr,contextCreateFromBinary:1:1007:2"), 0);
  float y[4];
  CHECK_MSG(add(&r, 5, y) == HTPU_OK, "%s", htpu_last_error());
  CHECK(y[0] == 15 && y[3] == 44);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  CHECK_EQ(s1.recovery_failures - s0.recovery_failures, 0);
  CHECK_EQ(fx_ref_faults() - f0, 3); /* the execute and both failed re-creates */
  fx_ref_disarm();
  CHECK_EQ(add(&r, 6, y), HTPU_OK);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  fx_rig_close(&r);
}

TEST(recovery_gives_up_after_its_retries) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(rig_open_context(&r, 2), HTPU_OK);
  CHECK_EQ(htpu_graph_open(r.ctx, "add_f32", &r.g), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  uint64_t f0 = fx_ref_faults();
  /* The DSP stays away for more re-creates than the retries allow: 1 + 2 tries, then the
   * model is given up. */
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007:ssr,contextCreateFromBinary:1:1007:5"), 0);
  float y[4];
  CHECK_EQ(add(&r, 5, y), HTPU_EDEVICE_RESET);
  CHECK_STR_CONTAINS(htpu_last_error(), "recreating the context failed");
  CHECK_STR_CONTAINS(htpu_last_error(), "after 3 attempts");
  CHECK_EQ(htpu_last_qnn_code(), 1007);
  CHECK_EQ(fx_ref_faults() - f0, 4);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 0);
  CHECK_EQ(s1.recovery_failures - s0.recovery_failures, 1);
  fx_ref_disarm();
  CHECK_EQ(add(&r, 1, y), HTPU_EDEVICE_RESET);
  fx_rig_close(&r);

  /* A restart seen by a graph open gets the same retries. */
  CHECK_EQ(rig_open_context(&r, 2), HTPU_OK);
  CHECK(fx_ref_trigger_ssr() >= 1);
  CHECK_EQ(fx_ref_arm("contextCreateFromBinary:1:1007:2"), 0);
  CHECK_MSG(htpu_graph_open(r.ctx, "add_f32", &r.g) == HTPU_OK, "%s", htpu_last_error());
  fx_ref_disarm();
  CHECK_EQ(add(&r, 1, y), HTPU_OK);
  fx_rig_close(&r);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.live_contexts, 0);
}
