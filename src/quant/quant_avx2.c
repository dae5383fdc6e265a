/*
 * quant_avx2.c - the quantization kernels (quant_kernels.h) for AVX2: 8 lanes, blocks of 32.
 *
 * Compiled with a target attribute on every function rather than -mavx2 for the file, so the
 * build needs no per-file flags and nothing else in the program can pick up AVX2 code; these
 * functions are reached only through qk_ops_avx2, which quant_simd.c selects after
 * __builtin_cpu_supports("avx2"). Primitive contracts: quant_sse2.c.
 */
#include "quant_simd.h"

#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#define QV_W 8
#define QK_FN __attribute__((target("avx2")))
#define QV QK_FN static inline
typedef __m256 qv_f;
typedef __m256i qv_i;
typedef __m256 qv_m;

QV qv_f qv_set1(float a) { return _mm256_set1_ps(a); }
QV qv_i qv_iset1(int32_t a) { return _mm256_set1_epi32(a); }
QV qv_f qv_load(const float *p) { return _mm256_loadu_ps(p); }
QV qv_i qv_iload(const int32_t *p) { return _mm256_loadu_si256((const void *)p); }
QV void qv_store(float *p, qv_f a) { _mm256_storeu_ps(p, a); }
QV qv_f qv_sub(qv_f a, qv_f b) { return _mm256_sub_ps(a, b); }
QV qv_f qv_mul(qv_f a, qv_f b) { return _mm256_mul_ps(a, b); }
QV qv_i qv_iadd(qv_i a, qv_i b) { return _mm256_add_epi32(a, b); }
QV qv_i qv_isub(qv_i a, qv_i b) { return _mm256_sub_epi32(a, b); }
QV qv_f qv_min(qv_f a, qv_f b) { return _mm256_min_ps(a, b); }
QV qv_f qv_max(qv_f a, qv_f b) { return _mm256_max_ps(a, b); }
QV qv_f qv_abs(qv_f a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
QV qv_i qv_round(qv_f a) { return _mm256_cvtps_epi32(a); }
QV qv_f qv_itof(qv_i a) { return _mm256_cvtepi32_ps(a); }
QV qv_m qv_ngt(qv_f a, qv_f b) { return _mm256_cmp_ps(a, b, _CMP_NGT_UQ); }
QV qv_m qv_isnan(qv_f a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
QV qv_m qv_mor(qv_m a, qv_m b) { return _mm256_or_ps(a, b); }
QV int qv_many(qv_m m) { return _mm256_movemask_ps(m) != 0; }

typedef struct qv_d2 {
  __m256d lo, hi;
} qv_d2;
QV qv_d2 qv_d2_set1(double a) { return (qv_d2){_mm256_set1_pd(a), _mm256_set1_pd(a)}; }
QV qv_d2 qv_d2_load(const double *p) {
  return (qv_d2){_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)};
}
QV qv_d2 qv_d2_cvt(qv_f a) {
  return (qv_d2){_mm256_cvtps_pd(_mm256_castps256_ps128(a)),
                 _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1))};
}

QV __m128i qv_exact4(__m256d x, __m256d w, __m256d lo, __m256d hi) {
  const __m256d grid = _mm256_set1_pd(0x1.8p26);
  __m256d t = _mm256_min_pd(hi, _mm256_max_pd(lo, _mm256_mul_pd(x, w)));
  return _mm256_cvtpd_epi32(_mm256_sub_pd(_mm256_add_pd(t, grid), grid));
}
QV qv_i qv_exact(qv_f x, qv_d2 w, qv_d2 lo, qv_d2 hi) {
  qv_d2 xd = qv_d2_cvt(x);
  return _mm256_set_m128i(qv_exact4(xd.hi, w.hi, lo.hi, hi.hi), qv_exact4(xd.lo, w.lo, lo.lo, hi.lo));
}

QV qv_d2 qv_d2_itod_u(qv_i a, int is_unsigned) {
  if (is_unsigned) a = _mm256_xor_si256(a, _mm256_set1_epi32(INT32_MIN)); /* see quant_sse2.c */
  qv_d2 d = {_mm256_cvtepi32_pd(_mm256_castsi256_si128(a)),
             _mm256_cvtepi32_pd(_mm256_extracti128_si256(a, 1))};
  if (is_unsigned) {
    d.lo = _mm256_add_pd(d.lo, _mm256_set1_pd(2147483648.0));
    d.hi = _mm256_add_pd(d.hi, _mm256_set1_pd(2147483648.0));
  }
  return d;
}
QV qv_d2 qv_d2_itod(qv_i a) { return qv_d2_itod_u(a, 0); }
QV qv_f qv_deq_double(qv_i q, qv_d2 zp, qv_d2 s, int is_unsigned) {
  qv_d2 d = qv_d2_itod_u(q, is_unsigned);
  __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(d.lo, zp.lo), s.lo));
  __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(d.hi, zp.hi), s.hi));
  return _mm256_set_m128(hi, lo);
}

/* The AVX2 packs work within each 128-bit half; a permute restores element order. */
QV void qv_store_block(int T, void *dst, const qv_i r[4]) {
  switch (T) {
    case QK_U8:
    case QK_I8: {
      __m256i ab = _mm256_packs_epi32(r[0], r[1]), cd = _mm256_packs_epi32(r[2], r[3]);
      __m256i b = T == QK_U8 ? _mm256_packus_epi16(ab, cd) : _mm256_packs_epi16(ab, cd);
      b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(dst, b);
      return;
    }
    case QK_U16:
    case QK_I16:
      QK_UNROLL
      for (int k = 0; k < 2; k++) {
        __m256i w = T == QK_U16 ? _mm256_packus_epi32(r[2 * k], r[2 * k + 1])
                                : _mm256_packs_epi32(r[2 * k], r[2 * k + 1]);
        _mm256_storeu_si256((void *)((unsigned char *)dst + 32 * k), _mm256_permute4x64_epi64(w, 0xd8));
      }
      return;
    default:
      QK_UNROLL
      for (int k = 0; k < 4; k++) _mm256_storeu_si256((void *)((unsigned char *)dst + 32 * k), r[k]);
      return;
  }
}

QV void qv_load_block(int T, const void *src, qv_i q[4]) {
  const unsigned char *b = src;
  QK_UNROLL
  for (int k = 0; k < 4; k++) {
    switch (T) {
      case QK_U8:
        q[k] = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const void *)(b + 8 * k)));
        break;
      case QK_I8:
        q[k] = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const void *)(b + 8 * k)));
        break;
      case QK_U16:
        q[k] = _mm256_cvtepu16_epi32(_mm_loadu_si128((const void *)(b + 16 * k)));
        break;
      case QK_I16:
        q[k] = _mm256_cvtepi16_epi32(_mm_loadu_si128((const void *)(b + 16 * k)));
        break;
      default:
        q[k] = _mm256_loadu_si256((const void *)(b + 32 * k));
        break;
    }
  }
}

#include "quant_kernels.h"

const qk_ops qk_ops_avx2 = QK_OPS("avx2");

#endif
