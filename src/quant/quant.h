/*
 * quant.h - quantization kernels shared by the core (graph I/O) and the reference
 * interpreter. The exact path is quant_exact.c, the SIMD kernels quant_simd.c; quant.c
 * dispatches between them and holds the public wrappers htpu_quantize/htpu_dequantize.
 *
 * Rules (QNN's affine scheme, float = (q - zero_point) * scale):
 *  - f32 -> integer: q = round_half_even(x / scale) + zero_point, saturated to the type's range;
 *    +-Inf saturate to the range ends; NaN is an error.
 *  - f32 -> f16: round to nearest even; finite values beyond f16's range and +-Inf saturate to
 *    +-65504; NaN is an error.
 *  - scale == 0 (plain integer tensor): q = round_half_even(x), saturated.
 */
#ifndef HTPU_QUANT_H
#define HTPU_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"

/* Per-tensor: channels = 1. Per-axis over a row-major tensor: element i belongs to channel
 * (i / inner) % channels, where inner is the product of the dims after the axis. */
typedef struct qc_params {
  const float *scales;       /* `channels` entries; NULL = no scaling (plain numeric cast) */
  const int32_t *zero_points; /* `channels` entries; NULL = all zero */
  size_t channels;
  size_t inner;
} qc_params;

/* Converts n floats into dtype `t` (any htpu_dtype except INVALID; F32 copies, F16 converts).
 * Returns -1 on success, else the index of the first NaN element (nothing after it is
 * guaranteed to be written). */
ptrdiff_t qc_quantize(htpu_dtype t, const qc_params *p, const float *src, void *dst, size_t n);

/* Converts n elements of dtype `t` into floats. */
void qc_dequantize(htpu_dtype t, const qc_params *p, const void *src, float *dst, size_t n);

/* The exact scalar path alone: the reference every SIMD kernel equals bit for bit, and their
 * fallback. qc_quantize_at converts src[0, n) where src[0] is flat element `base` of the tensor
 * (which matters for per-axis parameters); the returned NaN index is relative to src. */
ptrdiff_t qc_quantize_exact(htpu_dtype t, const qc_params *p, const float *src, void *dst,
                            size_t n);
ptrdiff_t qc_quantize_at(htpu_dtype t, const qc_params *p, const float *src, void *dst, size_t n,
                         size_t base);
void qc_dequantize_exact(htpu_dtype t, const qc_params *p, const void *src, float *dst, size_t n);

/* The SIMD kernels qc_quantize/qc_dequantize use (quant_simd.c): "avx2", "sse2", "neon", or
 * "none" (the exact path only). Chosen once from the CPU; qc_simd_select overrides it for
 * tests and benchmarks ("auto" = the CPU's choice again): 0, or -1 when this build or CPU
 * has no such kernels. Not meant to be called while conversions run on other threads. */
const char *qc_simd_name(void);
int qc_simd_select(const char *name);
/* Process-wide counts since start: elements the SIMD kernels converted (both directions), and
 * elements of kernel-eligible quantize calls the exact path did instead (a block with a NaN or
 * beyond the fast domain, a channel outside it). For tests: proof the kernels ran. */
void qc_simd_counters(uint64_t *kernel, uint64_t *fallback);

/* Builds qc_params from a tensor info (per-tensor, per-axis or none). Returns 0, or -1 when the
 * per-axis description does not fit the dims (axis out of range, channel count != dims[axis]). */
int qc_params_from_info(const htpu_tensor_info *info, qc_params *out);

#endif
