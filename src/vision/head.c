/*
 * head.c - which outputs hold what: the head's kind, its layout and counts from the output
 * shapes (and the options where the shapes cannot tell), checked before anything is read.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "quant/quant.h"
#include "vision.h"

static const char *const head_names[HTPU_HEAD_COUNT] = {"auto", "ultralytics", "ultralytics_pose",
                                                        "aihub"};

const char *htpu_head_name(htpu_head h) {
  return (unsigned)h < HTPU_HEAD_COUNT ? head_names[h] : NULL;
}

int htpu_head_from_name(const char *name, htpu_head *out) {
  for (unsigned i = 0; name && i < HTPU_HEAD_COUNT; i++) {
    if (strcmp(name, head_names[i]) == 0) {
      if (out) *out = (htpu_head)i;
      return 0;
    }
  }
  return htpu_set_error(HTPU_EINVAL, 0,
                        "unknown head '%s': expected auto, ultralytics, ultralytics_pose or aihub",
                        name ? name : "(null)");
}

/* ---- reading one element ---------------------------------------------------------------------- */

static double raw(const htpu_tensor_info *t, const void *data, size_t i) {
  switch (t->dtype) {
    case HTPU_U8: return ((const uint8_t *)data)[i];
    case HTPU_I8: return ((const int8_t *)data)[i];
    case HTPU_U16: return ((const uint16_t *)data)[i];
    case HTPU_I16: return ((const int16_t *)data)[i];
    case HTPU_U32: return ((const uint32_t *)data)[i];
    case HTPU_I32: return ((const int32_t *)data)[i];
    case HTPU_F16: return htpu_f16_to_f32(((const uint16_t *)data)[i]);
    default: return ((const float *)data)[i];
  }
}

float vis_read(const vis_reader *r, size_t i) {
  const htpu_tensor_info *t = r->info;
  double q = raw(t, r->data, i);
  const htpu_quant *qp = &t->quant;
  if (t->dtype == HTPU_F32 || t->dtype == HTPU_F16 || qp->kind == HTPU_QUANT_NONE) return (float)q;
  if (qp->kind == HTPU_QUANT_PER_TENSOR) return (float)((q - qp->zero_point) * (double)qp->scale);
  size_t inner = 1;
  for (uint32_t d = (uint32_t)qp->axis + 1; d < t->rank; d++) inner *= t->dims[d];
  size_t c = (i / inner) % qp->num_channels;
  return (float)((q - qp->zero_points[c]) * (double)qp->scales[c]);
}

/* The stored integers' range (floats carry no quantization vis_read applies). */
static int int_range(htpu_dtype t, double *lo, double *hi) {
  switch (t) {
    case HTPU_U8: *lo = 0, *hi = 255; return 1;
    case HTPU_I8: *lo = -128, *hi = 127; return 1;
    case HTPU_U16: *lo = 0, *hi = 65535; return 1;
    case HTPU_I16: *lo = -32768, *hi = 32767; return 1;
    case HTPU_U32: *lo = 0, *hi = 4294967295.0; return 1;
    case HTPU_I32: *lo = -2147483648.0, *hi = 2147483647.0; return 1;
    default: return 0;
  }
}

/* Each scale finite and > 0, and no stored value dequantized past +-VIS_MAX_VALUE: a scale of
 * 1e38 would make boxes of infinities (then NaN in xywh2xyxy) that blame the box, not it. */
static int check_scales(const htpu_tensor_info *t, const char *name) {
  const htpu_quant *q = &t->quant;
  double lo = 0, hi = 0;
  int ints = int_range(t->dtype, &lo, &hi);
  uint32_t n = q->kind == HTPU_QUANT_PER_AXIS ? q->num_channels
               : q->kind == HTPU_QUANT_NONE   ? 0
                                              : 1;
  for (uint32_t c = 0; c < n; c++) {
    float s = q->kind == HTPU_QUANT_PER_AXIS ? q->scales[c] : q->scale;
    double zp = q->kind == HTPU_QUANT_PER_AXIS ? q->zero_points[c] : q->zero_point;
    double top = ints ? fmax(fabs(lo - zp), fabs(hi - zp)) * s : 0.0;
    if (!(isfinite(s) && s > 0.0f) || top > VIS_MAX_VALUE)
      return htpu_set_error(HTPU_EINVAL, 0,
                            "output '%s': scale %g%s (zero point %.0f) %s; expected a finite "
                            "scale > 0 that keeps every %s value within +-%g",
                            name, (double)s, q->kind == HTPU_QUANT_PER_AXIS ? " of a channel" : "",
                            zp, isfinite(s) && s > 0.0f ? "dequantizes values past the limit"
                                                         : "is not finite and > 0",
                            htpu_dtype_name(t->dtype), VIS_MAX_VALUE);
  }
  return HTPU_OK;
}

static const char *shape_text(const htpu_tensor_info *t, char *buf, size_t len) {
  size_t at = 0;
  at += (size_t)snprintf(buf, len, "[");
  for (uint32_t d = 0; d < t->rank && d < HTPU_MAX_RANK && at < len; d++)
    at += (size_t)snprintf(buf + at, len - at, d ? ", %u" : "%u", t->dims[d]);
  if (at < len) snprintf(buf + at, len - at, "]");
  return buf;
}

/* ---- checks ------------------------------------------------------------------------------------ */

static int readable(const htpu_tensor_info *t, const void *data) {
  const char *name = t->name ? t->name : "";
  switch (t->dtype) {
    case HTPU_U8: case HTPU_I8: case HTPU_U16: case HTPU_I16:
    case HTPU_U32: case HTPU_I32: case HTPU_F16: case HTPU_F32:
      break;
    default:
      return htpu_set_error(HTPU_EINVAL, 0,
                            "output '%s' is %s; a detector output is u8, i8, u16, i16, u32, i32, "
                            "f16 or f32",
                            name, htpu_dtype_name(t->dtype));
  }
  if (!data) return htpu_set_error(HTPU_EINVAL, 0, "output '%s': its data is NULL", name);
  /* the shape is what every index is computed from: it must be the buffer's, without overflow */
  size_t n = 1;
  int over = t->rank > HTPU_MAX_RANK;
  for (uint32_t d = 0; !over && d < t->rank; d++) {
    over = t->dims[d] && n > SIZE_MAX / t->dims[d];
    n *= t->dims[d];
  }
  char shape[96];
  if (over || n > SIZE_MAX / htpu_dtype_size(t->dtype))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s' of rank %u: its dims make more elements than fit in "
                          "memory; expected a rank of at most %d and the dims of its buffer",
                          name, t->rank, HTPU_MAX_RANK);
  if (n != t->num_elements || n * htpu_dtype_size(t->dtype) != t->byte_size)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s' %s %s has %zu elements and %zu bytes; its dims make %zu "
                          "elements of %zu bytes: expected the info of the buffer as it is",
                          name, shape_text(t, shape, sizeof shape), htpu_dtype_name(t->dtype),
                          t->num_elements, t->byte_size, n, n * htpu_dtype_size(t->dtype));
  qc_params p;
  const htpu_quant *q = &t->quant;
  if (q->kind != HTPU_QUANT_NONE && q->kind != HTPU_QUANT_PER_TENSOR &&
      q->kind != HTPU_QUANT_PER_AXIS)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s': quantization kind %d is not none, per tensor or per axis",
                          name, (int)q->kind);
  if (qc_params_from_info(t, &p))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s' %s: per-axis quantization along axis %d with %u channels "
                          "(scales %s, zero points %s) does not fit it; expected an axis below "
                          "its rank %u and a scale and zero point per index of that axis",
                          name, shape_text(t, shape, sizeof shape), q->axis, q->num_channels,
                          q->scales ? "given" : "NULL", q->zero_points ? "given" : "NULL",
                          t->rank);
  return check_scales(t, name);
}

/* The two meaningful dims of a [1, X, Y] or [X, Y] tensor. */
static int dims2(const htpu_tensor_info *t, uint32_t *x, uint32_t *y) {
  if (t->rank == 3 && t->dims[0] == 1) {
    *x = t->dims[1], *y = t->dims[2];
    return 1;
  }
  if (t->rank == 2) {
    *x = t->dims[0], *y = t->dims[1];
    return 1;
  }
  return 0;
}

/* ---- Ultralytics heads ------------------------------------------------------------------------ */

/* How the values of an anchor were found, for the shape errors: a layout named in the options,
 * or the smaller axis (the other may hold them). */
static const char *layout_note(const htpu_decode_options *o, const vis_head *h) {
  if (o->layout)
    return h->layout == HTPU_HEAD_CHANNELS_FIRST ? "read channels_first, the layout given"
                                                 : "read anchors_first, the layout given";
  return h->layout == HTPU_HEAD_CHANNELS_FIRST
             ? "read channels_first from the smaller axis; name the head layout if the other "
               "holds an anchor's values"
             : "read anchors_first from the smaller axis; name the head layout if the other "
               "holds an anchor's values";
}

static int counts(const htpu_decode_options *o, uint32_t C, vis_head *h, const char *name,
                  const char *shape) {
  if (h->kind == HTPU_HEAD_ULTRALYTICS) {
    h->classes = o->num_classes ? o->num_classes : (C > 4 ? C - 4 : 0);
    if (C < 5 || C != 4 + (uint64_t)h->classes) {
      char need[96];
      if (o->num_classes)
        snprintf(need, sizeof need, "%u class scores (the class count given): %llu values",
                 o->num_classes, 4 + (unsigned long long)o->num_classes);
      else
        snprintf(need, sizeof need, "at least 1 class score");
      return htpu_set_error(HTPU_EINVAL, 0,
                            "output '%s' %s has %u values per anchor (%s); the ultralytics head "
                            "needs 4 box values and %s",
                            name, shape, C, layout_note(o, h), need);
    }
    return HTPU_OK;
  }
  h->classes = o->num_classes ? o->num_classes : 1;
  h->kdims = o->keypoint_dims ? o->keypoint_dims : 3;
  uint32_t rest = C > 4 + (uint64_t)h->classes ? C - 4 - h->classes : 0;
  h->keypoints = o->num_keypoints ? o->num_keypoints : rest / h->kdims;
  /* in 64 bits: a keypoint count from the options times 3 could wrap to the rest in 32 */
  if ((h->kdims != 2 && h->kdims != 3) || !h->keypoints ||
      rest != (uint64_t)h->keypoints * h->kdims) {
    char kps[96];
    if (o->num_keypoints)
      snprintf(kps, sizeof kps, "%u keypoints of %u values (x, y%s): %llu values",
               o->num_keypoints, h->kdims, h->kdims == 3 ? ", visibility" : "",
               4 + (unsigned long long)h->classes + (unsigned long long)o->num_keypoints * h->kdims);
    else
      snprintf(kps, sizeof kps, "keypoints of %u values (x, y%s)", h->kdims,
               h->kdims == 3 ? ", visibility" : "");
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s' %s has %u values per anchor (%s); the pose head needs 4 "
                          "box values, %u class score(s) and %s",
                          name, shape, C, layout_note(o, h), h->classes, kps);
  }
  return HTPU_OK;
}

static int ultralytics(const htpu_tensor_info *t, const void *data,
                       const htpu_decode_options *o, vis_head *h) {
  const char *name = t->name ? t->name : "";
  char shape[96];
  uint32_t x, y;
  int rc = readable(t, data);
  if (rc) return rc;
  shape_text(t, shape, sizeof shape);
  if (!dims2(t, &x, &y))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s' %s is not a head of [1, C, A] or [1, A, C] values", name,
                          shape);
  h->layout = o->layout ? o->layout : x <= y ? HTPU_HEAD_CHANNELS_FIRST : HTPU_HEAD_ANCHORS_FIRST;
  int cf = h->layout == HTPU_HEAD_CHANNELS_FIRST;
  uint32_t C = cf ? x : y;
  h->anchors = cf ? y : x;
  h->main = (vis_reader){t, data};
  h->c_step = cf ? h->anchors : 1;
  h->a_step = cf ? 1 : C;
  return counts(o, C, h, name, shape);
}

/* ---- AI Hub's boxes, scores, classes ------------------------------------------------------------ */

/* The output whose name holds `part`, else -1. */
static int named(const htpu_tensor_info *outs, uint32_t n, const char *part) {
  for (uint32_t i = 0; i < n; i++)
    if (outs[i].name && strstr(outs[i].name, part)) return (int)i;
  return -1;
}

static int aihub_pick(const htpu_tensor_info *outs, uint32_t n, int *ib, int *is, int *ic) {
  *ib = named(outs, n, "box");
  *is = named(outs, n, "score");
  *ic = named(outs, n, "class");
  if (*ib < 0 || *is < 0) { /* AI Hub's order */
    *ib = 0;
    *is = 1;
    *ic = n > 2 ? 2 : -1;
  }
  if (n < 2)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "the aihub head needs boxes, scores and class outputs; the graph has %u "
                          "output(s)",
                          n);
  return HTPU_OK;
}

static int aihub(const htpu_tensor_info *outs, const void *const *data, uint32_t n,
                 const htpu_decode_options *o, vis_head *h) {
  int ib, is, ic, rc;
  char shape[96];
  if ((rc = aihub_pick(outs, n, &ib, &is, &ic))) return rc;
  const htpu_tensor_info *b = &outs[ib], *s = &outs[is];
  uint32_t ba, bc, sa, sc = 1;
  if ((rc = readable(b, data[ib])) || (rc = readable(s, data[is]))) return rc;
  if (!dims2(b, &ba, &bc) || bc != 4)
    return htpu_set_error(HTPU_EINVAL, 0, "output '%s' %s: the aihub boxes are [1, A, 4]",
                          b->name ? b->name : "", shape_text(b, shape, sizeof shape));
  int flat = s->rank == 2 && s->dims[0] == 1;
  if (flat) sa = s->dims[1];
  if ((!flat && !dims2(s, &sa, &sc)) || sa != ba)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s' %s: the aihub scores are [1, %u] or [1, %u, nc], one per box",
                          s->name ? s->name : "", shape_text(s, shape, sizeof shape), ba, ba);
  h->anchors = ba;
  h->layout = HTPU_HEAD_ANCHORS_FIRST;
  h->boxes = (vis_reader){b, data[ib]};
  h->scores = (vis_reader){s, data[is]};
  h->classes = o->num_classes ? o->num_classes : sc;
  h->has_class_ids = flat && ic >= 0;
  if (!flat) return HTPU_OK;
  const htpu_tensor_info *c = ic >= 0 ? &outs[ic] : NULL;
  if (!c || (rc = readable(c, data[ic])) || c->num_elements != ba)
    return c && rc ? rc
                   : htpu_set_error(HTPU_EINVAL, 0,
                                    "the aihub head with scores [1, %u] needs a class output of %u "
                                    "values%s",
                                    ba, ba, c ? ": the one found has another shape" : "");
  h->class_ids = (vis_reader){c, data[ic]};
  if (!o->num_classes) h->classes = 0; /* unknown: any class id is accepted */
  return HTPU_OK;
}

int vis_head_resolve(const htpu_tensor_info *outs, const void *const *data, uint32_t n,
                     const htpu_decode_options *o, vis_head *h) {
  memset(h, 0, sizeof *h);
  if (!outs || !data || !n)
    return htpu_set_error(HTPU_EINVAL, 0, "decode: no outputs given");
  h->kind = o->head;
  if (h->kind == HTPU_HEAD_AUTO) h->kind = n >= 2 ? HTPU_HEAD_AIHUB : HTPU_HEAD_ULTRALYTICS;
  if (h->kind == HTPU_HEAD_AIHUB) return aihub(outs, data, n, o, h);
  return ultralytics(&outs[0], data[0], o, h);
}
