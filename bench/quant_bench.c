/*
 * quant_bench.c - throughput of the quantization kernels relative to memcpy.
 *
 * Not part of the test run: timings depend on the machine and its load, so nothing here
 * passes or fails. Every conversion is reported as a ratio to memcpy of the f32 side of it
 * (n * 4 bytes), measured in the same run and interleaved with the kernels, so both see the
 * same clock, cache and frequency conditions:
 *
 *   ratio = memcpy time / conversion time   (1.00x = as fast as copying the floats)
 *
 * for the exact scalar path ("exact": the code before the SIMD kernels, still the reference
 * and fallback) and for the selected SIMD kernels ("simd"), as median and best over the
 * repeats (median: memcpy median / kernel median; best: fastest / fastest). Sizes: 150528
 * (224 x 224 x 3) and 1M elements. Layouts: per-tensor; per-axis with the channel on the last
 * axis (3 channels, as RGB, and 64); per-axis with the channel first (long runs). "ties" is
 * the kernels' worst case: every element an exact tie, so every block takes the exact step.
 *
 *   make quant-bench [QUANT_BENCH_ARGS="--reps 31 --isa sse2"]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quant.h"

#define MAX_CH 64

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

static uint64_t g_rng = 88172645463325252ull;
static double rnd01(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) * 0x1p-53;
}

typedef enum { PER_TENSOR, LAST_AXIS, FIRST_AXIS } layout;

typedef struct bench_case {
  const char *name;
  htpu_dtype dtype;
  float scale;
  int32_t zp;
  double qlo, qhi; /* quantized range the inputs span (a little beyond the type's: saturation) */
  layout lay;
  size_t channels;
  int ties; /* inputs are exact ties */
} bench_case;

static const bench_case k_cases[] = {
    {"u8", HTPU_U8, 0.0235294f, 128, -8, 263, PER_TENSOR, 1, 0},
    {"i8", HTPU_I8, 0.0078740f, 0, -136, 135, PER_TENSOR, 1, 0},
    {"u16", HTPU_U16, 0.00152590f, 32768, -100, 65635, PER_TENSOR, 1, 0},
    {"i16", HTPU_I16, 0.001f, 0, -32868, 32867, PER_TENSOR, 1, 0},
    {"u32", HTPU_U32, 0.001f, 0, -100, 1000000, PER_TENSOR, 1, 0},
    {"i32", HTPU_I32, 0.001f, 0, -1000000, 1000000, PER_TENSOR, 1, 0},
    {"f16", HTPU_F16, 0.0f, 0, -70000, 70000, PER_TENSOR, 1, 0},
    {"u8 ties", HTPU_U8, 0.5f, 0, 0, 255, PER_TENSOR, 1, 1},
    {"u16 ties", HTPU_U16, 3.0f, 0, 0, 65535, PER_TENSOR, 1, 1},
    {"u8", HTPU_U8, 0.02f, 128, -8, 263, LAST_AXIS, 3, 0},
    {"u8", HTPU_U8, 0.02f, 128, -8, 263, LAST_AXIS, 64, 0},
    {"i8", HTPU_I8, 0.01f, 0, -136, 135, LAST_AXIS, 3, 0},
    {"u16", HTPU_U16, 0.0015f, 32768, -100, 65635, LAST_AXIS, 3, 0},
    {"u8", HTPU_U8, 0.02f, 128, -8, 263, FIRST_AXIS, 3, 0},
    {"i8", HTPU_I8, 0.01f, 0, -136, 135, FIRST_AXIS, 64, 0},
};

static const char *layout_name(const bench_case *c, char *buf, size_t len) {
  if (c->lay == PER_TENSOR) return "per-tensor";
  snprintf(buf, len, "%s axis, %zu ch", c->lay == LAST_AXIS ? "last" : "first", c->channels);
  return buf;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double minimum(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
  return m;
}

/* Per-channel parameters around the case's, so channels differ. */
static void make_params(const bench_case *c, size_t n, float *scales, int32_t *zps,
                        qc_params *p) {
  size_t ch = c->lay == PER_TENSOR ? 1 : c->channels;
  for (size_t k = 0; k < ch; k++) {
    scales[k] = c->scale * (1.0f + 0.01f * (float)k);
    zps[k] = c->zp;
  }
  size_t inner = c->lay == FIRST_AXIS ? n / ch : 1;
  *p = (qc_params){c->scale != 0 ? scales : NULL, zps, ch, inner};
}

static void fill(const bench_case *c, const qc_params *p, float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t ch = p->channels > 1 ? (i / p->inner) % p->channels : 0;
    double s = p->scales ? p->scales[ch] : 1.0, q;
    if (c->ties)
      q = floor(c->qlo + (c->qhi - c->qlo) * rnd01()) + 0.5;
    else
      q = c->qlo + (c->qhi - c->qlo) * rnd01();
    x[i] = (float)(q * s);
  }
}

typedef struct timing {
  double *copy, *exact, *simd;
} timing;

static void report(const char *label, const timing *t, int reps, size_t n) {
  double best_copy = minimum(t->copy, reps), best_exact = minimum(t->exact, reps),
         best_simd = minimum(t->simd, reps);
  double med_copy = median(t->copy, reps), med_exact = median(t->exact, reps),
         med_simd = median(t->simd, reps);
  printf("%s %6.2fx %6.2fx   %6.2fx %6.2fx   %5.1fx   %6.3f\n", label, med_copy / med_exact,
         best_copy / best_exact, med_copy / med_simd, best_copy / best_simd,
         med_exact / med_simd, med_simd / (double)n);
}

int main(int argc, char **argv) {
  int reps = 31;
  const char *isa = "auto";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
      isa = argv[++i];
    } else {
      fprintf(stderr, "usage: quant_bench [--reps N] [--isa auto|avx2|sse2|neon|none]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (qc_simd_select(isa) != 0) {
    fprintf(stderr, "quant_bench: no '%s' kernels in this build or on this CPU\n", isa);
    return 2;
  }
  static const size_t sizes[] = {150528, 1048576};
  size_t nmax = sizes[1];
  float *src = malloc(nmax * sizeof *src), *copy = malloc(nmax * sizeof *copy);
  float *back = malloc(nmax * sizeof *back);
  void *q = malloc(nmax * 4);
  timing tq = {malloc(reps * sizeof(double)), malloc(reps * sizeof(double)),
               malloc(reps * sizeof(double))};
  timing td = {malloc(reps * sizeof(double)), malloc(reps * sizeof(double)),
               malloc(reps * sizeof(double))};
  if (!src || !copy || !back || !q || !tq.copy || !tq.exact || !tq.simd || !td.copy ||
      !td.exact || !td.simd) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  printf("quant_bench: kernels %s; ratio = memcpy time of the f32 bytes / conversion time "
         "(higher is faster), median and best of %d\n",
         qc_simd_name(), reps);
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    printf("\n%zu elements (memcpy of %zu bytes)\n", n, n * 4);
    printf("%-9s %-17s %-10s %-15s   %-15s   %-7s %s\n", "type", "layout", "direction",
           "exact med  best", "simd med   best", "speedup", "simd ns/el");
    for (size_t ci = 0; ci < sizeof k_cases / sizeof k_cases[0]; ci++) {
      const bench_case *c = &k_cases[ci];
      float scales[MAX_CH];
      int32_t zps[MAX_CH];
      qc_params p;
      make_params(c, n, scales, zps, &p);
      fill(c, &p, src, n);
      for (int r = -1; r < reps; r++) { /* round -1 warms caches and page tables */
        double t0 = now_ns();
        memcpy(copy, src, n * sizeof *src);
        double t1 = now_ns();
        ptrdiff_t e1 = qc_quantize_exact(c->dtype, &p, src, q, n);
        double t2 = now_ns();
        ptrdiff_t e2 = qc_quantize(c->dtype, &p, src, q, n);
        double t3 = now_ns();
        memcpy(copy, src, n * sizeof *src);
        double t4 = now_ns();
        qc_dequantize_exact(c->dtype, &p, q, back, n);
        double t5 = now_ns();
        qc_dequantize(c->dtype, &p, q, back, n);
        double t6 = now_ns();
        if (e1 != -1 || e2 != -1) {
          fprintf(stderr, "unexpected NaN\n");
          return 1;
        }
        consume(copy, n * sizeof *copy);
        consume(q, n * htpu_dtype_size(c->dtype));
        consume(back, n * sizeof *back);
        if (r < 0) continue;
        tq.copy[r] = t1 - t0;
        tq.exact[r] = t2 - t1;
        tq.simd[r] = t3 - t2;
        td.copy[r] = t4 - t3;
        td.exact[r] = t5 - t4;
        td.simd[r] = t6 - t5;
      }
      char lbuf[32], label[80];
      const char *lay = layout_name(c, lbuf, sizeof lbuf);
      snprintf(label, sizeof label, "%-9s %-17s %-10s", c->name, lay, "quantize");
      report(label, &tq, reps, n);
      snprintf(label, sizeof label, "%-9s %-17s %-10s", c->name, lay, "dequantize");
      report(label, &td, reps, n);
    }
  }
  free(src);
  free(copy);
  free(back);
  free(q);
  free(tq.copy);
  free(tq.exact);
  free(tq.simd);
  free(td.copy);
  free(td.exact);
  free(td.simd);
  return 0;
}
