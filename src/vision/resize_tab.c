/*
 * resize_tab.c - the source positions and fixed-point weights of OpenCV's cv2.resize with
 * INTER_LINEAR on u8 images (imgproc/src/resize.cpp, resize() and resizeGeneric_), computed the
 * way it computes them so that the weights, and so the pixels, are the same:
 *
 *   scale = 1 / (dst / src)                      (double, as 1. / inv_scale_x)
 *   f = (float)((d + 0.5) * scale - 0.5); s = floor(f); f -= s      (float)
 *   w0 = round((1.f - f) * 2048), w1 = round(f * 2048)              (cvRound: half to even)
 *
 * Horizontally a position left of the image (s < 0) or on/after its last pixel takes that edge
 * pixel with weights (2048, 0). Vertically the weights are NOT clamped: OpenCV clamps the row
 * indices only when it fetches rows, so the first rows of an enlargement blend row 0 with itself
 * using the unclamped weights, and its two roundings give a result that depends on them.
 */
#include <math.h>

#include "vision.h"

static int16_t coef(float v) { return (int16_t)lrintf(v * VIS_COEF_ONE); }

static void fill(vis_axis *ax, uint32_t src_len, uint32_t dst_len, int clamp_weights) {
  double scale = 1.0 / ((double)dst_len / src_len);
  int last = (int)src_len - 1;
  ax->exact = 1;
  for (uint32_t d = 0; d < dst_len; d++) {
    float f = (float)((d + 0.5) * scale - 0.5);
    int s = (int)floorf(f);
    f -= (float)s;
    if (clamp_weights && s < 0) f = 0.0f, s = 0;
    if (clamp_weights && s >= last) f = 0.0f, s = last;
    int s0 = s < 0 ? 0 : s > last ? last : s;
    int s1 = s + 1 < 0 ? 0 : s + 1 > last ? last : s + 1;
    ax->src0[d] = s0;
    ax->src1[d] = s1;
    ax->w0[d] = coef(1.0f - f);
    ax->w1[d] = coef(f);
    if (ax->w1[d]) ax->exact = 0;
  }
}

void vis_axis_fill(vis_axis *ax, uint32_t src_len, uint32_t dst_len) {
  fill(ax, src_len, dst_len, 1);
}

void vis_axis_fill_rows(vis_axis *ax, uint32_t src_len, uint32_t dst_len) {
  fill(ax, src_len, dst_len, 0);
}
