/*
 * test_quant_simd.c - the SIMD quantization kernels (src/quant_simd.c, quant_kernels.h) against
 * the exact scalar path (qc_quantize_exact / qc_dequantize_exact), byte for byte, for every
 * instruction set this machine runs (x86-64: SSE2 and, when the CPU has it, AVX2; aarch64:
 * NEON). The other test_quant_*.c files check the exact path (and the default kernels) against
 * references written with integer arithmetic (quant_rig.c); here the inputs are chosen to hit
 * what the kernels must get right: exact ties and the floats next to them (where one float
 * multiply lands on the wrong side), saturation edges, +-Inf, huge and tiny values, lengths that
 * leave tails, per-axis patterns, and NaN placement. Fixed seeds, so a failure reproduces; make
 * test-quant-exhaustive walks every float instead.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"
#include "test.h"

static const htpu_dtype k_types[] = {HTPU_U8, HTPU_I8, HTPU_U16, HTPU_I16, HTPU_U32, HTPU_I32};
#define N_TYPES (sizeof k_types / sizeof k_types[0])

static double lo_of(htpu_dtype t) {
  return t == HTPU_I8 ? -128.0 : t == HTPU_I16 ? -32768.0 : t == HTPU_I32 ? -2147483648.0 : 0.0;
}

static double hi_of(htpu_dtype t) {
  switch (t) {
    case HTPU_U8:
      return 255.0;
    case HTPU_I8:
      return 127.0;
    case HTPU_U16:
      return 65535.0;
    case HTPU_I16:
      return 32767.0;
    case HTPU_U32:
      return 4294967295.0;
    default:
      return 2147483647.0;
  }
}

static uint64_t g_rng;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The instruction sets to try: every one this build and CPU can run. */
static size_t simd_isas(const char **out) {
  static const char *all[] = {"avx2", "sse2", "neon"};
  size_t n = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (qc_simd_select(all[i]) == 0) out[n++] = all[i];
  qc_simd_select("auto");
  return n;
}

/* A scale: mostly a random float of moderate size, sometimes one that matters for the kernels
 * (0 = unscaled; reciprocals that are inexact; the domain's edges and beyond). */
static float pick_scale(void) {
  static const float special[] = {0.0f,       1.0f,      0.1f,        1.0f / 3,   49.0f,
                                  0.5f,       0.765625f, 0x1p-100f,   0x1p100f,   0x1.fffffep-101f,
                                  0x1p-126f,  1e-40f,    3e38f,       7.5e-6f,    1048576.0f};
  if (rnd() % 4 == 0) return special[rnd() % (sizeof special / sizeof special[0])];
  return bitsf(0x30000000u + (uint32_t)(rnd() % 0x14000000u)); /* ~5e-10 .. 3e2 */
}

static int32_t pick_zp(htpu_dtype t) {
  uint64_t r = rnd() % 16;
  if (r == 0) return INT32_MIN;
  if (r == 1) return INT32_MAX;
  if (r == 2) return (int32_t)(rnd() % 5000000) - 2500000; /* beyond the 8/16-bit domain */
  double span = hi_of(t) - lo_of(t);
  if (span > 65536) return (int32_t)(rnd() % 200001) - 100000;
  return (int32_t)(lo_of(t) + (double)(rnd() % (uint64_t)(span + 1)));
}

/* Inputs for (t, scale, zp): ties and their float neighbours across the range and around its
 * ends, plain values, integers, any float, specials. */
static void fill_inputs(htpu_dtype t, float scale, int32_t zp, float *x, size_t n) {
  static const float specials[] = {0.0f,      -0.0f,     INFINITY, -INFINITY, FLT_MAX, -FLT_MAX,
                                   FLT_MIN,   -FLT_MIN,  0x1p-149f, 1e10f,    -1e10f,  0.5f,
                                   -0.5f,     1.5f,      2.5f,      0x1p21f,  -0x1p21f, 0x1p24f};
  double s = scale != 0 ? scale : 1.0;
  double lo = lo_of(t) - zp, hi = hi_of(t) - zp;
  if (lo < -5e6) lo = -5e6; /* 32-bit: around the fast domain's +-2^21 and a bit beyond */
  if (hi > 5e6) hi = 5e6;
  if (hi < lo) hi = lo + 1000;
  for (size_t i = 0; i < n; i++) {
    uint64_t kind = rnd() % 20;
    double k = floor(lo - 3 + (double)(rnd() % (uint64_t)(hi - lo + 7)));
    if (kind < 2) k = rnd() & 1 ? lo + (double)(rnd() % 3) - 1 : hi + (double)(rnd() % 3) - 1;
    float f;
    if (kind < 9) { /* a tie, or up to 3 floats away from one */
      f = (float)((k + 0.5) * s);
      for (int u = (int)(rnd() % 7) - 3; u; u += u > 0 ? -1 : 1)
        f = nextafterf(f, u > 0 ? INFINITY : -INFINITY);
    } else if (kind < 14) {
      f = (float)((k + (double)(rnd() % 1000) / 1000.0) * s);
    } else if (kind < 16) {
      f = (float)(k * s);
    } else if (kind < 19) {
      do f = bitsf((uint32_t)rnd());
      while (isnan(f));
    } else {
      f = specials[rnd() % (sizeof specials / sizeof specials[0])];
    }
    x[i] = f;
  }
}

/* qc_quantize (the selected kernels) against qc_quantize_exact: same NaN answer, same bytes. */
static int same_as_exact(const char *isa, htpu_dtype t, const qc_params *p, const float *x,
                         size_t n, unsigned char *a, unsigned char *b) {
  size_t size = htpu_dtype_size(t);
  memset(a, 0x5a, n * size);
  memset(b, 0x5a, n * size);
  ptrdiff_t ra = qc_quantize(t, p, x, a, n), rb = qc_quantize_exact(t, p, x, b, n);
  size_t upto = rb >= 0 ? (size_t)rb : n; /* only the prefix before a NaN is promised */
  if (ra != rb) {
    test_fail(__FILE__, __LINE__, "%s %s n=%zu: NaN index %td, exact %td", isa,
              htpu_dtype_name(t), n, ra, rb);
    return 1;
  }
  for (size_t i = 0; i < upto; i++) {
    if (memcmp(a + i * size, b + i * size, size) != 0) {
      size_t c = p && p->channels > 1 ? (i / (p->inner ? p->inner : 1)) % p->channels : 0;
      test_fail(__FILE__, __LINE__,
                "%s %s n=%zu [%zu] channel %zu scale=%a zp=%d x=%a (%.9g): kernels and exact "
                "path differ",
                isa, htpu_dtype_name(t), n, i, c,
                p && p->scales ? (double)p->scales[c] : 0.0,
                p && p->zero_points ? p->zero_points[c] : 0, (double)x[i], (double)x[i]);
      return 1;
    }
  }
  return 0;
}

TEST(quant_simd_kernels_chosen_and_selectable) {
  const char *isas[3];
  size_t n = simd_isas(isas);
#if defined(__x86_64__)
  CHECK(n >= 1); /* SSE2 is part of x86-64 */
  CHECK(qc_simd_select("sse2") == 0);
  CHECK(strcmp(qc_simd_name(), "sse2") == 0);
  CHECK(qc_simd_select("neon") == -1);
#elif defined(__aarch64__)
  CHECK(n == 1 && strcmp(isas[0], "neon") == 0);
  CHECK(qc_simd_select("avx2") == -1);
#endif
  CHECK(qc_simd_select("none") == 0);
  CHECK(strcmp(qc_simd_name(), "none") == 0);
  CHECK(qc_simd_select("bogus") == -1);
  CHECK(qc_simd_select("auto") == 0);
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(strcmp(qc_simd_name(), "none") != 0);
#endif
  (void)n;
}

/* The kernels really convert (not the exact path behind them): in-range data goes through
 * them entirely, a NaN's block and an out-of-domain scale go to the exact path. */
TEST(quant_simd_kernels_do_the_work) {
  const char *isas[3];
  size_t n_isa = simd_isas(isas);
  enum { N = 1000 };
  float x[N];
  uint8_t q[N];
  for (size_t i = 0; i < N; i++) x[i] = (float)(i % 97) * 0.37f - 12.0f;
  for (size_t k = 0; k < n_isa; k++) {
    CHECK(qc_simd_select(isas[k]) == 0);
    float scale = 0.1f;
    int32_t zp = 128;
    qc_params p = {&scale, &zp, 1, 1};
    uint64_t k0, f0, k1, f1;
    qc_simd_counters(&k0, &f0);
    CHECK(qc_quantize(HTPU_U8, &p, x, q, N) == -1);
    qc_simd_counters(&k1, &f1);
    CHECK_MSG(k1 - k0 >= N && f1 == f0, "%s: kernels %llu, exact %llu of %d", isas[k],
              (unsigned long long)(k1 - k0), (unsigned long long)(f1 - f0), N);
    x[500] = NAN;
    qc_simd_counters(&k0, &f0);
    CHECK(qc_quantize(HTPU_U8, &p, x, q, N) == 500);
    qc_simd_counters(&k1, &f1);
    x[500] = 0.0f;
    CHECK_MSG(k1 - k0 >= 480 && f1 - f0 >= 1 && f1 - f0 <= 32, "%s: kernels %llu, exact %llu",
              isas[k], (unsigned long long)(k1 - k0), (unsigned long long)(f1 - f0));
    scale = 1e-40f; /* subnormal: outside the kernels' domain, not counted by them at all */
    qc_simd_counters(&k0, &f0);
    CHECK(qc_quantize(HTPU_U8, &p, x, q, N) == -1);
    qc_simd_counters(&k1, &f1);
    CHECK(k1 == k0 && f1 == f0);
  }
  qc_simd_select("auto");
}

TEST(quant_simd_per_tensor_matches_exact) {
  enum { NMAX = 4099 };
  const char *isas[3];
  size_t n_isa = simd_isas(isas);
  float *x = malloc(NMAX * sizeof *x);
  unsigned char *a = malloc(NMAX * 4), *b = malloc(NMAX * 4);
  if (!x || !a || !b) abort();
  int bad = 0;
  for (size_t k = 0; k < n_isa && !bad; k++) {
    CHECK(qc_simd_select(isas[k]) == 0);
    g_rng = 0x243f6a8885a308d3ull; /* the same cases for every instruction set */
    for (size_t ti = 0; ti < N_TYPES && !bad; ti++) {
      htpu_dtype t = k_types[ti];
      for (int round = 0; round < 160 && !bad; round++) {
        float scale = pick_scale();
        int32_t zp = pick_zp(t);
        size_t n = round % 4 ? 1 + rnd() % 200 : NMAX; /* tails of every length, and bulk */
        fill_inputs(t, scale, zp, x, n);
        qc_params p = {&scale, &zp, 1, 1};
        bad = same_as_exact(isas[k], t, &p, x, n, a, b);
      }
    }
  }
  qc_simd_select("auto");
  free(x);
  free(a);
  free(b);
}

/* Per-axis: the channel on the last axis (inner 1) and further in, as per-lane patterns of
 * every period and as long runs; some channels outside the kernels' domain. */
TEST(quant_simd_per_axis_matches_exact) {
  static const size_t channels[] = {2, 3, 4, 5, 7, 8, 16, 33, 100, 1000};
  static const size_t inners[] = {1, 1, 1, 2, 3, 17, 63, 64, 100};
  enum { NMAX = 6000 };
  const char *isas[3];
  size_t n_isa = simd_isas(isas);
  float *x = malloc(NMAX * sizeof *x), scales[1000];
  int32_t zps[1000];
  unsigned char *a = malloc(NMAX * 4), *b = malloc(NMAX * 4);
  if (!x || !a || !b) abort();
  int bad = 0;
  for (size_t k = 0; k < n_isa && !bad; k++) {
    CHECK(qc_simd_select(isas[k]) == 0);
    g_rng = 0x13198a2e03707344ull;
    for (size_t ti = 0; ti < N_TYPES && !bad; ti++) {
      htpu_dtype t = k_types[ti];
      for (size_t ci = 0; ci < sizeof channels / sizeof channels[0] && !bad; ci++) {
        for (size_t ii = 0; ii < sizeof inners / sizeof inners[0] && !bad; ii++) {
          size_t ch = channels[ci], inner = inners[ii];
          int wild = rnd() % 3 == 0; /* specials and out-of-domain channels too */
          for (size_t c = 0; c < ch; c++) {
            scales[c] = wild ? pick_scale() : bitsf(0x38000000u + (uint32_t)(rnd() % 0x8000000u));
            zps[c] = wild ? pick_zp(t) : (int32_t)(lo_of(t) + hi_of(t) + 1) / 2 - (int32_t)(c % 5);
          }
          size_t n = ch * inner * (1 + rnd() % 4) + rnd() % 40;
          if (n > NMAX) n = NMAX - rnd() % 100;
          for (size_t i = 0; i < n; i += 50) { /* inputs in blocks of one channel's range */
            size_t c = (i / inner) % ch, m = n - i < 50 ? n - i : 50;
            fill_inputs(t, scales[c], zps[c], x + i, m);
          }
          qc_params p = {scales, zps, ch, inner};
          bad = same_as_exact(isas[k], t, &p, x, n, a, b);
        }
      }
    }
  }
  qc_simd_select("auto");
  free(x);
  free(a);
  free(b);
}

/* A NaN anywhere in a block, in a tail, in a pattern: its index, and every byte before it. */
TEST(quant_simd_nan_index_and_prefix) {
  enum { N = 3 * 32 + 13 };
  const char *isas[3];
  size_t n_isa = simd_isas(isas);
  float x[N], scales[3] = {0.02f, 0.5f, 3.0f};
  int32_t zps[3] = {3, -2, 1};
  unsigned char a[N * 4], b[N * 4];
  int bad = 0;
  for (size_t k = 0; k < n_isa && !bad; k++) {
    CHECK(qc_simd_select(isas[k]) == 0);
    for (size_t ti = 0; ti < N_TYPES && !bad; ti++) {
      htpu_dtype t = k_types[ti];
      for (int layout = 0; layout < 2 && !bad; layout++) {
        qc_params p = {scales, zps, layout ? 3 : 1, 1};
        for (size_t at = 0; at < N && !bad; at++) {
          for (size_t i = 0; i < N; i++) x[i] = ((float)(i % 11) - 5.0f) * 0.25f + 0.0625f;
          x[at] = at & 1 ? -NAN : NAN;
          if (at + 3 < N) x[at + 3] = NAN; /* a later NaN must not be the one reported */
          bad = same_as_exact(isas[k], t, &p, x, N, a, b);
          if (!bad && qc_quantize(t, &p, x, a, N) != (ptrdiff_t)at) {
            test_fail(__FILE__, __LINE__, "%s %s: NaN at %zu not reported there", isas[k],
                      htpu_dtype_name(t), at);
            bad = 1;
          }
        }
      }
    }
  }
  qc_simd_select("auto");
}

/* The worst case for the kernels: every element an exact tie, so every block takes the exact
 * step. Scales whose float reciprocal is inexact (49, 3, 12.5) move ties under a plain
 * multiply. */
TEST(quant_simd_all_ties_exact) {
  enum { N = 999 };
  static const float scales[] = {0.5f, 49.0f, 0.0078125f, 3.0f, 12.5f, 0.75f, 0.0f};
  const char *isas[3];
  size_t n_isa = simd_isas(isas);
  float x[N];
  unsigned char a[N * 4], b[N * 4];
  int bad = 0;
  for (size_t k = 0; k < n_isa && !bad; k++) {
    CHECK(qc_simd_select(isas[k]) == 0);
    for (size_t ti = 0; ti < N_TYPES && !bad; ti++) {
      for (size_t si = 0; si < sizeof scales / sizeof scales[0] && !bad; si++) {
        float scale = scales[si];
        int32_t zp = 0;
        double s = scale != 0 ? scale : 1.0;
        int exact_ties = 0;
        for (size_t i = 0; i < N; i++) {
          x[i] = (float)(((double)i - 300 + 0.5) * s);
          exact_ties += (double)x[i] == ((double)i - 300 + 0.5) * s; /* products exact */
        }
        CHECK_EQ(exact_ties, N); /* the inputs are what they claim to be */
        qc_params p = {&scale, &zp, 1, 1};
        bad = same_as_exact(isas[k], k_types[ti], &p, x, N, a, b);
      }
    }
  }
  qc_simd_select("auto");
}

/* Dequantize: both formulas (float for 8/16-bit with small zero points, double otherwise),
 * per tensor and per axis, every storage value of the small types. */
TEST(quant_simd_dequantize_matches_exact) {
  enum { NMAX = 70000 };
  static const size_t channels[] = {1, 1, 3, 5, 64, 1000};
  static const size_t inners[] = {1, 2, 7, 70};
  const char *isas[3];
  size_t n_isa = simd_isas(isas);
  unsigned char *q = malloc(NMAX * 4);
  float *a = malloc(NMAX * sizeof *a), *b = malloc(NMAX * sizeof *b), scales[1000];
  int32_t zps[1000];
  if (!q || !a || !b) abort();
  int bad = 0;
  for (size_t k = 0; k < n_isa && !bad; k++) {
    CHECK(qc_simd_select(isas[k]) == 0);
    g_rng = 0xa4093822299f31d0ull;
    for (size_t ti = 0; ti < N_TYPES && !bad; ti++) {
      htpu_dtype t = k_types[ti];
      size_t size = htpu_dtype_size(t);
      for (size_t ci = 0; ci < sizeof channels / sizeof channels[0] && !bad; ci++) {
        for (size_t ii = 0; ii < sizeof inners / sizeof inners[0] && !bad; ii++) {
          size_t ch = channels[ci], inner = inners[ii];
          for (size_t c = 0; c < ch; c++) {
            scales[c] = rnd() % 8 ? bitsf(0x30000000u + (uint32_t)(rnd() % 0x14000000u))
                                  : (rnd() & 1 ? 0.0f : 1e-40f);
            zps[c] = rnd() % 4 ? (int32_t)(rnd() % 512) - 256 : pick_zp(t);
          }
          size_t n = size <= 2 ? (size == 1 ? 256 : 65536) + rnd() % 50 : 4000 + rnd() % 50;
          for (size_t i = 0; i < n; i++) { /* the small types: every value, then random */
            uint32_t v = size <= 2 && i < (size == 1 ? 256u : 65536u) ? (uint32_t)i
                                                                        : (uint32_t)rnd();
            memcpy(q + i * size, &v, size); /* little-endian: the low bytes */
          }
          qc_params p = {scales, zps, ch, inner};
          qc_dequantize(t, &p, q, a, n);
          qc_dequantize_exact(t, &p, q, b, n);
          for (size_t i = 0; i < n && !bad; i++) {
            if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
              size_t c = (i / inner) % ch;
              test_fail(__FILE__, __LINE__,
                        "%s %s channels %zu inner %zu [%zu]: scale %a zp %d: %a, exact %a",
                        isas[k], htpu_dtype_name(t), ch, inner, i, (double)scales[c], zps[c],
                        (double)a[i], (double)b[i]);
              bad = 1;
            }
          }
        }
      }
    }
  }
  qc_simd_select("auto");
  free(q);
  free(a);
  free(b);
}
