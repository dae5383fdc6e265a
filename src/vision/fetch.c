/*
 * fetch.c - one source row of the resize: the pixels at the two taps of every destination
 * column, in the fetch's channels (3 in the frame's native order, or 1 gray), then the
 * horizontal pass over them.
 *
 * Only the sampled pixels are read and converted: a 3x downscale of a 1080p NV12 frame converts
 * 640 pixels of each used row, not 1920. A YUV or gray conversion applies per pixel, and the
 * resize per channel, so converting just the taps gives exactly what OpenCV's cvtColor of the
 * whole frame followed by resize gives:
 *  - YUV -> RGB: OpenCV's BT.601 limited-range fixed point (color_yuv, ITUR_BT_601_*, 20 bits):
 *    y = max(0, Y - 16) * 1220542, r = (y + 2^19 + 1673527 (V - 128)) >> 20, g with
 *    -852492 (V - 128) - 409993 (U - 128), b with 2116026 (U - 128), each saturated to 0..255;
 *  - RGB -> gray: (R 9798 + G 19235 + B 3735 + 2^14) >> 15 (OpenCV 4's RGB2GRAY for u8, 15 bits);
 *  - YUV -> gray: the Y plane (COLOR_YUV2GRAY_*).
 * The conversions are yuv.c's (tables of the same products, and vector kernels); the horizontal
 * pass over the gathered taps runs in fixed chunks so that GCC vectorizes it at -O2.
 */
#include <string.h>

#include "vision.h"

int vis_fetch_native_bgr(htpu_pixel_format f) {
  return f == HTPU_PIXEL_BGR24 || f == HTPU_PIXEL_BGRA;
}

/* YUYV row or NV12 Y row + UV row: each tap pixel's Y, U, V gathered, then converted together
 * (yuv.c: 16 at a time where the CPU has the vector kernel). */
static void gather_yuv(const vis_fetch *fx, const uint8_t *yrow, const uint8_t *crow,
                       const int32_t *src, uint8_t *restrict tap) {
  const vis_frame *f = fx->frame;
  int yuyv = f->format == HTPU_PIXEL_YUYV;
  unsigned ystep = yuyv ? 2 : 1;
  const uint8_t *ybase = yrow + (size_t)f->crop.x * ystep;
  if (fx->cn == 1) {
    for (uint32_t d = 0; d < fx->dst_w; d++) tap[d] = ybase[(size_t)src[d] * ystep];
    return;
  }
  uint8_t *restrict gy = fx->gy, *restrict gu = fx->gu, *restrict gv = fx->gv;
  if (yuyv) {
    for (uint32_t d = 0; d < fx->dst_w; d++) {
      uint32_t x = f->crop.x + (uint32_t)src[d], c = 4 * (x / 2) + 1;
      gy[d] = yrow[2 * x], gu[d] = crow[c], gv[d] = crow[c + 2];
    }
  } else {
    for (uint32_t d = 0; d < fx->dst_w; d++) {
      uint32_t x = f->crop.x + (uint32_t)src[d], c = x & ~1u;
      gy[d] = yrow[x], gu[d] = crow[c], gv[d] = crow[c + 1];
    }
  }
  vis_yuv_pixels(fx->yuv, gy, gu, gv, fx->dst_w, tap);
}

/* Packed RGB-like rows (3 or 4 bytes a pixel, color first). Three channels are copied as four
 * bytes at a time (the fourth lands where the next pixel's first goes, and the taps have slack
 * after the last), except where four bytes would reach past the frame's last byte. */
static void gather_color(const vis_fetch *fx, const uint8_t *row, const int32_t *src,
                         uint8_t *restrict tap) {
  const vis_frame *f = fx->frame;
  unsigned bpp = vis_format_bytes(f->format);
  const uint8_t *base = row + (size_t)f->crop.x * bpp;
  if (fx->cn == 3) {
    for (uint32_t d = 0; d < fx->dst_w; d++) {
      const uint8_t *p = base + (size_t)src[d] * bpp;
      if (p + 4 <= f->end) {
        memcpy(tap + 3 * d, p, 4);
      } else {
        tap[3 * d] = p[0];
        tap[3 * d + 1] = p[1];
        tap[3 * d + 2] = p[2];
      }
    }
    return;
  }
  /* gray: the weights follow R, G, B whatever the order in memory */
  int bgr = vis_fetch_native_bgr(f->format);
  int kr = bgr ? 3735 : 9798, kb = bgr ? 9798 : 3735;
  for (uint32_t d = 0; d < fx->dst_w; d++) {
    const uint8_t *p = base + (size_t)src[d] * bpp;
    tap[d] = (uint8_t)((p[0] * kr + p[1] * 19235 + p[2] * kb + (1 << 14)) >> 15);
  }
}

static void gather_gray(const vis_fetch *fx, const uint8_t *row, const int32_t *src,
                        uint8_t *restrict tap) {
  const uint8_t *base = row + fx->frame->crop.x;
  for (uint32_t d = 0; d < fx->dst_w; d++) tap[d] = base[src[d]];
}

static void gather(const vis_fetch *fx, uint32_t row, const int32_t *src, uint8_t *tap) {
  const vis_frame *f = fx->frame;
  uint32_t y = f->crop.y + row;
  const uint8_t *line = f->data + (size_t)y * f->stride;
  switch (f->format) {
    case HTPU_PIXEL_YUYV:
      gather_yuv(fx, line, line, src, tap);
      break;
    case HTPU_PIXEL_NV12:
      gather_yuv(fx, line, f->uv + (size_t)(y / 2) * f->stride, src, tap);
      break;
    case HTPU_PIXEL_GRAY8:
      gather_gray(fx, line, src, tap);
      break;
    default:
      gather_color(fx, line, src, tap);
      break;
  }
}

void vis_fetch_taps(const vis_fetch *fx, uint32_t row) {
  gather(fx, row, fx->x->src0, fx->tap0);
  if (!fx->x->exact) gather(fx, row, fx->x->src1, fx->tap1);
}

void vis_fetch_row(const vis_fetch *fx, uint32_t row, int16_t *h) {
  if (fx->rgb_row) { /* YUV read at most taps apart: the whole row converted, then packed */
    const vis_frame *f = fx->frame;
    size_t w = f->crop.width;
    vis_yuv_frame_row(f, fx->yuv, row, (uint32_t)w, fx->rgb_row);
    vis_hpass_packed(fx->rgb_row, fx->rgb_row + 3 * w, fx->off, fx->wp, 3, fx->dst_w, h);
    return;
  }
  if (fx->packed) {
    const vis_frame *f = fx->frame;
    const uint8_t *line = f->data + (size_t)(f->crop.y + row) * f->stride;
    vis_hpass_packed(line, f->end, fx->off, fx->wp, vis_format_bytes(f->format), fx->dst_w, h);
    return;
  }
  vis_fetch_taps(fx, row);
  vis_hpass(fx, h);
}

/* OpenCV keeps h = t0 w0 + t1 w1 in int32 and its vector code only ever uses h >> 4 (which fits
 * int16), so that is what is kept: half the memory, and 16-bit lanes for the vertical pass. */
void vis_hpass(const vis_fetch *fx, int16_t *restrict h) {
  size_t n = (size_t)fx->dst_w * fx->cn;
  const uint8_t *restrict t0 = fx->tap0, *restrict t1 = fx->tap1;
  const int16_t *restrict w0 = fx->w0, *restrict w1 = fx->w1;
  if (fx->x->exact) {
    VIS_FOR(i, n, h[i] = (int16_t)(t0[i] << (VIS_COEF_BITS - 4)));
    return;
  }
  VIS_FOR(i, n, h[i] = (int16_t)(((int32_t)t0[i] * w0[i] + (int32_t)t1[i] * w1[i]) >> 4));
}
