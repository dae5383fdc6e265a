/* Closes under a stall (issues 20 + 21): a graph, context or runtime closed while executes of
 * it run in the backend (stalled for 5 s) and wait for their turn. The running one is stopped,
 * the waiting ones leave, each says why; that the stall was stopped rather than waited out is
 * the backend's count of the calls it was made to stop, or every call answering cancelled,
 * never the clock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "submitted.h"
#include "hexagon_tpu.h"
#include "test.h"

/* Closing the graph with 8 calls queued behind a stalled one: all cancelled, none left. */
TEST(deadline_close_with_calls_queued_behind_a_stall) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_close.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 5000000), 0);
  static sub s[9];
  done_log_reset();
  for (int i = 0; i < 9; i++) CHECK_EQ(submit(r.g, &s[i], i, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_graph_close(&r.g), 0);
  /* every one cancelled, the first too: the close stopped the 5 s stall, not waited it out */
  CHECK_EQ(done_n, 9);
  for (int i = 0; i < 9; i++) {
    CHECK_EQ(done_rcs[i], HTPU_ECANCELLED);
    CHECK_EQ(htpu_call_result(s[i].call, NULL, NULL, 0), HTPU_ECANCELLED);
    htpu_call_release(&s[i].call);
  }
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* A synchronous execute on its own thread, with its rc and message. */
typedef struct sync_call {
  pthread_t t;
  htpu_graph *g;
  float a0;
  int rc;
  char msg[512];
} sync_call;

static void *sync_main(void *arg) {
  sync_call *c = arg;
  float y[4];
  c->rc = fx_add(c->g, c->a0, NULL, NULL, y);
  snprintf(c->msg, sizeof c->msg, "%s", htpu_last_error());
  if (c->rc == HTPU_OK && y[0] != c->a0 + 10.0f) c->rc = -999; /* a wrong answer */
  return NULL;
}

/* Polls the core's gauges (a generous 10 s): 0 when in_flight executes are in the backend and
 * `waiting` wait for their graph. */
static int gauges(uint64_t in_flight, uint64_t waiting) {
  for (int ms = 0; ms < 10000; ms++) {
    htpu_stats st;
    htpu_stats_get(&st);
    if (st.executes_in_flight == in_flight && st.executes_waiting == waiting) return 0;
    usleep(1000);
  }
  return -1;
}

/* Closing a graph handle while synchronous executes of it run and wait: the running one is
 * aborted, the waiting one leaves the list, both HTPU_ECANCELLED saying why; a caller waiting
 * through another handle of the same graph is left alone and runs. */
TEST(deadline_close_aborts_synchronous_executes) {
  fx_reset_env();
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "deadline_close_sync.bin", 1), HTPU_OK);
  htpu_graph *other = NULL;
  CHECK_EQ(htpu_graph_open(r.ctx, NULL, &other), HTPU_OK);
  uint64_t aborted0 = fx_ref_aborted_calls();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 5000000), 0);
  sync_call run = {.g = r.g, .a0 = 1}, wait = {.g = r.g, .a0 = 2}, keep = {.g = other, .a0 = 3};
  pthread_create(&run.t, NULL, sync_main, &run);
  CHECK_EQ(gauges(1, 0), 0);
  pthread_create(&wait.t, NULL, sync_main, &wait);
  CHECK_EQ(gauges(1, 1), 0);
  pthread_create(&keep.t, NULL, sync_main, &keep);
  CHECK_EQ(gauges(1, 2), 0);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0); /* the kept call runs at once */
  CHECK_EQ(htpu_graph_close(&r.g), 0);
  pthread_join(run.t, NULL);
  pthread_join(wait.t, NULL);
  pthread_join(keep.t, NULL);
  CHECK_EQ(run.rc, HTPU_ECANCELLED);
  CHECK_STR_CONTAINS(run.msg, "cancelled while it ran (aborted): its graph handle, context or "
                              "runtime was closed");
  CHECK_EQ(wait.rc, HTPU_ECANCELLED);
  CHECK_STR_CONTAINS(wait.msg, "cancelled while it waited for its turn: its graph handle");
  CHECK_EQ(keep.rc, HTPU_OK);
  CHECK_EQ(fx_ref_aborted_calls(), aborted0 + 1);
  htpu_graph_close(&other);
  fx_ref_disarm();
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* Closing the context, or the runtime, aborts the synchronous execute in flight under it; the
 * graph handle, still open, stays usable after a context close. */
TEST(deadline_context_and_runtime_close_abort_synchronous_executes) {
  fx_reset_env();
  submitted_baseline();
  for (int which = 0; which < 2; which++) {
    fx_rig r;
    CHECK_EQ(fx_rig_open(&r, NULL, "deadline_close_ctx.bin", 1), HTPU_OK);
    CHECK_EQ(fx_ref_set_latency("graphExecute", 5000000), 0);
    sync_call run = {.g = r.g, .a0 = 4}, wait = {.g = r.g, .a0 = 5};
    pthread_create(&run.t, NULL, sync_main, &run);
    CHECK_EQ(gauges(1, 0), 0);
    pthread_create(&wait.t, NULL, sync_main, &wait);
    CHECK_EQ(gauges(1, 1), 0);
    uint64_t stopped0 = fx_ref_aborted_calls();
    if (which == 0)
      CHECK_EQ(htpu_context_close(&r.ctx), 0);
    else
      CHECK_EQ(htpu_runtime_close(&r.rt), 0);
    pthread_join(run.t, NULL);
    pthread_join(wait.t, NULL);
    CHECK_EQ(fx_ref_aborted_calls(), stopped0 + 1); /* the 5 s stall stopped, not waited out */
    CHECK_EQ(run.rc, HTPU_ECANCELLED);
    CHECK_STR_CONTAINS(run.msg, "its graph handle, context or runtime was closed");
    CHECK_EQ(wait.rc, HTPU_ECANCELLED);
    CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
    float y[4];
    CHECK_EQ(fx_add(r.g, 6, NULL, NULL, y), HTPU_OK); /* the handle still works */
    CHECK(y[0] == 16.0f);
    fx_rig_close(&r);
  }
  fx_ref_disarm();
  CHECK_BASELINE();
}
