/*
 * vision.c - libFuzzer target for the vision functions (src/vision/, docs/vision.md): frame
 * descriptions into htpu_preprocess and detector heads into htpu_decode.
 *
 * Byte 0 bit 0 picks the function; bit 1 the wide variant of each (below).
 *
 * Preprocess: bytes 1..16 describe the frame and the input, the rest is the frame's data,
 * exactly that many bytes (a copy of its own, so a read past it is an ASan report):
 *   1 format (modulo 8, 0 is invalid), 2-3 width, 4-5 height (0..63 each), 6 stride (bit 7:
 *   packed, else the row's bytes + bits 0-3 - 4, so too small happens), 7 crop (bit 0 on; x, y,
 *   w, h from bytes 8-11 modulo the frame's size + 2), 12 input dtype (modulo 8), 13 input
 *   height, 14 width (1..32), 15 bits 0-1 layout, bit 2 NCHW shape, bit 3 one channel, bits
 *   4-5 resize, bit 6 scaleup, bit 7 bgr, 16 pad value and normalize (bits 0-1 of 16 >> 6).
 * Wide: bytes 17..44 replace the frame's sizes with full-range ones (what a caller or an Elixir
 *   term can hand over): 17-20 width, 21-24 height, 25-28 stride (u32 each), 29-36 uv_offset
 *   (64 bits), 37-44 the crop's x, y, w, h (16 bits each, when byte 7 bit 0); the data follows.
 * Checked: only HTPU_OK or HTPU_EINVAL, an error message with the latter; on success every
 * byte of the input was written (two runs into buffers filled with 0x00 and 0xff agree), the
 * geometry holds together (the resized rectangle and the padding fill the input), and the
 * frame as described lies inside its bytes (worked out here in 128 bits, independently of
 * frame.c: no size computation may have wrapped).
 *
 * Decode: bytes 1..13 describe the head, the rest fills the outputs' bytes cyclically:
 *   1 head (modulo 4), 2 layout (modulo 3), 3 dtype (modulo 8), 4 number of outputs (1..3), 5
 *   rank of the first (1..4), 6-9 its dims (1..24), 10 score threshold (byte / 200 - 0.1), 11
 *   IoU threshold (byte / 200), 12 max detections (1..32), 13 classes and keypoints (bits).
 *   The other outputs (AI Hub's boxes, scores, classes) take shapes from the first's anchors.
 *   A geometry of a 200x100 frame letterboxed into 64x64 maps the boxes back.
 * Wide: byte 14 bit 0: a dim of 0 where byte 6-9's value is 24 (an output with a dynamic axis
 *   that came out empty); bit 1: the first output's info claims dims past its bytes (refused);
 *   bits 2-3: the class output's type (u8, f32, i32, u32: ids up to 2^32 and past it); bit 4:
 *   the Ultralytics box mapping. The outputs' bytes follow.
 * Checked: only HTPU_OK or HTPU_EINVAL; on success at most max detections, best first, each
 * score above the threshold, a class below the count (with AI Hub's class output and no count:
 * the output's value, rounded); two kept boxes of one class overlap by at most the IoU
 * threshold in input pixels (no geometry); with the geometry the same detections, each box
 * inside the frame.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "hexagon_tpu.h"

static const htpu_dtype DT[] = {HTPU_U8, HTPU_I8, HTPU_U16, HTPU_I16,
                                HTPU_F16, HTPU_F32, HTPU_U32, HTPU_I32};

static void tensor(htpu_tensor_info *t, htpu_dtype dt, uint32_t rank, const uint32_t *dims,
                   float scale, int32_t zp) {
  memset(t, 0, sizeof *t);
  t->name = "t";
  t->dtype = dt;
  t->rank = rank;
  t->num_elements = 1;
  for (uint32_t i = 0; i < rank; i++) t->dims[i] = dims[i], t->num_elements *= dims[i];
  t->byte_size = t->num_elements * htpu_dtype_size(dt);
  if (dt != HTPU_F32 && dt != HTPU_F16)
    t->quant = (htpu_quant){.kind = HTPU_QUANT_PER_TENSOR, .scale = scale, .zero_point = zp};
}

static void check_error(int rc, const char *what) {
  FUZZ_CHECK(rc == HTPU_OK || rc == HTPU_EINVAL, "%s returned %d (%s)", what, rc,
             htpu_last_error());
  if (rc) FUZZ_CHECK(htpu_last_error()[0] != 0, "%s: an error without a message", what);
}

static const unsigned BPP[] = {0, 3, 3, 4, 4, 1, 2, 1};

static uint64_t rd(const uint8_t *p, unsigned bytes) {
  uint64_t v = 0;
  for (unsigned i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The frame's sizes: small ones from bytes 1-11, or the wide variant's (bytes 17-44). Returns
 * the header's length. */
static size_t frame_sizes(const uint8_t *d, int wide, htpu_frame *f) {
  memset(f, 0, sizeof *f);
  f->format = (htpu_pixel_format)(d[1] % 8);
  if (wide) {
    f->width = (uint32_t)rd(d + 17, 4), f->height = (uint32_t)rd(d + 21, 4);
    f->stride = (uint32_t)rd(d + 25, 4);
    f->uv_offset = (size_t)rd(d + 29, 8);
    if (d[7] & 1)
      f->crop = (htpu_rect){(uint32_t)rd(d + 37, 2), (uint32_t)rd(d + 39, 2),
                            (uint32_t)rd(d + 41, 2), (uint32_t)rd(d + 43, 2)};
    return 45;
  }
  f->width = (d[2] | d[3] << 8) % 64, f->height = (d[4] | d[5] << 8) % 64;
  if (!(d[6] & 0x80)) {
    long s = (long)f->width * BPP[f->format] + (d[6] & 15) - 4;
    f->stride = s > 0 ? (uint32_t)s : 0;
  }
  if (d[7] & 1)
    f->crop = (htpu_rect){d[8] % (f->width + 2), d[9] % (f->height + 2), d[10] % (f->width + 2),
                          d[11] % (f->height + 2)};
  return 17;
}

/* A frame htpu_preprocess accepted: every row it claims (and the NV12 UV plane's) ends inside
 * its bytes, worked out in 128 bits. */
static void check_extent(const htpu_frame *f) {
  typedef unsigned __int128 u128;
  u128 row = (u128)f->width * BPP[f->format], stride = f->stride ? f->stride : row;
  FUZZ_CHECK(f->width <= HTPU_VISION_MAX_SIDE && f->height <= HTPU_VISION_MAX_SIDE,
             "accepted a %ux%u frame", f->width, f->height);
  u128 need = stride * (f->height - 1) + row;
  FUZZ_CHECK(need <= f->size, "accepted a frame needing %llu bytes with %zu",
             (unsigned long long)need, f->size);
  if (f->format != HTPU_PIXEL_NV12) return;
  u128 uv = f->uv_offset ? (u128)f->uv_offset : stride * f->height;
  u128 uv_end = uv + stride * (f->height / 2 - 1) + row;
  FUZZ_CHECK(uv >= need && uv_end <= f->size, "accepted a UV plane at %llu ending at %llu of %zu",
             (unsigned long long)uv, (unsigned long long)uv_end, f->size);
}

static void fuzz_preprocess(const uint8_t *d, size_t n) {
  int wide = (d[0] & 2) != 0;
  if (n < (wide ? 45u : 17u)) return;
  htpu_frame f;
  size_t at = frame_sizes(d, wide, &f);
  size_t size = n - at;
  uint8_t *data = malloc(size ? size : 1);
  if (!data) return;
  memcpy(data, d + at, size);
  f.data = data, f.size = size;

  uint32_t ih = 1 + d[13] % 32, iw = 1 + d[14] % 32, c = (d[15] & 8) ? 1 : 3;
  uint32_t dims[4] = {1, ih, iw, c};
  if (d[15] & 4) dims[1] = c, dims[2] = ih, dims[3] = iw;
  htpu_tensor_info t;
  tensor(&t, DT[d[12] % 8], 4, dims, 1.0f / 255, 0);
  htpu_preprocess_options o;
  htpu_preprocess_options_init(&o);
  o.layout = (htpu_image_layout)(d[15] & 3);
  o.resize = (htpu_resize_mode)((d[15] >> 4) & 3);
  o.scaleup = (d[15] >> 6) & 1;
  o.bgr = d[15] >> 7;
  o.pad_value = d[16] & 0x3f;
  o.normalize = (htpu_normalize)(d[16] >> 6);
  for (int k = 0; k < 3; k++) o.mean[k] = 0.5f, o.std[k] = 0.25f;

  uint8_t *a = malloc(t.byte_size), *b = malloc(t.byte_size);
  htpu_geometry g;
  if (a && b) {
    memset(a, 0, t.byte_size);
    memset(b, 0xff, t.byte_size);
    int rc = htpu_preprocess(&f, &t, &o, a, t.byte_size, &g);
    check_error(rc, "htpu_preprocess");
    if (rc == HTPU_OK) {
      check_extent(&f);
      FUZZ_CHECK(htpu_preprocess(&f, &t, &o, b, t.byte_size, NULL) == HTPU_OK, "second run");
      FUZZ_CHECK(memcmp(a, b, t.byte_size) == 0, "an input byte was not written");
      FUZZ_CHECK(g.pad_left + g.resized_width + g.pad_right == g.input_width &&
                     g.pad_top + g.resized_height + g.pad_bottom == g.input_height &&
                     g.resized_width >= 1 && g.resized_height >= 1,
                 "geometry: %u + %u + %u != %u or %u + %u + %u != %u", g.pad_left,
                 g.resized_width, g.pad_right, g.input_width, g.pad_top, g.resized_height,
                 g.pad_bottom, g.input_height);
    }
  }
  free(a), free(b), free(data);
}

static float box_iou(const float *a, const float *b) {
  float w = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), h = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
  float inter = (w > 0 ? w : 0) * (h > 0 ? h : 0);
  float u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return u > 0 ? inter / u : 0;
}

/* Sorted, above the threshold, NMS respected in input pixels (where it runs, as Ultralytics':
 * boxes apart there can meet once clipped to the frame); in the frame with the geometry (det2,
 * the same call with it). */
static void check_detections(const htpu_detection *det, const htpu_detection *det2,
                             const htpu_decode_info *info, const htpu_decode_options *o,
                             const htpu_geometry *g) {
  FUZZ_CHECK(info->count <= o->max_detections, "%u detections, max %u", info->count,
             o->max_detections);
  for (uint32_t i = 0; i < info->count; i++) {
    const htpu_detection *x = &det[i];
    FUZZ_CHECK(x->score > o->score_threshold, "detection %u: score %g <= %g", i, x->score,
               o->score_threshold);
    FUZZ_CHECK(i == 0 || det[i - 1].score >= x->score, "detection %u is better than %u", i,
               i - 1);
    FUZZ_CHECK(!info->num_classes || x->class_id < info->num_classes, "class %u of %u", x->class_id,
               info->num_classes); /* AI Hub: the class ids say, no count */
    FUZZ_CHECK(det2[i].score == x->score && det2[i].class_id == x->class_id &&
                   det2[i].anchor == x->anchor, "detection %u differs with a geometry", i);
    for (int k = 0; k < 4; k++)
      FUZZ_CHECK(det2[i].box[k] >= 0 &&
                     det2[i].box[k] <= (k % 2 ? g->frame_height : g->frame_width),
                 "detection %u: box value %d = %g outside the frame", i, k, det2[i].box[k]);
    for (uint32_t j = 0; j < i; j++)
      if (o->agnostic || det[j].class_id == x->class_id)
        FUZZ_CHECK(box_iou(det[j].box, x->box) <= o->iou_threshold + 1e-5f,
                   "detections %u and %u overlap by %g > %g", j, i,
                   box_iou(det[j].box, x->box), o->iou_threshold);
  }
}

/* AI Hub's class output (the third) and no class count: each detection's class is the value
 * there, rounded (fuzz tensors of integers have scale 1 and zero point 0). */
static void check_class_ids(const htpu_detection *det, uint32_t count, const htpu_tensor_info *c,
                            const void *data) {
  for (uint32_t i = 0; i < count; i++) {
    uint32_t a = det[i].anchor;
    double v;
    switch (c->dtype) {
      case HTPU_U8: v = ((const uint8_t *)data)[a]; break;
      case HTPU_F32: v = ((const float *)data)[a]; break;
      case HTPU_I32: v = ((const int32_t *)data)[a]; break;
      case HTPU_U32: v = ((const uint32_t *)data)[a]; break;
      default: return; /* another type: its dequantization is not worked out here */
    }
    FUZZ_CHECK((double)det[i].class_id == nearbyint((float)v), "detection %u: class %u, the "
               "output holds %g", i, det[i].class_id, v);
  }
}

/* The options and the outputs' infos from the header; the number of outputs. */
static uint32_t decode_head(const uint8_t *d, int wide, htpu_decode_options *o,
                            htpu_tensor_info *t) {
  static const htpu_dtype CLS[] = {HTPU_U8, HTPU_F32, HTPU_I32, HTPU_U32};
  htpu_decode_options_init(o);
  o->head = (htpu_head)(d[1] % 4);
  o->layout = (htpu_head_layout)(d[2] % 3);
  htpu_dtype dt = DT[d[3] % 8];
  uint32_t nout = 1 + d[4] % 3, rank = 1 + d[5] % 4, dims[4];
  for (uint32_t i = 0; i < 4; i++) {
    dims[i] = 1 + d[6 + i] % 24;
    if (wide && (d[14] & 1) && dims[i] == 24) dims[i] = 0; /* a dynamic axis, empty */
  }
  o->score_threshold = d[10] / 200.0f - 0.1f;
  o->iou_threshold = d[11] / 200.0f;
  o->max_detections = 1 + d[12] % 32;
  o->agnostic = d[13] & 1;
  if (d[13] & 2) o->num_classes = 1 + (d[13] >> 2) % 8;
  if (d[13] & 0x40) o->num_keypoints = 1 + (d[13] >> 2) % 4, o->keypoint_dims = 2 + (d[13] >> 7);
  if (wide && (d[14] & 16)) o->box_mapping = HTPU_MAP_ULTRALYTICS;
  tensor(&t[0], dt, rank, dims, 0.05f, d[9] % 7);
  uint32_t anchors = rank > 1 ? dims[1] : dims[0];
  uint32_t sd[3] = {1, anchors, 4};
  htpu_dtype cls = wide ? CLS[(d[14] >> 2) & 3] : d[9] & 1 ? HTPU_U8 : dt;
  tensor(&t[1], dt, 2, sd, 0.01f, 0);  /* scores [1, A] */
  tensor(&t[2], cls, 2, sd, 1, 0);     /* classes [1, A] */
  if (nout == 3) t[0].rank = 3, t[0].dims[2] = 4, t[0].dims[1] = anchors, t[0].dims[0] = 1,
                 t[0].num_elements = (size_t)anchors * 4,
                 t[0].byte_size = t[0].num_elements * htpu_dtype_size(dt);
  return nout;
}

/* The geometry of a 200x100 frame letterboxed into 64x64. */
static int geometry(htpu_geometry *g) {
  uint32_t idims[4] = {1, 64, 64, 3};
  htpu_tensor_info in;
  tensor(&in, HTPU_U8, 4, idims, 1.0f / 255, 0);
  uint8_t *img = malloc(in.byte_size), *frame = malloc(200 * 100 * 3);
  int rc = -1;
  if (img && frame) {
    memset(frame, 7, 200 * 100 * 3);
    htpu_frame f = {frame, 200 * 100 * 3, 200, 100, 0, HTPU_PIXEL_RGB24, 0, {0, 0, 0, 0}};
    rc = htpu_preprocess(&f, &in, NULL, img, in.byte_size, g);
    FUZZ_CHECK(rc == HTPU_OK, "geometry");
  }
  free(img), free(frame);
  return rc;
}

static void fuzz_decode(const uint8_t *d, size_t n) {
  int wide = (d[0] & 2) != 0;
  size_t at = wide ? 15 : 14;
  if (n < at) return;
  htpu_decode_options o;
  htpu_tensor_info t[3];
  uint32_t nout = decode_head(d, wide, &o, t);
  const uint8_t *src = d + at;
  size_t srcn = n - at;
  void *buf[3] = {NULL, NULL, NULL};
  const void *ptr[3];
  htpu_geometry g;
  for (uint32_t i = 0; i < nout; i++) {
    buf[i] = malloc(t[i].byte_size ? t[i].byte_size : 1);
    if (!buf[i]) goto out;
    for (size_t k = 0; k < t[i].byte_size; k++) ((uint8_t *)buf[i])[k] = srcn ? src[k % srcn] : 0;
    ptr[i] = buf[i];
  }
  int lying = wide && (d[14] & 2); /* dims that claim more than the bytes given */
  for (uint32_t k = 0; lying && k < t[0].rank; k++) /* a product above the element count */
    t[0].dims[k] = k + 1 == t[0].rank ? t[0].dims[k] * 1000 + 1 : t[0].dims[k] ? t[0].dims[k] : 1;
  if (geometry(&g)) goto out;
  htpu_detection det[32], det2[32];
  float kp[32 * 17 * 3];
  htpu_decode_info info, info2;
  int rc = htpu_decode(t, ptr, nout, &o, NULL, det, 32, kp, sizeof kp / sizeof kp[0], &info);
  check_error(rc, "htpu_decode");
  FUZZ_CHECK(!lying || rc == HTPU_EINVAL, "dims past the bytes accepted");
  int rc2 = htpu_decode(t, ptr, nout, &o, &g, det2, 32, kp, sizeof kp / sizeof kp[0], &info2);
  FUZZ_CHECK(rc2 == rc && (rc || info2.count == info.count), "with a geometry: %d, %u", rc2,
             info2.count);
  if (rc == HTPU_OK) {
    check_detections(det, det2, &info, &o, &g);
    if (info.head == HTPU_HEAD_AIHUB && nout == 3 && !o.num_classes && !info.num_classes)
      check_class_ids(det, info.count, &t[2], ptr[2]);
  }
out:
  for (uint32_t i = 0; i < nout; i++) free(buf[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (data[0] & 1)
    fuzz_decode(data, size);
  else
    fuzz_preprocess(data, size);
  return 0;
}
