/*
 * test_quant_from_f32.c - f32 to the stored types (qc_quantize): round half to even and
 * saturate against the exact references of quant_rig.c, by hand and over every integer type,
 * unscaled and zero scales, the 64-bit and bool8 casts, f32 copies, and NaN reporting.
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"
#include "quant_rig.h"
#include "test.h"

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
