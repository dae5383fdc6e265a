/*
 * nms.c - candidates ordered and suppressed: by score (ties by anchor, so the order never depends
 * on the sort), the best max_candidates kept (Ultralytics' max_nms), then greedy NMS as
 * torchvision's nms computes it in f32: IoU = inter / (area_i + area_j - inter) with widths and
 * heights clamped at 0, and a box dropped when its IoU with a kept box of its class is > the
 * threshold. Per class for real (Ultralytics offsets boxes by class x 7680 instead, which rounds
 * coordinates far from the origin); a box with no area overlaps nothing.
 */
#include <stdlib.h>
#include <string.h>

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

/* Descending scores as ascending keys: the IEEE order trick, inverted; 0 and -0 alike. */
static uint32_t desc_key(float f) {
  uint32_t b;
  if (f == 0.0f) f = 0.0f;
  memcpy(&b, &f, 4);
  b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return ~b;
}

/* The candidates in by_score's order with a stable LSD radix sort of the score keys (four
 * byte passes): ties keep the scan's order, which is the anchors'. 0, or -1 without memory. */
static int radix_sort(vis_cands *c) {
  size_t n = c->count;
  uint32_t *buf = malloc(n * 4 * sizeof *buf);
  vis_cand *out = malloc(n * sizeof *out);
  if (!buf || !out) {
    free(buf), free(out);
    return -1;
  }
  uint32_t *key = buf, *idx = buf + n, *key2 = buf + 2 * n, *idx2 = buf + 3 * n;
  for (size_t i = 0; i < n; i++) key[i] = desc_key(c->items[i].score), idx[i] = (uint32_t)i;
  for (unsigned shift = 0; shift < 32; shift += 8) {
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++) count[((key[i] >> shift) & 0xffu) + 1]++;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (size_t i = 0; i < n; i++) {
      size_t at = count[(key[i] >> shift) & 0xffu]++;
      key2[at] = key[i], idx2[at] = idx[i];
    }
    uint32_t *t = key; key = key2, key2 = t;
    t = idx, idx = idx2, idx2 = t;
  }
  for (size_t i = 0; i < n; i++) out[i] = c->items[idx[i]];
  memcpy(c->items, out, n * sizeof *out);
  free(buf), free(out);
  return 0;
}

static int anchors_ascending(const vis_cands *c) {
  for (size_t i = 1; i < c->count; i++)
    if (c->items[i].anchor <= c->items[i - 1].anchor) return 0;
  return 1;
}

uint32_t vis_nms(vis_cands *c, uint32_t max_candidates, float thr, int agnostic, uint32_t *keep,
                 uint32_t max_keep) {
  if (c->count > 1 && (!anchors_ascending(c) || radix_sort(c) != 0))
    qsort(c->items, c->count, sizeof *c->items, by_score);
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
