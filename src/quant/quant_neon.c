/*
 * quant_neon.c - the quantization kernels (quant_kernels.h) for aarch64 Advanced SIMD (NEON,
 * part of every ARMv8-A core): 4 lanes, blocks of 16. Primitive contracts: quant_sse2.c.
 *
 * AArch64 NEON float arithmetic is IEEE (subnormals kept unless FPCR.FZ is set, which Linux
 * leaves clear); FCVTNS rounds to nearest with ties to even whatever the FPCR mode.
 */
#include "quant_simd.h"

#if defined(__aarch64__)

#include <arm_neon.h>
#include <string.h>

#define QV_W 4
#define QK_FN
typedef float32x4_t qv_f;
typedef int32x4_t qv_i;
typedef uint32x4_t qv_m;

static inline qv_f qv_set1(float a) { return vdupq_n_f32(a); }
static inline qv_i qv_iset1(int32_t a) { return vdupq_n_s32(a); }
static inline qv_f qv_load(const float *p) { return vld1q_f32(p); }
static inline qv_i qv_iload(const int32_t *p) { return vld1q_s32(p); }
static inline void qv_store(float *p, qv_f a) { vst1q_f32(p, a); }
static inline qv_f qv_sub(qv_f a, qv_f b) { return vsubq_f32(a, b); }
static inline qv_f qv_mul(qv_f a, qv_f b) { return vmulq_f32(a, b); }
static inline qv_i qv_iadd(qv_i a, qv_i b) { return vaddq_s32(a, b); }
static inline qv_i qv_isub(qv_i a, qv_i b) { return vsubq_s32(a, b); }
static inline qv_f qv_min(qv_f a, qv_f b) { return vminq_f32(a, b); } /* NaN propagates */
static inline qv_f qv_max(qv_f a, qv_f b) { return vmaxq_f32(a, b); }
static inline qv_f qv_abs(qv_f a) { return vabsq_f32(a); }
static inline qv_i qv_round(qv_f a) { return vcvtnq_s32_f32(a); }
static inline qv_f qv_itof(qv_i a) { return vcvtq_f32_s32(a); }
static inline qv_m qv_ngt(qv_f a, qv_f b) { return vmvnq_u32(vcgtq_f32(a, b)); }
static inline qv_m qv_isnan(qv_f a) { return vmvnq_u32(vceqq_f32(a, a)); }
static inline qv_m qv_mor(qv_m a, qv_m b) { return vorrq_u32(a, b); }
static inline int qv_many(qv_m m) { return vmaxvq_u32(m) != 0; }

typedef struct qv_d2 {
  float64x2_t lo, hi;
} qv_d2;
static inline qv_d2 qv_d2_set1(double a) { return (qv_d2){vdupq_n_f64(a), vdupq_n_f64(a)}; }
static inline qv_d2 qv_d2_load(const double *p) { return (qv_d2){vld1q_f64(p), vld1q_f64(p + 2)}; }
static inline qv_d2 qv_d2_cvt(qv_f a) {
  return (qv_d2){vcvt_f64_f32(vget_low_f32(a)), vcvt_high_f64_f32(a)};
}

/* FCVTNS rounds half to even */
static inline int32x2_t qv_exact2(float64x2_t x, float64x2_t w, float64x2_t lo, float64x2_t hi) {
  const float64x2_t grid = vdupq_n_f64(0x1.8p26);
  float64x2_t t = vminq_f64(hi, vmaxq_f64(lo, vmulq_f64(x, w)));
  return vmovn_s64(vcvtnq_s64_f64(vsubq_f64(vaddq_f64(t, grid), grid)));
}
static inline qv_i qv_exact(qv_f x, qv_d2 w, qv_d2 lo, qv_d2 hi) {
  qv_d2 xd = qv_d2_cvt(x);
  return vcombine_s32(qv_exact2(xd.lo, w.lo, lo.lo, hi.lo), qv_exact2(xd.hi, w.hi, lo.hi, hi.hi));
}

static inline qv_d2 qv_d2_itod(qv_i a) {
  return (qv_d2){vcvtq_f64_s64(vmovl_s32(vget_low_s32(a))), vcvtq_f64_s64(vmovl_high_s32(a))};
}
static inline qv_f qv_deq_double(qv_i q, qv_d2 zp, qv_d2 s, int is_unsigned) {
  qv_d2 d;
  if (is_unsigned) {
    uint32x4_t u = vreinterpretq_u32_s32(q);
    d = (qv_d2){vcvtq_f64_u64(vmovl_u32(vget_low_u32(u))), vcvtq_f64_u64(vmovl_high_u32(u))};
  } else {
    d = qv_d2_itod(q);
  }
  float64x2_t lo = vmulq_f64(vsubq_f64(d.lo, zp.lo), s.lo);
  float64x2_t hi = vmulq_f64(vsubq_f64(d.hi, zp.hi), s.hi);
  return vcvt_high_f32_f64(vcvt_f32_f64(lo), hi);
}

/* In-range int32 lanes narrow by truncation, signed or not. */
static inline void qv_store_block(int T, void *dst, const qv_i r[4]) {
  switch (T) {
    case QK_U8:
    case QK_I8: {
      int16x8_t ab = vcombine_s16(vmovn_s32(r[0]), vmovn_s32(r[1]));
      int16x8_t cd = vcombine_s16(vmovn_s32(r[2]), vmovn_s32(r[3]));
      vst1q_s8(dst, vcombine_s8(vmovn_s16(ab), vmovn_s16(cd)));
      return;
    }
    case QK_U16:
    case QK_I16:
      vst1q_s16(dst, vcombine_s16(vmovn_s32(r[0]), vmovn_s32(r[1])));
      vst1q_s16((int16_t *)dst + 8, vcombine_s16(vmovn_s32(r[2]), vmovn_s32(r[3])));
      return;
    default:
      QK_UNROLL
      for (int k = 0; k < 4; k++) vst1q_s32((int32_t *)dst + 4 * k, r[k]);
      return;
  }
}

static inline void qv_load_block(int T, const void *src, qv_i q[4]) {
  switch (T) {
    case QK_U8: {
      uint8x16_t b = vld1q_u8(src);
      uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_high_u8(b);
      q[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
      q[1] = vreinterpretq_s32_u32(vmovl_high_u16(lo));
      q[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
      q[3] = vreinterpretq_s32_u32(vmovl_high_u16(hi));
      return;
    }
    case QK_I8: {
      int8x16_t b = vld1q_s8(src);
      int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_high_s8(b);
      q[0] = vmovl_s16(vget_low_s16(lo));
      q[1] = vmovl_high_s16(lo);
      q[2] = vmovl_s16(vget_low_s16(hi));
      q[3] = vmovl_high_s16(hi);
      return;
    }
    case QK_U16:
      QK_UNROLL
      for (int k = 0; k < 2; k++) {
        uint16x8_t w = vld1q_u16((const uint16_t *)src + 8 * k);
        q[2 * k] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(w)));
        q[2 * k + 1] = vreinterpretq_s32_u32(vmovl_high_u16(w));
      }
      return;
    case QK_I16:
      QK_UNROLL
      for (int k = 0; k < 2; k++) {
        int16x8_t w = vld1q_s16((const int16_t *)src + 8 * k);
        q[2 * k] = vmovl_s16(vget_low_s16(w));
        q[2 * k + 1] = vmovl_high_s16(w);
      }
      return;
    default:
      QK_UNROLL
      for (int k = 0; k < 4; k++) q[k] = vld1q_s32((const int32_t *)src + 4 * k);
      return;
  }
}

#include "quant_kernels.h"

const qk_ops qk_ops_neon = QK_OPS("neon");

#endif
