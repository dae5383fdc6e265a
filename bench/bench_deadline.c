/*
 * bench_deadline.c - deadlines, aborts and priorities (issue 20) and submitted calls (issue
 * 21) at MobileNet-v2 I/O on the reference backend with injected latency: how long a 5 s
 * stalled execute with a 200 ms timeout takes to return, how long closing a graph handle with
 * 8 calls queued behind a stalled one takes, how many executes a HIGH call waits behind 8
 * queued LOW ones, and the gap between consecutive executes of one graph with 4 submitted
 * calls in flight: through the graph's workers and graphExecute (every HTP release), and
 * through graphExecuteAsync where a backend announces it (the reference backend with 304 on).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

#define RING_CALLS 400

/* `depth` submitted calls in flight (at most 4), RING_CALLS in all: the wall time per call
 * (ns); *exec_ns: their executes' mean; *gap_med_ns: the median time the graph was idle
 * between one call's execute and the next's, from their stats (execute_start_ns and
 * execute_ns; graphExecute only: an async call's execute spans its wait in QNN's queue). */
static double ring(htpu_graph *g, bench_f32_io *io, int depth, double *exec_ns,
                   double *gap_med_ns) {
  static double start[RING_CALLS], end[RING_CALLS], gaps[RING_CALLS];
  htpu_call *ring[4] = {0};
  double sum = 0, t0 = bench_now_ns();
  for (int i = 0; i < RING_CALLS + depth; i++) {
    int k = i % depth;
    if (ring[k]) {
      htpu_exec_stats st;
      htpu_call_wait(ring[k], UINT64_MAX);
      htpu_call_result(ring[k], &st, NULL, 0);
      sum += (double)st.execute_ns;
      start[i - depth] = (double)st.execute_start_ns;
      end[i - depth] = (double)(st.execute_start_ns + st.execute_ns);
      htpu_call_release(&ring[k]);
    }
    if (i < RING_CALLS)
      htpu_graph_submit(g, &io[k].in, 1, &io[k].out, 1, NULL, NULL, NULL, &ring[k]);
  }
  double wall = (bench_now_ns() - t0) / RING_CALLS;
  for (int i = 1; i < RING_CALLS; i++) gaps[i - 1] = start[i] - end[i - 1];
  *exec_ns = sum / RING_CALLS;
  *gap_med_ns = bench_median(gaps, RING_CALLS - 1);
  return wall;
}

/* The same through graphExecuteAsync. A call's execute there is measured from its hand-over to
 * QNN's queue to its notification, which takes in the wait behind the call ahead of it; so the
 * gap is the wall time per call with 4 in flight minus what graphExecute takes for the same
 * call alone (synchronous calls, just before): what QNN's queue does not hide. */
static void async_gap(const bench_config *cfg, const char *path, int reps, bench_results *res) {
  setenv("HTPU_REF_CAPS", "304=0", 1); /* read by the backend at every capability question */
  bench_model m;
  bench_f32_io io[4];
  double gap[3];
  int opened = bench_model_open(cfg, path, 1, &m) == 0;
  unsetenv("HTPU_REF_CAPS");
  if (!opened) {
    bench_model_close(&m);
    return;
  }
  for (int i = 0; i < 4; i++) bench_f32_io_make(m.g, &io[i]);
  bench_set_latency(cfg, 200);
  for (int r = 0; r < reps; r++) {
    double solo = 0, ignored, ignored_too;
    for (int i = 0; i < RING_CALLS; i++) {
      htpu_exec_stats st;
      htpu_graph_execute_ex(m.g, &io[0].in, 1, &io[0].out, 1, NULL, &st);
      solo += (double)st.execute_ns / RING_CALLS;
    }
    gap[r] = (ring(m.g, io, 4, &ignored, &ignored_too) - solo) / 1e3;
  }
  bench_set_latency(cfg, 0);
  for (int i = 0; i < 4; i++) bench_f32_io_free(&io[i]);
  bench_model_close(&m);
  res->inflight4_async_gap_us = bench_stat_of(gap, reps);
}

void bench_deadline(const bench_config *cfg, bench_results *res) {
  enum { REPS = 3, QUEUED = 8 };
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
  double stall[REPS], close_ms[REPS], waited[REPS], gap[REPS], gap_med[REPS];
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
    double exec_ns, wall = ring(m.g, io, 4, &exec_ns, &gap_med[r]);
    gap[r] = (wall - exec_ns) / 1e3;
    gap_med[r] /= 1e3;
  }
  bench_set_latency(cfg, 0);
  for (int i = 0; i <= QUEUED; i++) bench_f32_io_free(&io[i]);
  bench_model_close(&m);
  res->stall_200_ms = bench_stat_of(stall, reps);
  res->close8_ms = bench_stat_of(close_ms, reps);
  res->high_waited = bench_stat_of(waited, reps);
  res->inflight4_gap_us = bench_stat_of(gap, reps);
  res->inflight4_gap_med_us = bench_stat_of(gap_med, reps);
  async_gap(cfg, mnet, reps, res);
  printf("  deadlines: 5 s stall, 200 ms timeout -> %.1f ms; close with 8 queued -> %.2f ms; "
         "HIGH behind 8 LOW waited %.0f executes; 4 in flight: %.1f us between executes "
         "(per pair: median %.1f us; executeAsync: %.1f us)\n",
         res->stall_200_ms.med, res->close8_ms.med, res->high_waited.med,
         res->inflight4_gap_us.med, res->inflight4_gap_med_us.med,
         res->inflight4_async_gap_us.med);
}
