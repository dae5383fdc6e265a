/*
 * rows.c - the resized rows of the two ratios common camera sizes take into a 640 input, done
 * without the general two-pass resize (preprocess.c's row loop):
 *
 *  - 1:1 (640x480 into 640x640, or any frame already at its input size): INTER_LINEAR samples
 *    each pixel itself, so a row is the frame's row: RGB24, BGR24 and GRAY8 rows go to the
 *    writer as they lie in the frame, NV12 and YUYV rows are converted whole (yuv.c);
 *  - exactly 2x on both axes (1280x720, 1280x960): the weights are (1/2, 1/2) everywhere and
 *    OpenCV's result is the rounded mean of each 2x2 block (simd_*.c's comment); packed color
 *    rows are boxed straight from the frame, NV12 and YUYV rows converted first.
 *
 * Both give exactly the general path's bytes (test/vision/oracle.py compares them with OpenCV
 * on these sizes). Other formats and ratios, and a one-channel model of a color frame, take the
 * general path.
 */
#include "vision.h"

typedef enum { FAST_NONE, FAST_SAME, FAST_HALF } fast_kind;

static fast_kind kind_of(const vis_rows *r) {
  const htpu_geometry *g = r->g;
  htpu_pixel_format fmt = r->f->format;
  int color = r->fx->cn == 3, yuv = fmt == HTPU_PIXEL_NV12 || fmt == HTPU_PIXEL_YUYV;
  if (g->region.width == g->resized_width && g->region.height == g->resized_height) {
    if (fmt == HTPU_PIXEL_GRAY8) return FAST_SAME;
    if (color && (fmt == HTPU_PIXEL_RGB24 || fmt == HTPU_PIXEL_BGR24 || yuv)) return FAST_SAME;
    return FAST_NONE;
  }
  if (g->region.width == 2 * (uint64_t)g->resized_width &&
      g->region.height == 2 * (uint64_t)g->resized_height && color && fmt != HTPU_PIXEL_GRAY8)
    return FAST_HALF;
  return FAST_NONE;
}

/* Where row y of the region starts, and for NV12 its UV row. */
static const uint8_t *line(const vis_frame *f, uint32_t y) {
  return f->data + (size_t)(f->crop.y + y) * f->stride;
}

static const uint8_t *uv_line(const vis_frame *f, uint32_t y) {
  return f->uv + (size_t)((f->crop.y + y) / 2) * f->stride;
}

/* n pixels of region row y as RGB24 (YUV) into out; packed color and gray rows are returned
 * where they lie. */
static const uint8_t *color_row(const vis_rows *r, uint32_t y, uint32_t n, uint8_t *out) {
  const vis_frame *f = r->f;
  const vis_yuv_tab *t = r->fx->yuv;
  if (f->format == HTPU_PIXEL_NV12)
    vis_nv12_row(t, line(f, y), uv_line(f, y), f->crop.x, n, out);
  else if (f->format == HTPU_PIXEL_YUYV)
    vis_yuyv_row(t, line(f, y), f->crop.x, n, out);
  else
    return line(f, y) + (size_t)f->crop.x * vis_format_bytes(f->format);
  return out;
}

/* The rounded mean of each 2x2 block: n pixels of 3 channels from rows a, b of bpp bytes a
 * pixel. */
static void half(const uint8_t *a, const uint8_t *b, unsigned bpp, uint32_t n, uint8_t *out) {
  for (uint32_t d = vis_simd_half_packed(a, b, bpp, n, out); d < n; d++) {
    const uint8_t *p = a + 2 * (size_t)d * bpp, *q = b + 2 * (size_t)d * bpp;
    for (unsigned c = 0; c < 3; c++)
      out[3 * (size_t)d + c] = (uint8_t)((p[c] + p[bpp + c] + q[c] + q[bpp + c] + 2) >> 2);
  }
}

int vis_rows_fast(const vis_rows *r) {
  fast_kind k = kind_of(r);
  if (k == FAST_NONE) return 0;
  const htpu_geometry *g = r->g;
  uint32_t n = g->resized_width;
  int yuv = r->f->format == HTPU_PIXEL_NV12 || r->f->format == HTPU_PIXEL_YUYV;
  if (k == FAST_SAME && !yuv) { /* the frame's rows as they are (one copy when they can be) */
    vis_write_rows(r->d, color_row(r, 0, n, r->out), r->f->stride, g->pad_top, g->pad_left, n,
                   g->resized_height);
    return 1;
  }
  for (uint32_t dy = 0; dy < g->resized_height; dy++) {
    const uint8_t *row = r->out;
    if (k == FAST_SAME) {
      row = color_row(r, dy, n, r->out);
    } else {
      const uint8_t *a = color_row(r, 2 * dy, 2 * n, r->rgb[0]);
      const uint8_t *b = color_row(r, 2 * dy + 1, 2 * n, r->rgb[1]);
      half(a, b, yuv ? 3 : vis_format_bytes(r->f->format), n, r->out);
    }
    vis_write_row(r->d, row, g->pad_top + dy, g->pad_left, n);
  }
  return 1;
}
