/*
 * bench_calls.c - whole calls through the C API on the reference backend:
 *
 *   bench_calls    host overhead of one execute (total - graphExecute) at MobileNet-v2 I/O
 *                  (u8 [1,224,224,3] in, u8 [1,1001] out; bench/mobilenet_io.txt, a graph
 *                  with next to no compute) and at the digits model's (f32 [1,64] -> u8,
 *                  u8 [1,10] -> f32), against memcpy of the f32 bytes, for f32 buffers
 *                  (converted by the library into its scratch pool: FastRPC memory when the
 *                  runtime has it, ordinary memory when not) and buffers already in the
 *                  tensors' types (ordinary, or shared: htpu_graph_alloc_io)
 *
 * The 4-caller section is bench_callers.c; the runtime and buffers both use, bench_model.c.
 *
 * On this machine "shared" is the reference FastRPC stand-in (memfd): what it saves on the
 * board (FastRPC's copy of every ordinary buffer) is not modelled here; see
 * docs/performance.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Host time per call (total - graphExecute) and memcpy of the I/O's f32 bytes, interleaved;
 * `inner` calls per repeat. Returns 0, or the first error (printed). */
typedef struct call_figures {
  bench_stat host_ns, total_ns, ratio; /* ratio: host / memcpy (lower is better) */
} call_figures;

static int time_calls(htpu_graph *g, const htpu_io *in, const htpu_io *out, size_t f32_bytes,
                      int reps, int inner, call_figures *f) {
  double *host = malloc(reps * sizeof *host), *total = malloc(reps * sizeof *total);
  double *copy = malloc(reps * sizeof *copy);
  unsigned char *a = malloc(f32_bytes), *b = malloc(f32_bytes);
  int rc = (!host || !total || !copy || !a || !b) ? -1 : 0;
  if (a) memset(a, 1, f32_bytes);
  for (int r = -1; !rc && r < reps; r++) {
    double t0 = bench_now_ns();
    for (int k = 0; k < inner; k++) memcpy(b, a, f32_bytes);
    double t1 = bench_now_ns();
    double h = 0, t = 0;
    for (int k = 0; !rc && k < inner; k++) {
      htpu_exec_stats s;
      rc = htpu_graph_execute(g, in, 1, out, 1, &s);
      h += (double)(s.total_ns - s.execute_ns);
      t += (double)s.total_ns;
    }
    bench_consume(b, f32_bytes);
    if (rc) printf("  execute: %s: %s\n", htpu_err_name(rc), htpu_last_error());
    if (r < 0) continue;
    copy[r] = (t1 - t0) / inner;
    host[r] = h / inner;
    total[r] = t / inner;
  }
  if (!rc) {
    bench_stat c = bench_stat_of(copy, reps);
    f->host_ns = bench_stat_of(host, reps);
    f->total_ns = bench_stat_of(total, reps);
    f->ratio = (bench_stat){f->host_ns.min / c.min, f->host_ns.med / c.med};
  }
  free(host);
  free(total);
  free(copy);
  free(a);
  free(b);
  return rc;
}

static void print_call(const char *what, const call_figures *f) {
  printf("  %-44s %8.1f %8.1f   %8.1f   %6.2fx %6.2fx\n", what, f->host_ns.med / 1e3,
         f->host_ns.min / 1e3, f->total_ns.med / 1e3, f->ratio.med, f->ratio.min);
}

/* One model's rows: f32 buffers on a FastRPC runtime and on one without, then buffers in the
 * tensors' own types, ordinary and shared. */
static void call_rows(const bench_config *cfg, const char *path, int reps, int inner,
                      bench_results *res, int is_mnet) {
  for (int fastrpc = 1; fastrpc >= 0; fastrpc--) {
    bench_model m;
    if (bench_model_open(cfg, path, fastrpc, &m) != 0) {
      bench_model_close(&m);
      return;
    }
    bench_f32_io io;
    if (bench_f32_io_make(m.g, &io) != 0) {
      printf("  out of memory\n");
      bench_model_close(&m);
      return;
    }
    size_t f32_bytes = io.in.size + io.out.size;
    call_figures f;
    if (time_calls(m.g, &io.in, &io.out, f32_bytes, reps, inner, &f) == 0) {
      print_call(fastrpc ? "f32 buffers, scratch in FastRPC memory" :
                           "f32 buffers, scratch in ordinary memory", &f);
      if (is_mnet && fastrpc) {
        res->call_mnet_f32 = f.ratio;
        res->call_mnet_host_us = f.host_ns.med / 1e3;
      }
      if (is_mnet && !fastrpc) res->call_mnet_f32_plain = f.ratio;
    }
    if (fastrpc) {
      /* the tensors' own types: ordinary memory, then shared */
      const htpu_tensor_info *ti = htpu_graph_input(m.g, 0), *to = htpu_graph_output(m.g, 0);
      void *x = calloc(1, ti->byte_size), *y = calloc(1, to->byte_size);
      htpu_io in = {x, ti->byte_size, ti->dtype}, out = {y, to->byte_size, to->dtype};
      if (x && y && time_calls(m.g, &in, &out, f32_bytes, reps, inner, &f) == 0)
        print_call("own-type buffers, ordinary memory", &f);
      free(x);
      free(y);
      htpu_shared *sh = NULL;
      if (htpu_graph_alloc_io(m.g, &in, &out, &sh) == 0 &&
          time_calls(m.g, &in, &out, f32_bytes, reps, inner, &f) == 0)
        print_call(htpu_shared_is_fastrpc(sh) ? "own-type buffers, shared (FastRPC)"
                                              : "own-type buffers, shared (ordinary fallback)",
                   &f);
      htpu_shared_free(&sh);
    }
    bench_f32_io_free(&io);
    bench_model_close(&m);
  }
}

void bench_calls(const bench_config *cfg, bench_results *res) {
  char mnet[1024], digits[1024];
  snprintf(mnet, sizeof mnet, "%s/bench-models/mobilenet_io.bin", cfg->build_dir);
  snprintf(digits, sizeof digits, "models/digits/digits.bin");
  int reps = cfg->reps;
  printf("\n== whole execute, host side: total - graphExecute (reference backend), per call; "
         "median and min of %d ==\n", reps);
  printf("  %-44s %8s %8s   %8s   %s\n", "", "host us", "min", "total us",
         "host / memcpy of the f32 bytes (med, min)");
  printf(" MobileNet-v2 I/O: u8 [1,224,224,3] in, u8 [1,1001] out (memcpy of 606,116 bytes)\n");
  call_rows(cfg, mnet, reps, cfg->quick ? 2 : 8, res, 1);
  printf(" digits: u8 [1,64] in, u8 [1,10] out (memcpy of 296 bytes)\n");
  call_rows(cfg, digits, reps, cfg->quick ? 50 : 500, res, 0);

  /* the C half of "Elixir predict over the C call": predict's own work, through C */
  bench_model m;
  bench_f32_io io;
  if (bench_model_open(cfg, digits, 0, &m) == 0 && bench_f32_io_make(m.g, &io) == 0) {
    int inner = cfg->quick ? 200 : 2000, rc = 0;
    double *t = malloc(reps * sizeof *t);
    for (int r = -1; t && !rc && r < reps; r++) {
      double t0 = bench_now_ns();
      for (int k = 0; !rc && k < inner; k++)
        rc = htpu_graph_execute(m.g, &io.in, 1, &io.out, 1, NULL);
      if (r >= 0) t[r] = (bench_now_ns() - t0) / inner / 1e3;
    }
    if (t && !rc) {
      res->digits_c_us = bench_stat_of(t, reps);
      printf(" digits through htpu_graph_execute, f32 in and out, wall time per call: %.2f µs "
             "(min %.2f)\n", res->digits_c_us.med, res->digits_c_us.min);
    }
    free(t);
    bench_f32_io_free(&io);
  }
  bench_model_close(&m);
}
