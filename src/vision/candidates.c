/*
 * candidates.c - the scores scanned in their own type.
 *
 * Each stored score maps to an unsigned key of its own width whose order is the order of the
 * dequantized values (u8 itself, i8 with the sign bit flipped, f16/f32 bits with the IEEE
 * order trick; scale > 0 makes (q - zp) * scale increasing). The threshold becomes the smallest
 * key whose value is > T, found once per call through the same dequantization, so comparing
 * keys gives the same answer as dequantizing every score and comparing floats, and an anchor's
 * best class is its largest key. The scan runs over blocks of anchors in native-width keys
 * (16 u8 lanes a vector for a u8 head); only the anchors above the threshold have their class,
 * score and box dequantized. Scores quantized per axis (a scale per class) cannot share keys:
 * they are dequantized one by one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "vision.h"

#define BLOCK 256u

/* Where the scores are: value c of anchor a at base + a * a_step + c * c_step. */
typedef struct scan {
  vis_reader r;
  size_t base, a_step, c_step;
  uint32_t classes;
  const float *byte_value; /* 8-bit scores per tensor: the value of each stored byte, else NULL */
} scan;

/* ---- keys ------------------------------------------------------------------------------------ */

#define K_U8(v) ((uint8_t)(v))
#define K_I8(v) ((uint8_t)((uint8_t)(v) ^ 0x80u))
#define K_U16(v) ((uint16_t)(v))
#define K_I16(v) ((uint16_t)((uint16_t)(v) ^ 0x8000u))
#define K_F16(v) ((uint16_t)(((v) & 0x8000u) ? ~(uint32_t)(v) : ((uint32_t)(v) | 0x8000u)))
#define K_U32(v) ((uint32_t)(v))
#define K_I32(v) ((uint32_t)(v) ^ 0x80000000u)
#define K_F32(v) ((uint32_t)(((v) & 0x80000000u) ? ~(uint32_t)(v) : ((uint32_t)(v) | 0x80000000u)))
#define NO_NAN(v) 0
#define NAN16(v) (((v) & 0x7fffu) > 0x7c00u)
#define NAN32(v) (((v) & 0x7fffffffu) > 0x7f800000u)

/* The value of a key (its stored element dequantized). */
static float key_value(const htpu_tensor_info *t, uint32_t k) {
  uint32_t b = 0;
  switch (t->dtype) {
    case HTPU_I8: b = k ^ 0x80u; break;
    case HTPU_I16: b = k ^ 0x8000u; break;
    case HTPU_I32: b = k ^ 0x80000000u; break;
    case HTPU_F16: b = (k & 0x8000u) ? (k & 0x7fffu) : (~k & 0xffffu); break;
    case HTPU_F32: b = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k; break;
    default: b = k; break;
  }
  uint8_t bytes[4];
  memcpy(bytes, &b, 4); /* little-endian: the element's bytes come first */
  vis_reader r = {t, bytes};
  return vis_read(&r, 0);
}

/* The smallest key whose value is > T: 0, or 1 when no stored value is > T. The predicate is
 * monotone over the keys of non-NaN values, so a binary search finds it. */
static int threshold_key(const htpu_tensor_info *t, float T, uint32_t *kt) {
  uint32_t lo = 0, hi;
  switch (t->dtype) {
    case HTPU_U8: case HTPU_I8: hi = 0xffu; break;
    case HTPU_U16: case HTPU_I16: hi = 0xffffu; break;
    /* floats: from the key of -inf to that of +inf (NaN keys lie outside) */
    case HTPU_F16: lo = 0x03ffu, hi = 0xfc00u; break;
    case HTPU_F32: lo = 0x007fffffu, hi = 0xff800000u; break;
    default: hi = 0xffffffffu; break;
  }
  if (!(key_value(t, hi) > T)) return 1;
  while (lo < hi) { /* invariant: value(hi) > T */
    uint32_t mid = lo + (hi - lo) / 2;
    if (key_value(t, mid) > T) hi = mid;
    else lo = mid + 1;
  }
  *kt = lo;
  return 0;
}

/* ---- the block scans, one pair per type --------------------------------------------------------- */

/* rows: the anchors of one class are contiguous (a_step 1); cols: the classes of one anchor are
 * (c_step 1). Each fills mk[0..n) with the anchors' best keys; returns nonzero on NaN. */
#define SCANS(SUF, T, K, KEY, ISNAN)                                                       \
  static int rows_##SUF(const scan *sc, size_t a0, size_t n, K *mk) {                      \
    const T *s = (const T *)sc->r.data + sc->base + a0;                                    \
    int bad = 0;                                                                           \
    VIS_FOR(j, n, { mk[j] = KEY(s[j]); bad |= ISNAN(s[j]); });                             \
    for (uint32_t c = 1; c < sc->classes; c++) {                                           \
      const T *r = s + (size_t)c * sc->c_step;                                             \
      VIS_FOR(j, n, {                                                                      \
        K k = KEY(r[j]);                                                                   \
        mk[j] = k > mk[j] ? k : mk[j];                                                     \
        bad |= ISNAN(r[j]);                                                                \
      });                                                                                  \
    }                                                                                      \
    return bad;                                                                            \
  }                                                                                        \
  static int cols_##SUF(const scan *sc, size_t a0, size_t n, K *mk) {                      \
    int bad = 0;                                                                           \
    for (size_t j = 0; j < n; j++) {                                                       \
      const T *r = (const T *)sc->r.data + sc->base + (a0 + j) * sc->a_step;               \
      K m = KEY(r[0]);                                                                     \
      for (uint32_t c = 0; c < sc->classes; c++) {                                         \
        K k = KEY(r[c]);                                                                   \
        m = k > m ? k : m;                                                                 \
        bad |= ISNAN(r[c]);                                                                \
      }                                                                                    \
      mk[j] = m;                                                                           \
    }                                                                                      \
    return bad;                                                                            \
  }

SCANS(u8, uint8_t, uint8_t, K_U8, NO_NAN)
SCANS(i8, int8_t, uint8_t, K_I8, NO_NAN)
SCANS(u16, uint16_t, uint16_t, K_U16, NO_NAN)
SCANS(i16, int16_t, uint16_t, K_I16, NO_NAN)
SCANS(f16, uint16_t, uint16_t, K_F16, NAN16)
SCANS(u32, uint32_t, uint32_t, K_U32, NO_NAN)
SCANS(i32, int32_t, uint32_t, K_I32, NO_NAN)
SCANS(f32, uint32_t, uint32_t, K_F32, NAN32)

/* One block's best keys, widened to 32 bits. Returns nonzero on NaN. */
static int scan_block(const scan *sc, size_t a0, size_t n, uint32_t *out) {
  union {
    uint8_t b[BLOCK];
    uint16_t h[BLOCK];
    uint32_t w[BLOCK];
  } mk;
  int rows = sc->a_step == 1, bad = 0;
  unsigned width = (unsigned)htpu_dtype_size(sc->r.info->dtype);
#define RUN(SUF, ARR) bad = rows ? rows_##SUF(sc, a0, n, mk.ARR) : cols_##SUF(sc, a0, n, mk.ARR)
  switch (sc->r.info->dtype) {
    case HTPU_U8: RUN(u8, b); break;
    case HTPU_I8: RUN(i8, b); break;
    case HTPU_U16: RUN(u16, h); break;
    case HTPU_I16: RUN(i16, h); break;
    case HTPU_F16: RUN(f16, h); break;
    case HTPU_U32: RUN(u32, w); break;
    case HTPU_I32: RUN(i32, w); break;
    default: RUN(f32, w); break;
  }
#undef RUN
  for (size_t j = 0; j < n; j++) out[j] = width == 1 ? mk.b[j] : width == 2 ? mk.h[j] : mk.w[j];
  return bad;
}

/* ---- candidates ------------------------------------------------------------------------------------ */

static size_t score_index(const scan *sc, uint32_t a, uint32_t c) {
  return sc->base + (size_t)a * sc->a_step + (size_t)c * sc->c_step;
}

static int nan_error(const scan *sc, size_t a0, size_t n) {
  for (size_t j = 0; j < n; j++)
    for (uint32_t c = 0; c < sc->classes; c++) {
      float v = vis_read(&sc->r, score_index(sc, (uint32_t)(a0 + j), c));
      if (isnan(v))
        return htpu_set_error(HTPU_EINVAL, 0,
                              "output '%s': the score of class %u at anchor %zu is NaN; the "
                              "detector's scores must be numbers",
                              sc->r.info->name ? sc->r.info->name : "", c, a0 + j);
    }
  return HTPU_EINVAL; /* not reached: the scan saw one */
}

static int push(vis_cands *c, const vis_cand *x) {
  if (c->count == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 64;
    vis_cand *p = realloc(c->items, cap * sizeof *p);
    if (!p) return htpu_set_error(HTPU_ENOMEM, 0, "decode: out of memory (%zu candidates)", cap);
    c->items = p;
    c->cap = cap;
  }
  c->items[c->count++] = *x;
  return HTPU_OK;
}

static int read_box(const vis_head *h, const float *byte_value, uint32_t a, float *box) {
  if (h->kind == HTPU_HEAD_AIHUB) {
    for (int k = 0; k < 4; k++) box[k] = vis_read(&h->boxes, (size_t)a * 4 + k);
  } else {
    float v[4];
    const uint8_t *bytes = h->main.data;
    for (int k = 0; k < 4; k++) {
      size_t i = (size_t)a * h->a_step + k * h->c_step;
      v[k] = byte_value ? byte_value[bytes[i]] : vis_read(&h->main, i);
    }
    float hw = v[2] / 2.0f, hh = v[3] / 2.0f; /* xywh2xyxy in f32, as Ultralytics */
    box[0] = v[0] - hw, box[1] = v[1] - hh, box[2] = v[0] + hw, box[3] = v[1] + hh;
  }
  const char *name = (h->kind == HTPU_HEAD_AIHUB ? h->boxes : h->main).info->name;
  for (int k = 0; k < 4; k++)
    if (!isfinite(box[k]))
      return htpu_set_error(HTPU_EINVAL, 0,
                            "output '%s': the box of anchor %u is %s; the detector's boxes must "
                            "be finite numbers",
                            name ? name : "", a, isnan(box[k]) ? "NaN" : "infinite");
  /* AI Hub's boxes are corners: x2 < x1 is a broken export or the wrong output, which a swap
   * would hide (xywh boxes of a negative size are taken as Ultralytics takes them) */
  if (h->kind == HTPU_HEAD_AIHUB && (box[2] < box[0] || box[3] < box[1]))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s': the box of anchor %u is (%g, %g, %g, %g); expected "
                          "corners x1 <= x2 and y1 <= y2",
                          name ? name : "", a, (double)box[0], (double)box[1], (double)box[2],
                          (double)box[3]);
  return HTPU_OK;
}

static int class_id(const vis_head *h, uint32_t a, uint32_t *cls) {
  float v = vis_read(&h->class_ids, a);
  float r = nearbyintf(v);
  if (!(r >= 0.0f) || r >= 4294967296.0f || (h->classes && r >= (float)h->classes))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s': anchor %u has class %g; expected a class id 0..%u",
                          h->class_ids.info->name ? h->class_ids.info->name : "", a, (double)v,
                          h->classes ? h->classes - 1 : 4294967295u);
  *cls = (uint32_t)r;
  return HTPU_OK;
}

/* The key of stored element i. */
static uint32_t key_at(const vis_reader *r, size_t i) {
  const void *d = r->data;
  switch (r->info->dtype) {
    case HTPU_U8: return K_U8(((const uint8_t *)d)[i]);
    case HTPU_I8: return K_I8(((const int8_t *)d)[i]);
    case HTPU_U16: return K_U16(((const uint16_t *)d)[i]);
    case HTPU_I16: return K_I16(((const int16_t *)d)[i]);
    case HTPU_F16: return K_F16(((const uint16_t *)d)[i]);
    case HTPU_U32: return K_U32(((const uint32_t *)d)[i]);
    case HTPU_I32: return K_I32(((const int32_t *)d)[i]);
    default: return K_F32(((const uint32_t *)d)[i]);
  }
}

/* The stored byte of an 8-bit key. */
static uint8_t key_raw8(const htpu_tensor_info *t, uint32_t k) {
  return (uint8_t)(t->dtype == HTPU_I8 ? k ^ 0x80u : k);
}

/* The first class of anchor a whose key is `best` (8-bit scores compared as they are stored). */
static uint32_t first_class(const scan *sc, uint32_t a, uint32_t best) {
  htpu_dtype t = sc->r.info->dtype;
  if (t == HTPU_U8 || t == HTPU_I8) {
    const uint8_t *p = (const uint8_t *)sc->r.data + score_index(sc, a, 0);
    uint8_t want = (uint8_t)(t == HTPU_U8 ? best : best ^ 0x80u);
    for (uint32_t k = 0; k < sc->classes; k++)
      if (p[(size_t)k * sc->c_step] == want) return k;
    return 0;
  }
  for (uint32_t k = 0; k < sc->classes; k++)
    if (key_at(&sc->r, score_index(sc, a, k)) == best) return k;
  return 0;
}

/* Anchor a is above the threshold with best key `best`: its class (the first holding that key,
 * as argmax takes the first), score, box. Scores quantized per class are compared as floats. */
static int take(const vis_head *h, const scan *sc, uint32_t a, uint32_t best, vis_cands *c) {
  vis_cand x = {0};
  x.anchor = a;
  if (sc->r.info->quant.kind == HTPU_QUANT_PER_AXIS) {
    x.score = -INFINITY;
    for (uint32_t k = 0; k < sc->classes; k++) {
      float v = vis_read(&sc->r, score_index(sc, a, k));
      if (v > x.score) x.score = v, x.cls = k;
    }
  } else {
    x.cls = first_class(sc, a, best);
    x.score = sc->byte_value ? sc->byte_value[key_raw8(sc->r.info, best)]
                             : key_value(sc->r.info, best);
  }
  /* +inf passes every threshold (-inf none): refused as NaN is */
  if (!isfinite(x.score))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "output '%s': the score of class %u at anchor %u is infinite; the "
                          "detector's scores must be finite numbers",
                          sc->r.info->name ? sc->r.info->name : "", x.cls, a);
  int rc = 0;
  if (h->has_class_ids) rc = class_id(h, a, &x.cls);
  /* the scores' table serves the boxes of a one-tensor head (the same tensor) */
  const float *bv = h->kind == HTPU_HEAD_AIHUB ? NULL : sc->byte_value;
  if (rc || (rc = read_box(h, bv, a, x.box))) return rc;
  return push(c, &x);
}

/* Scores quantized per class: every score dequantized (no shared keys). */
static int scan_floats(const vis_head *h, const scan *sc, float T, vis_cands *c) {
  for (uint32_t a = 0; a < h->anchors; a++) {
    float best = -INFINITY;
    for (uint32_t k = 0; k < sc->classes; k++) {
      float v = vis_read(&sc->r, score_index(sc, a, k));
      best = v > best ? v : best;
    }
    if (best > T) {
      int rc = take(h, sc, a, 0, c);
      if (rc) return rc;
    }
  }
  return HTPU_OK;
}

static scan scan_of(const vis_head *h) {
  if (h->kind == HTPU_HEAD_AIHUB) {
    uint32_t nc = h->has_class_ids ? 1 : (h->scores.info->num_elements / h->anchors);
    return (scan){h->scores, 0, nc, 1, nc, NULL};
  }
  return (scan){h->main, 4 * h->c_step, h->a_step, h->c_step, h->classes, NULL};
}

int vis_candidates(const vis_head *h, float threshold, vis_cands *c) {
  if (!h->anchors) return HTPU_OK; /* an output with a dynamic axis that came out empty */
  scan sc = scan_of(h);
  if (sc.r.info->quant.kind == HTPU_QUANT_PER_AXIS) return scan_floats(h, &sc, threshold, c);
  float byte_value[256]; /* each stored byte's value, as vis_read gives it */
  if (htpu_dtype_size(sc.r.info->dtype) == 1) {
    for (unsigned b = 0; b < 256; b++) {
      uint8_t one = (uint8_t)b;
      vis_reader r = {sc.r.info, &one};
      byte_value[b] = vis_read(&r, 0);
    }
    sc.byte_value = byte_value;
  }
  uint32_t kt = 0, best[BLOCK];
  int none = threshold_key(sc.r.info, threshold, &kt); /* no stored value is above it */
  for (size_t a0 = 0; a0 < h->anchors; a0 += BLOCK) {
    size_t n = h->anchors - a0 < BLOCK ? h->anchors - a0 : BLOCK;
    if (scan_block(&sc, a0, n, best)) return nan_error(&sc, a0, n);
    for (size_t j = 0; j < n; j++) {
      if (none || best[j] < kt) continue;
      int rc = take(h, &sc, (uint32_t)(a0 + j), best[j], c);
      if (rc) return rc;
    }
  }
  return HTPU_OK;
}
