/*
 * quant_simd.h - the SIMD quantization kernels (internal to quant.c and quant_simd.c; they
 * fall back on quant_exact.c alone, never on quant.c).
 *
 * One implementation (quant_kernels.h) is compiled for SSE2 and AVX2 on x86-64 and for NEON on
 * aarch64; quant_simd.c picks one at run time and prepares the parameters. Every kernel is
 * bit-identical to the exact scalar code in quant_exact.c (the reference and the fallback): see
 * quant_kernels.h for why.
 */
#ifndef HTPU_QUANT_SIMD_H
#define HTPU_QUANT_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "quant.h"

/* The integer element types the kernels handle, in this order in every table. */
enum { QK_U8, QK_I8, QK_U16, QK_I16, QK_U32, QK_I32, QK_NTYPES };

/* The largest block any kernel uses (elements); pattern arrays are padded by this much. */
#define QK_MAX_BLOCK 32

/* The fast domain's bound on the scaled value (quant_kernels.h explains both constants). */
#define QK_LIMIT 0x1p21f
/* The near-tie window's factor: |x / scale - fl(x * fl(1 / scale))| < |that| * QK_K. */
#define QK_K 0x1.00001p-23f

/* For the kernels' loops over the 4 vectors of a block: unrolled, the vectors stay in
 * registers (GCC and clang both read this pragma). */
#define QK_UNROLL _Pragma("GCC unroll 4")

/* One channel's quantization, prepared by quant_simd.c (qs_prepare_channel). */
typedef struct qk_chan {
  float inv;    /* fl32(1 / scale), scale in [2^-100, 2^100] (1 when unscaled) */
  double invd;  /* fl64(1 / scale), for the exact step */
  float lo, hi; /* the integer bounds lo - zp, hi - zp of the rounded value; 32-bit types:
                 * clipped to +-QK_LIMIT (then exact in float) */
  float win;    /* 8-bit types: the near-tie window fl(max(|lo|, |hi|) * QK_K) */
  int32_t zp;
} qk_chan;

/* Per-lane parameters: flat element i of a call uses entry (phase + i) % period. Each array
 * holds period + QK_MAX_BLOCK entries (entry j >= period repeats entry j - period), so a block
 * never wraps inside; period >= the ISA's block. */
typedef struct qk_lanes {
  const double *invd;
  const float *inv, *lo, *hi;
  const int32_t *zp;
  float win; /* the largest of the channels' */
  size_t period;
} qk_lanes;

/* Dequantization parameters per lane, laid out as qk_lanes. */
typedef struct qk_deq_lanes {
  const float *scale;
  const int32_t *zp;
  size_t period;
} qk_deq_lanes;

/* Quantize n floats. Return the number of leading elements converted: n, or the start of the
 * first block (min(block, n - start) elements) that the kernel left alone because it holds a
 * NaN or a value beyond QK_LIMIT that is not saturated by a real bound. Everything before
 * that block is written. `l` NULL: every element uses `c`; else `c` is ignored and lane
 * parameters come from `l` starting at entry `phase`. */
typedef size_t (*qk_quant_fn)(const float *src, void *dst, size_t n, const qk_chan *c,
                              const qk_lanes *l, size_t phase);

/* Dequantize n elements: x = (float)(q - zp) * scale when !dbl (8/16-bit storage only), else
 * (float)(((double)q - zp) * scale): quant_exact.c's two formulas. `l` as for qk_quant_fn. */
typedef void (*qk_deq_fn)(const void *src, float *dst, size_t n, float scale, int32_t zp,
                          const qk_deq_lanes *l, size_t phase, int dbl);

typedef struct qk_ops {
  const char *name;
  size_t block; /* elements per block: <= QK_MAX_BLOCK */
  qk_quant_fn quant[QK_NTYPES];
  qk_deq_fn deq[QK_NTYPES];
} qk_ops;

/* Quantize with the selected kernels. 1: done, *nan_index = the first NaN's index or -1 (as
 * qc_quantize); 0: the parameters are outside the kernels' domain or no kernels are selected,
 * nothing was written. */
int qs_quantize(htpu_dtype t, const qc_params *p, const float *src, void *dst, size_t n,
                ptrdiff_t *nan_index);
/* Dequantize with the selected kernels. 1: done; 0: not handled, nothing written. */
int qs_dequantize(htpu_dtype t, const qc_params *p, const void *src, float *dst, size_t n);

#if defined(__x86_64__)
extern const qk_ops qk_ops_sse2;
extern const qk_ops qk_ops_avx2;
#endif
#if defined(__aarch64__)
extern const qk_ops qk_ops_neon;
#endif

#endif
