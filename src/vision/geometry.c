/*
 * geometry.c - where a frame goes in the input, and back.
 *
 * Letterbox follows Ultralytics' LetterBox (auto=False, center=True) expression by expression,
 * in double as Python computes it: r = min(H / h, W / w) (min(r, 1) without scaleup), the
 * resized size round(w r) x round(h r) with Python's round (half to even: nearbyint in the
 * default rounding mode), dw = (W - new_w) / 2, left = round(dw - 0.1), right = round(dw + 0.1),
 * likewise top and bottom. Mapping back is its inverse: (x - pad) / r with the padding applied
 * and the gain r itself (not new_w / w), then clipped to the image; or, asked for, Ultralytics'
 * scale_boxes, whose padding is recomputed from the gain (vis_mapping).
 */
#include <math.h>
#include <string.h>

#include "base/base.h"
#include "vision.h"

static uint32_t py_round(double v) { return (uint32_t)nearbyint(v); }

static int letterbox(const htpu_rect *c, uint32_t in_w, uint32_t in_h, int scaleup,
                     htpu_geometry *g) {
  double r = fmin((double)in_h / c->height, (double)in_w / c->width);
  if (!scaleup) r = fmin(r, 1.0);
  uint32_t new_w = py_round(c->width * r), new_h = py_round(c->height * r);
  if (!new_w || !new_h)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "letterbox: the %ux%u frame region fits a %ux%u input as %ux%u: "
                          "nothing left of it (crop it, or use resize mode stretch)",
                          c->width, c->height, in_w, in_h, new_w, new_h);
  double dw = (in_w - new_w) / 2.0, dh = (in_h - new_h) / 2.0;
  g->resized_width = new_w;
  g->resized_height = new_h;
  g->pad_left = py_round(dw - 0.1);
  g->pad_right = py_round(dw + 0.1);
  g->pad_top = py_round(dh - 0.1);
  g->pad_bottom = py_round(dh + 0.1);
  g->scale_x = g->scale_y = r;
  return HTPU_OK;
}

/* The largest centred part of the region with the input's aspect (for a square input:
 * Ultralytics' CenterCrop, min(h, w) square at ((h - m) // 2, (w - m) // 2)). */
static void centre_crop(htpu_rect *c, uint32_t in_w, uint32_t in_h) {
  uint32_t cw = c->width, ch = c->height;
  if ((uint64_t)c->width * in_h >= (uint64_t)c->height * in_w) {
    cw = py_round((double)c->height * in_w / in_h);
    if (cw > c->width) cw = c->width;
    if (!cw) cw = 1;
  } else {
    ch = py_round((double)c->width * in_h / in_w);
    if (ch > c->height) ch = c->height;
    if (!ch) ch = 1;
  }
  c->x += (c->width - cw) / 2;
  c->y += (c->height - ch) / 2;
  c->width = cw;
  c->height = ch;
}

int vis_geometry(const vis_frame *f, uint32_t in_w, uint32_t in_h, htpu_resize_mode mode,
                 int scaleup, htpu_geometry *g) {
  *g = (htpu_geometry){0};
  g->frame_width = f->width;
  g->frame_height = f->height;
  g->region = f->crop;
  g->input_width = in_w;
  g->input_height = in_h;
  if (mode == HTPU_RESIZE_LETTERBOX) return letterbox(&g->region, in_w, in_h, scaleup, g);
  if (mode == HTPU_RESIZE_CROP) centre_crop(&g->region, in_w, in_h);
  g->resized_width = in_w;
  g->resized_height = in_h;
  g->scale_x = (double)in_w / g->region.width;
  g->scale_y = (double)in_h / g->region.height;
  return HTPU_OK;
}

static float clip(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

void vis_map_points(const htpu_geometry *g, const vis_pads *p, float *xy, size_t n) {
  float w = (float)g->region.width, h = (float)g->region.height;
  float ox = (float)g->region.x, oy = (float)g->region.y;
  for (size_t i = 0; i < n; i++) {
    /* NaN stays NaN through the clip (both compares are false), as clamp_ leaves it */
    xy[2 * i] = clip((xy[2 * i] - p->x) / p->sx, 0.0f, w) + ox;
    xy[2 * i + 1] = clip((xy[2 * i + 1] - p->y) / p->sy, 0.0f, h) + oy;
  }
}

void vis_mapping(const htpu_geometry *g, htpu_box_mapping m, vis_pads *box, vis_pads *kp) {
  *box = (vis_pads){(float)g->pad_left, (float)g->pad_top, (float)g->scale_x, (float)g->scale_y};
  *kp = *box;
  if (m != HTPU_MAP_ULTRALYTICS || g->scale_x != g->scale_y || !g->region.width ||
      !g->region.height)
    return;
  /* ultralytics/utils/ops.py, scale_boxes and scale_coords with ratio_pad=None, in double as
   * Python computes them; the tensors are f32, so the pads and the gain meet them as f32 */
  double gain = fmin((double)g->input_height / g->region.height,
                     (double)g->input_width / g->region.width);
  double dx = (g->input_width - g->region.width * gain) / 2;
  double dy = (g->input_height - g->region.height * gain) / 2;
  *box = (vis_pads){(float)nearbyint(dx - 0.1), (float)nearbyint(dy - 0.1), (float)gain,
                    (float)gain};
  *kp = (vis_pads){(float)dx, (float)dy, (float)gain, (float)gain};
}

static int side_ok(uint32_t v) { return v >= 1 && v <= HTPU_VISION_MAX_SIDE; }

static int scale_ok(double v) {
  return isfinite(v) && v >= 1.0 / HTPU_VISION_MAX_SIDE && v <= HTPU_VISION_MAX_SIDE;
}

/* Every geometry vis_geometry makes passes; a hand-made one (the Elixir map, a C caller's
 * struct) could otherwise divide by a zero or NaN scale or offset boxes by 2^32 pixels. */
int vis_geometry_check(const htpu_geometry *g) {
  const char *bad = NULL;
  uint64_t lr = (uint64_t)g->pad_left + g->pad_right + g->resized_width;
  uint64_t tb = (uint64_t)g->pad_top + g->pad_bottom + g->resized_height;
  if (!side_ok(g->frame_width) || !side_ok(g->frame_height))
    bad = "frame_width and frame_height: expected 1 to 65535";
  else if (!side_ok(g->input_width) || !side_ok(g->input_height))
    bad = "input_width and input_height: expected 1 to 65535";
  else if (!g->region.width || !g->region.height ||
           (uint64_t)g->region.x + g->region.width > g->frame_width ||
           (uint64_t)g->region.y + g->region.height > g->frame_height)
    bad = "region {x, y, width, height}: expected a non-empty rectangle inside the frame";
  else if (lr > g->input_width || tb > g->input_height)
    bad = "pad_left + resized_width + pad_right (and pad_top + resized_height + pad_bottom): "
          "expected at most the input's width (height)";
  else if (!scale_ok(g->scale_x) || !scale_ok(g->scale_y))
    bad = "scale_x and scale_y: expected finite numbers in 1/65535..65535";
  if (!bad) return HTPU_OK;
  return htpu_set_error(HTPU_EINVAL, 0,
                        "decode: the geometry (frame %ux%u, region %u,%u %ux%u, input %ux%u, "
                        "resized %ux%u, pads l%u t%u r%u b%u, scales %g %g) is not one "
                        "htpu_preprocess could return: %s",
                        g->frame_width, g->frame_height, g->region.x, g->region.y,
                        g->region.width, g->region.height, g->input_width, g->input_height,
                        g->resized_width, g->resized_height, g->pad_left, g->pad_top,
                        g->pad_right, g->pad_bottom, g->scale_x, g->scale_y, bad);
}

void htpu_geometry_map_points(const htpu_geometry *g, float *xy, size_t n) {
  if (!g || !xy) return;
  vis_pads p, unused;
  vis_mapping(g, HTPU_MAP_LETTERBOX, &p, &unused);
  vis_map_points(g, &p, xy, n);
}

static const char *const mode_names[HTPU_RESIZE_MODE_COUNT] = {"letterbox", "stretch", "crop"};

const char *htpu_resize_mode_name(htpu_resize_mode m) {
  return (unsigned)m < HTPU_RESIZE_MODE_COUNT ? mode_names[m] : NULL;
}

int htpu_resize_mode_from_name(const char *name, htpu_resize_mode *out) {
  for (unsigned i = 0; name && i < HTPU_RESIZE_MODE_COUNT; i++) {
    if (strcmp(name, mode_names[i]) == 0) {
      if (out) *out = (htpu_resize_mode)i;
      return 0;
    }
  }
  return htpu_set_error(HTPU_EINVAL, 0,
                        "unknown resize mode '%s': expected letterbox, stretch or crop",
                        name ? name : "(null)");
}
