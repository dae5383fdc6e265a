/*
 * test_quant_per_axis.c - per-axis quantization through the public wrappers: every axis of
 * tensors of rank 1 to 4 against the references, and the NaN index of a per-axis tensor.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"
#include "quant_rig.h"
#include "test.h"

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
