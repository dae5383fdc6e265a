/* The vision helpers' C surface: names, defaults, argument checks the oracle (test/vision/)
 * cannot reach through its driver, and small exact cases worked by hand. */
#include <math.h>
#include <stdlib.h>

#include "hexagon_tpu.h"
#include "test.h"

static htpu_tensor_info image_info(uint32_t h, uint32_t w, uint32_t c, htpu_dtype t) {
  htpu_tensor_info in = {0};
  in.name = "images";
  in.dtype = t;
  in.rank = 4;
  in.dims[0] = 1, in.dims[1] = h, in.dims[2] = w, in.dims[3] = c;
  in.num_elements = (size_t)h * w * c;
  in.byte_size = in.num_elements * htpu_dtype_size(t);
  return in;
}

TEST(vision_names) {
  htpu_pixel_format f;
  htpu_resize_mode m;
  htpu_head h;
  CHECK_EQ(htpu_pixel_format_from_name("nv12", &f), 0);
  CHECK_EQ(f, HTPU_PIXEL_NV12);
  CHECK(strcmp(htpu_pixel_format_name(HTPU_PIXEL_YUYV), "yuyv") == 0);
  CHECK(htpu_pixel_format_name(HTPU_PIXEL_INVALID) == NULL);
  CHECK(htpu_pixel_format_name((htpu_pixel_format)99) == NULL);
  CHECK_EQ(htpu_pixel_format_from_name("i420", &f), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "unknown pixel format 'i420'");
  CHECK_EQ(htpu_resize_mode_from_name("crop", &m), 0);
  CHECK_EQ(m, HTPU_RESIZE_CROP);
  CHECK_EQ(htpu_resize_mode_from_name(NULL, &m), HTPU_EINVAL);
  CHECK_EQ(htpu_head_from_name("ultralytics_pose", &h), 0);
  CHECK_EQ(h, HTPU_HEAD_ULTRALYTICS_POSE);
  CHECK(strcmp(htpu_head_name(HTPU_HEAD_AIHUB), "aihub") == 0);
  CHECK_EQ(htpu_head_from_name("yolo", &h), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "expected auto, ultralytics, ultralytics_pose or aihub");
}

TEST(vision_option_defaults) {
  htpu_preprocess_options p;
  htpu_decode_options d;
  htpu_preprocess_options_init(&p);
  htpu_decode_options_init(&d);
  CHECK_EQ(p.resize, HTPU_RESIZE_LETTERBOX);
  CHECK_EQ(p.pad_value, 114);
  CHECK_EQ(p.scaleup, 1);
  CHECK(p.std[0] == 1.0f && p.std[2] == 1.0f);
  CHECK(d.score_threshold == 0.25f && d.iou_threshold == 0.7f);
  CHECK_EQ(d.max_detections, 300);
  CHECK_EQ(d.max_candidates, 30000);
  CHECK_EQ(d.keypoint_dims, 3);
  htpu_preprocess_options_init(NULL); /* no-ops */
  htpu_decode_options_init(NULL);
}

/* A 2x2 RGB frame letterboxed into 4x4: r = 2, no padding; OpenCV's 2x enlargement of
 * [0, 255] is 0, 64, 191, 255 (weights 1/4, 3/4 at both edges: clamped, so edge pixels stay). */
TEST(vision_preprocess_small_exact) {
  uint8_t frame[2 * 2 * 3] = {0, 0, 0, 255, 255, 255, 0, 0, 0, 255, 255, 255};
  htpu_frame f = {frame, sizeof frame, 2, 2, 0, HTPU_PIXEL_RGB24, 0, {0, 0, 0, 0}};
  htpu_tensor_info in = image_info(4, 4, 3, HTPU_U8);
  uint8_t out[48];
  htpu_geometry g;
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, &g), 0);
  CHECK_EQ(g.resized_width, 4);
  CHECK_EQ(g.pad_left + g.pad_top + g.pad_right + g.pad_bottom, 0);
  CHECK(g.scale_x == 2.0 && g.scale_y == 2.0);
  uint8_t want[4] = {0, 64, 191, 255};
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 4; x++)
      CHECK_MSG(out[(y * 4 + x) * 3] == want[x], "(%d, %d): %u, expected %u", x, y,
                out[(y * 4 + x) * 3], want[x]);
}

TEST(vision_preprocess_argument_checks) {
  uint8_t frame[12] = {0}, out[48];
  htpu_frame f = {frame, sizeof frame, 2, 2, 0, HTPU_PIXEL_RGB24, 0, {0, 0, 0, 0}};
  htpu_tensor_info in = image_info(4, 4, 3, HTPU_U8);
  CHECK_EQ(htpu_preprocess(NULL, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "frame: NULL");
  CHECK_EQ(htpu_preprocess(&f, NULL, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, NULL, sizeof out, NULL), HTPU_EINVAL);
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out - 1, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "dst has 47");
  f.format = (htpu_pixel_format)42;
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "pixel format 42");
  f.format = HTPU_PIXEL_RGB24;
  f.data = NULL;
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "data is NULL");
  f.data = frame;
  f.crop = (htpu_rect){1, 1, 0, 0};
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "is empty");
  f.crop = (htpu_rect){0, 0, 0, 0};
  htpu_tensor_info b8 = image_info(4, 4, 3, HTPU_BOOL8);
  CHECK_EQ(htpu_preprocess(&f, &b8, NULL, out, sizeof out, NULL), HTPU_EUNSUPPORTED);
  htpu_preprocess_options o;
  htpu_preprocess_options_init(&o);
  o.resize = (htpu_resize_mode)7;
  CHECK_EQ(htpu_preprocess(&f, &in, &o, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "resize mode 7");
}

/* Letterbox of a 1920x1080 frame into 640x640: r = 1/3, 640x360, 140 rows above and below. */
TEST(vision_geometry_map_points) {
  htpu_geometry g = {1920, 1080, {0, 0, 1920, 1080}, 640, 640, 640, 360, 0, 140, 0, 140,
                     1.0 / 3, 1.0 / 3};
  float xy[6] = {320, 320, -10, 100, 700, 600};
  htpu_geometry_map_points(&g, xy, 3);
  CHECK(fabsf(xy[0] - 960) < 1e-3f && fabsf(xy[1] - 540) < 1e-3f);
  CHECK(xy[2] == 0 && xy[3] == 0);          /* clipped to the frame */
  CHECK(xy[4] == 1920 && xy[5] == 1080);
  g.region = (htpu_rect){100, 50, 800, 600};
  float p[2] = {0, 500};
  htpu_geometry_map_points(&g, p, 1);
  CHECK(p[0] == 100 && p[1] == 50 + 600); /* clipped to the region, then offset */
  htpu_geometry_map_points(NULL, p, 1);  /* no-op */
}

static htpu_tensor_info head_info(uint32_t c, uint32_t a) {
  htpu_tensor_info t = {0};
  t.name = "output0";
  t.dtype = HTPU_F32;
  t.rank = 3;
  t.dims[0] = 1, t.dims[1] = c, t.dims[2] = a;
  t.num_elements = (size_t)c * a;
  t.byte_size = t.num_elements * 4;
  return t;
}

TEST(vision_decode_argument_checks) {
  htpu_tensor_info t = head_info(6, 4);
  float head[24] = {0};
  const void *data[1] = {head};
  htpu_detection dets[300];
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  CHECK_EQ(htpu_decode(&t, data, 1, &o, NULL, dets, 10, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "room for 10 detections, max_detections is 300");
  CHECK_EQ(htpu_decode(&t, data, 1, &o, NULL, NULL, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_EQ(htpu_decode(&t, data, 0, &o, NULL, dets, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "no outputs given");
  o.score_threshold = NAN;
  CHECK_EQ(htpu_decode(&t, data, 1, &o, NULL, dets, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "score threshold nan is not in 0..1");
  htpu_decode_options_init(&o);
  o.head = HTPU_HEAD_ULTRALYTICS_POSE;
  o.keypoint_dims = 2; /* 4 + 1 class + 1 keypoint of x, y */
  o.layout = HTPU_HEAD_CHANNELS_FIRST; /* with 4 anchors, the smaller axis is not the channels */
  htpu_tensor_info tp = head_info(7, 4);
  float pose[28] = {0};
  const void *pdata[1] = {pose};
  CHECK_EQ(htpu_decode(&tp, pdata, 1, &o, NULL, dets, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "room for 600 floats is needed");
  const void *none[1] = {NULL};
  htpu_decode_options_init(&o);
  CHECK_EQ(htpu_decode(&t, none, 1, &o, NULL, dets, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "its data is NULL");
}

/* Two overlapping boxes of one class and one of another, worked by hand. */
TEST(vision_decode_small_exact) {
  htpu_tensor_info t = head_info(6, 4); /* 2 classes, 4 anchors, channels first */
  float head[24] = {
      10, 12, 50, 90,  /* cx */
      10, 12, 50, 10,  /* cy */
      10, 10, 10, 10,  /* w */
      10, 10, 10, 10,  /* h */
      0.9f, 0.8f, 0.1f, 0.2f, /* class 0 */
      0.1f, 0.1f, 0.7f, 0.3f  /* class 1 */
  };
  const void *data[1] = {head};
  htpu_detection d[300];
  htpu_decode_info info;
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.layout = HTPU_HEAD_CHANNELS_FIRST; /* 4 anchors: fewer than the 6 channels */
  CHECK_EQ(htpu_decode(&t, data, 1, &o, NULL, d, 300, NULL, 0, &info), 0);
  /* anchor 1 overlaps anchor 0 (IoU 64/136 = 0.47 < 0.7): kept; anchor 3 scores 0.3 > 0.25 */
  CHECK_EQ(info.count, 4);
  CHECK_EQ(info.candidates, 4);
  CHECK_EQ(info.num_classes, 2);
  CHECK_EQ(info.head, HTPU_HEAD_ULTRALYTICS);
  CHECK_EQ(info.layout, HTPU_HEAD_CHANNELS_FIRST);
  CHECK_EQ(d[0].anchor, 0);
  CHECK(d[0].box[0] == 5 && d[0].box[3] == 15 && d[0].score == 0.9f);
  CHECK_EQ(d[1].anchor, 1);
  CHECK_EQ(d[2].anchor, 2);
  CHECK_EQ(d[2].class_id, 1);
  CHECK_EQ(d[3].anchor, 3);
  o.iou_threshold = 0.4f; /* now anchor 1 goes */
  CHECK_EQ(htpu_decode(&t, data, 1, &o, NULL, d, 300, NULL, 0, &info), 0);
  CHECK_EQ(info.count, 3);
  CHECK_EQ(d[1].anchor, 2);
}
