/*
 * test_quant_to_f32.c - the integer types to f32 (qc_dequantize): every value of the 8- and
 * 16-bit types, 32-bit values within and beyond the exact range, and the round trip on the
 * quantization grid.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"
#include "quant_rig.h"
#include "test.h"

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
