/*
 * hpass_packed.c - the horizontal pass straight from packed color rows (RGB24, BGR24, RGBA,
 * BGRA), both taps of a destination pixel from one 8-byte load, as OpenCV's own u8 kernel does
 * with v_dotprod: the two source pixels are adjacent (src1 = src0 + 1, or a weight of 0), so
 * bytes [c0 c1 c2 | c0' c1' c2'] are paired channel by channel with the pixel's weight pair and
 * multiplied-and-added in one instruction (SSE2 pmaddwd; NEON vmull + vpadd), giving the three
 * sums of the pixel at once. A pixel whose 8 bytes would reach past the frame's last byte takes
 * the scalar path, which gives the same integers.
 */
#include <string.h>

#include "vision.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

/* A weight of 0 comes with the frame's last column (OpenCV's clamp), whose neighbour may lie
 * past the end: it is not read. */
static void one_pixel(const uint8_t *p, unsigned bpp, uint32_t wp, int16_t *h) {
  int32_t w0 = (int16_t)(wp & 0xffff), w1 = (int16_t)(wp >> 16);
  for (int c = 0; c < 3; c++) h[c] = (int16_t)((p[c] * w0 + (w1 ? p[bpp + c] * w1 : 0)) >> 4);
}

#if defined(__SSE2__)
static uint32_t simd_pixels(const uint8_t *row, const uint32_t *off, const uint32_t *wp,
                            unsigned bpp, uint32_t n, int16_t *h) {
  const __m128i z = _mm_setzero_si128();
  for (uint32_t d = 0; d < n; d++) {
    __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)(row + off[d]));
    __m128i next = bpp == 3 ? _mm_srli_epi64(v, 24) : _mm_srli_epi64(v, 32);
    __m128i pairs = _mm_unpacklo_epi8(_mm_unpacklo_epi8(v, next), z);
    __m128i s = _mm_srai_epi32(_mm_madd_epi16(pairs, _mm_set1_epi32((int)wp[d])), 4);
    /* four sums stored, the fourth overwritten by the next pixel (the row has slack) */
    _mm_storel_epi64((__m128i *)(void *)(h + 3 * (size_t)d), _mm_packs_epi32(s, s));
  }
  return n;
}
#elif defined(__ARM_NEON) && defined(__aarch64__)
static uint32_t simd_pixels(const uint8_t *row, const uint32_t *off, const uint32_t *wp,
                            unsigned bpp, uint32_t n, int16_t *h) {
  for (uint32_t d = 0; d < n; d++) {
    uint8x8_t v = vld1_u8(row + off[d]);
    uint8x8_t next = bpp == 3 ? vext_u8(v, v, 3) : vext_u8(v, v, 4);
    int16x8_t pairs = vreinterpretq_s16_u16(vmovl_u8(vzip_u8(v, next).val[0]));
    int16x4_t w = vreinterpret_s16_u32(vdup_n_u32(wp[d]));
    int32x4_t lo = vmull_s16(vget_low_s16(pairs), w), hi = vmull_s16(vget_high_s16(pairs), w);
    int32x4_t s = vshrq_n_s32(vpaddq_s32(lo, hi), 4);
    vst1_s16(h + 3 * (size_t)d, vmovn_s32(s));
  }
  return n;
}
#else
static uint32_t simd_pixels(const uint8_t *row, const uint32_t *off, const uint32_t *wp,
                            unsigned bpp, uint32_t n, int16_t *h) {
  (void)row, (void)off, (void)wp, (void)bpp, (void)n, (void)h;
  return 0;
}
#endif

void vis_hpass_packed(const uint8_t *row, const uint8_t *end, const uint32_t *off,
                      const uint32_t *wp, unsigned bpp, uint32_t n, int16_t *h) {
  /* off grows with d: the pixels whose 8 bytes stay inside the frame come first */
  uint32_t safe = n;
  while (safe > 0 && row + off[safe - 1] + 8 > end) safe--;
  uint32_t d = simd_pixels(row, off, wp, bpp, safe, h);
  for (; d < n; d++) one_pixel(row + off[d], bpp, wp[d], h + 3 * (size_t)d);
}
