/* detect_draw.c - `htpu detect --draw OUT.png`: the whole frame in RGB (htpu_preprocess at its
 * own size: an exact conversion, no resampling), each detection's box in its class's color with
 * "label score" above it, keypoints as dots, written as a PNG (png.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "draw.h"
#include "png.h"

static int frame_rgb(const cli_detect *d, cli_image *im, char *err, size_t errlen) {
  htpu_frame f = d->frame.frame;
  f.crop = (htpu_rect){0, 0, 0, 0}; /* the whole frame: boxes are in its pixels */
  htpu_tensor_info t;
  memset(&t, 0, sizeof t);
  t.name = "frame";
  t.dtype = HTPU_U8;
  t.rank = 4;
  t.dims[0] = 1, t.dims[1] = f.height, t.dims[2] = f.width, t.dims[3] = 3;
  t.num_elements = (size_t)f.width * f.height * 3;
  t.byte_size = t.num_elements;
  im->width = f.width, im->height = f.height;
  im->rgb = malloc(t.byte_size);
  if (!im->rgb) return snprintf(err, errlen, "out of memory"), -1;
  htpu_preprocess_options o;
  htpu_preprocess_options_init(&o);
  o.resize = HTPU_RESIZE_STRETCH;
  o.normalize = HTPU_NORMALIZE_RAW;
  int e = htpu_preprocess(&f, &t, &o, im->rgb, t.byte_size, NULL);
  return e ? snprintf(err, errlen, "%s", htpu_last_error()), -1 : 0;
}

/* Labels at a size that reads on the frame: 1 font pixel per 360 frame rows, at least 1. */
static int text_scale(const cli_image *im) {
  int s = (int)(im->height / 360);
  return s < 1 ? 1 : s > 4 ? 4 : s;
}

static void draw_one(cli_image *im, const cli_detect *d, uint32_t i, int scale) {
  const htpu_detection *x = &d->dets[i];
  const uint8_t *c = cli_class_color(x->class_id);
  static const uint8_t white[3] = {255, 255, 255};
  cli_draw_box(im, x->box, c, scale > 1 ? scale : 2);
  char text[96];
  const char *label = cli_detect_label(d, x->class_id);
  if (label)
    snprintf(text, sizeof text, "%s %.2f", label, x->score);
  else
    snprintf(text, sizeof text, "%u %.2f", x->class_id, x->score);
  int tx = (int)x->box[0], ty = (int)x->box[1] - 9 * scale;
  if (ty < scale) ty = (int)x->box[1] + 2 * scale; /* no room above: inside the box */
  /* a box at the frame's right edge keeps its whole label: moved left, not cut off */
  int over = tx + 2 * scale + cli_text_width(text, scale) - (int)im->width;
  if (over > 0) tx -= over;
  if (tx < 0) tx = 0;
  cli_draw_text(im, tx + scale, ty, text, white, c, scale);
  uint32_t K = d->info.num_keypoints, kd = d->info.keypoint_dims;
  for (uint32_t k = 0; k < K; k++) {
    const float *p = d->kp + ((size_t)i * K + k) * kd;
    if (kd < 3 || p[2] > 0.5f) cli_draw_dot(im, p[0], p[1], scale + 1, c);
  }
}

int cli_detect_draw(const cli_detect *d, const char *path, char *err, size_t errlen) {
  cli_image im = {0};
  int rc = frame_rgb(d, &im, err, errlen);
  if (!rc) {
    int scale = text_scale(&im);
    for (uint32_t i = d->info.count; i-- > 0;) draw_one(&im, d, i, scale); /* best on top */
    if (cli_png_write(path, im.rgb, im.width, im.height))
      rc = -1, snprintf(err, errlen, "cannot write it");
  }
  free(im.rgb);
  return rc;
}
