/*
 * quant_bench.c - throughput of the quantization kernels relative to memcpy.
 *
 * Not part of the test run: timings depend on the machine and its load, so nothing here
 * passes or fails. Each conversion of N = 1M elements is reported as a ratio against memcpy
 * of the f32 side of the conversion (N * 4 bytes), measured in the same run, interleaved
 * with the kernel so both see the same clock, cache and frequency conditions:
 *
 *   ratio = best kernel time / best memcpy time   (1.00 = as fast as copying the floats)
 *
 * Absolute ns/element are printed for information only.
 *
 * Build and run (from the repository root):
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc bench/quant_bench.c src/quant.c \
 *       src/dtype.c src/errors.c -lm -o build/quant_bench && build/quant_bench [reps]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quant.h"

#define N (1u << 20)

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the compiler from discarding the outputs. */
static volatile uint64_t g_sink;

static void consume(const void *p, size_t len) {
  const unsigned char *b = p;
  g_sink += b[0] + b[len / 2] + b[len - 1];
}

typedef struct bench_case {
  const char *name;
  htpu_dtype dtype;
  float scale;
  int32_t zero_point;
  float lo, hi; /* input range, a little beyond the representable one to exercise saturation */
} bench_case;

static uint64_t g_rng = 88172645463325252ull;
static double rnd01(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) * 0x1p-53;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 30;
  if (reps < 1) reps = 1;
  static const bench_case cases[] = {
      {"u8", HTPU_U8, 0.02f, 128, -3.0f, 3.0f},
      {"i8", HTPU_I8, 0.02f, -3, -3.0f, 3.0f},
      {"u16", HTPU_U16, 0.001f, 32768, -40.0f, 40.0f},
      {"f16", HTPU_F16, 0.0f, 0, -70000.0f, 70000.0f},
  };
  float *src = malloc(N * sizeof *src), *dst_f = malloc(N * sizeof *dst_f);
  float *copy = malloc(N * sizeof *copy);
  void *q = malloc(N * 8);
  if (!src || !dst_f || !copy || !q) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  printf("quant_bench: %u elements, best of %d; ratio = kernel time / memcpy of %u bytes\n", N,
         reps, N * 4);
  printf("%-6s %-10s %8s %12s\n", "type", "direction", "ratio", "ns/element");
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const bench_case *c = &cases[ci];
    for (size_t i = 0; i < N; i++) src[i] = (float)(c->lo + (c->hi - c->lo) * rnd01());
    qc_params p = {c->scale != 0 ? &c->scale : NULL, &c->zero_point, 1, 1};
    double best_q = 1e30, best_d = 1e30, best_copy = 1e30;
    for (int r = 0; r < reps + 1; r++) { /* the first round warms caches and page tables */
      double t0 = now_ns();
      memcpy(copy, src, N * sizeof *src);
      double t1 = now_ns();
      if (qc_quantize(c->dtype, &p, src, q, N) != -1) {
        fprintf(stderr, "unexpected NaN\n");
        return 1;
      }
      double t2 = now_ns();
      qc_dequantize(c->dtype, &p, q, dst_f, N);
      double t3 = now_ns();
      consume(copy, N * sizeof *copy);
      consume(q, N * htpu_dtype_size(c->dtype));
      consume(dst_f, N * sizeof *dst_f);
      if (r == 0) continue;
      if (t1 - t0 < best_copy) best_copy = t1 - t0;
      if (t2 - t1 < best_q) best_q = t2 - t1;
      if (t3 - t2 < best_d) best_d = t3 - t2;
    }
    printf("%-6s %-10s %8.2f %12.3f\n", c->name, "quantize", best_q / best_copy, best_q / N);
    printf("%-6s %-10s %8.2f %12.3f\n", c->name, "dequantize", best_d / best_copy, best_d / N);
    printf("%-6s %-10s %8.2f %12.3f\n", c->name, "(memcpy)", 1.0, best_copy / N);
  }
  free(src);
  free(dst_f);
  free(copy);
  free(q);
  return 0;
}
