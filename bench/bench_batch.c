/*
 * bench_batch.c - one batch of 64 digits rows (models/digits, batch 1, f32 in and out) through
 * htpu_exec_options.batch_multiple = 64 (one graphExecute with dims[0] x 64) against the same
 * 64 rows as 64 chunked calls of one row each (what a batch cost before batch multiples):
 * graphExecute calls made (htpu_exec_stats.executes) and the wall-time ratio, the two timed in
 * turn in every repeat so both see the same load. On the reference backend the execute itself
 * is cheap, so the ratio is the per-call host and backend overhead saved; on a board each
 * execute saved is also a FastRPC round trip to the DSP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BATCH 64

void bench_batch(const bench_config *cfg, bench_results *r) {
  printf("\n== batch multiple: %d digits rows, one execute vs %d chunks (reference backend) ==\n",
         BATCH, BATCH);
  bench_model m;
  if (bench_model_open(cfg, "models/digits/digits.bin", 0, &m) != 0) {
    bench_model_close(&m);
    return;
  }
  size_t ni = htpu_graph_input(m.g, 0)->num_elements, no = htpu_graph_output(m.g, 0)->num_elements;
  float *x = malloc(BATCH * ni * sizeof *x), *y = malloc(BATCH * no * sizeof *y);
  int reps = cfg->reps, inner = cfg->quick ? 20 : 200, rc = 0;
  double *ratio = malloc(reps * sizeof *ratio), *one_us = malloc(reps * sizeof *one_us);
  if (!x || !y || !ratio || !one_us) rc = -1;
  for (size_t i = 0; !rc && i < BATCH * ni; i++) x[i] = (float)(bench_rnd01() * 16);
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.batch_multiple = BATCH;
  htpu_io in = {x, BATCH * ni * sizeof *x, HTPU_F32}, out = {y, BATCH * no * sizeof *y, HTPU_F32};
  uint32_t executes_batch = 0, executes_chunks = 0;
  for (int rep = -1; !rc && rep < reps; rep++) { /* rep -1: warm-up */
    double t0 = bench_now_ns();
    for (int k = 0; !rc && k < inner; k++) {
      htpu_exec_stats st;
      rc = htpu_graph_execute_ex(m.g, &in, 1, &out, 1, &o, &st);
      executes_batch = st.executes;
    }
    double t1 = bench_now_ns();
    for (int k = 0; !rc && k < inner; k++) {
      executes_chunks = 0;
      for (int c = 0; !rc && c < BATCH; c++) {
        htpu_io i1 = {x + c * ni, ni * sizeof *x, HTPU_F32},
                o1 = {y + c * no, no * sizeof *y, HTPU_F32};
        htpu_exec_stats st;
        rc = htpu_graph_execute_ex(m.g, &i1, 1, &o1, 1, NULL, &st);
        executes_chunks += st.executes;
      }
    }
    double t2 = bench_now_ns();
    if (rep >= 0) {
      ratio[rep] = (t2 - t1) / (t1 - t0);
      one_us[rep] = (t1 - t0) / inner / 1e3;
    }
  }
  if (rc) {
    printf(" failed: %s\n", htpu_last_error());
  } else {
    r->batch_ratio = bench_stat_of(ratio, reps);
    bench_stat one = bench_stat_of(one_us, reps);
    r->batch_executes = executes_batch;
    r->batch_executes_chunked = executes_chunks;
    printf(" graphExecute calls per batch: %u with batch_multiple %d, %u as %d chunks\n",
           executes_batch, BATCH, executes_chunks, BATCH);
    printf(
        " one batch-multiple call of %d rows: %.1f µs (min %.1f); %d chunks take %.2fx its "
        "time (min %.2fx)\n",
        BATCH, one.med, one.min, BATCH, r->batch_ratio.med, r->batch_ratio.min);
  }
  free(x);
  free(y);
  free(ratio);
  free(one_us);
  bench_model_close(&m);
}
