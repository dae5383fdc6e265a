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
