/*
 * preprocess.c - htpu_preprocess: a frame into a graph input in one pass.
 *
 * After the checks (frame, input shape, options, the LUT) the geometry and OpenCV's tables are
 * made, then each output row is computed from at most two source rows: their taps gathered and
 * converted (fetch.c), the horizontal sums (cached per source row: consecutive output rows share
 * rows when enlarging), the vertical pass (vpass.c), and the row written in the input's layout and
 * type (write.c). The border is filled last. One allocation holds every table and row buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "vision.h"

void htpu_preprocess_options_init(htpu_preprocess_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->resize = HTPU_RESIZE_LETTERBOX;
  o->pad_value = 114;
  o->scaleup = 1;
  for (int k = 0; k < 3; k++) o->std[k] = 1.0f;
}

/* The input's image shape: height, width, channels and layout. */
typedef struct img_shape {
  uint32_t h, w, c;
  int nchw, chan_axis;
} img_shape;

static int is_chan(uint32_t n) { return n == 1 || n == 3; }

static int image_shape(const htpu_tensor_info *in, htpu_image_layout want, img_shape *s) {
  const char *name = in->name ? in->name : "";
  if ((in->rank != 3 && in->rank != 4) || (in->rank == 4 && in->dims[0] != 1))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "input '%s' has rank %u%s; an image input is [1, H, W, C], [1, C, H, W] "
                          "or the same without the batch",
                          name, in->rank, in->rank == 4 ? " with a batch other than 1" : "");
  const uint32_t *d = in->dims + (in->rank - 3);
  int nhwc_ok = is_chan(d[2]), nchw_ok = is_chan(d[0]);
  /* [3, 64, 3] too: NHWC is a 3x64 image, NCHW a 64x3 one; nothing in the shape decides */
  if (want == HTPU_LAYOUT_AUTO && nhwc_ok && nchw_ok)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "input '%s' [%u, %u, %u] could be NHWC or NCHW: name the layout "
                          "(the layout option: nhwc or nchw)",
                          name, d[0], d[1], d[2]);
  int nchw = want == HTPU_LAYOUT_NCHW || (want == HTPU_LAYOUT_AUTO && nchw_ok && !nhwc_ok);
  if ((nchw && !nchw_ok) || (!nchw && !nhwc_ok))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "input '%s' [%u, %u, %u] is not an image of 1 or 3 channels%s", name,
                          d[0], d[1], d[2],
                          want == HTPU_LAYOUT_NHWC   ? " in NHWC"
                          : want == HTPU_LAYOUT_NCHW ? " in NCHW"
                                                     : "");
  s->nchw = nchw;
  s->c = nchw ? d[0] : d[2];
  s->h = nchw ? d[1] : d[0];
  s->w = nchw ? d[2] : d[1];
  if (!s->h || !s->w || s->h > HTPU_VISION_MAX_SIDE || s->w > HTPU_VISION_MAX_SIDE)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "input '%s' is an image of %ux%u; expected 1 to %u pixels on a side",
                          name, s->w, s->h, HTPU_VISION_MAX_SIDE);
  s->chan_axis = nchw ? (int)in->rank - 3 : (int)in->rank - 1;
  return HTPU_OK;
}

static int check_options(const htpu_preprocess_options *o) {
  if ((unsigned)o->resize >= HTPU_RESIZE_MODE_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0, "resize mode %d is not letterbox, stretch or crop",
                          (int)o->resize);
  if (o->pad_value > 255)
    return htpu_set_error(HTPU_EINVAL, 0, "pad value %u is not a pixel value 0..255",
                          o->pad_value);
  if ((unsigned)o->layout > HTPU_LAYOUT_NCHW)
    return htpu_set_error(HTPU_EINVAL, 0, "layout %d is not auto, nhwc or nchw", (int)o->layout);
  return HTPU_OK;
}

/* ---- the plan: tables and buffers in one allocation ------------------------------------------ */

typedef struct plan {
  vis_frame f;
  htpu_geometry g;
  vis_axis x, y;
  vis_fetch fx;
  vis_dst d;
  vis_lut lut;
  vis_yuv_tab yuv;
  int16_t *h[2];
  int64_t h_row[2]; /* the source row each horizontal buffer holds; -1: none */
  uint8_t *out, *rgb[2];
  size_t n;
  void *mem;
} plan;

static void *carve(uint8_t **p, size_t bytes) {
  void *at = *p;
  *p += (bytes + 15) & ~(size_t)15;
  return at;
}

/* A YUV frame whose resize reads at least two pixels in seven of each row it reads (at most a
 * 3.5x downscale) converts those rows whole (16 or 32 pixels a vector step) for the packed
 * horizontal pass, rather than converting the taps one by one after gathering them. */
static int yuv_rows(const plan *p) {
  htpu_pixel_format f = p->f.format;
  return p->fx.cn == 3 && (f == HTPU_PIXEL_NV12 || f == HTPU_PIXEL_YUYV) &&
         2 * (uint64_t)p->g.region.width <= 7 * (uint64_t)p->g.resized_width;
}

static int plan_alloc(plan *p) {
  size_t rw = p->g.resized_width, rh = p->g.resized_height, n = rw * p->fx.cn;
  size_t yuv_row = yuv_rows(p) ? (size_t)p->g.region.width * 3 : 0;
  /* per axis entry two indices and two weights; per value two weights, two taps, two
   * horizontal rows and the output; per column the packed offsets and weights, three YUV tap
   * bytes and 12 bytes of two RGB24 rows (rows.c); 8 bytes of tap slack; up to 15 bytes of
   * alignment a carve */
  size_t bytes = (rw + rh) * 12 + rw * 23 + n * 11 + yuv_row + 8 + 8 + 23 * 16;
  uint8_t *m = malloc(bytes);
  if (!m) return htpu_set_error(HTPU_ENOMEM, 0, "preprocess: out of memory (%zu bytes)", bytes);
  p->mem = m;
  p->x = (vis_axis){carve(&m, rw * 4), carve(&m, rw * 4), carve(&m, rw * 2), carve(&m, rw * 2), 0};
  p->y = (vis_axis){carve(&m, rh * 4), carve(&m, rh * 4), carve(&m, rh * 2), carve(&m, rh * 2), 0};
  p->fx.w0 = carve(&m, n * 2);
  p->fx.w1 = carve(&m, n * 2);
  p->fx.tap0 = carve(&m, n + 4);
  p->fx.tap1 = carve(&m, n + 4);
  p->fx.off = carve(&m, rw * 4);
  p->fx.wp = carve(&m, rw * 4);
  p->h[0] = carve(&m, n * 2 + 2); /* vis_hpass_packed stores one value of slack */
  p->h[1] = carve(&m, n * 2 + 2);
  p->out = carve(&m, n);
  p->fx.gy = carve(&m, rw);
  p->fx.gu = carve(&m, rw);
  p->fx.gv = carve(&m, rw);
  p->rgb[0] = carve(&m, rw * 6);
  p->rgb[1] = carve(&m, rw * 6);
  p->fx.rgb_row = yuv_row ? carve(&m, yuv_row) : NULL;
  p->n = n;
  p->h_row[0] = p->h_row[1] = -1;
  return HTPU_OK;
}

static void plan_tables(plan *p) {
  uint32_t rw = p->g.resized_width, cn = p->fx.cn;
  vis_axis_fill(&p->x, p->g.region.width, rw);
  vis_axis_fill_rows(&p->y, p->g.region.height, p->g.resized_height);
  unsigned bpp = vis_format_bytes(p->f.format);
  /* offsets within a row fit 32 bits: at most HTPU_VISION_MAX_SIDE pixels of 4 bytes */
  for (uint32_t d = 0; d < rw; d++) {
    for (uint32_t c = 0; c < cn; c++) {
      p->fx.w0[d * cn + c] = p->x.w0[d];
      p->fx.w1[d * cn + c] = p->x.w1[d];
    }
    /* from the frame row's start; from the converted row's for YUV rows */
    p->fx.off[d] = p->fx.rgb_row ? (uint32_t)p->x.src0[d] * 3
                                 : (p->f.crop.x + (uint32_t)p->x.src0[d]) * bpp;
    p->fx.wp[d] = (uint16_t)p->x.w0[d] | (uint32_t)(uint16_t)p->x.w1[d] << 16;
  }
  /* two taps of packed color pixels: straight from the row (hpass_packed.c) */
  p->fx.packed = cn == 3 && !p->x.exact && (bpp == 3 || bpp == 4) &&
                 p->f.format != HTPU_PIXEL_YUYV;
}

/* The horizontal sums of source row r, computed unless a buffer holds them; never evicts
 * the buffer holding `keep`. */
static const int16_t *h_row(plan *p, uint32_t r, int64_t keep) {
  for (int i = 0; i < 2; i++)
    if (p->h_row[i] == r) return p->h[i];
  int slot = p->h_row[0] == keep ? 1 : 0;
  vis_fetch_row(&p->fx, r, p->h[slot]);
  p->h_row[slot] = r;
  return p->h[slot];
}

static void run_rows(plan *p) {
  uint32_t rw = p->g.resized_width;
  for (uint32_t dy = 0; dy < p->g.resized_height; dy++) {
    uint32_t s0 = (uint32_t)p->y.src0[dy], s1 = (uint32_t)p->y.src1[dy];
    const uint8_t *row = p->out;
    if (p->y.w1[dy] == 0 && p->x.exact) {
      /* one tap, one row: the resized pixels are the sampled ones (see vis_vpass_one) */
      vis_fetch_taps(&p->fx, s0);
      row = p->fx.tap0;
    } else if (p->y.w1[dy] == 0 || s0 == s1) {
      const int16_t *h0 = h_row(p, s0, -1);
      if (p->y.w1[dy] == 0)
        vis_vpass_one(h0, p->out, p->n);
      else
        vis_vpass(h0, h0, p->y.w0[dy], p->y.w1[dy], p->out, p->n);
    } else {
      const int16_t *h0 = h_row(p, s0, s1);
      const int16_t *h1 = h_row(p, s1, s0);
      vis_vpass(h0, h1, p->y.w0[dy], p->y.w1[dy], p->out, p->n);
    }
    vis_write_row(&p->d, row, p->g.pad_top + dy, p->g.pad_left, rw);
  }
}

/* ---- the public function --------------------------------------------------------------------- */

static int prepare(const htpu_frame *frame, const htpu_tensor_info *in,
                   const htpu_preprocess_options *o, void *dst, size_t dst_size, plan *p) {
  img_shape s = {0};
  int rc;
  if (!in || !dst) return htpu_set_error(HTPU_EINVAL, 0, "preprocess: %s is NULL", !in ? "input" : "dst");
  if ((rc = check_options(o)) || (rc = vis_frame_check(frame, &p->f)) ||
      (rc = image_shape(in, o->layout, &s)))
    return rc;
  size_t want = (size_t)s.h * s.w * s.c * htpu_dtype_size(in->dtype);
  if (dst_size != in->byte_size || want != in->byte_size)
    return htpu_set_error(HTPU_EMISMATCH, 0,
                          "input '%s': %ux%ux%u %s needs %zu bytes; the tensor says %zu, dst has %zu",
                          in->name ? in->name : "", s.h, s.w, s.c, htpu_dtype_name(in->dtype), want,
                          in->byte_size, dst_size);
  if ((rc = vis_lut_build(in, s.chan_axis, s.c, o, &p->lut)) ||
      (rc = vis_geometry(&p->f, s.w, s.h, o->resize, o->scaleup, &p->g)))
    return rc;
  p->f.crop = p->g.region; /* the fetch reads the region (a crop mode's centre part) */
  int gray_frame = p->f.format == HTPU_PIXEL_GRAY8;
  p->fx = (vis_fetch){.frame = &p->f, .x = &p->x, .dst_w = p->g.resized_width,
                      .cn = (s.c == 1 || gray_frame) ? 1 : 3, .yuv = &p->yuv};
  if (p->f.format == HTPU_PIXEL_YUYV || p->f.format == HTPU_PIXEL_NV12) vis_yuv_tables(&p->yuv);
  int swap = vis_fetch_native_bgr(p->f.format) != (o->bgr != 0);
  p->d = (vis_dst){.base = dst, .width = s.w, .height = s.h, .channels = s.c, .nchw = s.nchw,
                   .lut = &p->lut, .fetch_cn = p->fx.cn};
  for (unsigned k = 0; k < s.c; k++) p->d.src_of[k] = p->fx.cn == 1 ? 0 : swap ? 2 - k : k;
  return HTPU_OK;
}

int htpu_preprocess(const htpu_frame *frame, const htpu_tensor_info *input,
                    const htpu_preprocess_options *opts, void *dst, size_t dst_size,
                    htpu_geometry *geometry) {
  htpu_clear_error();
  htpu_preprocess_options defaults;
  if (!opts) {
    htpu_preprocess_options_init(&defaults);
    opts = &defaults;
  }
  plan *p = calloc(1, sizeof *p);
  if (!p) return htpu_set_error(HTPU_ENOMEM, 0, "preprocess: out of memory");
  int rc = prepare(frame, input, opts, dst, dst_size, p);
  if (!rc) rc = plan_alloc(p);
  if (!rc) {
    /* the 1:1 and 2x rows need none of the general path's tables */
    vis_rows fast = {&p->f, &p->fx, &p->d, &p->g, {p->rgb[0], p->rgb[1]}, p->out};
    if (!vis_rows_fast(&fast)) {
      plan_tables(p);
      run_rows(p);
    }
    vis_write_border(&p->d, &p->g, (uint8_t)opts->pad_value);
    if (geometry) *geometry = p->g;
  }
  free(p->mem);
  free(p);
  return rc;
}
