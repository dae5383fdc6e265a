/*
 * vpass.c - the vertical pass of OpenCV's INTER_LINEAR on u8 (resize.cpp, VResizeLinear and
 * VResizeLinearVec_32s8u), in the rounding of its vector code:
 *
 *   s = ((h0 >> 4) * b0 >> 16) + ((h1 >> 4) * b1 >> 16),  out = sat((s + 2) >> 2)
 *       (v_shr<4>, v_mul_hi, v_rshr_pack_u<2>)
 *
 * OpenCV's scalar code rounds otherwise, (h0 b0 + h1 b1 + 2^21) >> 22, which differs by one at
 * times; the builds that matter (x86-64 with SSE2, aarch64 with NEON: CV_SIMD128) run the vector
 * code over every output of a row, short rows and row tails included, as measured on Debian's
 * OpenCV 4.6 (test/vision/oracle.py then finds every value equal). h0 and h1 are horizontal
 * sums of u8 times 2048-based weights (at most 255 * 2048), so h >> 4 fits int16 (OpenCV packs
 * it with a saturation that never triggers); that is all the pass needs of them, and with a
 * single row (b0 = 2048, b1 = 0) it is (h + 1024) >> 11 = ((h >> 4) + 64) >> 7.
 */
#include "vision.h"

/* Kept in 16 bits (every intermediate fits), so that the vector code stays in 16-bit lanes. */
static uint8_t sat8(int16_t v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* h0, h1 hold h >> 4 (vis_hpass); the products are 16 x 16 -> high 16 bits (pmulhw, vqdmulh's
 * kin), which GCC finds in this form. */
void vis_vpass(const int16_t *restrict h0, const int16_t *restrict h1, int16_t b0, int16_t b1,
               uint8_t *restrict out, size_t n) {
  VIS_FOR(i, n, {
    int16_t s = (int16_t)((int16_t)(((int32_t)h0[i] * b0) >> 16) +
                          (int16_t)(((int32_t)h1[i] * b1) >> 16) + 2);
    out[i] = sat8((int16_t)(s >> 2));
  });
}

void vis_vpass_one(const int16_t *restrict h0, uint8_t *restrict out, size_t n) {
  VIS_FOR(i, n, out[i] = sat8((int16_t)((int16_t)(h0[i] + 64) >> 7)));
}
