/*
 * quant_sse2.c - the quantization kernels (quant_kernels.h) for the x86-64 baseline, SSE2:
 * 4 lanes, blocks of 16. Also the reference list of the primitives every ISA file defines.
 */
#include "quant_simd.h"

#if defined(__x86_64__)

#include <emmintrin.h>
#include <string.h>

#define QV_W 4
#define QK_FN
typedef __m128 qv_f;
typedef __m128i qv_i;
typedef __m128 qv_m; /* all-ones / all-zeros lanes */

/* plain lane arithmetic, unaligned loads and stores (through void *: no alignment is
 * implied, and clang's -Wcast-align stays quiet) */
static inline qv_f qv_set1(float a) { return _mm_set1_ps(a); }
static inline qv_i qv_iset1(int32_t a) { return _mm_set1_epi32(a); }
static inline qv_f qv_load(const float *p) { return _mm_loadu_ps(p); }
static inline qv_i qv_iload(const int32_t *p) { return _mm_loadu_si128((const void *)p); }
static inline void qv_store(float *p, qv_f a) { _mm_storeu_ps(p, a); }
static inline qv_f qv_sub(qv_f a, qv_f b) { return _mm_sub_ps(a, b); }
static inline qv_f qv_mul(qv_f a, qv_f b) { return _mm_mul_ps(a, b); }
static inline qv_i qv_iadd(qv_i a, qv_i b) { return _mm_add_epi32(a, b); }
static inline qv_i qv_isub(qv_i a, qv_i b) { return _mm_sub_epi32(a, b); }
/* min/max; a NaN in b propagates (a NaN in a alone may not) */
static inline qv_f qv_min(qv_f a, qv_f b) { return _mm_min_ps(a, b); }
static inline qv_f qv_max(qv_f a, qv_f b) { return _mm_max_ps(a, b); }
static inline qv_f qv_abs(qv_f a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a); }
/* float -> int32 rounding half to even (the MXCSR default), for |a| < 2^31 */
static inline qv_i qv_round(qv_f a) { return _mm_cvtps_epi32(a); }
static inline qv_f qv_itof(qv_i a) { return _mm_cvtepi32_ps(a); }
/* !(a > b): true where a <= b or either is NaN; mask logic */
static inline qv_m qv_ngt(qv_f a, qv_f b) { return _mm_cmpngt_ps(a, b); }
static inline qv_m qv_isnan(qv_f a) { return _mm_cmpunord_ps(a, a); }
static inline qv_m qv_mor(qv_m a, qv_m b) { return _mm_or_ps(a, b); }
static inline int qv_many(qv_m m) { return _mm_movemask_ps(m) != 0; }

/* W doubles, as two halves */
typedef struct qv_d2 {
  __m128d lo, hi;
} qv_d2;
static inline qv_d2 qv_d2_set1(double a) { return (qv_d2){_mm_set1_pd(a), _mm_set1_pd(a)}; }
static inline qv_d2 qv_d2_load(const double *p) {
  return (qv_d2){_mm_loadu_pd(p), _mm_loadu_pd(p + 2)};
}
static inline qv_d2 qv_d2_cvt(qv_f a) {
  return (qv_d2){_mm_cvtps_pd(a), _mm_cvtps_pd(_mm_movehl_ps(a, a))};
}

/* The exact step (quant_kernels.h, 3): round_half_even(clamp(x * w, lo, hi)) in double, via
 * the 2^-26 grid; the conversion rounds half to even (MXCSR). */
static inline __m128i qv_exact2(__m128d x, __m128d w, __m128d lo, __m128d hi) {
  const __m128d grid = _mm_set1_pd(0x1.8p26);
  __m128d t = _mm_min_pd(hi, _mm_max_pd(lo, _mm_mul_pd(x, w)));
  return _mm_cvtpd_epi32(_mm_sub_pd(_mm_add_pd(t, grid), grid));
}
static inline qv_i qv_exact(qv_f x, qv_d2 w, qv_d2 lo, qv_d2 hi) {
  qv_d2 xd = qv_d2_cvt(x);
  return _mm_unpacklo_epi64(qv_exact2(xd.lo, w.lo, lo.lo, hi.lo),
                            qv_exact2(xd.hi, w.hi, lo.hi, hi.hi));
}

/* int32 lanes as doubles, exactly; unsigned: the lanes read as uint32 ((int32)(a ^ 2^31) +
 * 2^31) */
static inline qv_d2 qv_d2_itod_u(qv_i a, int is_unsigned) {
  if (is_unsigned) a = _mm_xor_si128(a, _mm_set1_epi32(INT32_MIN));
  qv_d2 d = {_mm_cvtepi32_pd(a), _mm_cvtepi32_pd(_mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)))};
  if (is_unsigned) {
    d.lo = _mm_add_pd(d.lo, _mm_set1_pd(2147483648.0));
    d.hi = _mm_add_pd(d.hi, _mm_set1_pd(2147483648.0));
  }
  return d;
}
static inline qv_d2 qv_d2_itod(qv_i a) { return qv_d2_itod_u(a, 0); }

/* quant.c's double dequantize formula, (float)(((double)q - zp) * s) */
static inline qv_f qv_deq_double(qv_i q, qv_d2 zp, qv_d2 s, int is_unsigned) {
  qv_d2 d = qv_d2_itod_u(q, is_unsigned);
  __m128d lo = _mm_mul_pd(_mm_sub_pd(d.lo, zp.lo), s.lo);
  __m128d hi = _mm_mul_pd(_mm_sub_pd(d.hi, zp.hi), s.hi);
  return _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi));
}

/* Stores 4 vectors of in-range int32 as 16 elements of type T. SSE2 has no unsigned 32->16
 * pack, so u16 goes through a signed pack of values biased by -32768. */
static inline void qv_store_block(int T, void *dst, const qv_i r[4]) {
  switch (T) {
    case QK_U8:
      _mm_storeu_si128(dst, _mm_packus_epi16(_mm_packs_epi32(r[0], r[1]),
                                             _mm_packs_epi32(r[2], r[3])));
      return;
    case QK_I8:
      _mm_storeu_si128(dst, _mm_packs_epi16(_mm_packs_epi32(r[0], r[1]),
                                            _mm_packs_epi32(r[2], r[3])));
      return;
    case QK_U16: {
      __m128i bias = _mm_set1_epi32(32768), flip = _mm_set1_epi16(INT16_MIN);
      QK_UNROLL
      for (int k = 0; k < 2; k++) {
        __m128i v = _mm_packs_epi32(_mm_sub_epi32(r[2 * k], bias), _mm_sub_epi32(r[2 * k + 1], bias));
        _mm_storeu_si128((void *)((unsigned char *)dst + 16 * k), _mm_xor_si128(v, flip));
      }
      return;
    }
    case QK_I16:
      _mm_storeu_si128(dst, _mm_packs_epi32(r[0], r[1]));
      _mm_storeu_si128((void *)((unsigned char *)dst + 16), _mm_packs_epi32(r[2], r[3]));
      return;
    default: /* 32-bit: the bits of r + zp, which wrap to the right u32 */
      QK_UNROLL
      for (int k = 0; k < 4; k++) _mm_storeu_si128((void *)((unsigned char *)dst + 16 * k), r[k]);
      return;
  }
}

/* Loads 16 elements of type T as 4 vectors of int32. */
static inline void qv_load_block(int T, const void *src, qv_i q[4]) {
  __m128i z = _mm_setzero_si128();
  switch (T) {
    case QK_U8: {
      __m128i b = _mm_loadu_si128(src);
      __m128i lo = _mm_unpacklo_epi8(b, z), hi = _mm_unpackhi_epi8(b, z);
      q[0] = _mm_unpacklo_epi16(lo, z);
      q[1] = _mm_unpackhi_epi16(lo, z);
      q[2] = _mm_unpacklo_epi16(hi, z);
      q[3] = _mm_unpackhi_epi16(hi, z);
      return;
    }
    case QK_I8: {
      /* each byte to the top of its 32-bit lane, then shifted down with its sign */
      __m128i b = _mm_loadu_si128(src);
      __m128i lo = _mm_unpacklo_epi8(z, b), hi = _mm_unpackhi_epi8(z, b);
      q[0] = _mm_srai_epi32(_mm_unpacklo_epi16(z, lo), 24);
      q[1] = _mm_srai_epi32(_mm_unpackhi_epi16(z, lo), 24);
      q[2] = _mm_srai_epi32(_mm_unpacklo_epi16(z, hi), 24);
      q[3] = _mm_srai_epi32(_mm_unpackhi_epi16(z, hi), 24);
      return;
    }
    case QK_U16:
    case QK_I16:
      QK_UNROLL
      for (int k = 0; k < 2; k++) {
        __m128i w = _mm_loadu_si128((const void *)((const unsigned char *)src + 16 * k));
        if (T == QK_U16) {
          q[2 * k] = _mm_unpacklo_epi16(w, z);
          q[2 * k + 1] = _mm_unpackhi_epi16(w, z);
        } else {
          q[2 * k] = _mm_srai_epi32(_mm_unpacklo_epi16(z, w), 16);
          q[2 * k + 1] = _mm_srai_epi32(_mm_unpackhi_epi16(z, w), 16);
        }
      }
      return;
    default:
      QK_UNROLL
      for (int k = 0; k < 4; k++) q[k] = _mm_loadu_si128((const void *)((const unsigned char *)src + 16 * k));
      return;
  }
}

#include "quant_kernels.h"

const qk_ops qk_ops_sse2 = QK_OPS("sse2");

#endif
