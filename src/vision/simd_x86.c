/*
 * simd_x86.c - the vector kernels of the fast rows: YUV -> RGB for 32 pixels at a time, and the
 * exact 2x box of packed color rows. Each returns how many pixels it did (0 on a CPU without
 * its instructions); yuv.c and rows.c do the rest with the scalar code, which gives the same
 * bytes (test_vision_simd.c compares them over every Y, U, V).
 *
 * YUV -> RGB is OpenCV's 20-bit fixed point (fetch.c), exact in 32-bit lanes: each product
 * x * C with |C| up to 2^21 is one pmaddwd of the pair (x << 7, x) with the pair
 * (C >> 7, C & 127): x << 7 and both halves of C fit int16 for x in -128..239. The sums
 * are shifted right by 20 (floor, as OpenCV's >>), then saturated to 0..255 by the two packs.
 *
 * The 2x box: at an exact 2x downscale INTER_LINEAR's weights are (1/2, 1/2) on both axes, and
 * OpenCV's two roundings reduce to (a + b + c + d + 2) >> 2 of the four pixels (vpass.c's
 * sums are then multiples of 64), the same as its INTER_AREA fast path.
 *
 * Here for x86-64, through target attributes, chosen at first use after __builtin_cpu_supports
 * (as quant_simd.c does): AVX2 for YUV (two 16-pixel blocks a step, one in each 128-bit lane,
 * so the in-lane unpacks and pshufb work as in 128 bits), SSSE3 for the box. simd_neon.c is
 * aarch64's.
 */
#include <stdatomic.h>
#include <string.h>

#include "vision.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define FN __attribute__((target("ssse3")))
#define FN2 __attribute__((target("avx2")))
#define INL inline __attribute__((always_inline))

/* ---- YUV -> RGB, AVX2: 32 pixels a step, each 128-bit lane holding 16 of them -------------- */

/* The pair constant of C for pmaddwd: the low lane (x << 7) takes C_H, the high lane (x) C_L. */
static INL FN2 __m256i kpair(int32_t c) {
  return _mm256_set1_epi32((int)((uint32_t)(uint16_t)VIS_C_L(c) << 16 | (uint16_t)VIS_C_H(c)));
}

static INL FN2 __m256i sum20(__m256i a, __m256i b) {
  return _mm256_srai_epi32(_mm256_add_epi32(a, b), 20);
}

/* 8 pixels a lane: y (Y - 16 saturated), u and v (-128..127) as int16 -> R, G, B as int16. */
static INL FN2 void core(__m256i y, __m256i u, __m256i v, __m256i *r, __m256i *g, __m256i *b) {
  __m256i y7 = _mm256_slli_epi16(y, 7), u7 = _mm256_slli_epi16(u, 7);
  __m256i v7 = _mm256_slli_epi16(v, 7), half = _mm256_set1_epi32(1 << 19);
  __m256i yl = _mm256_unpacklo_epi16(y7, y), yh = _mm256_unpackhi_epi16(y7, y);
  __m256i ul = _mm256_unpacklo_epi16(u7, u), uh = _mm256_unpackhi_epi16(u7, u);
  __m256i vl = _mm256_unpacklo_epi16(v7, v), vh = _mm256_unpackhi_epi16(v7, v);
  __m256i ytl = _mm256_add_epi32(_mm256_madd_epi16(yl, kpair(VIS_CY)), half);
  __m256i yth = _mm256_add_epi32(_mm256_madd_epi16(yh, kpair(VIS_CY)), half);
  *r = _mm256_packs_epi32(sum20(ytl, _mm256_madd_epi16(vl, kpair(VIS_CRV))),
                          sum20(yth, _mm256_madd_epi16(vh, kpair(VIS_CRV))));
  __m256i gl = _mm256_add_epi32(_mm256_madd_epi16(ul, kpair(VIS_CGU)),
                                _mm256_madd_epi16(vl, kpair(VIS_CGV)));
  __m256i gh = _mm256_add_epi32(_mm256_madd_epi16(uh, kpair(VIS_CGU)),
                                _mm256_madd_epi16(vh, kpair(VIS_CGV)));
  *g = _mm256_packs_epi32(sum20(ytl, gl), sum20(yth, gh));
  *b = _mm256_packs_epi32(sum20(ytl, _mm256_madd_epi16(ul, kpair(VIS_CBU))),
                          sum20(yth, _mm256_madd_epi16(uh, kpair(VIS_CBU))));
}

/* pshufb masks: output byte j of block k of RGB24 takes byte (16k + j) / 3 of plane
 * (16k + j) % 3 (R, G, B); 0x80 (zero) elsewhere. Each lane's 16 pixels alike. */
#define X 0x80
#define M(...) {__VA_ARGS__, __VA_ARGS__}
static const uint8_t g_ilv[3][3][32] = {
    {M(0, X, X, 1, X, X, 2, X, X, 3, X, X, 4, X, X, 5),
     M(X, 0, X, X, 1, X, X, 2, X, X, 3, X, X, 4, X, X),
     M(X, X, 0, X, X, 1, X, X, 2, X, X, 3, X, X, 4, X)},
    {M(X, X, 6, X, X, 7, X, X, 8, X, X, 9, X, X, 10, X),
     M(5, X, X, 6, X, X, 7, X, X, 8, X, X, 9, X, X, 10),
     M(X, 5, X, X, 6, X, X, 7, X, X, 8, X, X, 9, X, X)},
    {M(X, 11, X, X, 12, X, X, 13, X, X, 14, X, X, 15, X, X),
     M(X, X, 11, X, X, 12, X, X, 13, X, X, 14, X, X, 15, X),
     M(10, X, X, 11, X, X, 12, X, X, 13, X, X, 14, X, X, 15)}};
#undef M
#undef X

static INL FN2 __m256i load32(const uint8_t *p) {
  return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

static INL FN2 __m256i ilv(__m256i r, __m256i g, __m256i b, int k) {
  return _mm256_or_si256(
      _mm256_or_si256(_mm256_shuffle_epi8(r, load32(g_ilv[k][0])),
                      _mm256_shuffle_epi8(g, load32(g_ilv[k][1]))),
      _mm256_shuffle_epi8(b, load32(g_ilv[k][2])));
}

/* 32 pixels: Y - 16 as int16 (pixels 0-7 of each lane in yl, 8-15 in yh) and U, V bytes alike
 * as int16 -> 96 bytes of RGB24 at out (lane 0's 16 pixels, then lane 1's). */
static INL FN2 void convert32(__m256i yl, __m256i yh, __m256i ul, __m256i uh, __m256i vl,
                              __m256i vh, uint8_t *out) {
  const __m256i c128 = _mm256_set1_epi16(128);
  __m256i r0, g0, b0, r1, g1, b1;
  core(yl, _mm256_sub_epi16(ul, c128), _mm256_sub_epi16(vl, c128), &r0, &g0, &b0);
  core(yh, _mm256_sub_epi16(uh, c128), _mm256_sub_epi16(vh, c128), &r1, &g1, &b1);
  __m256i R = _mm256_packus_epi16(r0, r1), G = _mm256_packus_epi16(g0, g1);
  __m256i B = _mm256_packus_epi16(b0, b1);
  __m256i o0 = ilv(R, G, B, 0), o1 = ilv(R, G, B, 1), o2 = ilv(R, G, B, 2);
  _mm256_storeu_si256((__m256i *)(void *)out, _mm256_permute2x128_si256(o0, o1, 0x20));
  _mm256_storeu_si256((__m256i *)(void *)(out + 32), _mm256_permute2x128_si256(o2, o0, 0x30));
  _mm256_storeu_si256((__m256i *)(void *)(out + 64), _mm256_permute2x128_si256(o1, o2, 0x31));
}

/* Y bytes -> Y - 16 saturated as int16, pixels 0-7 and 8-15 of each lane. */
static INL FN2 void y16(__m256i y, __m256i *yl, __m256i *yh) {
  __m256i yy = _mm256_subs_epu8(y, _mm256_set1_epi8(16)), z = _mm256_setzero_si256();
  *yl = _mm256_unpacklo_epi8(yy, z);
  *yh = _mm256_unpackhi_epi8(yy, z);
}

static FN2 uint32_t yuv_pixels_avx2(const uint8_t *y, const uint8_t *u, const uint8_t *v,
                                    uint32_t n, uint8_t *rgb) {
  const __m256i z = _mm256_setzero_si256();
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i yl, yh, U = load32(u + i), V = load32(v + i);
    y16(load32(y + i), &yl, &yh);
    convert32(yl, yh, _mm256_unpacklo_epi8(U, z), _mm256_unpackhi_epi8(U, z),
              _mm256_unpacklo_epi8(V, z), _mm256_unpackhi_epi8(V, z), rgb + 3 * (size_t)i);
  }
  return i;
}

/* NV12: each U, V pair serves two pixels. */
static FN2 uint32_t nv12_avx2(const uint8_t *y, const uint8_t *uv, uint32_t n, uint8_t *rgb) {
  const __m256i lo8 = _mm256_set1_epi16(0xff);
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i yl, yh, c = load32(uv + i);
    __m256i d0 = _mm256_unpacklo_epi16(c, c), d1 = _mm256_unpackhi_epi16(c, c);
    y16(load32(y + i), &yl, &yh);
    convert32(yl, yh, _mm256_and_si256(d0, lo8), _mm256_and_si256(d1, lo8),
              _mm256_srli_epi16(d0, 8), _mm256_srli_epi16(d1, 8), rgb + 3 * (size_t)i);
  }
  return i;
}

/* YUYV: Y0 U Y1 V. A 32-byte load holds 16 pixels; pixels 0-7 and 16-23 go to one vector,
 * 8-15 and 24-31 to the other, as convert32 takes them. */
static FN2 uint32_t yuyv_avx2(const uint8_t *row, uint32_t n, uint8_t *rgb) {
  const __m256i lo8 = _mm256_set1_epi16(0xff), k16 = _mm256_set1_epi16(16);
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i a = load32(row + 2 * (size_t)i), b = load32(row + 2 * (size_t)i + 32);
    __m256i h0 = _mm256_permute2x128_si256(a, b, 0x20), h1 = _mm256_permute2x128_si256(a, b, 0x31);
    __m256i c0 = _mm256_srli_epi16(h0, 8), c1 = _mm256_srli_epi16(h1, 8);
    convert32(_mm256_subs_epu16(_mm256_and_si256(h0, lo8), k16),
              _mm256_subs_epu16(_mm256_and_si256(h1, lo8), k16),
              _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(c0, 0xA0), 0xA0), /* 0,0,2,2 */
              _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(c1, 0xA0), 0xA0),
              _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(c0, 0xF5), 0xF5), /* 1,1,3,3 */
              _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(c1, 0xF5), 0xF5), rgb + 3 * (size_t)i);
  }
  return i;
}

static INL FN __m128i load16(const uint8_t *p) {
  return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* The 2x box of packed rows, 4 output pixels a step: pshufb puts each channel's two source
 * bytes side by side, pmaddubsw adds them. RGB24 reads 4 bytes past the 8 source pixels, so it
 * stops one output pixel early. */
static FN uint32_t half_ssse3(const uint8_t *r0, const uint8_t *r1, unsigned bpp, uint32_t n,
                              uint8_t *out) {
  static const uint8_t pick3[16] = {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, 0x80, 0x80, 0x80, 0x80};
  static const uint8_t pick4[16] = {0, 4, 1, 5, 2, 6, 8, 12, 9, 13, 10, 14, 0x80, 0x80, 0x80, 0x80};
  static const uint8_t pack[16] = {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 0x80, 0x80, 0x80, 0x80};
  __m128i m = load16(bpp == 3 ? pick3 : pick4), mp = load16(pack);
  const __m128i one = _mm_set1_epi8(1), two = _mm_set1_epi16(2);
  size_t step = 2 * (size_t)bpp; /* source bytes of two output pixels */
  uint32_t d = 0;
  for (; d + 4 + (bpp == 3) <= n; d += 4) {
    size_t at = (size_t)d * step;
    __m128i s[2];
    for (int h = 0; h < 2; h++) {
      __m128i a = _mm_maddubs_epi16(_mm_shuffle_epi8(load16(r0 + at + 2 * step * h), m), one);
      __m128i b = _mm_maddubs_epi16(_mm_shuffle_epi8(load16(r1 + at + 2 * step * h), m), one);
      s[h] = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(a, b), two), 2);
    }
    __m128i o = _mm_shuffle_epi8(_mm_packus_epi16(s[0], s[1]), mp);
    _mm_storel_epi64((__m128i *)(void *)(out + 3 * (size_t)d), o);
    uint32_t w = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(o, 8));
    memcpy(out + 3 * (size_t)d + 8, &w, 4);
  }
  return d;
}

/* What the CPU has: -1 not asked yet; else bit 0 SSSE3 (the box), bit 1 AVX2 (YUV). */
static atomic_int g_level = -1;

static int cpu_level(void) {
  __builtin_cpu_init();
  return (__builtin_cpu_supports("ssse3") ? 1 : 0) | (__builtin_cpu_supports("avx2") ? 2 : 0);
}

static int level(void) {
  int l = atomic_load_explicit(&g_level, memory_order_acquire);
  if (l < 0) {
    l = cpu_level();
    atomic_store_explicit(&g_level, l, memory_order_release); /* a race stores the same */
  }
  return l;
}

int vis_simd_select(const char *name) {
  int want = strcmp(name, "none") == 0 ? 0 : cpu_level();
  atomic_store(&g_level, want);
  return want || strcmp(name, "none") == 0 ? 0 : -1;
}

uint32_t vis_simd_yuv_pixels(const uint8_t *y, const uint8_t *u, const uint8_t *v, uint32_t n,
                             uint8_t *rgb) {
  return level() & 2 ? yuv_pixels_avx2(y, u, v, n, rgb) : 0;
}

uint32_t vis_simd_nv12_row(const uint8_t *y, const uint8_t *uv, uint32_t n, uint8_t *rgb) {
  return level() & 2 ? nv12_avx2(y, uv, n, rgb) : 0;
}

uint32_t vis_simd_yuyv_row(const uint8_t *row, uint32_t n, uint8_t *rgb) {
  return level() & 2 ? yuyv_avx2(row, n, rgb) : 0;
}

uint32_t vis_simd_half_packed(const uint8_t *r0, const uint8_t *r1, unsigned bpp, uint32_t n,
                              uint8_t *out) {
  return level() & 1 ? half_ssse3(r0, r1, bpp, n, out) : 0;
}

#endif
