/* The vision helpers at the edges of their sizes: frames whose dimensions, strides and UV
 * offsets would wrap a size computation, image inputs past the largest side, class ids past
 * any count, and output infos whose shape does not match their bytes. Each must be refused with
 * a message (or, for the class ids, kept as they are), never read out of bounds: the runner's
 * ASan build is the check for the latter. */
#include <stdint.h>
#include <stdlib.h>

#include "hexagon_tpu.h"
#include "test.h"

static htpu_tensor_info image(uint32_t h, uint32_t w, htpu_dtype t) {
  htpu_tensor_info in = {0};
  in.name = "images";
  in.dtype = t;
  in.rank = 4;
  in.dims[0] = 1, in.dims[1] = h, in.dims[2] = w, in.dims[3] = 3;
  in.num_elements = (size_t)h * w * 3;
  in.byte_size = in.num_elements * htpu_dtype_size(t);
  return in;
}

/* 2^31 x 2^31 RGBA with stride 0: the stride would be 2^33 and plane_bytes 2^33 x 2^31 = 2^64
 * wrapped to 0, so 16 bytes passed the size check and the gather read far past them. */
TEST(vision_limits_huge_frame_refused) {
  uint8_t data[16] = {7}, out[4 * 4 * 3];
  htpu_tensor_info in = image(4, 4, HTPU_U8);
  htpu_frame f = {data, sizeof data, 2147483648u, 2147483648u, 0, HTPU_PIXEL_RGBA, 0,
                  {0, 0, 0, 0}};
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "2147483648x2147483648 is larger than 65535 pixels");
  /* one side alone, and the limit itself: the largest side is still checked against the bytes */
  f.width = 65536, f.height = 1;
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "65536x1 is larger than 65535");
  f.width = HTPU_VISION_MAX_SIDE, f.height = HTPU_VISION_MAX_SIDE;
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "needs 17179344900 bytes, got 16");
  /* the largest stride with the most rows: 2^32 - 1 x 65534 + a row, no wrap */
  f.stride = UINT32_MAX;
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "with a stride of 4294967295 needs 281466386972670");
}

/* NV12 2x2 in 6 bytes with uv_offset = SIZE_MAX: uv_offset + the UV plane's 2 bytes wrapped to
 * 1 and the UV plane was read at data - 1. */
TEST(vision_limits_uv_offset_wrap_refused) {
  uint8_t nv12[6] = {16, 16, 16, 16, 128, 128}, out[4 * 4 * 3];
  htpu_tensor_info in = image(4, 4, HTPU_U8);
  htpu_frame f = {nv12, sizeof nv12, 2, 2, 0, HTPU_PIXEL_NV12, SIZE_MAX, {0, 0, 0, 0}};
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "UV plane offset 18446744073709551615 is past the "
                                        "frame's 6 bytes");
  for (size_t off = SIZE_MAX - 4; off != 0; off++) { /* every offset that wraps, up to SIZE_MAX */
    f.uv_offset = off;
    CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  }
  f.uv_offset = 5; /* inside, but the plane's 2 bytes are not */
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "needs 7 bytes (Y plane, then the UV plane at 5), got 6");
  f.uv_offset = 4;
  CHECK_EQ(htpu_preprocess(&f, &in, NULL, out, sizeof out, NULL), 0);
  CHECK(out[0] == 0 && out[47] == 0); /* Y 16, U = V = 128: black */
}

TEST(vision_limits_input_side) {
  uint8_t frame[12] = {0};
  htpu_frame f = {frame, sizeof frame, 2, 2, 0, HTPU_PIXEL_RGB24, 0, {0, 0, 0, 0}};
  htpu_tensor_info in = image(2, 70000, HTPU_U8);
  uint8_t *out = malloc(in.byte_size);
  CHECK(out != NULL);
  int rc = htpu_preprocess(&f, &in, NULL, out, in.byte_size, NULL);
  free(out);
  CHECK_EQ(rc, HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "input 'images' is an image of 70000x2; expected 1 to "
                                        "65535 pixels on a side");
}

static htpu_tensor_info plain(const char *name, htpu_dtype t, uint32_t a, uint32_t b) {
  htpu_tensor_info x = {0};
  x.name = name;
  x.dtype = t;
  x.rank = b ? 3 : 2;
  x.dims[0] = 1, x.dims[1] = a, x.dims[2] = b;
  x.num_elements = (size_t)a * (b ? b : 1);
  x.byte_size = x.num_elements * htpu_dtype_size(t);
  return x;
}

/* AI Hub's class output holds whatever the model wrote: without num_classes an id is kept as it
 * is (the NIF's label lookup must take any), with it an id past the count is refused. */
TEST(vision_limits_class_ids) {
  htpu_tensor_info t[3] = {plain("boxes", HTPU_F32, 2, 4), plain("scores", HTPU_F32, 2, 0),
                           plain("classes", HTPU_F32, 2, 0)};
  float boxes[8] = {0, 0, 10, 10, 20, 20, 30, 30}, scores[2] = {0.9f, 0.8f};
  float cls[2] = {3.0e9f, 4294967040.0f}; /* the largest float below 2^32 */
  const void *data[3] = {boxes, scores, cls};
  htpu_detection d[300];
  htpu_decode_info info;
  CHECK_EQ(htpu_decode(t, data, 3, NULL, NULL, d, 300, NULL, 0, &info), 0);
  CHECK_EQ(info.count, 2);
  CHECK_EQ(d[0].class_id, 3000000000u);
  CHECK_EQ(d[1].class_id, 4294967040u);
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.num_classes = 80;
  CHECK_EQ(htpu_decode(t, data, 3, &o, NULL, d, 300, NULL, 0, &info), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "anchor 0 has class 3e+09; expected a class id 0..79");
  cls[0] = 4294967296.0f; /* 2^32: no uint32_t holds it */
  CHECK_EQ(htpu_decode(t, data, 3, NULL, NULL, d, 300, NULL, 0, &info), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "expected a class id 0..4294967295");
}

/* The shape is what every index comes from: an info whose dims claim more than its bytes is
 * refused before anything is read. */
TEST(vision_limits_output_shape_against_bytes) {
  htpu_tensor_info t = plain("output0", HTPU_F32, 6, 4);
  float head[24] = {0};
  const void *data[1] = {head};
  htpu_detection d[300];
  t.dims[2] = 4000000; /* num_elements and byte_size still say 24 */
  CHECK_EQ(htpu_decode(&t, data, 1, NULL, NULL, d, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0' [1, 6, 4000000] f32 has 24 elements and "
                                        "96 bytes; its dims make 24000000 elements of 96000000 "
                                        "bytes: expected the info of the buffer as it is");
  t.rank = 4; /* dims whose product, 2^64, wraps to the 0 elements the info claims */
  t.dims[0] = t.dims[1] = t.dims[2] = t.dims[3] = 0x10000;
  t.num_elements = 0, t.byte_size = 0;
  CHECK_EQ(htpu_decode(&t, data, 1, NULL, NULL, d, 300, NULL, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0' of rank 4: its dims make more elements "
                                        "than fit in memory");
  /* an empty output (a dynamic axis that produced nothing) decodes to nothing */
  htpu_tensor_info e = plain("output0", HTPU_F32, 6, 0);
  e.rank = 3, e.dims[2] = 0, e.num_elements = 0, e.byte_size = 0;
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.layout = HTPU_HEAD_CHANNELS_FIRST;
  htpu_decode_info info;
  CHECK_EQ(htpu_decode(&e, data, 1, &o, NULL, d, 300, NULL, 0, &info), 0);
  CHECK_EQ(info.count, 0);
  CHECK_EQ(info.num_anchors, 0);
}

/* A keypoint count from the options whose product with the values a keypoint wraps 32 bits to
 * what the head has: 0x55555556 x 3 = 2 (mod 2^32), a [1, 7, A] pose head's 2 values past the
 * box and score. Refused as not the head's shape (it read keypoints far past the head). */
TEST(vision_limits_keypoint_count_wrap) {
  htpu_tensor_info t = plain("output0", HTPU_F32, 7, 4);
  float head[28] = {0};
  head[4 * 4 + 0] = 0.9f; /* anchor 0 scores */
  const void *data[1] = {head};
  htpu_detection d[1];
  static float kp[1 << 16];
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.head = HTPU_HEAD_ULTRALYTICS_POSE;
  o.layout = HTPU_HEAD_CHANNELS_FIRST;
  o.max_detections = 1;
  o.num_keypoints = 0x55555556u;
  CHECK_EQ(htpu_decode(&t, data, 1, &o, NULL, d, 1, kp, 1 << 16, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0' [1, 7, 4] has 7 values per anchor (read "
                                        "channels_first, the layout given); the pose head needs "
                                        "4 box values, 1 class score(s) and 1431655766 keypoints "
                                        "of 3 values (x, y, visibility): 4294967303 values");
}
