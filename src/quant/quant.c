/*
 * quant.c - f32 <-> tensor element conversions: the SIMD kernels where they apply
 * (quant_simd.c), else the exact path (quant_exact.c), which give the same bytes; and the
 * public htpu_quantize / htpu_dequantize with the checks of a tensor's quantization.
 *
 * Calls go one way: quant.c -> quant_simd.c -> quant_exact.c (and quant.c -> quant_exact.c).
 */
#include "quant.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/base.h"
#include "quant_simd.h"

/* The SIMD kernels where they apply (quant_simd.c: integer targets, scales in their domain),
 * else the exact path; both give the same bytes. */
ptrdiff_t qc_quantize(htpu_dtype t, const qc_params *p, const float *src, void *dst, size_t n) {
  ptrdiff_t bad;
  if (qs_quantize(t, p, src, dst, n, &bad)) return bad;
  return qc_quantize_at(t, p, src, dst, n, 0);
}

void qc_dequantize(htpu_dtype t, const qc_params *p, const void *src, float *dst, size_t n) {
  if (!qs_dequantize(t, p, src, dst, n)) qc_dequantize_exact(t, p, src, dst, n);
}

/* ---- tensor info -> params, and the public wrappers --------------------------------------- */

/* NULL when the structure of info->quant fits info, else the reason (formatted into buf).
 * Scale values are not judged here: see quant_scale_problem. */
static const char *quant_shape_problem(const htpu_tensor_info *info, char *buf, size_t len) {
  const htpu_quant *q = &info->quant;
  switch (q->kind) {
    case HTPU_QUANT_NONE:
    case HTPU_QUANT_PER_TENSOR:
      return NULL;
    case HTPU_QUANT_PER_AXIS:
      break;
    default:
      snprintf(buf, len, "unknown quantization kind %d", (int)q->kind);
      return buf;
  }
  if (info->rank > HTPU_MAX_RANK) {
    snprintf(buf, len, "rank %u exceeds %d", info->rank, HTPU_MAX_RANK);
  } else if (q->axis < 0 || (uint32_t)q->axis >= info->rank) {
    snprintf(buf, len, "per-axis quantization axis %d is out of range for rank %u", q->axis,
             info->rank);
  } else if (q->num_channels != info->dims[q->axis]) {
    snprintf(buf, len, "per-axis quantization has %u channels but dims[%d] is %u",
             q->num_channels, q->axis, info->dims[q->axis]);
  } else if (!q->scales || !q->zero_points) {
    snprintf(buf, len, "per-axis quantization without %s array",
             !q->scales ? "a scales" : "a zero_points");
  } else {
    return NULL;
  }
  return buf;
}

int qc_params_from_info(const htpu_tensor_info *info, qc_params *out) {
  char why[160];
  *out = (qc_params){NULL, NULL, 0, 1};
  if (!info || quant_shape_problem(info, why, sizeof why)) return -1;
  const htpu_quant *q = &info->quant;
  if (q->kind == HTPU_QUANT_PER_TENSOR) {
    *out = (qc_params){&q->scale, &q->zero_point, 1, 1};
  } else if (q->kind == HTPU_QUANT_PER_AXIS) {
    size_t inner = 1;
    for (uint32_t d = (uint32_t)q->axis + 1; d < info->rank; d++) inner *= info->dims[d];
    *out = (qc_params){q->scales, q->zero_points, q->num_channels, inner};
  }
  return 0;
}

static bool scale_ok(float s) { return isfinite(s) && s > 0.0f; }

/* A quantized tensor's scales must be finite and > 0: 0 would silently mean "unscaled" in
 * the kernels, and negative or non-finite scales have no meaning in QNN's scheme. */
static const char *quant_scale_problem(const htpu_quant *q, char *buf, size_t len) {
  if (q->kind == HTPU_QUANT_PER_TENSOR && !scale_ok(q->scale)) {
    snprintf(buf, len, "scale %g is not finite and > 0", (double)q->scale);
    return buf;
  }
  if (q->kind == HTPU_QUANT_PER_AXIS) {
    for (uint32_t c = 0; c < q->num_channels; c++) {
      if (!scale_ok(q->scales[c])) {
        snprintf(buf, len, "channel %u scale %g is not finite and > 0", c,
                 (double)q->scales[c]);
        return buf;
      }
    }
  }
  return NULL;
}

static int check_call(const char *fn, const htpu_tensor_info *info, const void *src,
                      const void *dst, qc_params *p) {
  if (!info) return htpu_set_error(HTPU_EINVAL, 0, "%s: tensor info is NULL", fn);
  const char *name = info->name ? info->name : "";
  if (!htpu_dtype_size(info->dtype))
    return htpu_set_error(HTPU_EINVAL, 0, "%s: tensor '%s': invalid dtype %d", fn, name,
                          (int)info->dtype);
  if (info->num_elements && (!src || !dst))
    return htpu_set_error(HTPU_EINVAL, 0, "%s: tensor '%s': %s buffer is NULL", fn, name,
                          !src ? "source" : "destination");
  char why[160];
  if (quant_shape_problem(info, why, sizeof why) ||
      quant_scale_problem(&info->quant, why, sizeof why))
    return htpu_set_error(HTPU_EINVAL, 0, "%s: tensor '%s': %s", fn, name, why);
  if (qc_params_from_info(info, p) != 0) /* cannot happen after the checks above */
    return htpu_set_error(HTPU_EINVAL, 0, "%s: tensor '%s': bad quantization", fn, name);
  return HTPU_OK;
}

int htpu_quantize(const htpu_tensor_info *info, const float *src, void *dst) {
  htpu_clear_error();
  qc_params p;
  int rc = check_call("htpu_quantize", info, src, dst, &p);
  if (rc) return rc;
  ptrdiff_t bad = qc_quantize(info->dtype, &p, src, dst, info->num_elements);
  if (bad >= 0)
    return htpu_set_error(HTPU_ENAN, 0,
                          "input '%s': element %td is NaN; NaN cannot be quantized to %s",
                          info->name ? info->name : "", bad, htpu_dtype_name(info->dtype));
  return HTPU_OK;
}

int htpu_dequantize(const htpu_tensor_info *info, const void *src, float *dst) {
  htpu_clear_error();
  qc_params p;
  int rc = check_call("htpu_dequantize", info, src, dst, &p);
  if (rc) return rc;
  qc_dequantize(info->dtype, &p, src, dst, info->num_elements);
  return HTPU_OK;
}
