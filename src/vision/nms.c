/*
 * nms.c - candidates ordered and suppressed: by score (ties by anchor, so the order never depends
 * on the sort), the best max_candidates kept (Ultralytics' max_nms), then greedy NMS as
 * torchvision's nms computes it in f32: IoU = inter / (area_i + area_j - inter) with widths and
 * heights clamped at 0, and a box dropped when its IoU with a kept box of its class is > the
 * threshold. Per class for real (Ultralytics offsets boxes by class x 7680 instead, which rounds
 * coordinates far from the origin); a box with no area overlaps nothing.
 */
#include <stdlib.h>

#include "vision.h"

static int by_score(const void *pa, const void *pb) {
  const vis_cand *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->anchor < b->anchor ? -1 : a->anchor > b->anchor;
}

static float area(const float *b) { return (b[2] - b[0]) * (b[3] - b[1]); }

static float iou(const vis_cand *a, const vis_cand *b, float area_a) {
  float x1 = a->box[0] > b->box[0] ? a->box[0] : b->box[0];
  float y1 = a->box[1] > b->box[1] ? a->box[1] : b->box[1];
  float x2 = a->box[2] < b->box[2] ? a->box[2] : b->box[2];
  float y2 = a->box[3] < b->box[3] ? a->box[3] : b->box[3];
  float w = x2 - x1 > 0.0f ? x2 - x1 : 0.0f, h = y2 - y1 > 0.0f ? y2 - y1 : 0.0f;
  float inter = w * h;
  return inter / (area_a + area(b->box) - inter); /* 0 / 0 is NaN: never > the threshold */
}

uint32_t vis_nms(vis_cands *c, uint32_t max_candidates, float thr, int agnostic, uint32_t *keep,
                 uint32_t max_keep) {
  if (c->count > 1) qsort(c->items, c->count, sizeof *c->items, by_score);
  size_t n = c->count < max_candidates ? c->count : max_candidates;
  uint32_t kept = 0;
  for (size_t i = 0; i < n && kept < max_keep; i++) {
    vis_cand *a = &c->items[i];
    if (a->dead) continue;
    keep[kept++] = (uint32_t)i;
    float area_a = area(a->box);
    for (size_t j = i + 1; j < n; j++) {
      vis_cand *b = &c->items[j];
      if (!b->dead && (agnostic || b->cls == a->cls) && iou(a, b, area_a) > thr) b->dead = 1;
    }
  }
  return kept;
}
