/*
 * bench_deadline.c - deadlines, aborts and priorities (issue 20) and submitted calls (issue
 * 21) at MobileNet-v2 I/O on the reference backend with injected latency: how long a 5 s
 * stalled execute with a 200 ms timeout takes to return, how long closing a graph handle with
 * 8 calls queued behind a stalled one takes, how many executes a HIGH call waits behind 8
 * queued LOW ones, and the gap between consecutive executes of one graph with 4 submitted
 * calls in flight.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static pthread_mutex_t order_m = PTHREAD_MUTEX_INITIALIZER;
static int order[16], order_n;

static void on_done(htpu_call *call, int rc, void *arg) {
  (void)call, (void)rc;
  pthread_mutex_lock(&order_m);
  if (order_n < 16) order[order_n++] = (int)(intptr_t)arg;
  pthread_mutex_unlock(&order_m);
}

void bench_deadline(const bench_config *cfg, bench_results *res) {
  enum { REPS = 3, QUEUED = 8, STREAM = 400 };
  char mnet[1024];
  snprintf(mnet, sizeof mnet, "%s/bench-models/mobilenet_io.bin", cfg->build_dir);
  bench_model m;
  bench_f32_io io[QUEUED + 1];
  if (bench_model_open(cfg, mnet, 1, &m) != 0) {
    printf("  deadlines: could not open the model\n");
    bench_model_close(&m);
    return;
  }
  for (int i = 0; i <= QUEUED; i++) bench_f32_io_make(m.g, &io[i]);
  double stall[REPS], close_ms[REPS], waited[REPS], gap[REPS];
  int reps = cfg->quick ? 1 : REPS;
  htpu_exec_options o;
  for (int r = 0; r < reps; r++) {
    /* 1: a 5 s stall with a 200 ms timeout */
    bench_set_latency(cfg, 5000000);
    memset(&o, 0, sizeof o);
    o.timeout_ns = 200000000ull;
    double t0 = bench_now_ns();
    int rc = htpu_graph_execute_ex(m.g, &io[0].in, 1, &io[0].out, 1, &o, NULL);
    stall[r] = rc == HTPU_ETIMEDOUT ? (bench_now_ns() - t0) / 1e6 : 0;
    /* 2: close a handle with 8 calls queued behind a stalled one */
    htpu_graph *g2 = NULL;
    htpu_call *calls[QUEUED + 1];
    htpu_graph_open(m.ctx, NULL, &g2);
    for (int i = 0; i <= QUEUED; i++)
      htpu_graph_submit(g2, &io[i].in, 1, &io[i].out, 1, NULL, NULL, NULL, &calls[i]);
    t0 = bench_now_ns();
    htpu_graph_close(&g2);
    close_ms[r] = (bench_now_ns() - t0) / 1e6;
    for (int i = 0; i <= QUEUED; i++) htpu_call_release(&calls[i]);
    /* 3: one HIGH call behind a running LOW one and 8 queued LOW ones */
    bench_set_latency(cfg, 20000);
    order_n = 0;
    memset(&o, 0, sizeof o);
    o.priority = HTPU_PRIORITY_LOW;
    for (int i = 0; i < QUEUED; i++)
      htpu_graph_submit(m.g, &io[i].in, 1, &io[i].out, 1, &o, on_done, (void *)(intptr_t)i,
                        &calls[i]);
    o.priority = HTPU_PRIORITY_HIGH;
    htpu_graph_submit(m.g, &io[QUEUED].in, 1, &io[QUEUED].out, 1, &o, on_done,
                      (void *)(intptr_t)QUEUED, &calls[QUEUED]);
    for (int i = 0; i <= QUEUED; i++) {
      htpu_call_wait(calls[i], UINT64_MAX);
      htpu_call_release(&calls[i]);
    }
    waited[r] = 0;
    for (int i = 0; i < order_n; i++)
      if (order[i] == QUEUED) waited[r] = i; /* executes that ended before it */
    /* 4: 4 submitted calls in flight on a 200 us execute: wall time per call - execute */
    bench_set_latency(cfg, 200);
    htpu_call *ring[4] = {0};
    double exec_ns = 0;
    t0 = bench_now_ns();
    for (int i = 0; i < STREAM + 4; i++) {
      int k = i % 4;
      if (ring[k]) {
        htpu_exec_stats st;
        htpu_call_wait(ring[k], UINT64_MAX);
        htpu_call_result(ring[k], &st, NULL, 0);
        exec_ns += (double)st.execute_ns;
        htpu_call_release(&ring[k]);
      }
      if (i < STREAM) htpu_graph_submit(m.g, &io[k].in, 1, &io[k].out, 1, NULL, NULL, NULL, &ring[k]);
    }
    gap[r] = ((bench_now_ns() - t0) - exec_ns) / STREAM / 1e3;
  }
  bench_set_latency(cfg, 0);
  for (int i = 0; i <= QUEUED; i++) bench_f32_io_free(&io[i]);
  bench_model_close(&m);
  res->stall_200_ms = bench_stat_of(stall, reps);
  res->close8_ms = bench_stat_of(close_ms, reps);
  res->high_waited = bench_stat_of(waited, reps);
  res->inflight4_gap_us = bench_stat_of(gap, reps);
  printf("  deadlines: 5 s stall, 200 ms timeout -> %.1f ms; close with 8 queued -> %.2f ms; "
         "HIGH behind 8 LOW waited %.0f executes; 4 in flight: %.1f us between executes\n",
         res->stall_200_ms.med, res->close8_ms.med, res->high_waited.med,
         res->inflight4_gap_us.med);
}
