/*
 * test_quant.c - the quantization kernels (src/quant.c) against references written here
 * independently: quantization is decided with exact integer arithmetic on the floats'
 * significands (__int128 numerator/denominator, remainder compared with half the divisor),
 * dequantization and f16 rounding likewise, so the references depend on neither the FPU
 * rounding of a quotient nor long double (valgrind emulates x87 long double as double).
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "quant.h"
#include "test.h"

/* ---- helpers and references ------------------------------------------------------------------ */

static const htpu_dtype k_int_types[] = {HTPU_U8, HTPU_I8, HTPU_U16, HTPU_I16, HTPU_U32, HTPU_I32};
#define N_INT_TYPES (sizeof k_int_types / sizeof k_int_types[0])

static int64_t type_lo(htpu_dtype t) {
  switch (t) {
    case HTPU_I8:
      return INT8_MIN;
    case HTPU_I16:
      return INT16_MIN;
    case HTPU_I32:
      return INT32_MIN;
    default:
      return 0;
  }
}

static int64_t type_hi(htpu_dtype t) {
  switch (t) {
    case HTPU_U8:
      return UINT8_MAX;
    case HTPU_I8:
      return INT8_MAX;
    case HTPU_U16:
      return UINT16_MAX;
    case HTPU_I16:
      return INT16_MAX;
    case HTPU_U32:
      return UINT32_MAX;
    case HTPU_I32:
      return INT32_MAX;
    default:
      return 0;
  }
}

static int64_t load_int(htpu_dtype t, const void *buf, size_t i) {
  switch (t) {
    case HTPU_U8:
      return ((const uint8_t *)buf)[i];
    case HTPU_I8:
      return ((const int8_t *)buf)[i];
    case HTPU_U16:
      return ((const uint16_t *)buf)[i];
    case HTPU_I16:
      return ((const int16_t *)buf)[i];
    case HTPU_U32:
      return ((const uint32_t *)buf)[i];
    case HTPU_I32:
      return ((const int32_t *)buf)[i];
    default:
      abort();
  }
}

static void store_int(htpu_dtype t, void *buf, size_t i, int64_t v) {
  switch (t) {
    case HTPU_U8:
      ((uint8_t *)buf)[i] = (uint8_t)v;
      return;
    case HTPU_I8:
      ((int8_t *)buf)[i] = (int8_t)v;
      return;
    case HTPU_U16:
      ((uint16_t *)buf)[i] = (uint16_t)v;
      return;
    case HTPU_I16:
      ((int16_t *)buf)[i] = (int16_t)v;
      return;
    case HTPU_U32:
      ((uint32_t *)buf)[i] = (uint32_t)v;
      return;
    case HTPU_I32:
      ((int32_t *)buf)[i] = (int32_t)v;
      return;
    default:
      abort();
  }
}

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Deterministic xorshift, so failures reproduce. */
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static float rnd_float_any(void) { /* any non-NaN bit pattern */
  for (;;) {
    float f = bitsf((uint32_t)rnd());
    if (!isnan(f)) return f;
  }
}

/* A float's magnitude as integer significand * 2^exp (significand < 2^24). */
static void decompose(float f, int64_t *sig, int *exp) {
  int e;
  double m = frexp(fabs((double)f), &e); /* [0.5, 1) */
  *sig = (int64_t)ldexp(m, 24);          /* exact: a float has <= 24 significant bits */
  *exp = e - 24;
}

/* round_half_even(x / s) for finite x and finite s > 0, exactly; magnitudes beyond 2^40 come
 * back as +-2^40 (every caller saturates to 32 bits anyway). */
static int64_t ref_div_rne(float x, float s) {
  if (x == 0) return 0;
  int64_t X, S;
  int ex, es;
  decompose(x, &X, &ex);
  decompose(s, &S, &es);
  /* |x / s| = X / S * 2^e, and X / S is in (1/2, 2) */
  int e = ex - es;
  int64_t q;
  if (e < -1) {
    q = 0; /* < 1/2 */
  } else if (e > 41) {
    q = (int64_t)1 << 40;
  } else {
    unsigned __int128 num = (unsigned __int128)X, den = (unsigned __int128)S;
    if (e >= 0)
      num <<= e;
    else
      den <<= -e;
    unsigned __int128 qq = num / den, r = num % den;
    if (2 * r > den || (2 * r == den && (qq & 1))) qq++;
    q = qq > ((unsigned __int128)1 << 40) ? (int64_t)1 << 40 : (int64_t)qq;
  }
  return x < 0 ? -q : q;
}

/* The spec: saturate(round_half_even(x / scale) + zp), scale 0 = unscaled; x not NaN. */
static int64_t ref_quant(htpu_dtype t, float x, float scale, int32_t zp) {
  int64_t lo = type_lo(t), hi = type_hi(t);
  if (isinf(x)) return x > 0 ? hi : lo;
  int64_t v = ref_div_rne(x, scale != 0 ? scale : 1.0f) + zp;
  return v < lo ? lo : v > hi ? hi : v;
}

/* sig * 2^exp rounded once to float (half to even, subnormals, overflow to Inf). */
static float ref_round_to_float(int64_t sig, int exp) {
  if (sig == 0) return 0.0f;
  bool neg = sig < 0;
  uint64_t m = neg ? (uint64_t)0 - (uint64_t)sig : (uint64_t)sig;
  int top = 63 - __builtin_clzll(m) + exp; /* floor(log2 |value|) */
  int unit = top - 23 > -149 ? top - 23 : -149; /* float spacing at that magnitude */
  int shift = unit - exp;
  uint64_t r;
  if (shift <= 0) {
    r = m << -shift; /* exact, small: the value has fewer bits than the unit allows */
  } else if (shift >= 64) {
    r = 0; /* far below half the smallest subnormal */
  } else {
    r = m >> shift;
    uint64_t rem = m & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
  }
  double v = ldexp((double)r, unit); /* exact in double */
  float f = v > FLT_MAX ? INFINITY : (float)v; /* r <= 2^24: exact unless it overflows */
  return neg ? -f : f;
}

/* (q - zp) * S * 2^es rounded once to float, scale already decomposed. */
static float ref_dequant_se(int64_t q, int64_t S, int es, int32_t zp) {
  int64_t d = q - zp;
  if (d > ((int64_t)1 << 38) || d < -((int64_t)1 << 38)) abort(); /* product must fit */
  return ref_round_to_float(d * S, es);
}

/* (q - zp) * scale rounded once to float; scale 0 = unscaled. */
static float ref_dequant(int64_t q, float scale, int32_t zp) {
  int64_t S;
  int es;
  decompose(scale != 0 ? scale : 1.0f, &S, &es);
  return ref_dequant_se(q, S, es, zp);
}

/* What quant.c documents: exact (one rounding) while |q - zp| < 2^29, beyond that
 * (float)((double)(q - zp) * scale), whose double product may itself round. */
static float ref_dequant_doc(int64_t q, float scale, int32_t zp) {
  int64_t d = q - zp;
  if (d < ((int64_t)1 << 29) && d > -((int64_t)1 << 29)) return ref_dequant(q, scale, zp);
  return (float)((double)d * (double)(scale != 0 ? scale : 1.0f));
}

/* f16 decoded with ldexp, independent of the bit tricks in quant.c. */
static double ref_f16_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 0x3ff;
  double v;
  if (e == 31)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp(m, -24);
  else
    v = ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* f32 -> f16 by searching the (monotonic) positive f16 values for the nearest, ties to the
 * even encoding, and saturating at 65504. x not NaN. */
static uint16_t ref_f16_encode(float x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs((double)x);
  if (a >= 65504.0) return sign | 0x7bff;
  unsigned lo = 0, hi = 0x7bff; /* largest h with value(h) <= a */
  while (lo < hi) {
    unsigned mid = (lo + hi + 1) / 2;
    if (ref_f16_value((uint16_t)mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  double below = ref_f16_value((uint16_t)lo), above = ref_f16_value((uint16_t)(lo + 1));
  double dlo = a - below, dhi = above - a; /* exact: both differences are of nearby floats */
  unsigned h = dlo < dhi ? lo : dhi < dlo ? lo + 1 : (lo & 1) ? lo + 1 : lo;
  return (uint16_t)(sign | h);
}

static qc_params per_tensor(const float *scale, const int32_t *zp) {
  return (qc_params){scale, zp, 1, 1};
}

/* ---- dtype helpers --------------------------------------------------------------------------- */

TEST(quant_dtype_size_and_name) {
  static const struct {
    htpu_dtype t;
    size_t size;
    const char *name;
  } k[] = {{HTPU_F32, 4, "f32"},  {HTPU_F16, 2, "f16"}, {HTPU_U8, 1, "u8"},
           {HTPU_I8, 1, "i8"},    {HTPU_U16, 2, "u16"}, {HTPU_I16, 2, "i16"},
           {HTPU_U32, 4, "u32"},  {HTPU_I32, 4, "i32"}, {HTPU_U64, 8, "u64"},
           {HTPU_I64, 8, "i64"},  {HTPU_BOOL8, 1, "bool8"}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    CHECK_EQ(htpu_dtype_size(k[i].t), k[i].size);
    CHECK(strcmp(htpu_dtype_name(k[i].t), k[i].name) == 0);
  }
  CHECK_EQ(htpu_dtype_size(HTPU_DTYPE_INVALID), 0);
  CHECK(strcmp(htpu_dtype_name(HTPU_DTYPE_INVALID), "invalid") == 0);
  CHECK_EQ(htpu_dtype_size((htpu_dtype)99), 0);
  CHECK(strcmp(htpu_dtype_name((htpu_dtype)99), "invalid") == 0);
}

/* ---- f32 -> integer -------------------------------------------------------------------------- */

TEST(quant_rounding_mode_is_default) {
  /* every expectation below assumes it, as the kernels do */
  CHECK(fegetround() == FE_TONEAREST);
}

/* Hand-written expectations, so the references themselves are checked too. */
TEST(quant_halfway_points_by_hand) {
  static const float x[] = {0.5f,   1.5f,  2.5f,  -0.5f,  -1.5f,    -2.5f,     3.5f,
                            254.5f, 255.5f, 255.49f, -0.0f, 1e30f,  -1e30f,    127.5f,
                            -128.5f, INFINITY, -INFINITY, 0.49999997f, 0.50000006f};
  static const int64_t u8[] = {0,   2,   2,   0, 0, 0,   4,   254, 255, 255,
                               0,   255, 0,   128, 0, 255, 0,   0,   1};
  static const int64_t i8[] = {0,    2,   2,    0,    -2,   -2, 4,   127, 127, 127,
                               0,    127, -128, 127,  -128, 127, -128, 0,  1};
  enum { N = sizeof x / sizeof x[0] };
  uint8_t q8[N];
  int8_t s8[N];
  CHECK(qc_quantize(HTPU_U8, NULL, x, q8, N) == -1);
  CHECK(qc_quantize(HTPU_I8, NULL, x, s8, N) == -1);
  for (size_t i = 0; i < N; i++) {
    CHECK_MSG(q8[i] == u8[i], "u8 x=%.9g: got %d want %lld", (double)x[i], q8[i],
              (long long)u8[i]);
    CHECK_MSG(s8[i] == i8[i], "i8 x=%.9g: got %d want %lld", (double)x[i], s8[i],
              (long long)i8[i]);
    CHECK_EQ(ref_quant(HTPU_U8, x[i], 0, 0), u8[i]);
    CHECK_EQ(ref_quant(HTPU_I8, x[i], 0, 0), i8[i]);
  }
  /* the same halfway points scaled: x = k * 0.25 with scale 0.5, zero point 10 */
  static const float xs[] = {0.25f, 0.75f, 1.25f, -0.25f, -0.75f, -1.25f};
  static const int64_t want[] = {10, 12, 12, 10, 8, 8};
  const float scale = 0.5f;
  const int32_t zp = 10;
  qc_params p = per_tensor(&scale, &zp);
  uint8_t out[6];
  CHECK(qc_quantize(HTPU_U8, &p, xs, out, 6) == -1);
  for (int i = 0; i < 6; i++) CHECK_EQ(out[i], want[i]);
  /* exact ties with a scale whose double reciprocal is inexact: 24.5 / 49 = 0.5, 73.5 / 49 =
   * 1.5, 171.5 / 49 = 3.5, 318.5 / 49 = 6.5 */
  static const float x49[] = {24.5f, 73.5f, 171.5f, 318.5f};
  static const int64_t w49[] = {0, 2, 4, 6};
  const float s49 = 49.0f;
  const int32_t zp0 = 0;
  p = per_tensor(&s49, &zp0);
  CHECK(qc_quantize(HTPU_U8, &p, x49, out, 4) == -1);
  for (int i = 0; i < 4; i++) CHECK_EQ(out[i], w49[i]);
  /* negative zero and zero points: -0.0 lands on the zero point exactly */
  const float nz = -0.0f;
  int32_t zps[] = {0, 255, -5, 300};
  int64_t wz[] = {0, 255, 0, 255};
  for (int i = 0; i < 4; i++) {
    p = per_tensor(&scale, &zps[i]);
    CHECK(qc_quantize(HTPU_U8, &p, &nz, out, 1) == -1);
    CHECK_EQ(out[0], wz[i]);
  }
}

/* Inputs around each interesting target value k: (k - zp + d) * scale and its neighbours. */
static size_t edge_inputs(htpu_dtype t, float scale, int32_t zp, float *x, size_t cap) {
  size_t n = 0;
  double s = scale != 0 ? scale : 1.0;
  int64_t lo = type_lo(t), hi = type_hi(t);
  int64_t ks[] = {lo - 2, lo - 1, lo, lo + 1, lo + 2, -2, -1, 0, 1, 2, 3,
                  hi - 2, hi - 1, hi, hi + 1, hi + 2, (lo + hi) / 2};
  double ds[] = {0, 0.5, -0.5, 0.25, -0.25, 0.75, 1e-7, -1e-7};
  for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++) {
    for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++) {
      float f = (float)(((double)ks[a] - zp + ds[b]) * s);
      if (n + 3 > cap) return n;
      x[n++] = f;
      x[n++] = nextafterf(f, INFINITY);
      x[n++] = nextafterf(f, -INFINITY);
    }
  }
  static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX,
                                   FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, 1e10f, -1e10f,
                                   2147483648.0f, -2147483648.0f, 4294967296.0f, 2147483520.0f,
                                   4294967040.0f, 0.5f, -0.5f, 1.5f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0] && n < cap; i++)
    x[n++] = specials[i];
  while (n < cap) x[n++] = rnd_float_any();
  return n;
}

static int check_against_ref(htpu_dtype t, const qc_params *p, float scale, int32_t zp,
                             const float *x, size_t n) {
  size_t size = htpu_dtype_size(t);
  unsigned char *out = malloc(n * size);
  if (!out) abort();
  int bad = 0;
  if (qc_quantize(t, p, x, out, n) != -1) {
    test_fail(__FILE__, __LINE__, "%s: unexpected NaN report", htpu_dtype_name(t));
    bad = 1;
  }
  for (size_t i = 0; i < n && !bad; i++) {
    int64_t want = ref_quant(t, x[i], scale, zp), got = load_int(t, out, i);
    if (got != want) {
      test_fail(__FILE__, __LINE__, "%s scale=%a zp=%d x=%a (%.9g) [%zu]: got %lld want %lld",
                htpu_dtype_name(t), (double)scale, zp, (double)x[i], (double)x[i], i,
                (long long)got, (long long)want);
      bad = 1;
    }
  }
  free(out);
  return bad;
}

/* 49/64: fl64(1/scale) is inexact in the direction that moves exact ties, so hoisting a
 * reciprocal (even in double) fails on it (x = 73.5 * scale gives 1.4999999999999998). */
static const float k_scales[] = {1.0f,    0.5f,   0.1f,       1.0f / 3, 3.0f,       1e-3f,
                                 7.5e-6f, 1e-40f, 1048576.0f, 1e30f,    0.0078125f, 0.765625f,
                                 49.0f,   0.0f};
static const int32_t k_zps[] = {0,   1,    -1,    128,        -128,      32768, -32768,
                                12345, 65535, INT32_MIN, INT32_MAX, -100000000};

TEST(quant_edges_all_int_types_vs_reference) {
  enum { N = 600 };
  float *x = malloc(N * sizeof *x);
  if (!x) abort();
  for (size_t ti = 0; ti < N_INT_TYPES; ti++) {
    htpu_dtype t = k_int_types[ti];
    for (size_t si = 0; si < sizeof k_scales / sizeof k_scales[0]; si++) {
      for (size_t zi = 0; zi < sizeof k_zps / sizeof k_zps[0]; zi++) {
        float s = k_scales[si];
        int32_t zp = k_zps[zi];
        size_t n = edge_inputs(t, s, zp, x, N);
        qc_params p = per_tensor(&s, &zp);
        if (check_against_ref(t, &p, s, zp, x, n)) {
          free(x);
          return;
        }
      }
    }
  }
  free(x);
}

TEST(quant_random_in_range_vs_reference) {
  enum { N = 4099 }; /* not a multiple of the kernels' chunk or block sizes */
  float *x = malloc(N * sizeof *x);
  if (!x) abort();
  for (size_t ti = 0; ti < N_INT_TYPES; ti++) {
    htpu_dtype t = k_int_types[ti];
    for (int round = 0; round < 6; round++) {
      float s = bitsf(0x30000000u + (uint32_t)(rnd() % 0x14000000u)); /* ~5e-10 .. 3e2 */
      int64_t span = type_hi(t) - type_lo(t);
      int32_t zp = (int32_t)(type_lo(t) + (int64_t)(rnd() % (uint64_t)(span + 1)) / 2);
      if (t == HTPU_U32) zp = (int32_t)(rnd() % INT32_MAX);
      for (size_t i = 0; i < N; i++) {
        /* values whose quotient covers the range and a bit beyond, many near ties */
        double q = (double)type_lo(t) - zp - 3 + (double)(rnd() % (uint64_t)(span + 7));
        double frac = (rnd() & 1) ? 0.5 : (double)(rnd() % 1000) / 1000.0;
        x[i] = (float)((q + frac) * s);
      }
      qc_params p = per_tensor(&s, &zp);
      if (check_against_ref(t, &p, s, zp, x, N)) {
        free(x);
        return;
      }
    }
  }
  free(x);
}

/* Quotients near 2^28..2^31 that sit 1/(2S) off a midpoint: the double quotient rounds onto
 * the midpoint and plain round-half-even of it is wrong half the time. x = X * 2^30, scale =
 * S (odd), with (2k+1) * S = X * 2^31 +- 1, so x / S = k + 1/2 -+ 1/(2S). */
TEST(quant_near_midpoint_large_quotients_exact) {
  enum { CASES = 256 };
  float x[2 * CASES], sc[2 * CASES];
  int64_t want_k[2 * CASES];
  size_t n = 0;
  int naive_wrong = 0;
  for (uint64_t S = (1u << 24) - 1; n < 2 * CASES; S -= 2) {
    uint64_t inv = S; /* S^-1 mod 2^31 by Newton: each step doubles the correct bits */
    for (int it = 0; it < 5; it++) inv = (inv * (2 - S * inv)) & 0x7fffffffu;
    for (int sign = 0; sign < 2 && n < 2 * CASES; sign++) {
      uint64_t odd = sign ? ((1u << 31) - inv) & 0x7fffffffu : inv; /* (2k+1) */
      uint64_t prod = odd * S;
      uint64_t X = sign ? (prod + 1) >> 31 : (prod - 1) >> 31;
      if (odd < (1u << 28) || X >= (1u << 24)) continue;
      float xf = ldexpf((float)X, 30), sf = (float)S;
      int64_t k = (int64_t)(odd - 1) / 2;
      want_k[n] = sign ? k + 1 : k;
      CHECK_EQ(ref_div_rne(xf, sf), want_k[n]);
      if ((int64_t)nearbyint((double)xf / (double)sf) != want_k[n]) naive_wrong++;
      x[n] = xf;
      sc[n] = sf;
      n++;
    }
  }
  CHECK_MSG(naive_wrong > 0, "the construction no longer produces misleading quotients");
  for (size_t i = 0; i < n; i++) {
    int32_t zp0 = 0, zp_u8 = (int32_t)(100 - want_k[i]);
    int32_t q32;
    uint32_t u32;
    uint8_t u8;
    qc_params p = per_tensor(&sc[i], &zp0);
    CHECK(qc_quantize(HTPU_I32, &p, &x[i], &q32, 1) == -1);
    CHECK(qc_quantize(HTPU_U32, &p, &x[i], &u32, 1) == -1);
    CHECK_MSG(q32 == (want_k[i] > INT32_MAX ? INT32_MAX : want_k[i]), "i32 x=%a s=%a: %d vs %lld",
              (double)x[i], (double)sc[i], q32, (long long)want_k[i]);
    CHECK_EQ(u32, want_k[i]);
    /* an extreme zero point puts an 8-bit type's range out there too */
    p = per_tensor(&sc[i], &zp_u8);
    CHECK(qc_quantize(HTPU_U8, &p, &x[i], &u8, 1) == -1);
    CHECK_EQ(u8, 100);
  }
}

TEST(quant_unscaled_and_zero_scale) {
  /* scales NULL and a scale entry of 0 both mean "no scaling"; zero points still apply */
  static const float x[] = {-1.0f, 0.5f, 1.5f, 255.5f, 300.0f, 2147483648.0f,
                            -2147483648.0f, 2147483520.0f, -3e9f, 4294967040.0f, 2.5f};
  enum { N = sizeof x / sizeof x[0] };
  const float zero = 0.0f;
  const int32_t zp = 7;
  qc_params none = {NULL, NULL, 0, 1};
  qc_params zscale = per_tensor(&zero, &zp);
  qc_params zp_only = {NULL, &zp, 1, 1};
  for (size_t ti = 0; ti < N_INT_TYPES; ti++) {
    htpu_dtype t = k_int_types[ti];
    int64_t buf[N];
    CHECK(qc_quantize(t, NULL, x, buf, N) == -1);
    for (size_t i = 0; i < N; i++) CHECK_EQ(load_int(t, buf, i), ref_quant(t, x[i], 0, 0));
    CHECK(qc_quantize(t, &none, x, buf, N) == -1);
    for (size_t i = 0; i < N; i++) CHECK_EQ(load_int(t, buf, i), ref_quant(t, x[i], 0, 0));
    CHECK(qc_quantize(t, &zscale, x, buf, N) == -1);
    for (size_t i = 0; i < N; i++) CHECK_EQ(load_int(t, buf, i), ref_quant(t, x[i], 0, zp));
    CHECK(qc_quantize(t, &zp_only, x, buf, N) == -1);
    for (size_t i = 0; i < N; i++) CHECK_EQ(load_int(t, buf, i), ref_quant(t, x[i], 0, zp));
  }
  /* by hand, i32 at the ends: 2^31 saturates, -2^31 is exact */
  int32_t q[3];
  const float e[3] = {2147483648.0f, -2147483648.0f, 2147483520.0f};
  CHECK(qc_quantize(HTPU_I32, NULL, e, q, 3) == -1);
  CHECK_EQ(q[0], INT32_MAX);
  CHECK_EQ(q[1], INT32_MIN);
  CHECK_EQ(q[2], 2147483520);
}

TEST(quant_64bit_and_bool8_plain_casts) {
  static const float x[] = {2.5f,         -2.5f,        3.5f,      -0.5f,     -1.0f,
                            0x1p63f,      -0x1p63f,     0x1p64f,   INFINITY,  -INFINITY,
                            0x1.fffffep62f, 0x1.fffffep63f, -0.0f, 1e-30f,  0.3f};
  enum { N = sizeof x / sizeof x[0] };
  int64_t i64[N];
  uint64_t u64[N];
  uint8_t b8[N];
  const float scale = 0.001f; /* ignored for these types */
  const int32_t zp = 5;
  qc_params p = per_tensor(&scale, &zp);
  CHECK(qc_quantize(HTPU_I64, &p, x, i64, N) == -1);
  CHECK(qc_quantize(HTPU_U64, &p, x, u64, N) == -1);
  CHECK(qc_quantize(HTPU_BOOL8, &p, x, b8, N) == -1);
  static const int64_t wi[N] = {2, -2, 4, 0, -1, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MAX,
                                INT64_MIN, (int64_t)0x1.fffffep62, INT64_MAX, 0, 0, 0};
  static const uint64_t wu[N] = {2, 0, 4, 0, 0, UINT64_C(1) << 63, 0, UINT64_MAX, UINT64_MAX,
                                 0, (uint64_t)0x1.fffffep62, (uint64_t)0x1.fffffep63, 0, 0, 0};
  static const uint8_t wb[N] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  for (size_t i = 0; i < N; i++) {
    CHECK_MSG(i64[i] == wi[i], "i64 x=%a: %lld", (double)x[i], (long long)i64[i]);
    CHECK_MSG(u64[i] == wu[i], "u64 x=%a: %llu", (double)x[i], (unsigned long long)u64[i]);
    CHECK_MSG(b8[i] == wb[i], "bool8 x=%a: %d", (double)x[i], b8[i]);
  }
  /* dequantize: one correct rounding of the integer, any nonzero byte is true */
  const int64_t di[] = {INT64_MAX, INT64_MIN, (INT64_C(1) << 53) + 1, (1 << 24) + 1, -3};
  const uint64_t du[] = {UINT64_MAX, 0, (UINT64_C(1) << 24) + 3, 7, UINT64_C(1) << 63};
  const uint8_t db[] = {0, 1, 2, 255, 0};
  float f[5];
  qc_dequantize(HTPU_I64, &p, di, f, 5);
  CHECK(f[0] == 0x1p63f && f[1] == -0x1p63f && f[2] == 0x1p53f && f[3] == 16777216.0f &&
        f[4] == -3.0f);
  qc_dequantize(HTPU_U64, &p, du, f, 5);
  CHECK(f[0] == 0x1p64f && f[1] == 0.0f && f[2] == 16777220.0f && f[3] == 7.0f &&
        f[4] == 0x1p63f);
  qc_dequantize(HTPU_BOOL8, &p, db, f, 5);
  CHECK(f[0] == 0.0f && f[1] == 1.0f && f[2] == 1.0f && f[3] == 1.0f && f[4] == 0.0f);
}

TEST(quant_f32_copies) {
  const float x[4] = {1.0f, NAN, -0.0f, INFINITY};
  float y[4];
  CHECK(qc_quantize(HTPU_F32, NULL, x, y, 4) == -1); /* a copy: NaN is not an error */
  CHECK(memcmp(x, y, sizeof x) == 0);
  float z[4];
  qc_dequantize(HTPU_F32, NULL, y, z, 4);
  CHECK(memcmp(x, z, sizeof x) == 0);
}

/* ---- NaN ------------------------------------------------------------------------------------- */

TEST(quant_nan_reports_first_index_and_writes_prefix) {
  enum { N = 3000 };
  static const htpu_dtype types[] = {HTPU_U8,  HTPU_I8,  HTPU_U16, HTPU_I16, HTPU_U32, HTPU_I32,
                                     HTPU_F16, HTPU_U64, HTPU_I64, HTPU_BOOL8};
  static const size_t where[] = {0, 1, 15, 16, 1023, 1024, 1025, 2047, 2999};
  float *x = malloc(N * sizeof *x), *pristine = malloc(N * sizeof *x);
  unsigned char *out = malloc(N * 8), *ref = malloc(N * 8);
  if (!x || !pristine || !out || !ref) abort();
  for (size_t i = 0; i < N; i++) pristine[i] = (float)((int)(i % 200) - 100) * 0.37f;
  memcpy(x, pristine, N * sizeof *x);
  const float scale = 0.5f;
  const int32_t zp = 3;
  qc_params p = per_tensor(&scale, &zp);
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    htpu_dtype t = types[ti];
    size_t size = htpu_dtype_size(t);
    CHECK(qc_quantize(t, &p, x, ref, N) == -1);
    for (size_t wi = 0; wi < sizeof where / sizeof where[0]; wi++) {
      size_t at = where[wi];
      x[at] = (wi & 1) ? -NAN : NAN;
      if (at + 7 < N) x[at + 7] = NAN; /* a later NaN must not be the one reported */
      memset(out, 0xAA, N * size);
      ptrdiff_t got = qc_quantize(t, &p, x, out, N);
      memcpy(x, pristine, N * sizeof *x);
      CHECK_MSG(got == (ptrdiff_t)at, "%s: NaN at %zu reported at %td", htpu_dtype_name(t), at,
                got);
      CHECK_MSG(memcmp(out, ref, at * size) == 0, "%s: prefix before %zu not written",
                htpu_dtype_name(t), at);
    }
  }
  free(x);
  free(pristine);
  free(out);
  free(ref);
}

/* ---- per axis -------------------------------------------------------------------------------- */

/* Channel of flat index i by unravelling all coordinates (not the (i / inner) % channels
 * formula the kernels use). */
static uint32_t channel_of(size_t i, const uint32_t *dims, uint32_t rank, uint32_t axis) {
  uint32_t coord = 0;
  for (uint32_t d = rank; d-- > 0;) {
    if (d == axis) coord = (uint32_t)(i % dims[d]);
    i /= dims[d];
  }
  return coord;
}

static int per_axis_case(htpu_dtype t, const uint32_t *dims, uint32_t rank, uint32_t axis) {
  htpu_tensor_info info;
  memset(&info, 0, sizeof info);
  info.name = "w";
  info.dtype = t;
  info.rank = rank;
  size_t n = 1;
  for (uint32_t d = 0; d < rank; d++) n *= (info.dims[d] = dims[d]);
  info.num_elements = n;
  uint32_t ch = dims[axis];
  float *scales = malloc(ch * sizeof *scales), *x = malloc(n * sizeof *x), *back = malloc(n * 4);
  int32_t *zps = malloc(ch * sizeof *zps);
  unsigned char *q = malloc(n * htpu_dtype_size(t));
  if (!scales || !x || !back || !zps || !q) abort();
  for (uint32_t c = 0; c < ch; c++) {
    scales[c] = 0.01f * (float)(c + 1) + 0.003f * (float)c * (float)c;
    int64_t mid = (type_lo(t) + type_hi(t)) / 2;
    zps[c] = (int32_t)(mid - (int64_t)(c % 3));
  }
  info.quant = (htpu_quant){HTPU_QUANT_PER_AXIS, 0, 0, (int32_t)axis, ch, scales, zps};
  for (size_t i = 0; i < n; i++) {
    uint32_t c = channel_of(i, dims, rank, axis);
    double span = (double)(type_hi(t) - type_lo(t));
    double qv = (double)(rnd() % 1000) / 1000.0 * (span + 20) - span / 2 - 10;
    if (rnd() % 4 == 0) qv = floor(qv) + 0.5; /* ties */
    x[i] = (float)(qv * scales[c]);
  }
  int bad = 0;
  qc_params p;
  if (qc_params_from_info(&info, &p) != 0 || p.channels != ch) {
    test_fail(__FILE__, __LINE__, "qc_params_from_info rejected a valid per-axis tensor");
    bad = 1;
  }
  if (!bad && (htpu_quantize(&info, x, q) != 0 || htpu_dequantize(&info, q, back) != 0)) {
    test_fail(__FILE__, __LINE__, "public wrappers failed: %s", htpu_last_error());
    bad = 1;
  }
  for (size_t i = 0; i < n && !bad; i++) {
    uint32_t c = channel_of(i, dims, rank, axis);
    int64_t want = ref_quant(t, x[i], scales[c], zps[c]), got = load_int(t, q, i);
    float wantf = ref_dequant_doc(got, scales[c], zps[c]);
    if (got != want || fbits(back[i]) != fbits(wantf)) {
      test_fail(__FILE__, __LINE__,
                "%s rank %u axis %u [%zu] ch %u: q %lld want %lld, x' %a want %a",
                htpu_dtype_name(t), rank, axis, i, c, (long long)got, (long long)want,
                (double)back[i], (double)wantf);
      bad = 1;
    }
  }
  free(scales);
  free(x);
  free(back);
  free(zps);
  free(q);
  return bad;
}

TEST(quant_per_axis_every_axis_rank3_rank4) {
  static const uint32_t d3[] = {3, 4, 5};
  static const uint32_t d4[] = {2, 3, 20, 17}; /* inner 1020, 340, 17, 1: run and element paths */
  static const uint32_t d1[] = {4099};         /* crosses NaN-scan blocks, channel per element */
  static const uint32_t d2[] = {3, 1500};      /* a channel's run spans blocks */
  for (size_t ti = 0; ti < N_INT_TYPES; ti++) {
    htpu_dtype t = k_int_types[ti];
    for (uint32_t a = 0; a < 3; a++)
      if (per_axis_case(t, d3, 3, a)) return;
    for (uint32_t a = 0; a < 4; a++)
      if (per_axis_case(t, d4, 4, a)) return;
    if (per_axis_case(t, d1, 1, 0)) return;
    for (uint32_t a = 0; a < 2; a++)
      if (per_axis_case(t, d2, 2, a)) return;
  }
}

TEST(quant_per_axis_nan_index) {
  const uint32_t dims[2] = {4, 700};
  float scales[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  int32_t zps[4] = {0, 1, 2, 3};
  htpu_tensor_info info;
  memset(&info, 0, sizeof info);
  info.name = "w";
  info.dtype = HTPU_I8;
  info.rank = 2;
  info.dims[0] = dims[0];
  info.dims[1] = dims[1];
  info.num_elements = 2800;
  info.quant = (htpu_quant){HTPU_QUANT_PER_AXIS, 0, 0, 0, 4, scales, zps};
  float *x = calloc(2800, sizeof *x);
  int8_t *q = malloc(2800);
  if (!x || !q) abort();
  x[2100 + 33] = NAN;
  CHECK(htpu_quantize(&info, x, q) == HTPU_ENAN);
  CHECK_STR_CONTAINS(htpu_last_error(), "element 2133 is NaN");
  CHECK_STR_CONTAINS(htpu_last_error(), "i8");
  for (size_t i = 0; i < 2133; i++) CHECK_EQ(q[i], zps[i / 700]);
  free(x);
  free(q);
}

/* ---- integer -> f32 -------------------------------------------------------------------------- */

TEST(quant_dequantize_small_types_exhaustive) {
  static const float scales[] = {1.0f, 0.1f, 1.0f / 3, 0.0078125f, 1e-40f, 0x1p-149f,
                                 3e38f, 1.7e38f, 2.5e-3f, 0.0f};
  static const int32_t zps[] = {0, 128, -128, 32768, -32769, 16777216 - 65536,
                                -(16777216 - 65536), 16777216 - 65535, INT32_MIN, INT32_MAX};
  static const htpu_dtype types[] = {HTPU_U8, HTPU_I8, HTPU_U16, HTPU_I16};
  enum { N = 65536 };
  unsigned char *q = malloc(N * 2);
  float *f = malloc(N * sizeof *f);
  if (!q || !f) abort();
  for (size_t ti = 0; ti < 4; ti++) {
    htpu_dtype t = types[ti];
    size_t n = (size_t)(type_hi(t) - type_lo(t) + 1);
    for (size_t i = 0; i < n; i++) store_int(t, q, i, type_lo(t) + (int64_t)i);
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
      for (size_t zi = 0; zi < sizeof zps / sizeof zps[0]; zi++) {
        qc_params p = per_tensor(&scales[si], &zps[zi]);
        qc_dequantize(t, &p, q, f, n);
        int64_t S;
        int es;
        decompose(scales[si] != 0 ? scales[si] : 1.0f, &S, &es);
        for (size_t i = 0; i < n; i++) {
          float want = ref_dequant_se(type_lo(t) + (int64_t)i, S, es, zps[zi]);
          CHECK_MSG(fbits(f[i]) == fbits(want), "%s q=%lld scale=%a zp=%d: %a want %a",
                    htpu_dtype_name(t), (long long)(type_lo(t) + (int64_t)i),
                    (double)scales[si], zps[zi], (double)f[i], (double)want);
        }
      }
    }
  }
  free(q);
  free(f);
}

TEST(quant_dequantize_32bit) {
  enum { N = 5000 };
  static const float scales[] = {1.0f, 0.1f, 1.0f / 3, 1e-40f, 3e38f, 0x1.fffffep-1f};
  static const htpu_dtype types[] = {HTPU_U32, HTPU_I32};
  int64_t *want_q = malloc(N * sizeof *want_q);
  uint32_t *q = malloc(N * 4);
  float *f = malloc(N * 4);
  if (!want_q || !q || !f) abort();
  for (size_t ti = 0; ti < 2; ti++) {
    htpu_dtype t = types[ti];
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
      int32_t zp = (int32_t)(rnd() % 2000001) - 1000000;
      if (t == HTPU_U32) zp = (int32_t)(rnd() % 0x40000000u);
      qc_params p = per_tensor(&scales[si], &zp);
      /* |q - zp| < 2^29: the double product is exact, so the result is correctly rounded */
      for (size_t i = 0; i < N; i++) {
        int64_t d = (int64_t)(rnd() % (1u << 30)) - (1 << 29);
        if (i < 8) d = (int64_t[]){0, 1, -1, (1 << 29) - 1, -(1 << 29) + 1, 16777217, 3, -7}[i];
        int64_t v = d + zp;
        if (v < type_lo(t)) v = type_lo(t);
        if (v > type_hi(t)) v = type_hi(t);
        want_q[i] = v;
        store_int(t, q, i, v);
      }
      qc_dequantize(t, &p, q, f, N);
      for (size_t i = 0; i < N; i++) {
        float want = ref_dequant(want_q[i], scales[si], zp);
        CHECK_MSG(fbits(f[i]) == fbits(want), "%s q=%lld scale=%a zp=%d: %a want %a",
                  htpu_dtype_name(t), (long long)want_q[i], (double)scales[si], zp,
                  (double)f[i], (double)want);
      }
    }
  }
  /* beyond 2^29 the documented formula (float)((double)(q - zp) * scale) holds */
  const int32_t ends[4] = {INT32_MIN, INT32_MAX, -1, 0};
  const int32_t zp_max = INT32_MAX;
  const float s = 0.1f;
  qc_params p = per_tensor(&s, &zp_max);
  qc_dequantize(HTPU_I32, &p, ends, f, 4);
  for (int i = 0; i < 4; i++)
    CHECK(fbits(f[i]) == fbits((float)(((double)ends[i] - INT32_MAX) * (double)s)));
  free(want_q);
  free(q);
  free(f);
}

TEST(quant_round_trip_is_identity_on_grid) {
  /* dequantize then quantize gives back every representable q (scale > 0, any zero point) */
  static const float scales[] = {0.1f, 1.0f / 3, 0.0078125f, 3.5f};
  static const int32_t zps[] = {0, 128, -128, 1000};
  enum { N = 65536 };
  uint16_t *q = malloc(N * 2), *q2 = malloc(N * 2);
  float *f = malloc(N * 4);
  if (!q || !q2 || !f) abort();
  for (size_t i = 0; i < N; i++) q[i] = (uint16_t)i;
  for (size_t si = 0; si < 4; si++) {
    for (size_t zi = 0; zi < 4; zi++) {
      qc_params p = per_tensor(&scales[si], &zps[zi]);
      qc_dequantize(HTPU_U16, &p, q, f, N);
      CHECK(qc_quantize(HTPU_U16, &p, f, q2, N) == -1);
      CHECK(memcmp(q, q2, N * 2) == 0);
    }
  }
  free(q);
  free(q2);
  free(f);
}

/* ---- f16 ------------------------------------------------------------------------------------- */

TEST(quant_f16_all_bit_patterns) {
  enum { N = 65536 };
  uint16_t *h = malloc(N * 2), *back = malloc(N * 2);
  float *f = malloc(N * 4);
  if (!h || !back || !f) abort();
  for (size_t i = 0; i < N; i++) h[i] = (uint16_t)i;
  qc_dequantize(HTPU_F16, NULL, h, f, N);
  size_t finite = 0;
  for (size_t i = 0; i < N; i++) {
    double want = ref_f16_value(h[i]);
    CHECK(fbits(f[i]) == fbits(htpu_f16_to_f32(h[i])));
    if (isnan(want)) {
      /* NaN keeps sign and payload */
      uint32_t wb = ((uint32_t)(h[i] & 0x8000) << 16) | 0x7f800000u |
                    ((uint32_t)(h[i] & 0x3ff) << 13);
      CHECK_MSG(fbits(f[i]) == wb, "h=%04zx -> %08x", i, fbits(f[i]));
      continue;
    }
    CHECK_MSG(fbits(f[i]) == fbits((float)want), "h=%04zx -> %a want %a", i, (double)f[i], want);
    if (isinf(want)) continue;
    /* finite values come back bit for bit, -0 included */
    CHECK_MSG(htpu_f32_to_f16(f[i]) == h[i], "h=%04zx round trip %04x", i,
              htpu_f32_to_f16(f[i]));
    f[finite++] = f[i];
  }
  CHECK_EQ(finite, 65536 - 2046 - 2); /* all but the NaNs and the two infinities */
  CHECK(qc_quantize(HTPU_F16, NULL, f, back, finite) == -1);
  for (size_t i = 0; i < finite; i++) CHECK_EQ(back[i], htpu_f32_to_f16(f[i]));
  free(h);
  free(back);
  free(f);
}

TEST(quant_f16_rounding_ties_subnormals_overflow) {
  /* by hand */
  static const struct {
    float x;
    uint16_t h;
  } k[] = {
      {0.0f, 0x0000},          {-0.0f, 0x8000},         {1.0f, 0x3c00},
      {65504.0f, 0x7bff},      {65519.99f, 0x7bff},     {65520.0f, 0x7bff},
      {1e10f, 0x7bff},         {-65520.0f, 0xfbff},     {INFINITY, 0x7bff},
      {-INFINITY, 0xfbff},     {FLT_MAX, 0x7bff},       {65488.0f, 0x7bfe}, /* tie */
      {65487.99f, 0x7bfe},     {65488.01f, 0x7bff},     {65496.0f, 0x7bff},
      {0x1p-24f, 0x0001},      {0x1p-25f, 0x0000},      {0x1.000002p-25f, 0x0001},
      {0x1.8p-24f, 0x0002},    {0x1.4p-23f, 0x0002},    {0x1p-14f, 0x0400},
      {0x1.ff8p-15f, 0x03ff},  {0x1.ffcp-15f, 0x0400},  {-0x1p-26f, 0x8000},
      {1e-8f, 0x0000},         {-1e-8f, 0x8000},        {1.0009766f, 0x3c01},
      {1.00048828125f, 0x3c00}, {1.00146484375f, 0x3c02}, {2049.0f, 0x6800},
      {2051.0f, 0x6802},       {0.1f, 0x2e66},          {FLT_MIN, 0x0000},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    CHECK_MSG(ref_f16_encode(k[i].x) == k[i].h, "reference: x=%a -> %04x want %04x",
              (double)k[i].x, ref_f16_encode(k[i].x), k[i].h);
    CHECK_MSG(htpu_f32_to_f16(k[i].x) == k[i].h, "x=%a -> %04x want %04x", (double)k[i].x,
              htpu_f32_to_f16(k[i].x), k[i].h);
  }
  /* every midpoint between adjacent f16 values, and the floats either side of it */
  enum { M = 0x7bff * 3 };
  float *x = malloc(M * 2 * sizeof *x);
  uint16_t *h = malloc(M * 2 * 2);
  if (!x || !h) abort();
  size_t n = 0;
  for (unsigned v = 0; v < 0x7bff; v++) {
    float mid = (float)((ref_f16_value((uint16_t)v) + ref_f16_value((uint16_t)(v + 1))) / 2);
    float around[3] = {mid, nextafterf(mid, 0), nextafterf(mid, INFINITY)};
    for (int j = 0; j < 3; j++) {
      x[n++] = around[j];
      x[n++] = -around[j];
    }
  }
  CHECK(qc_quantize(HTPU_F16, NULL, x, h, n) == -1);
  for (size_t i = 0; i < n; i++) {
    uint16_t want = ref_f16_encode(x[i]);
    CHECK_MSG(h[i] == want, "x=%a -> %04x want %04x", (double)x[i], h[i], want);
  }
  /* and random floats of every magnitude */
  for (size_t i = 0; i < n; i++) x[i] = rnd_float_any();
  CHECK(qc_quantize(HTPU_F16, NULL, x, h, n) == -1);
  for (size_t i = 0; i < n; i++) {
    uint16_t want = ref_f16_encode(x[i]);
    CHECK_MSG(h[i] == want, "x=%a -> %04x want %04x", (double)x[i], h[i], want);
  }
  free(x);
  free(h);
}

TEST(quant_f16_nan) {
  const float x[3] = {1.0f, 2.0f, NAN};
  uint16_t h[3];
  CHECK(qc_quantize(HTPU_F16, NULL, x, h, 3) == 2);
  CHECK(h[0] == 0x3c00 && h[1] == 0x4000);
  /* the scalar helper has no error channel: NaN stays a (quiet) NaN with its sign */
  uint16_t n1 = htpu_f32_to_f16(NAN), n2 = htpu_f32_to_f16(-NAN);
  CHECK((n1 & 0x7c00) == 0x7c00 && (n1 & 0x3ff) != 0 && (n1 & 0x200) && !(n1 & 0x8000));
  CHECK((n2 & 0x7c00) == 0x7c00 && (n2 & 0x3ff) != 0 && (n2 & 0x8000));
  CHECK(isnan(htpu_f16_to_f32(n1)));
  CHECK(htpu_f32_to_f16(bitsf(0x7f800001u)) != 0x7c00); /* a low-payload NaN is no Inf */
}

/* ---- public wrappers ------------------------------------------------------------------------- */

static htpu_tensor_info make_info(const char *name, htpu_dtype t, uint32_t d0, uint32_t d1) {
  htpu_tensor_info info;
  memset(&info, 0, sizeof info);
  info.name = name;
  info.dtype = t;
  info.rank = 2;
  info.dims[0] = d0;
  info.dims[1] = d1;
  info.num_elements = (size_t)d0 * d1;
  info.byte_size = info.num_elements * htpu_dtype_size(t);
  return info;
}

TEST(quant_public_wrappers_nan_message) {
  enum { N = 2000 };
  float *x = malloc(N * sizeof *x);
  uint8_t *q = malloc(N);
  if (!x || !q) abort();
  for (size_t i = 0; i < N; i++) x[i] = (float)(i % 50);
  htpu_tensor_info info = make_info("image", HTPU_U8, 1, N);
  info.quant.kind = HTPU_QUANT_PER_TENSOR;
  info.quant.scale = 0.25f;
  info.quant.zero_point = 3;
  CHECK_EQ(htpu_quantize(&info, x, q), HTPU_OK);
  CHECK(strcmp(htpu_last_error(), "") == 0);
  CHECK_EQ(q[5], 23);
  x[1234] = NAN;
  CHECK_EQ(htpu_quantize(&info, x, q), HTPU_ENAN);
  CHECK(strcmp(htpu_last_error(),
               "input 'image': element 1234 is NaN; NaN cannot be quantized to u8") == 0);
  /* a later successful call clears it */
  x[1234] = 0;
  CHECK_EQ(htpu_quantize(&info, x, q), HTPU_OK);
  CHECK(strcmp(htpu_last_error(), "") == 0);
  float *back = malloc(N * sizeof *back);
  if (!back) abort();
  CHECK_EQ(htpu_dequantize(&info, q, back), HTPU_OK);
  CHECK(back[5] == 5.0f && back[1234] == 0.0f);
  /* f16 tensors, unquantized */
  htpu_tensor_info hinfo = make_info("h", HTPU_F16, 2, 2);
  const float hx[4] = {1, 2, 3, NAN};
  uint16_t hq[4];
  CHECK_EQ(htpu_quantize(&hinfo, hx, hq), HTPU_ENAN);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "input 'h': element 3 is NaN; NaN cannot be quantized to f16");
  free(x);
  free(q);
  free(back);
}

TEST(quant_public_wrappers_validation) {
  float x[12] = {0};
  uint8_t q[12];
  float back[12];
  float scales[3] = {0.5f, 0.25f, 0.125f};
  int32_t zps[3] = {1, 2, 3};
  htpu_tensor_info ok = make_info("t", HTPU_U8, 3, 4);
  ok.quant = (htpu_quant){HTPU_QUANT_PER_AXIS, 0, 0, 0, 3, scales, zps};
  CHECK_EQ(htpu_quantize(&ok, x, q), HTPU_OK);
  CHECK(q[0] == 1 && q[4] == 2 && q[8] == 3);
  CHECK_EQ(htpu_dequantize(&ok, q, back), HTPU_OK);

  CHECK_EQ(htpu_quantize(NULL, x, q), HTPU_EINVAL);
  CHECK_EQ(htpu_dequantize(NULL, q, back), HTPU_EINVAL);
  CHECK_EQ(htpu_quantize(&ok, NULL, q), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "source buffer is NULL");
  CHECK_EQ(htpu_dequantize(&ok, q, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "destination buffer is NULL");

  htpu_tensor_info empty = ok;
  empty.num_elements = 0;
  CHECK_EQ(htpu_quantize(&empty, NULL, NULL), HTPU_OK); /* nothing to touch */

  htpu_tensor_info bad = ok;
  bad.dtype = HTPU_DTYPE_INVALID;
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "invalid dtype");

  static const int32_t bad_axes[] = {-1, 2, 100};
  for (size_t i = 0; i < 3; i++) {
    bad = ok;
    bad.quant.axis = bad_axes[i];
    CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
    CHECK_STR_CONTAINS(htpu_last_error(), "htpu_quantize: tensor 't': per-axis quantization axis");
    CHECK_EQ(htpu_dequantize(&bad, q, back), HTPU_EINVAL);
    CHECK_STR_CONTAINS(htpu_last_error(), "htpu_dequantize: tensor 't'");
    qc_params p;
    CHECK_EQ(qc_params_from_info(&bad, &p), -1);
  }
  bad = ok;
  bad.quant.num_channels = 4;
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "4 channels but dims[0] is 3");
  bad = ok;
  bad.quant.axis = 1; /* dims[1] = 4 != 3 channels */
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  bad = ok;
  bad.quant.scales = NULL;
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "scales");
  bad = ok;
  bad.quant.zero_points = NULL;
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "zero_points");
  bad = ok;
  bad.rank = HTPU_MAX_RANK + 1;
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  bad = ok;
  bad.quant.kind = (htpu_quant_kind)7;
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "unknown quantization kind 7");

  float bad_scales[3] = {0.5f, 0.0f, 1.0f};
  bad = ok;
  bad.quant.scales = bad_scales;
  CHECK_EQ(htpu_quantize(&bad, x, q), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "channel 1 scale 0 is not finite and > 0");
  static const float bad_tensor_scales[] = {0.0f, -0.5f, INFINITY, -INFINITY, NAN, -0.0f};
  htpu_tensor_info pt = make_info("pt", HTPU_I16, 3, 4);
  pt.quant.kind = HTPU_QUANT_PER_TENSOR;
  for (size_t i = 0; i < sizeof bad_tensor_scales / sizeof bad_tensor_scales[0]; i++) {
    pt.quant.scale = bad_tensor_scales[i];
    int16_t q16[12];
    CHECK_EQ(htpu_quantize(&pt, x, q16), HTPU_EINVAL);
    CHECK_STR_CONTAINS(htpu_last_error(), "tensor 'pt': scale");
    CHECK_EQ(htpu_dequantize(&pt, q16, back), HTPU_EINVAL);
  }
  /* structural problems only in qc_params_from_info; per-axis inner is the trailing product */
  htpu_tensor_info r4;
  memset(&r4, 0, sizeof r4);
  r4.rank = 4;
  r4.dims[0] = 2;
  r4.dims[1] = 3;
  r4.dims[2] = 5;
  r4.dims[3] = 7;
  float s5[5] = {1, 1, 1, 1, 1};
  int32_t z5[5] = {0};
  r4.quant = (htpu_quant){HTPU_QUANT_PER_AXIS, 0, 0, 2, 5, s5, z5};
  qc_params p;
  CHECK_EQ(qc_params_from_info(&r4, &p), 0);
  CHECK(p.channels == 5 && p.inner == 7 && p.scales == s5 && p.zero_points == z5);
  r4.quant = (htpu_quant){HTPU_QUANT_PER_TENSOR, 0.5f, 9, 0, 0, NULL, NULL};
  CHECK_EQ(qc_params_from_info(&r4, &p), 0);
  CHECK(p.channels == 1 && p.scales == &r4.quant.scale && p.zero_points == &r4.quant.zero_point);
  r4.quant.kind = HTPU_QUANT_NONE;
  CHECK_EQ(qc_params_from_info(&r4, &p), 0);
  CHECK(p.scales == NULL && p.zero_points == NULL);
  CHECK_EQ(qc_params_from_info(NULL, &p), -1);
}

TEST(quant_public_unquantized_integer_and_f32) {
  htpu_tensor_info info = make_info("ids", HTPU_I32, 1, 4);
  const float x[4] = {1.5f, 2.5f, -3e9f, 7.0f};
  int32_t q[4];
  CHECK_EQ(htpu_quantize(&info, x, q), HTPU_OK);
  CHECK(q[0] == 2 && q[1] == 2 && q[2] == INT32_MIN && q[3] == 7);
  float back[4];
  CHECK_EQ(htpu_dequantize(&info, q, back), HTPU_OK);
  CHECK(back[0] == 2.0f && back[2] == -2147483648.0f);
  htpu_tensor_info f = make_info("f", HTPU_F32, 1, 4);
  float y[4];
  CHECK_EQ(htpu_quantize(&f, x, y), HTPU_OK);
  CHECK(memcmp(x, y, sizeof y) == 0);
}
