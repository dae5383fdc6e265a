/* The graphs' worker threads (src/call.c): started by a graph's first submitted call, kept
 * while it has any (a call waiting out a stall longer than the linger, or one in QNN's async
 * queue, still finishes), gone about a second after its last, so idle models hold no threads.
 * Waits are on the counters, bounded generously; nothing asserts a duration. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "submitted.h"
#include "test.h"

#define MODELS 100

/* OS threads of this process now. */
static unsigned os_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  unsigned n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static uint64_t worker_threads(void) {
  htpu_stats st;
  htpu_stats_get(&st);
  return st.worker_threads;
}

/* Until the workers alive are `n` (bounded, 30 s): 1 when they are. */
static int wait_workers(uint64_t n) {
  for (int ms = 0; ms < 30000; ms += 5) {
    if (worker_threads() == n) return 1;
    usleep(5000);
  }
  return 0;
}

TEST(workers_exit_when_their_models_are_idle) {
  fx_reset_env();
  submitted_baseline();
  uint64_t w0 = worker_threads();
  unsigned t0 = os_threads();
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  size_t len = 0;
  void *bin = fx_build_model(FX_ADD_F32, &len);
  CHECK(bin);
  static htpu_context *ctx[MODELS];
  static htpu_graph *g[MODELS];
  static sub s[MODELS];
  int rc = 0;
  for (int i = 0; i < MODELS && !rc; i++) {
    rc = htpu_context_open_buffer(rt, bin, len, &ctx[i]);
    if (!rc) rc = htpu_graph_open(ctx[i], NULL, &g[i]);
    if (!rc) rc = submit(g[i], &s[i], i, 0, 0);
  }
  free(bin);
  int all_ok = !rc;
  for (int i = 0; i < MODELS && all_ok; i++)
    all_ok = htpu_call_wait(s[i].call, 20000 * MS) == HTPU_OK && sub_ok(&s[i]);
  uint64_t busy = worker_threads();
  for (int i = 0; i < MODELS; i++) htpu_call_release(&s[i].call);
  /* No call left: every graph's workers go, while the models stay loaded. */
  int gone = wait_workers(w0);
  unsigned t1 = os_threads();
  for (int i = 0; i < MODELS; i++) {
    htpu_graph_close(&g[i]);
    htpu_context_close(&ctx[i]);
  }
  htpu_runtime_close(&rt);
  CHECK_MSG(all_ok, "a call failed: %s", htpu_last_error());
  CHECK_MSG(busy > w0, "no worker ran the calls (%llu)", (unsigned long long)busy);
  CHECK_MSG(gone, "%llu workers still alive for idle models", (unsigned long long)worker_threads());
  /* the timer thread may have started meanwhile: one more */
  CHECK_MSG(t1 <= t0 + 1, "%u OS threads with %d idle models loaded, %u before", t1, MODELS, t0);
  CHECK_BASELINE();
}

/* A call still alive keeps its graph's workers past the linger: one waiting out a stall
 * longer than it, and (graphExecuteAsync) one in QNN's queue, both still answer. */
static void stalled_call_finishes(int async) {
  fx_reset_env();
  submitted_baseline();
  if (async) CHECK_EQ(fx_ref_set_capability(304, 0), 0);
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, async ? "workers_async.bin" : "workers_sync.bin", 1), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 2500000), 0); /* 2.5 s: past the linger */
  sub s1, s2;
  CHECK_EQ(submit(r.g, &s1, 1, 0, 0), HTPU_OK);
  CHECK_EQ(submit(r.g, &s2, 2, 0, 0), HTPU_OK);
  int rc1 = htpu_call_wait(s1.call, 30000 * MS), rc2 = htpu_call_wait(s2.call, 30000 * MS);
  fx_ref_disarm();
  htpu_call_release(&s1.call);
  htpu_call_release(&s2.call);
  fx_rig_close(&r);
  CHECK_MSG(rc1 == HTPU_OK && rc2 == HTPU_OK, "%d %d: %s", rc1, rc2, htpu_last_error());
  CHECK(sub_ok(&s1) && sub_ok(&s2));
  CHECK_BASELINE();
}

TEST(workers_stay_while_a_call_waits_out_a_stall) { stalled_call_finishes(0); }

TEST(workers_stay_while_a_call_is_in_qnns_async_queue) { stalled_call_finishes(1); }

/* A graph whose workers exited takes submitted calls again: new workers start. */
TEST(workers_start_again_after_they_exited) {
  fx_reset_env();
  submitted_baseline();
  uint64_t w0 = worker_threads();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "workers_again.bin", 1), HTPU_OK);
  sub s;
  for (int round = 0; round < 2; round++) {
    CHECK_EQ(submit(r.g, &s, round, 0, 0), HTPU_OK);
    CHECK_EQ(htpu_call_wait(s.call, 20000 * MS), HTPU_OK);
    CHECK(sub_ok(&s));
    htpu_call_release(&s.call);
    CHECK_MSG(wait_workers(w0), "round %d: the workers stayed", round);
  }
  fx_rig_close(&r);
  CHECK_BASELINE();
}

/* The queue has no limit by default; a load's queue_limit sets one, and the refusal names it. */
TEST(workers_queue_limit_of_a_load) {
  fx_reset_env();
  submitted_baseline();
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  size_t len = 0;
  void *bin = fx_build_model(FX_ADD_F32, &len);
  CHECK(bin);
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.queue_limit = 1;
  htpu_context *limited = NULL, *open = NULL;
  htpu_graph *gl = NULL, *go = NULL;
  CHECK_EQ(htpu_context_open_buffer_ex(rt, bin, len, &lo, &limited), HTPU_OK);
  CHECK_EQ(htpu_context_open_buffer(rt, bin, len, &open), HTPU_OK);
  free(bin);
  CHECK_EQ(htpu_graph_open(limited, NULL, &gl), HTPU_OK);
  CHECK_EQ(htpu_graph_open(open, NULL, &go), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 300000), 0);
  static sub a[3], b[300];
  CHECK_EQ(submit(gl, &a[0], 0, 0, 0), HTPU_OK); /* runs */
  CHECK_EQ(submit(gl, &a[1], 1, 0, 0), HTPU_OK); /* waits */
  int busy = submit(gl, &a[2], 2, 0, 0);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  int rc = 0;
  for (int i = 0; i < 300 && !rc; i++) rc = submit(go, &b[i], i, 0, 0); /* past the old 256 */
  fx_ref_set_latency("graphExecute", 0);
  int ok = 1;
  for (int i = 0; i < 2; i++) ok = ok && htpu_call_wait(a[i].call, 20000 * MS) == 0 && sub_ok(&a[i]);
  for (int i = 0; i < 300; i++) {
    if (!b[i].call) continue;
    ok = ok && htpu_call_wait(b[i].call, 20000 * MS) == 0 && sub_ok(&b[i]);
    htpu_call_release(&b[i].call);
  }
  for (int i = 0; i < 2; i++) htpu_call_release(&a[i].call);
  fx_ref_disarm();
  htpu_graph_close(&gl);
  htpu_graph_close(&go);
  htpu_context_close(&limited);
  htpu_context_close(&open);
  htpu_runtime_close(&rt);
  CHECK_EQ(busy, HTPU_EBUSY);
  CHECK_STR_CONTAINS(msg, "its queue of 1 calls is full (the queue_limit option of its load or "
                          "runtime: Elixir's load_model/2 :queue_limit)");
  CHECK_MSG(rc == HTPU_OK, "submit past 256: %s", htpu_err_name(rc));
  CHECK(ok);
  CHECK_BASELINE();
}
