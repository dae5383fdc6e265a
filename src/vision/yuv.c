/*
 * yuv.c - YUV pixels into RGB24 as OpenCV's cvtColor converts them (BT.601 limited range,
 * 20-bit fixed point; fetch.c's comment has the formulas): through tables of the products, 16
 * pixels at a time by the vector kernels (simd_*.c), the rest one by one here. Three shapes of
 * input: pixels gathered one by one (the resize's taps), and whole runs of an NV12 or a YUYV
 * row (the 1:1 and 2x rows, rows.c; the general resize's source rows when it reads most of
 * their pixels, fetch.c).
 */
#include "vision.h"

void vis_yuv_tables(vis_yuv_tab *t) {
  for (int i = 0; i < 256; i++) {
    t->y[i] = (i > 16 ? i - 16 : 0) * VIS_CY + (1 << 19);
    t->rv[i] = VIS_CRV * (i - 128);
    t->gv[i] = VIS_CGV * (i - 128);
    t->gu[i] = VIS_CGU * (i - 128);
    t->bu[i] = VIS_CBU * (i - 128);
  }
  for (int i = 0; i < VIS_YUV_CLAMP; i++) {
    int v = i - VIS_YUV_CLAMP_ZERO;
    t->clamp[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
  }
}

/* An arithmetic shift of a possibly negative sum (as OpenCV's: GCC and clang shift signed
 * ints so), saturated through the table: with random chroma, compare-and-branch saturation
 * mispredicts on most pixels. */
static uint8_t sat20(const vis_yuv_tab *t, int32_t v) {
  return t->clamp[(v >> 20) + VIS_YUV_CLAMP_ZERO];
}

static void pixel(const vis_yuv_tab *t, uint8_t Y, uint8_t U, uint8_t V, uint8_t *o) {
  int32_t y = t->y[Y];
  o[0] = sat20(t, y + t->rv[V]);
  o[1] = sat20(t, y + t->gu[U] + t->gv[V]);
  o[2] = sat20(t, y + t->bu[U]);
}

void vis_yuv_pixels(const vis_yuv_tab *t, const uint8_t *y, const uint8_t *u, const uint8_t *v,
                    uint32_t n, uint8_t *rgb) {
  for (uint32_t i = vis_simd_yuv_pixels(y, u, v, n, rgb); i < n; i++)
    pixel(t, y[i], u[i], v[i], rgb + 3 * (size_t)i);
}

/* NV12: pixel x takes the U, V pair at x & ~1 of its UV row. */
void vis_nv12_row(const vis_yuv_tab *t, const uint8_t *yrow, const uint8_t *uvrow, uint32_t x0,
                  uint32_t n, uint8_t *rgb) {
  uint32_t i = 0;
  if (n && (x0 & 1)) pixel(t, yrow[x0], uvrow[x0 - 1], uvrow[x0], rgb), i = 1;
  i += vis_simd_nv12_row(yrow + x0 + i, uvrow + x0 + i, n - i, rgb + 3 * (size_t)i);
  for (; i < n; i++) {
    uint32_t x = x0 + i, c = x & ~1u;
    pixel(t, yrow[x], uvrow[c], uvrow[c + 1], rgb + 3 * (size_t)i);
  }
}

/* YUYV: pixel x is byte 2x; its pair's U and V follow the pair's first Y, at 4 (x / 2) + 1
 * and + 3. */
void vis_yuyv_row(const vis_yuv_tab *t, const uint8_t *row, uint32_t x0, uint32_t n,
                  uint8_t *rgb) {
  uint32_t i = 0;
  if (n && (x0 & 1)) {
    size_t c = 4 * ((size_t)x0 / 2);
    pixel(t, row[2 * (size_t)x0], row[c + 1], row[c + 3], rgb);
    i = 1;
  }
  i += vis_simd_yuyv_row(row + 2 * ((size_t)x0 + i), n - i, rgb + 3 * (size_t)i);
  for (; i < n; i++) {
    size_t x = (size_t)x0 + i, c = 4 * (x / 2);
    pixel(t, row[2 * x], row[c + 1], row[c + 3], rgb + 3 * i);
  }
}

void vis_yuv_frame_row(const vis_frame *f, const vis_yuv_tab *t, uint32_t y, uint32_t n,
                       uint8_t *rgb) {
  const uint8_t *line = f->data + (size_t)(f->crop.y + y) * f->stride;
  if (f->format == HTPU_PIXEL_NV12)
    vis_nv12_row(t, line, f->uv + (size_t)((f->crop.y + y) / 2) * f->stride, f->crop.x, n, rgb);
  else
    vis_yuyv_row(t, line, f->crop.x, n, rgb);
}
