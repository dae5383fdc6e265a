/*
 * test_refmodel_ops_v2.c - the ops of format version 2 (Sigmoid, Concat, PoolMax2d,
 * ResizeNearestNeighbor, Transpose) against float references computed here another way (in
 * double, by exact integer index arithmetic, by walking indices), on odd sizes and quantized
 * types; the version rules of the format; the parameter errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refmodel.h"
#include "refmodel_rig.h"
#include "test.h"

/* Deterministic values in [-4, 4) with a fractional part. */
static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) % 8000) / 1000.0f - 4.0f;
  }
}

TEST(refops_sigmoid_f32_and_u8) {
  ref_model *m = build_model("graph f\n  input x f32 [3,5]\n  output y f32 [3,5]\n"
                             "  op Sigmoid x -> y\n"
                             "graph q\n  input x u8 [1,7] scale=0.05 zero_point=100\n"
                             "  output y u8 [1,7] scale=0.00390625\n  op Sigmoid x -> y\n");
  CHECK_MSG(m, "%s", g_err);
  float x[15], y[15], want[15];
  fill(x, 15, 7);
  x[0] = -100.0f, x[1] = 100.0f, x[2] = 0.0f;
  for (int i = 0; i < 15; i++) want[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
  CHECK_MSG(run1(m, "f", x, y) == 0, "%s", g_err);
  CHECK_F32S(y, want, 15, 0);
  CHECK(y[0] >= 0.0f && y[0] < 1e-40f && y[1] == 1.0f && y[2] == 0.5f);
  /* u8: (q - 100) * 0.05 -> sigmoid -> / (1/256) rounded half to even, saturated at 255 */
  const uint8_t q[7] = {0, 100, 120, 140, 255, 60, 101};
  uint8_t out[7];
  CHECK_MSG(run1(m, "q", q, out) == 0, "%s", g_err);
  for (int i = 0; i < 7; i++) {
    double s = 1.0 / (1.0 + exp(-(q[i] - 100) * (double)0.05f)), r = nearbyint(s * 256.0);
    CHECK_MSG(out[i] == (r > 255 ? 255 : r), "element %d: %u, want %g", i, out[i], r);
  }
  ref_model_free(m);
}

TEST(refops_concat_axes_and_mixed_scales) {
  ref_model *m = build_model(
      "graph a1\n  input a f32 [2,3,2]\n  input b f32 [2,1,2]\n  output y f32 [2,4,2]\n"
      "  op Concat a b -> y axis=1\n"
      "graph q\n  input a u8 [1,3] scale=0.5\n  input b u8 [1,2] scale=0.25 zero_point=4\n"
      "  output y u8 [1,5] scale=0.5\n  op Concat a b -> y axis=1\n");
  CHECK_MSG(m, "%s", g_err);
  float a[12], b[4], y[16], want[16];
  fill(a, 12, 3);
  fill(b, 4, 4);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 2; k++) want[(i * 4 + j) * 2 + k] = j < 3 ? a[(i * 3 + j) * 2 + k] : b[i * 2 + k];
  CHECK_MSG(run2(m, "a1", a, b, y) == 0, "%s", g_err);
  CHECK_F32S(y, want, 16, 0);
  /* b's values (q - 4) * 0.25 = [0.25, 2.5] requantized to scale 0.5: 0.5 (half to even: 0) and 5 */
  const uint8_t qa[3] = {1, 2, 9}, qb[2] = {5, 14}, qwant[5] = {1, 2, 9, 0, 5};
  uint8_t qy[5];
  CHECK_MSG(run2(m, "q", qa, qb, qy) == 0, "%s", g_err);
  CHECK_BYTES(qy, qwant, 5);
  ref_model_free(m);
}

/* Max over each window by clamping the window to the input (another way than the kernel's
 * skipping of padded positions). */
static void pool_ref(const float *x, int H, int W, int C, int fh, int fw, int sh, int sw, int pt,
                     int pl, int OH, int OW, float *y) {
  for (int oy = 0; oy < OH; oy++)
    for (int ox = 0; ox < OW; ox++)
      for (int c = 0; c < C; c++) {
        int y0 = oy * sh - pt, x0 = ox * sw - pl;
        int y1 = y0 + fh < H ? y0 + fh : H, x1 = x0 + fw < W ? x0 + fw : W;
        double m = -INFINITY;
        for (int yy = y0 < 0 ? 0 : y0; yy < y1; yy++)
          for (int xx = x0 < 0 ? 0 : x0; xx < x1; xx++)
            if (x[(yy * W + xx) * C + c] > m) m = x[(yy * W + xx) * C + c];
        y[(oy * OW + ox) * C + c] = (float)m;
      }
}

TEST(refops_pool_max_floor_ceil_and_padding) {
  /* SPPF's pool (5x5, stride 1, pad 2), YOLO's 2x2/2, and an odd size with ceil rounding:
   * 7x5 with 3x3 stride 2 -> floor (3, 2), ceil (3, 2) + pad: (4, 3) */
  ref_model *m = build_model(
      "graph sppf\n  input x f32 [1,7,5,3]\n  output y f32 [1,7,5,3]\n"
      "  op PoolMax2d x -> y filter=[5,5] stride=[1,1] pad=[2,2,2,2]\n"
      "graph half\n  input x f32 [1,7,5,3]\n  output y f32 [1,3,2,3]\n"
      "  op PoolMax2d x -> y filter=[2,2] stride=[2,2]\n"
      "graph ceil\n  input x f32 [1,7,5,3]\n  output y f32 [1,4,3,3]\n"
      "  op PoolMax2d x -> y filter=[3,3] stride=[2,2] pad=[1,1,1,1] rounding=ceil\n");
  CHECK_MSG(m, "%s", g_err);
  float x[105], y[105], want[105];
  fill(x, 105, 11);
  struct { const char *g; int f, s, p, oh, ow; } cases[] = {
      {"sppf", 5, 1, 2, 7, 5}, {"half", 2, 2, 0, 3, 2}, {"ceil", 3, 2, 1, 4, 3}};
  for (int k = 0; k < 3; k++) {
    CHECK_MSG(run1(m, cases[k].g, x, y) == 0, "%s", g_err);
    pool_ref(x, 7, 5, 3, cases[k].f, cases[k].f, cases[k].s, cases[k].s, cases[k].p, cases[k].p,
             cases[k].oh, cases[k].ow, want);
    CHECK_F32S(y, want, (size_t)cases[k].oh * cases[k].ow * 3, 0);
  }
  ref_model_free(m);
}

/* The exact source index, in integers: floor(o in / out), floor((2 o + 1) in / (2 out)), or
 * round half away from zero of o (in - 1) / (out - 1). */
static int nearest_ref(int o, int in, int out, int align, int half) {
  long long i = align ? (2LL * o * (in - 1) + (out - 1)) / (2LL * (out > 1 ? out - 1 : 1))
                : half ? (2LL * o + 1) * in / (2LL * out)
                       : (long long)o * in / out;
  return (int)(i < in - 1 ? i : in - 1);
}

TEST(refops_resize_nearest_modes) {
  ref_model *m = build_model(
      "graph up2\n  input x f32 [1,3,5,2]\n  output y f32 [1,6,10,2]\n"
      "  op ResizeNearestNeighbor x -> y\n"
      "graph odd\n  input x f32 [1,3,5,2]\n  output y f32 [1,7,4,2]\n"
      "  op ResizeNearestNeighbor x -> y half_pixel_centers=yes\n"
      "graph align\n  input x f32 [1,3,5,2]\n  output y f32 [1,5,9,2]\n"
      "  op ResizeNearestNeighbor x -> y align_corners=yes\n");
  CHECK_MSG(m, "%s", g_err);
  float x[30], y[120], want[120];
  fill(x, 30, 5);
  struct { const char *g; int oh, ow, align, half; } cases[] = {
      {"up2", 6, 10, 0, 0}, {"odd", 7, 4, 0, 1}, {"align", 5, 9, 1, 0}};
  for (int k = 0; k < 3; k++) {
    int OH = cases[k].oh, OW = cases[k].ow;
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++)
        for (int c = 0; c < 2; c++) {
          int iy = nearest_ref(oy, 3, OH, cases[k].align, cases[k].half);
          int ix = nearest_ref(ox, 5, OW, cases[k].align, cases[k].half);
          want[(oy * OW + ox) * 2 + c] = x[(iy * 5 + ix) * 2 + c];
        }
    CHECK_MSG(run1(m, cases[k].g, x, y) == 0, "%s", g_err);
    CHECK_F32S(y, want, (size_t)OH * OW * 2, 0);
  }
  ref_model_free(m);
}

TEST(refops_transpose_rank3_and_rank4) {
  ref_model *m = build_model("graph t3\n  input x f32 [2,3,4]\n  output y f32 [4,2,3]\n"
                             "  op Transpose x -> y perm=[2,0,1]\n"
                             "graph t4\n  input x i8 [1,2,3,5] scale=0.1\n"
                             "  output y i8 [1,5,2,3] scale=0.1\n"
                             "  op Transpose x -> y perm=[0,3,1,2]\n");
  CHECK_MSG(m, "%s", g_err);
  float x[24], y[24], want[24];
  fill(x, 24, 9);
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 4; c++) want[(c * 2 + a) * 3 + b] = x[(a * 3 + b) * 4 + c];
  CHECK_MSG(run1(m, "t3", x, y) == 0, "%s", g_err);
  CHECK_F32S(y, want, 24, 0);
  int8_t q[30], qy[30];
  for (int i = 0; i < 30; i++) q[i] = (int8_t)(i * 7 - 100);
  CHECK_MSG(run1(m, "t4", q, qy) == 0, "%s", g_err);
  for (int h = 0; h < 2; h++) /* NHWC -> NCHW: y[c][h][w] = x[h][w][c] */
    for (int w = 0; w < 3; w++)
      for (int c = 0; c < 5; c++)
        CHECK_EQ(qy[(c * 2 + h) * 3 + w], q[(h * 3 + w) * 5 + c]);
  ref_model_free(m);
}

TEST(refops_format_version_2) {
  size_t n1, n2;
  void *v1 = build_bin("graph g\n  input x f32 [1,4]\n  output y f32 [1,4]\n  op Relu x -> y\n", &n1);
  void *v2 = build_bin("graph g\n  input x f32 [1,4]\n  output y f32 [1,4]\n  op Sigmoid x -> y\n", &n2);
  CHECK_MSG(v1 && v2, "%s", g_err);
  uint32_t ver1, ver2;
  memcpy(&ver1, (char *)v1 + 8, 4);
  memcpy(&ver2, (char *)v2 + 8, 4);
  CHECK_EQ(ver1, 1); /* models of version 1 ops keep their bytes */
  CHECK_EQ(ver2, 2);
  /* a version 1 file naming a version 2 op is refused */
  ref_model *m = NULL;
  memcpy((char *)v2 + 8, &ver1, 4);
  CHECK(ref_model_parse(v2, n2, &m, g_err, sizeof g_err) != 0);
  CHECK_STR_CONTAINS(g_err, "op type 9 (Sigmoid) needs format version 2");
  /* parse -> write gives the same bytes */
  memcpy((char *)v2 + 8, &ver2, 4);
  CHECK_MSG(ref_model_parse(v2, n2, &m, g_err, sizeof g_err) == 0, "%s", g_err);
  void *again = NULL;
  size_t n3 = 0;
  CHECK_MSG(ref_model_write(m, &again, &n3, g_err, sizeof g_err) == 0, "%s", g_err);
  CHECK(n3 == n2 && memcmp(again, v2, n2) == 0);
  free(again);
  ref_model_free(m);
  free(v1);
  free(v2);
}

TEST(refops_parameter_errors_name_the_problem) {
  struct { const char *text, *want; } cases[] = {
      {"op Concat a b -> y axis=3", "axis 3 is out of range for rank 2"},
      {"op Transpose a -> y perm=[0,0]", "perm is not a permutation of 0..1"},
      {"op PoolMax2d c -> y filter=[1,1] pad=[1,0,0,0]", "must be smaller than the filter"},
      {"op PoolMax2d a -> y", "PoolMax2d needs filter=[h,w]"},
      {"op ResizeNearestNeighbor a -> y align_corners=maybe", "expected no or yes, got 'maybe'"},
      {"op Sigmoid a -> y axis=1", "Sigmoid takes no parameter 'axis'"},
      {"op Concat a b -> z axis=1", "expected the inputs' shape with 5 on axis 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "graph g\n  input a f32 [2,3]\n  input b f32 [2,2]\n  input c f32 [1,2,2,1]\n  output y f32 [2,3]\n"
             "  native z f32 [2,4]\n  %s\n",
             cases[i].text);
    size_t len;
    void *bin = build_bin(text, &len);
    free(bin);
    CHECK_MSG(!bin, "case %zu was accepted", i);
    CHECK_STR_CONTAINS(g_err, cases[i].want);
  }
}
