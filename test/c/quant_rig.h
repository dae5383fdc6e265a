/*
 * quant_rig.h - what the quantization tests (test_quant_*.c but test_quant_simd.c) share:
 * references for the kernels of src/quant.c written here independently. Quantization is
 * decided with exact integer arithmetic on the floats' significands (__int128
 * numerator/denominator, remainder compared with half the divisor), dequantization and f16
 * rounding likewise, so the references depend on neither the FPU rounding of a quotient nor
 * long double (valgrind emulates x87 long double as double).
 */
#ifndef HTPU_TEST_QUANT_RIG_H
#define HTPU_TEST_QUANT_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"

/* The quantized integer types: u8, i8, u16, i16, u32, i32. */
extern const htpu_dtype k_int_types[6];
#define N_INT_TYPES (sizeof k_int_types / sizeof k_int_types[0])

/* A type's range, and element i of a buffer of that type. */
int64_t type_lo(htpu_dtype t);
int64_t type_hi(htpu_dtype t);
int64_t load_int(htpu_dtype t, const void *buf, size_t i);
void store_int(htpu_dtype t, void *buf, size_t i, int64_t v);

/* A float's bits and back. */
uint32_t fbits(float f);
float bitsf(uint32_t u);

/* Deterministic xorshift, one stream for all these tests, so failures reproduce. A full run
 * draws from it in file order (from_f32, per_axis, to_f32, to_half), as the tests did when
 * they were one file. */
uint64_t rnd(void);
float rnd_float_any(void); /* any non-NaN bit pattern */

/* A float's magnitude as integer significand * 2^exp (significand < 2^24). */
void decompose(float f, int64_t *sig, int *exp);

/* round_half_even(x / s) for finite x and finite s > 0, exactly; magnitudes beyond 2^40 come
 * back as +-2^40 (every caller saturates to 32 bits anyway). */
int64_t ref_div_rne(float x, float s);
/* The spec: saturate(round_half_even(x / scale) + zp), scale 0 = unscaled; x not NaN. */
int64_t ref_quant(htpu_dtype t, float x, float scale, int32_t zp);

/* (q - zp) * S * 2^es rounded once to float, scale already decomposed. */
float ref_dequant_se(int64_t q, int64_t S, int es, int32_t zp);
/* (q - zp) * scale rounded once to float; scale 0 = unscaled. */
float ref_dequant(int64_t q, float scale, int32_t zp);
/* What quant.c documents: exact (one rounding) while |q - zp| < 2^29, beyond that
 * (float)((double)(q - zp) * scale), whose double product may itself round. */
float ref_dequant_doc(int64_t q, float scale, int32_t zp);

/* f16 decoded with ldexp, independent of the bit tricks in quant.c. */
double ref_f16_value(uint16_t h);
/* f32 -> f16 by searching the (monotonic) positive f16 values for the nearest, ties to the
 * even encoding, and saturating at 65504. x not NaN. */
uint16_t ref_f16_encode(float x);

/* Per-tensor parameters pointing at one scale and one zero point. */
qc_params per_tensor(const float *scale, const int32_t *zp);

#endif
