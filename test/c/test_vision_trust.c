/* What htpu_decode takes from its caller and from the model without trusting it: the score
 * threshold's range, a hand-made geometry, infinite scores and boxes, AI Hub corners the wrong
 * way round, and dequantization scales that would turn every value into infinity. Each is
 * refused with a message naming the field or output and what was expected. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "test.h"

/* [1, 5, 2] f32 channels first: anchor a's box cx, cy, w, h then one class score. */
static htpu_tensor_info yolo(void) {
  htpu_tensor_info t = {0};
  t.name = "output0";
  t.dtype = HTPU_F32;
  t.rank = 3;
  t.dims[0] = 1, t.dims[1] = 5, t.dims[2] = 2;
  t.num_elements = 10;
  t.byte_size = 40;
  return t;
}

static void one_box(float *v) {
  memset(v, 0, 10 * sizeof *v);
  v[0] = 20, v[2] = 30, v[4] = 10, v[6] = 8, v[8] = 0.9f; /* anchor 0: (15, 26)-(25, 34) */
}

static int dec(const htpu_tensor_info *t, const void *data, const htpu_decode_options *o,
               const htpu_geometry *g, htpu_detection *d) {
  const void *ds[1] = {data};
  return htpu_decode(t, ds, 1, o, g, d, 300, NULL, 0, NULL);
}

static htpu_decode_options opts(void) {
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.layout = HTPU_HEAD_CHANNELS_FIRST;
  return o;
}

TEST(vision_trust_score_threshold_range) {
  static htpu_detection d[300];
  float v[10];
  one_box(v);
  htpu_tensor_info t = yolo();
  htpu_decode_options o = opts();
  float bad[] = {-0.5f, 1.5f, NAN, INFINITY};
  for (int i = 0; i < 4; i++) {
    o.score_threshold = bad[i];
    CHECK_EQ(dec(&t, v, &o, NULL, d), HTPU_EINVAL);
    CHECK_STR_CONTAINS(htpu_last_error(), "decode: the score threshold");
    CHECK_STR_CONTAINS(htpu_last_error(), "is not in 0..1");
  }
  htpu_decode_info info;
  const void *ds[1] = {v};
  o.score_threshold = 0.0f;
  CHECK_EQ(htpu_decode(&t, ds, 1, &o, NULL, d, 300, NULL, 0, &info), HTPU_OK);
  CHECK_EQ(info.count, 1);
  o.score_threshold = 1.0f;
  CHECK_EQ(htpu_decode(&t, ds, 1, &o, NULL, d, 300, NULL, 0, &info), HTPU_OK);
  CHECK_EQ(info.count, 0);
}

/* The geometry of a 100x50 frame letterboxed into 64x64: r 0.64, 64x32 at top 16. */
static htpu_geometry letterboxed(void) {
  htpu_geometry g = {100, 50, {0, 0, 100, 50}, 64, 64, 64, 32, 0, 16, 0, 16, 0.64, 0.64};
  return g;
}

static void geometry_refused(const htpu_geometry *g, const char *field) {
  static htpu_detection d[300];
  float v[10];
  one_box(v);
  htpu_tensor_info t = yolo();
  htpu_decode_options o = opts();
  CHECK_EQ(dec(&t, v, &o, g, d), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "is not one htpu_preprocess could return: ");
  CHECK_STR_CONTAINS(htpu_last_error(), field);
}

TEST(vision_trust_geometry_checked) {
  static htpu_detection d[300];
  float v[10];
  one_box(v);
  htpu_tensor_info t = yolo();
  htpu_decode_options o = opts();
  htpu_geometry g = letterboxed();
  CHECK_EQ(dec(&t, v, &o, &g, d), HTPU_OK);
  /* (15 - 0) / 0.64, (26 - 16) / 0.64, ...: the direct formula */
  CHECK(fabsf(d[0].box[0] - 15 / 0.64f) < 1e-3f && fabsf(d[0].box[1] - 10 / 0.64f) < 1e-3f);
  const char *scales = "scale_x and scale_y: expected finite numbers in 1/65535..65535";
  double bad_scales[] = {0.0, -1.0, NAN, INFINITY, 1e9, 1e-9};
  for (int i = 0; i < 6; i++) {
    g = letterboxed(), g.scale_x = bad_scales[i];
    geometry_refused(&g, scales);
    g = letterboxed(), g.scale_y = bad_scales[i];
    geometry_refused(&g, scales);
  }
  const char *region = "region {x, y, width, height}: expected a non-empty rectangle inside "
                       "the frame";
  g = letterboxed(), g.region.x = UINT32_MAX;
  geometry_refused(&g, region);
  g = letterboxed(), g.region.y = 1; /* 50 rows from row 1 of 50 */
  geometry_refused(&g, region);
  g = letterboxed(), g.region.width = 0;
  geometry_refused(&g, region);
  const char *pads = "pad_left + resized_width + pad_right (and pad_top + resized_height + "
                     "pad_bottom): expected at most the input's width (height)";
  g = letterboxed(), g.pad_left = UINT32_MAX; /* no wrap of the sum */
  geometry_refused(&g, pads);
  g = letterboxed(), g.pad_bottom = 17;
  geometry_refused(&g, pads);
  g = letterboxed(), g.frame_width = 0;
  geometry_refused(&g, "frame_width and frame_height: expected 1 to 65535");
  g = letterboxed(), g.input_height = 70000;
  geometry_refused(&g, "input_width and input_height: expected 1 to 65535");
}

TEST(vision_trust_infinite_scores_and_boxes) {
  static htpu_detection d[300];
  float v[10];
  htpu_tensor_info t = yolo();
  htpu_decode_options o = opts();
  one_box(v);
  v[9] = INFINITY; /* anchor 1's score */
  CHECK_EQ(dec(&t, v, &o, NULL, d), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0': the score of class 0 at anchor 1 is "
                                        "infinite; the detector's scores must be finite numbers");
  one_box(v);
  v[9] = -INFINITY; /* below every threshold: no candidate, no error */
  htpu_decode_info info;
  const void *ds[1] = {v};
  CHECK_EQ(htpu_decode(&t, ds, 1, &o, NULL, d, 300, NULL, 0, &info), HTPU_OK);
  CHECK_EQ(info.count, 1);
  one_box(v);
  v[4] = INFINITY; /* anchor 0's w */
  CHECK_EQ(dec(&t, v, &o, NULL, d), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0': the box of anchor 0 is infinite");
}

/* AI Hub's three outputs for 2 anchors: boxes [1, 2, 4], scores [1, 2], classes [1, 2]. */
static void aihub(htpu_tensor_info *t) {
  const char *names[3] = {"boxes", "scores", "classes"};
  for (int i = 0; i < 3; i++) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].name = names[i];
    t[i].dtype = HTPU_F32;
    t[i].rank = i ? 2 : 3;
    t[i].dims[0] = 1, t[i].dims[1] = 2, t[i].dims[2] = 4;
    t[i].num_elements = i ? 2 : 8;
    t[i].byte_size = t[i].num_elements * 4;
  }
}

TEST(vision_trust_aihub_corners) {
  static htpu_detection d[300];
  htpu_tensor_info t[3];
  aihub(t);
  float boxes[8] = {10, 10, 20, 30, 50, 5, 40, 9}, scores[2] = {0.8f, 0.9f}, cls[2] = {1, 2};
  const void *ds[3] = {boxes, scores, cls};
  CHECK_EQ(htpu_decode(t, ds, 3, NULL, NULL, d, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'boxes': the box of anchor 1 is (50, 5, 40, 9); "
                                        "expected corners x1 <= x2 and y1 <= y2");
  boxes[4] = 30; /* corners the right way round: both kept as they are */
  htpu_decode_info info;
  CHECK_EQ(htpu_decode(t, ds, 3, NULL, NULL, d, 300, NULL, 0, &info), HTPU_OK);
  CHECK_EQ(info.count, 2);
  CHECK(d[0].box[0] == 30 && d[0].box[2] == 40 && d[0].class_id == 2);
}

/* A u8 head whose scale turns 255 into 2.5e40: named as the scale's fault, not a box's. */
TEST(vision_trust_dequantization_scale) {
  static htpu_detection d[300];
  uint8_t v[10] = {20, 30, 10, 8, 8, 8, 4, 4, 230, 1};
  htpu_tensor_info t = yolo();
  t.dtype = HTPU_U8, t.byte_size = 10;
  t.quant.kind = HTPU_QUANT_PER_TENSOR;
  t.quant.scale = 1e38f;
  htpu_decode_options o = opts();
  CHECK_EQ(dec(&t, v, &o, NULL, d), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0': scale 1e+38 (zero point 0) "
                                        "dequantizes values past the limit; expected a finite "
                                        "scale > 0 that keeps every u8 value within +-1e+30");
  t.quant.scale = 0.0f;
  CHECK_EQ(dec(&t, v, &o, NULL, d), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "scale 0 (zero point 0) is not finite and > 0");
  t.quant.scale = 1.0f / 255; /* a real one: scores up to 1, boxes in 0..1 */
  CHECK_EQ(dec(&t, v, &o, NULL, d), HTPU_OK);
}
