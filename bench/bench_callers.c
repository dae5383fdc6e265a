/*
 * bench_callers.c - 4 threads calling one graph at MobileNet-v2 I/O (f32 buffers, so every
 * call converts) with a 1.37 ms execute injected in the reference backend: calls per second
 * against 1 / the execute time, as graphExecute took it in the same run (the graph's busy
 * fraction) and alone just before, and the time between one execute and the next (what the
 * library adds to the serial part). The conversions run outside the graph's lock, so the
 * throughput should be max(conversion, execute), not their sum.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MNET_LATENCY_US 1370

typedef struct caller {
  htpu_graph *g;
  int calls;
  int rc;
  double exec_ns; /* graphExecute time of its calls, summed */
} caller;

static void *caller_main(void *arg) {
  caller *c = arg;
  bench_f32_io io;
  if (bench_f32_io_make(c->g, &io) != 0) {
    c->rc = -1;
    return NULL;
  }
  for (int i = 0; !c->rc && i < c->calls; i++) {
    htpu_exec_stats s;
    c->rc = htpu_graph_execute(c->g, &io.in, 1, &io.out, 1, &s);
    c->exec_ns += (double)s.execute_ns;
  }
  bench_f32_io_free(&io);
  return NULL;
}

void bench_callers(const bench_config *cfg, bench_results *res) {
  enum { CALLERS = 4 };
  char mnet[1024];
  snprintf(mnet, sizeof mnet, "%s/bench-models/mobilenet_io.bin", cfg->build_dir);
  bench_model m;
  if (bench_model_open(cfg, mnet, 1, &m) != 0 || bench_set_latency(cfg, MNET_LATENCY_US) != 0) {
    printf("  4 callers: could not open the model or set the reference backend's latency\n");
    bench_model_close(&m);
    return;
  }
  int rounds = cfg->quick ? 2 : 5, per_caller = cfg->quick ? 25 : 150;
  printf("\n== %d callers on one graph, MobileNet-v2 I/O as f32, %u µs execute injected "
         "(reference backend), %d calls each, %d rounds ==\n"
         "  calls/s against 1 / the execute time graphExecute took in the same run (the injected "
         "sleep overshoots by more when the machine is loaded), and against what it took alone "
         "just before\n",
         CALLERS, MNET_LATENCY_US, per_caller, rounds);
  double *ratio = malloc(rounds * sizeof *ratio), *cps = malloc(rounds * sizeof *cps);
  double *solo = malloc(rounds * sizeof *solo), *gap = malloc(rounds * sizeof *gap);
  int failed = !ratio || !cps || !solo || !gap;
  for (int r = 0; !failed && r < rounds; r++) {
    /* the execute time as one caller sees it (the injected sleep plus its overshoot) */
    bench_f32_io io;
    if (bench_f32_io_make(m.g, &io) != 0) break;
    enum { SOLO = 40 };
    double ex[SOLO];
    for (int i = 0; !failed && i < SOLO; i++) {
      htpu_exec_stats s;
      failed = htpu_graph_execute(m.g, &io.in, 1, &io.out, 1, &s) != 0;
      ex[i] = (double)s.execute_ns;
    }
    bench_f32_io_free(&io);
    double exec_ns = bench_median(ex, SOLO);
    caller c[CALLERS];
    pthread_t th[CALLERS];
    int made[CALLERS];
    double t0 = bench_now_ns();
    for (int i = 0; i < CALLERS; i++) {
      c[i] = (caller){m.g, per_caller, 0, 0};
      made[i] = pthread_create(&th[i], NULL, caller_main, &c[i]) == 0;
      if (!made[i]) c[i].rc = -1;
    }
    for (int i = 0; i < CALLERS; i++)
      if (made[i]) pthread_join(th[i], NULL);
    double wall = bench_now_ns() - t0;
    double busy = 0;
    for (int i = 0; i < CALLERS; i++) {
      failed |= c[i].rc != 0;
      busy += c[i].exec_ns;
    }
    if (failed) break;
    int calls = CALLERS * per_caller;
    cps[r] = calls / (wall / 1e9);
    ratio[r] = cps[r] * (busy / calls) / 1e9; /* = the graph's busy fraction */
    solo[r] = cps[r] * exec_ns / 1e9;
    gap[r] = (wall - busy) / calls / 1e3;
    /* where the rest goes: graphExecute itself taking longer than alone, or the gaps between
     * one execute and the next (the hand-over of the graph's lock, whatever runs under it) */
    printf("  round %d: %.1f calls/s; execute %.0f µs in the run: %.3fx of 1 / execute; "
           "%.0f µs alone: %.3fx; %.0f µs between executes\n",
           r + 1, cps[r], busy / calls / 1e3, ratio[r], exec_ns / 1e3, solo[r], gap[r]);
    res->callers4_exec_us = busy / calls / 1e3;
  }
  if (failed) {
    printf("  4 callers: an execute failed: %s\n", htpu_last_error());
  } else {
    res->callers4_calls_per_s = bench_median(cps, rounds);
    res->callers4 = bench_stat_of(ratio, rounds);
    res->callers4_solo = bench_stat_of(solo, rounds);
    res->callers4_gap_us = bench_median(gap, rounds);
  }
  free(ratio);
  free(cps);
  free(solo);
  free(gap);
  bench_set_latency(cfg, 0);
  bench_model_close(&m);
}

