/*
 * test_quant_to_half.c - f16: every bit pattern to f32 and back, rounding of f32 to f16 (ties,
 * subnormals, saturation) against the search-based reference, and NaN.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"
#include "quant_rig.h"
#include "test.h"

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
