/* The vision helpers' errors in full: each names the frame or output that was wrong, what it
 * was, and what was expected (the Elixir module and `htpu detect` pass these texts on). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "test.h"

static htpu_tensor_info rgb_input(void) {
  htpu_tensor_info in = {0};
  in.name = "images";
  in.dtype = HTPU_U8;
  in.rank = 4;
  in.dims[0] = 1, in.dims[1] = 4, in.dims[2] = 4, in.dims[3] = 3;
  in.num_elements = 48;
  in.byte_size = 48;
  return in;
}

static int pre(const htpu_frame *f) {
  static uint8_t out[48];
  htpu_tensor_info in = rgb_input();
  return htpu_preprocess(f, &in, NULL, out, sizeof out, NULL);
}

TEST(vision_messages_frames) {
  static uint8_t px[16 * 8 * 3];
  htpu_frame f = {px, sizeof px, 0, 8, 0, HTPU_PIXEL_RGB24, 0, {0, 0, 0, 0}};
  CHECK_EQ(pre(&f), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "frame: 0x8 has no pixels: expected a width and height of at least 1");
  f.width = 16, f.stride = 40;
  CHECK_EQ(pre(&f), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "frame: stride 40 is smaller than a row of 16 rgb24 "
                                        "pixels (48 bytes): expected 0 (rows packed) or at "
                                        "least 48");
  f.stride = 0, f.crop = (htpu_rect){10, 0, 10, 8};
  CHECK_EQ(pre(&f), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "frame: crop 10x8 at (10, 0) is outside the 16x8 frame: "
                                        "expected x + width <= 16 and y + height <= 8");
  /* NV12 16x8: Y plane 128 bytes, UV plane 64 */
  htpu_frame n = {px, 256, 16, 8, 0, HTPU_PIXEL_NV12, 100, {0, 0, 0, 0}};
  CHECK_EQ(pre(&n), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "frame: the nv12 UV plane at offset 100 overlaps the Y "
                                        "plane, which ends at 128: expected 0 (right after the "
                                        "Y plane) or at least 128");
  n.uv_offset = 300;
  CHECK_EQ(pre(&n), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "frame: the nv12 UV plane offset 300 is past the frame's "
                                        "256 bytes (the UV plane needs 64 bytes from its offset)");
}

static htpu_tensor_info head(uint32_t c, uint32_t a) {
  htpu_tensor_info t = {0};
  t.name = "output0";
  t.dtype = HTPU_F32;
  t.rank = 3;
  t.dims[0] = 1, t.dims[1] = c, t.dims[2] = a;
  t.num_elements = (size_t)c * a;
  t.byte_size = t.num_elements * 4;
  return t;
}

static int dec(const htpu_tensor_info *t, const void *data, const htpu_decode_options *o) {
  static htpu_detection d[300];
  static float kp[4096];
  const void *ds[1] = {data};
  return htpu_decode(t, ds, 1, o, NULL, d, 300, kp, 4096, NULL);
}

TEST(vision_messages_options_out_of_range) {
  float v[28] = {0};
  htpu_tensor_info t = head(7, 4);
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.head = (htpu_head)9;
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "decode: head 9 is not one of HTPU_HEAD_AUTO, "
                                        "_ULTRALYTICS, _ULTRALYTICS_POSE or _AIHUB");
  htpu_decode_options_init(&o);
  o.layout = (htpu_head_layout)5;
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "decode: head layout 5 is not one of "
                                        "HTPU_HEAD_LAYOUT_AUTO, HTPU_HEAD_CHANNELS_FIRST or "
                                        "HTPU_HEAD_ANCHORS_FIRST");
}

/* The head's shape errors say which axis was taken for an anchor's values and why, and what
 * the head named needs: [1, 7, 4] read by its smaller axis is 7 anchors of 4 values. */
TEST(vision_messages_head_shapes) {
  float v[28] = {0};
  htpu_tensor_info t = head(7, 4);
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "output 'output0' [1, 7, 4] has 4 values per anchor (read anchors_first "
                     "from the smaller axis; name the head layout if the other holds an anchor's "
                     "values); the ultralytics head needs 4 box values and at least 1 class "
                     "score");
  o.layout = HTPU_HEAD_CHANNELS_FIRST;
  o.num_classes = 2;
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "output 'output0' [1, 7, 4] has 7 values per anchor (read channels_first, "
                     "the layout given); the ultralytics head needs 4 box values and 2 class "
                     "scores (the class count given): 6 values");
  o.head = HTPU_HEAD_ULTRALYTICS_POSE;
  o.num_classes = 0;
  o.keypoint_dims = 2; /* 7 - 5 = 2 values: 1 keypoint of x, y ... */
  o.num_keypoints = 2; /* ... not the 2 named */
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "the pose head needs 4 box values, 1 class score(s) and "
                                        "2 keypoints of 2 values (x, y): 9 values");
}

TEST(vision_messages_output_infos) {
  float v[28] = {0};
  htpu_tensor_info t = head(7, 4);
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.layout = HTPU_HEAD_CHANNELS_FIRST;
  t.byte_size = 100;
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0' [1, 7, 4] f32 has 28 elements and 100 "
                                        "bytes; its dims make 28 elements of 112 bytes: expected "
                                        "the info of the buffer as it is");
  t = head(7, 4);
  t.dtype = HTPU_U8, t.byte_size = 28;
  float scales[3] = {1, 1, 1};
  int32_t zps[3] = {0, 0, 0};
  t.quant.kind = HTPU_QUANT_PER_AXIS;
  t.quant.axis = 1, t.quant.num_channels = 3, t.quant.scales = scales, t.quant.zero_points = zps;
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0' [1, 7, 4]: per-axis quantization along "
                                        "axis 1 with 3 channels (scales given, zero points "
                                        "given) does not fit it; expected an axis below its rank "
                                        "3 and a scale and zero point per index of that axis");
  t.quant.kind = (htpu_quant_kind)7;
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "output 'output0': quantization kind 7 is not none, per tensor or per axis");
}

TEST(vision_messages_nan_box) {
  float v[28] = {0};
  htpu_tensor_info t = head(7, 4);
  v[2 * 4 + 1] = NAN;  /* anchor 1's w */
  v[4 * 4 + 1] = 0.9f; /* anchor 1 scores */
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.layout = HTPU_HEAD_CHANNELS_FIRST;
  CHECK_EQ(dec(&t, v, &o), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'output0': the box of anchor 1 is NaN; the "
                                        "detector's boxes must be finite numbers");
}
