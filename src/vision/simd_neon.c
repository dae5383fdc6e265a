/*
 * simd_neon.c - the vector kernels of the fast rows for aarch64 (NEON, always there): what
 * simd_x86.c does with SSSE3, in the same arithmetic (its comment), with NEON's structure loads
 * and stores doing the (de)interleaving: vld3/vst3 for RGB24, vld4 for RGBA and YUYV, vld2 for
 * NV12's U, V pairs. The products are 32-bit lanes (vmulq/vmlaq by the whole constant), exact.
 * On other architectures every kernel does nothing and the scalar code runs.
 */
#include <stdatomic.h>
#include <string.h>

#include "vision.h"

#if defined(__aarch64__)
#include <arm_neon.h>

static atomic_int g_off; /* vis_simd_select("none"): the tests' scalar runs */

static int off(void) { return atomic_load_explicit(&g_off, memory_order_relaxed); }

/* 4 lanes of (yt + a) >> 20 as int16. */
static inline int16x4_t sum20(int32x4_t yt, int32x4_t a) {
  return vqmovn_s32(vshrq_n_s32(vaddq_s32(yt, a), 20));
}

/* 8 pixels: y (Y - 16 saturated), u, v (-128..127) as int16 -> R, G, B bytes (saturated). */
static inline void core8(int16x8_t y, int16x8_t u, int16x8_t v, uint8x8_t *r, uint8x8_t *g,
                         uint8x8_t *b) {
  int16x4_t rr[2], gg[2], bb[2];
  for (int k = 0; k < 2; k++) {
    int32x4_t y32 = vmovl_s16(k ? vget_high_s16(y) : vget_low_s16(y));
    int32x4_t u32 = vmovl_s16(k ? vget_high_s16(u) : vget_low_s16(u));
    int32x4_t v32 = vmovl_s16(k ? vget_high_s16(v) : vget_low_s16(v));
    int32x4_t yt = vmlaq_n_s32(vdupq_n_s32(1 << 19), y32, VIS_CY);
    rr[k] = sum20(yt, vmulq_n_s32(v32, VIS_CRV));
    gg[k] = sum20(yt, vmlaq_n_s32(vmulq_n_s32(u32, VIS_CGU), v32, VIS_CGV));
    bb[k] = sum20(yt, vmulq_n_s32(u32, VIS_CBU));
  }
  *r = vqmovun_s16(vcombine_s16(rr[0], rr[1]));
  *g = vqmovun_s16(vcombine_s16(gg[0], gg[1]));
  *b = vqmovun_s16(vcombine_s16(bb[0], bb[1]));
}

static inline int16x8_t centred(uint8x8_t c) {
  return vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(c)), vdupq_n_s16(128));
}

/* 16 pixels: Y, U, V bytes -> 48 bytes of RGB24. */
static inline void convert16(uint8x16_t y, uint8x16_t u, uint8x16_t v, uint8_t *out) {
  uint8x16_t ys = vqsubq_u8(y, vdupq_n_u8(16));
  uint8x8x3_t lo, hi;
  core8(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(ys))), centred(vget_low_u8(u)),
        centred(vget_low_u8(v)), &lo.val[0], &lo.val[1], &lo.val[2]);
  core8(vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(ys))), centred(vget_high_u8(u)),
        centred(vget_high_u8(v)), &hi.val[0], &hi.val[1], &hi.val[2]);
  uint8x16x3_t o = {{vcombine_u8(lo.val[0], hi.val[0]), vcombine_u8(lo.val[1], hi.val[1]),
                     vcombine_u8(lo.val[2], hi.val[2])}};
  vst3q_u8(out, o);
}

/* Each byte twice: a, a, b, b, ... */
static inline uint8x16_t twice(uint8x8_t c) {
  uint8x8x2_t z = vzip_u8(c, c);
  return vcombine_u8(z.val[0], z.val[1]);
}

int vis_simd_select(const char *name) {
  atomic_store(&g_off, strcmp(name, "none") == 0);
  return 0;
}

uint32_t vis_simd_yuv_pixels(const uint8_t *y, const uint8_t *u, const uint8_t *v, uint32_t n,
                             uint8_t *rgb) {
  uint32_t i = 0;
  if (off()) return 0;
  for (; i + 16 <= n; i += 16)
    convert16(vld1q_u8(y + i), vld1q_u8(u + i), vld1q_u8(v + i), rgb + 3 * (size_t)i);
  return i;
}

uint32_t vis_simd_nv12_row(const uint8_t *y, const uint8_t *uv, uint32_t n, uint8_t *rgb) {
  uint32_t i = 0;
  if (off()) return 0;
  for (; i + 16 <= n; i += 16) {
    uint8x8x2_t c = vld2_u8(uv + i);
    convert16(vld1q_u8(y + i), twice(c.val[0]), twice(c.val[1]), rgb + 3 * (size_t)i);
  }
  return i;
}

uint32_t vis_simd_yuyv_row(const uint8_t *row, uint32_t n, uint8_t *rgb) {
  uint32_t i = 0;
  if (off()) return 0;
  for (; i + 16 <= n; i += 16) {
    uint8x8x4_t q = vld4_u8(row + 2 * (size_t)i); /* Y0, U, Y1, V of 8 pixel pairs */
    uint8x8x2_t y = vzip_u8(q.val[0], q.val[2]);
    convert16(vcombine_u8(y.val[0], y.val[1]), twice(q.val[1]), twice(q.val[3]),
              rgb + 3 * (size_t)i);
  }
  return i;
}

/* Pairs of one channel's bytes summed across two rows, (sum + 2) >> 2. */
static inline uint8x8_t box(uint8x16_t a, uint8x16_t b) {
  return vrshrn_n_u16(vpadalq_u8(vpaddlq_u8(a), b), 2);
}

uint32_t vis_simd_half_packed(const uint8_t *r0, const uint8_t *r1, unsigned bpp, uint32_t n,
                              uint8_t *out) {
  uint32_t d = 0;
  if (off()) return 0;
  for (; d + 8 <= n; d += 8) {
    size_t at = (size_t)d * 2 * bpp;
    uint8x8x3_t o;
    if (bpp == 3) {
      uint8x16x3_t a = vld3q_u8(r0 + at), b = vld3q_u8(r1 + at);
      for (int c = 0; c < 3; c++) o.val[c] = box(a.val[c], b.val[c]);
    } else {
      uint8x16x4_t a = vld4q_u8(r0 + at), b = vld4q_u8(r1 + at);
      for (int c = 0; c < 3; c++) o.val[c] = box(a.val[c], b.val[c]);
    }
    vst3_u8(out + 3 * (size_t)d, o);
  }
  return d;
}

#elif !defined(__x86_64__)
int vis_simd_select(const char *name) { return strcmp(name, "none") == 0 ? 0 : -1; }

uint32_t vis_simd_yuv_pixels(const uint8_t *y, const uint8_t *u, const uint8_t *v, uint32_t n,
                             uint8_t *rgb) {
  (void)y, (void)u, (void)v, (void)n, (void)rgb;
  return 0;
}

uint32_t vis_simd_nv12_row(const uint8_t *y, const uint8_t *uv, uint32_t n, uint8_t *rgb) {
  (void)y, (void)uv, (void)n, (void)rgb;
  return 0;
}

uint32_t vis_simd_yuyv_row(const uint8_t *row, uint32_t n, uint8_t *rgb) {
  (void)row, (void)n, (void)rgb;
  return 0;
}

uint32_t vis_simd_half_packed(const uint8_t *r0, const uint8_t *r1, unsigned bpp, uint32_t n,
                              uint8_t *out) {
  (void)r0, (void)r1, (void)bpp, (void)n, (void)out;
  return 0;
}
#endif
