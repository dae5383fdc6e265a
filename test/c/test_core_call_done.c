/* What a submitted call's done callback can read (include/hexagon_tpu.h: done "may call
 * htpu_call_result"): the rc, the stats and the message of the call that just ended. The NIF's
 * done builds its answer message from them (c_src/submit.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

typedef struct seen {
  int rc, result_rc;
  htpu_exec_stats st;
} seen;

static void on_done(htpu_call *call, int rc, void *arg) {
  seen *s = arg;
  s->rc = rc;
  s->result_rc = htpu_call_result(call, &s->st, NULL, 0);
}

TEST(call_result_inside_done) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "call_done.bin", 1), HTPU_OK);
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  seen s;
  memset(&s, 0, sizeof s);
  s.result_rc = 12345;
  htpu_call *call = NULL;
  int rc = htpu_graph_submit(r.g, in, 2, &out, 1, NULL, on_done, &s, &call);
  int waited = rc ? rc : htpu_call_wait(call, UINT64_MAX);
  htpu_call_release(&call);
  fx_rig_close(&r); /* before any CHECK: a failure here must not leak into later tests */
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(waited, HTPU_OK);
  CHECK_EQ(s.rc, HTPU_OK);
  /* The call's rc is decided when done runs: its result must be readable there. */
  CHECK_EQ(s.result_rc, HTPU_OK);
  CHECK(s.st.total_ns > 0);
}

typedef struct seen_error {
  int rc, result_rc;
  uint32_t qnn;
  char last[512], msg[512];
} seen_error;

static void on_done_error(htpu_call *call, int rc, void *arg) {
  seen_error *s = arg;
  s->rc = rc;
  s->qnn = htpu_last_qnn_code();
  snprintf(s->last, sizeof s->last, "%s", htpu_last_error());
  s->result_rc = htpu_call_result(call, NULL, s->msg, sizeof s->msg);
}

/* A failed call's done sees the call's own error on its thread (the finishing worker is not
 * the one that executed it): the QNN code and the message naming the graph. */
TEST(call_error_inside_done) {
  fx_reset_env();
  setenv("HTPU_REF_FAULTS", "graphExecute:1:1100", 1);
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "call_done_error.bin", 1), HTPU_OK);
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  seen_error s;
  memset(&s, 0, sizeof s);
  htpu_call *call = NULL;
  int rc = htpu_graph_submit(r.g, in, 2, &out, 1, NULL, on_done_error, &s, &call);
  int waited = rc ? rc : htpu_call_wait(call, UINT64_MAX);
  htpu_call_release(&call);
  fx_rig_close(&r);
  fx_reset_env();
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(waited, HTPU_EQNN);
  CHECK_EQ(s.rc, HTPU_EQNN);
  CHECK_EQ(s.result_rc, HTPU_EQNN);
  CHECK_EQ(s.qnn, 1100);
  CHECK_STR_CONTAINS(s.last, "executing graph");
  CHECK_STR_CONTAINS(s.msg, "executing graph");
}

/* A call refused at submit for its inputs (a NaN to quantize) counts as the same call made
 * synchronously does: one execute, one execute error. */
TEST(call_refused_at_submit_counts_like_a_synchronous_call) {
  fx_reset_env();
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  size_t len = 0;
  void *bin = fx_build_model(FX_MULTI_GRAPH, &len);
  CHECK(bin);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_buffer(rt, bin, len, &ctx), HTPU_OK);
  free(bin);
  CHECK_EQ(htpu_graph_open(ctx, "first", &g), HTPU_OK); /* u8 [1,3] in, u8 [1,2] out */
  float x[3] = {1, 0, 4}, y[2];
  x[1] = __builtin_nanf("");
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  htpu_stats s0, s1, s2;
  htpu_stats_get(&s0);
  int sync_rc = htpu_graph_execute(g, &in, 1, &out, 1, NULL);
  htpu_stats_get(&s1);
  htpu_call *call = NULL;
  int rc = htpu_graph_submit(g, &in, 1, &out, 1, NULL, NULL, NULL, &call);
  htpu_stats_get(&s2);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_EQ(sync_rc, HTPU_ENAN);
  CHECK_EQ(rc, HTPU_ENAN);
  CHECK(call == NULL);
  CHECK_EQ(s1.executes - s0.executes, 1);
  CHECK_EQ(s1.execute_errors - s0.execute_errors, 1);
  CHECK_EQ(s2.executes - s1.executes, 1);
  CHECK_EQ(s2.execute_errors - s1.execute_errors, 1);
}
