/*
 * lut.c - what each resized pixel value becomes in the input's own type.
 *
 * The resize works on u8 (as OpenCV's does), so every element the input receives is a function
 * of (model channel, pixel value): 3 x 256 entries, made once per call through the core's own
 * quantizer (the exact path and the kernels give the same bytes: round half to even of the real
 * quotient, saturated) from the normalized value, which is computed in f32 exactly as NumPy
 * computes img.astype(np.float32) / 255 (and (x - mean) / std). The row writer then only looks
 * values up.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "quant/quant.h"
#include "vision.h"

static int supported(htpu_dtype t) {
  switch (t) {
    case HTPU_U8:
    case HTPU_I8:
    case HTPU_U16:
    case HTPU_I16:
    case HTPU_U32:
    case HTPU_I32:
    case HTPU_F16:
    case HTPU_F32:
      return 1;
    default:
      return 0;
  }
}

static int is_plain_int(const htpu_tensor_info *in) {
  return in->dtype != HTPU_F32 && in->dtype != HTPU_F16 && in->quant.kind == HTPU_QUANT_NONE;
}

static int check_quant(const htpu_tensor_info *in, int chan_axis, unsigned channels) {
  const htpu_quant *q = &in->quant;
  const char *name = in->name ? in->name : "";
  if (q->kind == HTPU_QUANT_PER_TENSOR) {
    if (!(isfinite(q->scale) && q->scale > 0.0f))
      return htpu_set_error(HTPU_EINVAL, 0, "input '%s': scale %g is not finite and > 0", name,
                            (double)q->scale);
    return HTPU_OK;
  }
  if (q->kind != HTPU_QUANT_PER_AXIS) return HTPU_OK;
  if (q->axis != chan_axis || q->num_channels != channels || !q->scales || !q->zero_points)
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "input '%s': per-axis quantization along axis %d with %u channels; an "
                          "image input can be quantized per tensor or per channel (axis %d, %u)",
                          name, q->axis, q->num_channels, chan_axis, channels);
  for (unsigned k = 0; k < channels; k++)
    if (!(isfinite(q->scales[k]) && q->scales[k] > 0.0f))
      return htpu_set_error(HTPU_EINVAL, 0, "input '%s': channel %u scale %g is not finite and > 0",
                            name, k, (double)q->scales[k]);
  return HTPU_OK;
}

static int check_norm(const htpu_tensor_info *in, const htpu_preprocess_options *o,
                      unsigned channels, htpu_normalize *norm) {
  const char *name = in->name ? in->name : "";
  *norm = o->normalize;
  if (*norm == HTPU_NORMALIZE_AUTO) *norm = is_plain_int(in) ? HTPU_NORMALIZE_RAW : HTPU_NORMALIZE_UNIT;
  if ((unsigned)*norm > HTPU_NORMALIZE_MEAN_STD)
    return htpu_set_error(HTPU_EINVAL, 0, "normalize %d is not auto, unit, raw or mean_std",
                          (int)o->normalize);
  if (*norm != HTPU_NORMALIZE_RAW && is_plain_int(in))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "input '%s' is a plain %s without quantization: a normalized value "
                          "would round to a few integers; use normalize raw (the pixel values)",
                          name, htpu_dtype_name(in->dtype));
  if (*norm != HTPU_NORMALIZE_MEAN_STD) return HTPU_OK;
  for (unsigned k = 0; k < channels; k++)
    if (!isfinite(o->mean[k]) || !(isfinite(o->std[k]) && o->std[k] > 0.0f))
      return htpu_set_error(HTPU_EINVAL, 0,
                            "normalize mean_std: channel %u has mean %g and std %g; expected a "
                            "finite mean and a finite std > 0",
                            k, (double)o->mean[k], (double)o->std[k]);
  return HTPU_OK;
}

static void values(htpu_normalize norm, float mean, float std, float *v) {
  for (int p = 0; p < 256; p++) {
    float x = (float)p;
    if (norm == HTPU_NORMALIZE_UNIT) x = x / 255.0f;
    if (norm == HTPU_NORMALIZE_MEAN_STD) x = (x / 255.0f - mean) / std;
    v[p] = x;
  }
}

static void store(vis_lut *lut, unsigned k, const void *bits) {
  if (lut->elem == 1) memcpy(lut->b[k], bits, 256);
  if (lut->elem == 2) memcpy(lut->h[k], bits, 512);
  if (lut->elem == 4) memcpy(lut->w[k], bits, 1024);
}

int vis_lut_build(const htpu_tensor_info *in, int chan_axis, unsigned channels,
                  const htpu_preprocess_options *o, vis_lut *lut) {
  if (!supported(in->dtype))
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "input '%s' is %s; an image input can be u8, i8, u16, i16, u32, i32, "
                          "f16 or f32",
                          in->name ? in->name : "", htpu_dtype_name(in->dtype));
  htpu_normalize norm;
  int rc = check_quant(in, chan_axis, channels);
  if (rc || (rc = check_norm(in, o, channels, &norm))) return rc;
  memset(lut, 0, sizeof *lut);
  lut->elem = (unsigned)htpu_dtype_size(in->dtype);
  lut->channels = channels;
  const htpu_quant *q = &in->quant;
  for (unsigned k = 0; k < channels; k++) {
    float v[256];
    uint32_t bits[256];
    values(norm, o->mean[k], o->std[k], v);
    qc_params p = {NULL, NULL, 0, 1};
    if (q->kind == HTPU_QUANT_PER_TENSOR) p = (qc_params){&q->scale, &q->zero_point, 1, 1};
    if (q->kind == HTPU_QUANT_PER_AXIS) p = (qc_params){&q->scales[k], &q->zero_points[k], 1, 1};
    /* the values are finite (checked above), so no NaN index can come back */
    (void)qc_quantize(in->dtype, &p, v, bits, 256);
    store(lut, k, bits);
  }
  lut->identity = in->dtype == HTPU_U8;
  for (unsigned k = 0; lut->identity && k < channels; k++)
    for (int p = 0; p < 256; p++)
      if (lut->b[k][p] != p) lut->identity = 0;
  /* 16-bit elements that are p x m in every channel (an A16 input of scale 1/65535: m = 257) */
  lut->mul16 = lut->elem == 2 ? lut->h[0][1] : 0;
  for (unsigned k = 0; lut->mul16 && k < channels; k++)
    for (uint32_t p = 0; p < 256; p++)
      if (lut->h[k][p] != (uint16_t)(p * lut->mul16) || p * lut->mul16 > 0xffffu) lut->mul16 = 0;
  return HTPU_OK;
}
