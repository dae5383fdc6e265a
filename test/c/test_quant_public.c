/*
 * test_quant_public.c - the public side of quantization: dtype sizes and names, and
 * htpu_quantize / htpu_dequantize (NaN messages, validation of the tensor info, unquantized
 * types).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"
#include "quant_rig.h"
#include "test.h"

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
