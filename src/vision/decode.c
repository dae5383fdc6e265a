/*
 * decode.c - htpu_decode: a detector's outputs into detections in frame pixels. The head is
 * resolved (head.c), the scores scanned in their own type (candidates.c), the candidates
 * ordered and suppressed (nms.c), then the kept ones mapped through the geometry, with their
 * keypoints for a pose head.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "vision.h"

void htpu_decode_options_init(htpu_decode_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->score_threshold = 0.25f;
  o->iou_threshold = 0.7f;
  o->max_detections = 300;
  o->max_candidates = 30000;
  o->keypoint_dims = 3;
}

static int check_options(const htpu_decode_options *o, uint32_t capacity, const void *out) {
  if ((unsigned)o->head >= HTPU_HEAD_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "decode: head %d is not one of HTPU_HEAD_AUTO, _ULTRALYTICS, "
                          "_ULTRALYTICS_POSE or _AIHUB",
                          (int)o->head);
  if ((unsigned)o->layout > HTPU_HEAD_ANCHORS_FIRST)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "decode: head layout %d is not one of HTPU_HEAD_LAYOUT_AUTO, "
                          "HTPU_HEAD_CHANNELS_FIRST or HTPU_HEAD_ANCHORS_FIRST",
                          (int)o->layout);
  /* as Ultralytics' non_max_suppression (0 <= conf_thres <= 1): a score is a probability */
  if (!(o->score_threshold >= 0.0f && o->score_threshold <= 1.0f))
    return htpu_set_error(HTPU_EINVAL, 0, "decode: the score threshold %g is not in 0..1",
                          (double)o->score_threshold);
  if (!(o->iou_threshold >= 0.0f && o->iou_threshold <= 1.0f))
    return htpu_set_error(HTPU_EINVAL, 0, "decode: the IoU threshold %g is not in 0..1",
                          (double)o->iou_threshold);
  if (!o->max_detections || !o->max_candidates)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "decode: max_detections (%u) and max_candidates (%u) must be at least 1",
                          o->max_detections, o->max_candidates);
  if ((unsigned)o->box_mapping >= HTPU_MAP_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0, "decode: box mapping %d is not letterbox or ultralytics",
                          (int)o->box_mapping);
  if (o->keypoint_dims && o->keypoint_dims != 2 && o->keypoint_dims != 3)
    return htpu_set_error(HTPU_EINVAL, 0, "decode: keypoint_dims %u is not 2 or 3",
                          o->keypoint_dims);
  if (!out || capacity < o->max_detections)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "decode: room for %u detections, max_detections is %u: give room for "
                          "all of them (or lower max_detections)",
                          out ? capacity : 0, o->max_detections);
  return HTPU_OK;
}

static int check_keypoints(const vis_head *h, const htpu_decode_options *o, const float *kp,
                           size_t kp_len) {
  if (h->kind != HTPU_HEAD_ULTRALYTICS_POSE) return HTPU_OK;
  size_t need = (size_t)o->max_detections * h->keypoints * h->kdims;
  if (!kp || kp_len < need)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "decode: the pose head has %u keypoints of %u values: room for %zu "
                          "floats is needed (max_detections %u), got %zu",
                          h->keypoints, h->kdims, need, o->max_detections, kp ? kp_len : 0);
  return HTPU_OK;
}

/* Where a kept candidate goes: the geometry (NULL: stay in input pixels) and its pads. */
typedef struct mapping {
  const htpu_geometry *g;
  vis_pads box, kp;
} mapping;

/* The kept candidate as a detection; its keypoints into kp (pose). */
static void emit(const vis_head *h, const vis_cand *c, const mapping *m, htpu_detection *d,
                 float *kp) {
  memcpy(d->box, c->box, sizeof d->box);
  d->score = c->score;
  d->class_id = c->cls;
  d->anchor = c->anchor;
  if (m->g) vis_map_points(m->g, &m->box, d->box, 2);
  if (h->kind != HTPU_HEAD_ULTRALYTICS_POSE) return;
  size_t first = 4 + (size_t)h->classes;
  for (uint32_t k = 0; k < h->keypoints; k++) {
    float *p = kp + (size_t)k * h->kdims;
    for (uint32_t v = 0; v < h->kdims; v++)
      p[v] = vis_read(&h->main, (size_t)c->anchor * h->a_step +
                                    (first + (size_t)k * h->kdims + v) * h->c_step);
    if (m->g) vis_map_points(m->g, &m->kp, p, 1);
  }
}

static void fill_info(const vis_head *h, uint32_t count, size_t cands, htpu_decode_info *info) {
  if (!info) return;
  info->count = count;
  info->candidates = (uint32_t)(cands > UINT32_MAX ? UINT32_MAX : cands);
  info->head = h->kind;
  info->layout = h->layout;
  info->num_anchors = h->anchors;
  info->num_classes = h->classes;
  info->num_keypoints = h->keypoints;
  info->keypoint_dims = h->kdims;
}

int htpu_decode(const htpu_tensor_info *outputs, const void *const *data, uint32_t num_outputs,
                const htpu_decode_options *opts, const htpu_geometry *geometry,
                htpu_detection *out, uint32_t capacity, float *keypoints, size_t keypoints_len,
                htpu_decode_info *info) {
  htpu_clear_error();
  htpu_decode_options defaults;
  if (!opts) {
    htpu_decode_options_init(&defaults);
    opts = &defaults;
  }
  vis_head h;
  int rc = check_options(opts, capacity, out);
  if (!rc && geometry) rc = vis_geometry_check(geometry);
  if (rc || (rc = vis_head_resolve(outputs, data, num_outputs, opts, &h)) ||
      (rc = check_keypoints(&h, opts, keypoints, keypoints_len)))
    return rc;
  vis_cands c = {0};
  uint32_t *keep = malloc(opts->max_detections * sizeof *keep);
  if (!keep) return htpu_set_error(HTPU_ENOMEM, 0, "decode: out of memory");
  rc = vis_candidates(&h, opts->score_threshold, &c);
  uint32_t kept = 0;
  if (!rc) {
    kept = vis_nms(&c, opts->max_candidates, opts->iou_threshold, opts->agnostic, keep,
                   opts->max_detections);
    size_t per = (size_t)h.keypoints * h.kdims;
    mapping m = {geometry, {0, 0, 0, 0}, {0, 0, 0, 0}};
    if (geometry) vis_mapping(geometry, opts->box_mapping, &m.box, &m.kp);
    for (uint32_t i = 0; i < kept; i++)
      emit(&h, &c.items[keep[i]], &m, &out[i], keypoints ? keypoints + i * per : NULL);
    fill_info(&h, kept, c.count, info);
  }
  free(keep);
  free(c.items);
  return rc;
}
