/*
 * bench_kernels.c - the quantization kernels against memcpy of the same f32 bytes:
 *
 *   bench_sweep    u8 quantize and dequantize from 1 KB to 64 MB of floats (where the caches
 *                  fall off: L1, L2, L3, memory)
 *   bench_kernels  every type and layout at 150,528 (224 x 224 x 3) and 1,048,576 elements,
 *                  the exact scalar path ("exact", the reference and fallback) and the SIMD
 *                  kernels chosen for this CPU ("simd")
 *
 * ratio = memcpy time / conversion time (1.00x = as fast as copying the floats; higher is
 * faster): "med" divides the medians, "min" the fastest of each. The per-axis rows use the
 * channel on the last axis (3 channels, as RGB, and 64) or first; "ties" is the kernels'
 * worst case, every element an exact tie, so every block takes the exact step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "quant/quant.h"

#define MAX_CH 64

typedef enum { PER_TENSOR, LAST_AXIS, FIRST_AXIS } layout;

typedef struct kcase {
  const char *name;
  htpu_dtype dtype;
  float scale;
  int32_t zp;
  double qlo, qhi; /* quantized range the inputs span (a little beyond the type's: saturation) */
  layout lay;
  size_t channels;
  int ties; /* inputs are exact ties */
} kcase;

static const kcase k_cases[] = {
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

static const char *layout_name(const kcase *c, char *buf, size_t len) {
  if (c->lay == PER_TENSOR) return "per-tensor";
  snprintf(buf, len, "%s axis, %zu ch", c->lay == LAST_AXIS ? "last" : "first", c->channels);
  return buf;
}

/* Per-channel parameters around the case's, so channels differ. */
static void make_params(const kcase *c, size_t n, float *scales, int32_t *zps, qc_params *p) {
  size_t ch = c->lay == PER_TENSOR ? 1 : c->channels;
  for (size_t k = 0; k < ch; k++) {
    scales[k] = c->scale * (1.0f + 0.01f * (float)k);
    zps[k] = c->zp;
  }
  size_t inner = c->lay == FIRST_AXIS ? n / ch : 1;
  *p = (qc_params){c->scale != 0 ? scales : NULL, zps, ch, inner};
}

/* Floats whose quantized values spread over [qlo, qhi]: x = (q - zero point) * scale. (Without
 * the zero point, half of the u8 and u16 inputs would saturate, and a saturated lane is never
 * near a tie: that flattered the 16-bit rows, whose near-tie window grows with |x / scale|.) */
static void fill(const kcase *c, const qc_params *p, float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t ch = p->channels > 1 ? (i / p->inner) % p->channels : 0;
    double s = p->scales ? p->scales[ch] : 1.0, q;
    if (c->ties)
      q = floor(c->qlo + (c->qhi - c->qlo) * bench_rnd01()) + 0.5;
    else
      q = c->qlo + (c->qhi - c->qlo) * bench_rnd01();
    x[i] = (float)((q - (p->zero_points ? p->zero_points[ch] : 0)) * s);
  }
}

/* ratio of baseline to t: .min from the fastest of each, .med from the medians */
static bench_stat ratio(double *base, double *t, int reps) {
  bench_stat b = bench_stat_of(base, reps), k = bench_stat_of(t, reps);
  return (bench_stat){b.min / k.min, b.med / k.med};
}

/* ---- 1 KB .. 64 MB ---------------------------------------------------------------------- */

void bench_sweep(const bench_config *cfg) {
  const size_t max_bytes = (size_t)64 << 20, max_n = max_bytes / 4;
  float *src = malloc(max_bytes), *copy = malloc(max_bytes), *back = malloc(max_bytes);
  uint8_t *q = malloc(max_n);
  int reps = cfg->quick ? 3 : 11;
  double *tc = malloc(reps * sizeof *tc), *tq = malloc(reps * sizeof *tq);
  double *tc2 = malloc(reps * sizeof *tc2), *td = malloc(reps * sizeof *td);
  if (!src || !copy || !back || !q || !tc || !tq || !tc2 || !td) {
    printf("sweep: out of memory\n");
    goto out;
  }
  float scale = 0.0235294f;
  int32_t zp = 128;
  qc_params p = {&scale, &zp, 1, 1};
  for (size_t i = 0; i < max_n; i++) src[i] = (float)((-8 + 271 * bench_rnd01() - zp) * scale);
  printf("\n== u8 quantize / dequantize vs memcpy, 1 KB to 64 MB of f32 (%s kernels; ratio = "
         "memcpy time / kernel time, median and min of %d) ==\n",
         qc_simd_name(), reps);
  printf("%10s %10s %12s  %-15s %-15s\n", "f32 bytes", "elements", "memcpy GB/s",
         "quantize med min", "dequant med min");
  for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
    size_t n = bytes / 4;
    /* small sizes: repeat inside one timing, so the clock's resolution does not matter */
    size_t inner = bytes < ((size_t)4 << 20) ? ((size_t)4 << 20) / bytes : 1;
    for (int r = -1; r < reps; r++) {
      double t0 = bench_now_ns();
      for (size_t k = 0; k < inner; k++) memcpy(copy, src, bytes);
      double t1 = bench_now_ns();
      for (size_t k = 0; k < inner; k++) qc_quantize(HTPU_U8, &p, src, q, n);
      double t2 = bench_now_ns();
      for (size_t k = 0; k < inner; k++) memcpy(copy, src, bytes);
      double t3 = bench_now_ns();
      for (size_t k = 0; k < inner; k++) qc_dequantize(HTPU_U8, &p, q, back, n);
      double t4 = bench_now_ns();
      bench_consume(copy, bytes);
      bench_consume(q, n);
      bench_consume(back, bytes);
      if (r < 0) continue;
      tc[r] = t1 - t0;
      tq[r] = t2 - t1;
      tc2[r] = t3 - t2;
      td[r] = t4 - t3;
    }
    bench_stat rq = ratio(tc, tq, reps), rd = ratio(tc2, td, reps);
    double gbs = (double)bytes * (double)inner / bench_median(tc, reps);
    char label[16];
    if (bytes >= ((size_t)1 << 20))
      snprintf(label, sizeof label, "%zu MB", bytes >> 20);
    else
      snprintf(label, sizeof label, "%zu KB", bytes >> 10);
    printf("%10s %10zu %12.1f  %6.2fx %6.2fx  %6.2fx %6.2fx\n", label, n, gbs, rq.med, rq.min,
           rd.med, rd.min);
  }
out:
  free(src);
  free(copy);
  free(back);
  free(q);
  free(tc);
  free(tq);
  free(tc2);
  free(td);
}

/* ---- types and layouts ------------------------------------------------------------------ */

typedef struct timing {
  double *copy, *exact, *simd;
} timing;

static void report(const char *label, const timing *t, int reps, bench_stat *exact_out,
                   bench_stat *simd_out, double simd_ns[2]) {
  bench_stat e = ratio(t->copy, t->exact, reps), s = ratio(t->copy, t->simd, reps);
  /* ratio() sorted the arrays: medians and minima are now cheap to read again */
  double med_exact = bench_median(t->exact, reps), med_simd = bench_median(t->simd, reps);
  printf("%s %6.2fx %6.2fx   %6.2fx %6.2fx   %5.1fx\n", label, e.med, e.min, s.med, s.min,
         med_exact / med_simd);
  if (exact_out) *exact_out = e;
  if (simd_out) *simd_out = s;
  if (simd_ns) {
    simd_ns[0] = bench_min(t->simd, reps);
    simd_ns[1] = med_simd;
  }
}

/* Where a case's figures go in the summary (NULL: table only). */
static void targets(bench_results *r, size_t ci, int si, bench_stat **q, bench_stat **qe,
                    bench_stat **dq, double **ns) {
  *q = *qe = *dq = NULL;
  *ns = NULL;
  const kcase *c = &k_cases[ci];
  if (c->ties) return;
  if (c->lay == PER_TENSOR) {
    if (c->dtype == HTPU_U8) {
      *q = &r->q_u8[si];
      *qe = &r->q_u8_exact[si];
      *ns = r->simd_u8_ns[si];
    }
    if (c->dtype == HTPU_I8) *q = &r->q_i8[si];
    if (c->dtype == HTPU_U16) *q = &r->q_u16[si];
    if (c->dtype == HTPU_I16) *q = &r->q_i16[si];
  } else if (c->lay == LAST_AXIS && c->dtype == HTPU_U8) {
    *q = c->channels == 3 ? &r->q_last3[si] : &r->q_last64[si];
    *dq = c->channels == 3 ? &r->dq_last3[si] : &r->dq_last64[si];
  }
}

/* The buffers and timings every case reuses. */
typedef struct kbufs {
  float *src, *copy, *back;
  void *q;
  timing tq, td;
} kbufs;

/* Times case c (params p) on n elements, reps rounds after a warm-up one, into b's timings:
 * memcpy, exact and SIMD quantize, memcpy, exact and SIMD dequantize. -1 when a kernel reported
 * a NaN, which the inputs never hold. */
static int time_case(const kcase *c, const qc_params *p, size_t n, int reps, kbufs *b) {
  for (int r = -1; r < reps; r++) { /* round -1 warms caches and page tables */
    double t0 = bench_now_ns();
    memcpy(b->copy, b->src, n * sizeof *b->src);
    double t1 = bench_now_ns();
    ptrdiff_t e1 = qc_quantize_exact(c->dtype, p, b->src, b->q, n);
    double t2 = bench_now_ns();
    ptrdiff_t e2 = qc_quantize(c->dtype, p, b->src, b->q, n);
    double t3 = bench_now_ns();
    memcpy(b->copy, b->src, n * sizeof *b->src);
    double t4 = bench_now_ns();
    qc_dequantize_exact(c->dtype, p, b->q, b->back, n);
    double t5 = bench_now_ns();
    qc_dequantize(c->dtype, p, b->q, b->back, n);
    double t6 = bench_now_ns();
    if (e1 != -1 || e2 != -1) return -1;
    bench_consume(b->copy, n * sizeof *b->copy);
    bench_consume(b->q, n * htpu_dtype_size(c->dtype));
    bench_consume(b->back, n * sizeof *b->back);
    if (r < 0) continue;
    b->tq.copy[r] = t1 - t0;
    b->tq.exact[r] = t2 - t1;
    b->tq.simd[r] = t3 - t2;
    b->td.copy[r] = t4 - t3;
    b->td.exact[r] = t5 - t4;
    b->td.simd[r] = t6 - t5;
  }
  return 0;
}

/* Prints case ci's two table lines (size si) and keeps its figures for the summary. */
static void report_case(bench_results *res, size_t ci, int si, kbufs *b, int reps) {
  const kcase *c = &k_cases[ci];
  bench_stat *tqs, *tqe, *tds;
  double *ns;
  targets(res, ci, si, &tqs, &tqe, &tds, &ns);
  char lbuf[32], label[80];
  const char *lay = layout_name(c, lbuf, sizeof lbuf);
  snprintf(label, sizeof label, "%-9s %-17s %-10s", c->name, lay, "quantize");
  report(label, &b->tq, reps, tqe, tqs, ns);
  snprintf(label, sizeof label, "%-9s %-17s %-10s", c->name, lay, "dequantize");
  report(label, &b->td, reps, NULL, tds, NULL);
}

void bench_kernels(const bench_config *cfg, bench_results *res) {
  static const size_t sizes[] = {150528, 1048576};
  int reps = cfg->reps;
  size_t nmax = sizes[1];
  kbufs b = {malloc(nmax * sizeof(float)), malloc(nmax * sizeof(float)),
             malloc(nmax * sizeof(float)), malloc(nmax * 4),
             {malloc(reps * sizeof(double)), malloc(reps * sizeof(double)),
              malloc(reps * sizeof(double))},
             {malloc(reps * sizeof(double)), malloc(reps * sizeof(double)),
              malloc(reps * sizeof(double))}};
  if (!b.src || !b.copy || !b.back || !b.q || !b.tq.copy || !b.tq.exact || !b.tq.simd ||
      !b.td.copy || !b.td.exact || !b.td.simd) {
    printf("kernels: out of memory\n");
    goto out;
  }
  printf("\n== quantization kernels vs memcpy of the f32 bytes (%s kernels; ratio = memcpy "
         "time / conversion time, higher is faster; median and min of %d) ==\n",
         qc_simd_name(), reps);
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    printf("\n%zu elements (memcpy of %zu bytes)\n", n, n * 4);
    printf("%-9s %-17s %-10s %-15s   %-15s   %s\n", "type", "layout", "direction",
           "exact med  min", "simd med   min", "simd/exact");
    for (size_t ci = 0; ci < sizeof k_cases / sizeof k_cases[0]; ci++) {
      float scales[MAX_CH];
      int32_t zps[MAX_CH];
      qc_params p;
      make_params(&k_cases[ci], n, scales, zps, &p);
      fill(&k_cases[ci], &p, b.src, n);
      if (time_case(&k_cases[ci], &p, n, reps, &b) != 0) {
        printf("kernels: unexpected NaN\n");
        goto out;
      }
      report_case(res, ci, (int)si, &b, reps);
    }
  }
out:
  free(b.src);
  free(b.copy);
  free(b.back);
  free(b.q);
  free(b.tq.copy);
  free(b.tq.exact);
  free(b.tq.simd);
  free(b.td.copy);
  free(b.td.exact);
  free(b.td.simd);
}
