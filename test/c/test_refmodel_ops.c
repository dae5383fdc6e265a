/*
 * test_refmodel_ops.c - the interpreter's ops against hand-computed results (broadcasting,
 * quantized and f16 types, per-axis weights), chained graphs, run errors and concurrent runs of
 * one graph.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "hexagon_tpu.h"
#include "qnn/qnn_abi.h"
#include "refmodel.h"
#include "refmodel_rig.h"
#include "test.h"

/* ---- ops ----------------------------------------------------------------------------------- */

TEST(refmodel_add_and_mul_f32_with_broadcasting) {
  ref_model *m = build_model(
      "graph add\n"
      "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
      "  op ElementWiseAdd a b -> y\n"
      "graph bcast_add\n" /* [2,3] + [3] */
      "  input a f32 [2,3]\n  input b f32 [3]\n  output y f32 [2,3]\n"
      "  op ElementWiseAdd a b -> y\n"
      "graph outer_mul\n" /* [2,1] * [1,3] -> [2,3] */
      "  input a f32 [2,1]\n  input b f32 [1,3]\n  output y f32 [2,3]\n"
      "  op ElementWiseMultiply a b -> y\n"
      "graph scalar_mul\n" /* [1] * [2,1,2] -> [2,1,2], rank extension on the left */
      "  input a f32 [1]\n  input b f32 [2,1,2]\n  output y f32 [2,1,2]\n"
      "  op ElementWiseMultiply a b -> y\n"
      "graph mid_bcast\n" /* [2,1,3] + [4,1] -> [2,4,3] */
      "  input a f32 [2,1,3]\n  input b f32 [4,1]\n  output y f32 [2,4,3]\n"
      "  op ElementWiseAdd a b -> y\n");
  CHECK_MSG(m, "%s", g_err);
  float y[24];
  const float a1[4] = {1, 2, 3, 4}, b1[4] = {10, 20, 30, -4.5f}, w1[4] = {11, 22, 33, -0.5f};
  CHECK_MSG(run2(m, "add", a1, b1, y) == 0, "%s", g_err);
  CHECK_F32S(y, w1, 4, 0);

  const float a2[6] = {1, 2, 3, 4, 5, 6}, b2[3] = {100, 200, 300};
  const float w2[6] = {101, 202, 303, 104, 205, 306};
  CHECK_MSG(run2(m, "bcast_add", a2, b2, y) == 0, "%s", g_err);
  CHECK_F32S(y, w2, 6, 0);

  const float a3[2] = {2, -3}, b3[3] = {1, 2, 0.5f}, w3[6] = {2, 4, 1, -3, -6, -1.5f};
  CHECK_MSG(run2(m, "outer_mul", a3, b3, y) == 0, "%s", g_err);
  CHECK_F32S(y, w3, 6, 0);

  const float a4[1] = {-2}, b4[4] = {1, 2, 3, 4}, w4[4] = {-2, -4, -6, -8};
  CHECK_MSG(run2(m, "scalar_mul", a4, b4, y) == 0, "%s", g_err);
  CHECK_F32S(y, w4, 4, 0);

  const float a5[6] = {1, 2, 3, 4, 5, 6}, b5[4] = {0, 10, 20, 30};
  float w5[24];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 3; k++) w5[(i * 4 + j) * 3 + k] = a5[i * 3 + k] + b5[j];
  CHECK_MSG(run2(m, "mid_bcast", a5, b5, y) == 0, "%s", g_err);
  CHECK_F32S(y, w5, 24, 0);
  ref_model_free(m);
}

TEST(refmodel_add_u8_rounds_half_even_and_saturates) {
  ref_model *m = build_model(
      "graph g\n"
      "  input a u8 [1,6] scale=0.5 zero_point=10\n"
      "  input b u8 [1,6] scale=0.25\n"
      "  output y u8 [1,6] scale=0.5\n"
      "  op ElementWiseAdd a b -> y\n");
  CHECK_MSG(m, "%s", g_err);
  /* a = [0, 1, 2, 122.5, 0.5, 122.5], b = [0, 1, 1.5, 0.25, 0.75, 63.75]
   * sum / 0.5 = [0, 4, 7, 245.5, 2.5, 372.5] -> [0, 4, 7, 246, 2, 255] */
  const uint8_t a[6] = {10, 12, 14, 255, 11, 255}, b[6] = {0, 4, 6, 1, 3, 255};
  const uint8_t want[6] = {0, 4, 7, 246, 2, 255};
  uint8_t y[6];
  CHECK_MSG(run2(m, "g", a, b, y) == 0, "%s", g_err);
  CHECK_BYTES(y, want, 6);
  ref_model_free(m);
}

TEST(refmodel_mul_i8_and_f16) {
  ref_model *m = build_model(
      "graph mi8\n"
      "  input a i8 [4] scale=0.5 zero_point=-2\n"
      "  static b i8 [1] scale=0.25 data=[-8]\n" /* b = -2 */
      "  output y i8 [4] scale=1 zero_point=5\n"
      "  op ElementWiseMultiply a b -> y\n"
      "graph mf16\n"
      "  input a f16 [4]\n"
      "  input b f16 [4]\n"
      "  output y f16 [4]\n"
      "  op ElementWiseMultiply a b -> y\n");
  CHECK_MSG(m, "%s", g_err);
  /* a = (q + 2) * 0.5 = [1, -1, 30.5, -63]; a*b = [-2, 2, -61, 126] -> q = v + 5 saturated
   * = [3, 7, -56, 127] */
  const int8_t a[4] = {0, -4, 59, -128}, want[4] = {3, 7, -56, 127};
  int8_t y[4];
  CHECK_MSG(run1(m, "mi8", a, y) == 0, "%s", g_err);
  CHECK_BYTES(y, want, 4);

  const float fa[4] = {1.5f, -2.0f, 65504.0f, 0.1f}, fb[4] = {2.0f, 0.5f, 2.0f, 3.0f};
  uint16_t ha[4], hb[4], hy[4];
  for (int i = 0; i < 4; i++) ha[i] = htpu_f32_to_f16(fa[i]), hb[i] = htpu_f32_to_f16(fb[i]);
  CHECK_MSG(run2(m, "mf16", ha, hb, hy) == 0, "%s", g_err);
  CHECK_EQ(hy[0], htpu_f32_to_f16(3.0f));
  CHECK_EQ(hy[1], htpu_f32_to_f16(-1.0f));
  CHECK_EQ(hy[2], 0x7bff); /* saturates to 65504 */
  CHECK_EQ(hy[3], htpu_f32_to_f16(htpu_f16_to_f32(ha[3]) * 3.0f));
  ref_model_free(m);
}

TEST(refmodel_fully_connected_f32) {
  ref_model *m = build_model(
      "graph bias\n"
      "  input x f32 [2,3]\n"
      "  static w f32 [2,3] data=[1,0,-1, 0.5,0.5,0.5]\n"
      "  static b f32 [2] data=[10,-1]\n"
      "  output y f32 [2,2]\n"
      "  op FullyConnected x w b -> y\n"
      "graph nobias\n"
      "  input x f32 [1,2,3]\n" /* flattened to [2,3] */
      "  static w f32 [2,3] data=[1,0,-1, 0.5,0.5,0.5]\n"
      "  output y f32 [2,2]\n"
      "  op FullyConnected x w -> y\n");
  CHECK_MSG(m, "%s", g_err);
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const float want_b[4] = {8, 2, 8, 6.5f}, want_nb[4] = {-2, 3, -2, 7.5f};
  float y[4];
  CHECK_MSG(run1(m, "bias", x, y) == 0, "%s", g_err);
  CHECK_F32S(y, want_b, 4, 0);
  CHECK_MSG(run1(m, "nobias", x, y) == 0, "%s", g_err);
  CHECK_F32S(y, want_nb, 4, 0);
  ref_model_free(m);
}

TEST(refmodel_fully_connected_u8_per_axis_weights) {
  ref_model *m = build_model(
      "graph fc\n"
      "  input x u8 [1,3] scale=0.5 zero_point=128\n"
      "  static w u8 [2,3] axis=0 scales=[0.25,0.5] zero_points=[128,128] data=[\n"
      "      132,124,128, 130,130,0]\n"
      "  static b i32 [2] scale=0.125 data=[8,-16]\n"
      "  output y u8 [1,2] scale=0.1 zero_point=100\n"
      "  op FullyConnected x w b -> y\n");
  CHECK_MSG(m, "%s", g_err);
  /* x = [1,-1,0]; w = [[1,-1,0],[1,1,-64]]; b = [1,-2]; y = [3,-2] -> q = y/0.1 + 100 */
  const uint8_t x[3] = {130, 126, 128}, want[2] = {130, 80};
  uint8_t y[2];
  CHECK_MSG(run1(m, "fc", x, y) == 0, "%s", g_err);
  CHECK_BYTES(y, want, 2);
  ref_model_free(m);
}

TEST(refmodel_conv2d_f32) {
  ref_model *m = build_model(
      "graph plain\n"
      "  input x f32 [1,3,3,1]\n"
      "  static w f32 [2,2,1,1] data=[1,0,0,1]\n"
      "  static b f32 [1] data=[0.5]\n"
      "  output y f32 [1,2,2,1]\n"
      "  op Conv2d x w b -> y\n"
      "graph strided\n"
      "  input x f32 [1,3,3,1]\n"
      "  # HWIO: output channel 0 sums the window, channel 1 picks its centre\n"
      "  static w f32 [3,3,1,2] data=[1,0, 1,0, 1,0,\n"
      "                               1,0, 1,1, 1,0,\n"
      "                               1,0, 1,0, 1,0]\n"
      "  output y f32 [1,2,2,2]\n"
      "  op Conv2d x w -> y stride=[2,2] pad=[1,1,1,1]\n"
      "graph asym\n" /* pad bottom/right only, 2 input channels, batch 2 */
      "  input x f32 [2,2,2,2]\n"
      "  static w f32 [2,2,2,1] data=[1,10, 1,10, 1,10, 1,10]\n"
      "  output y f32 [2,2,2,1]\n"
      "  op Conv2d x w -> y pad=[0,0,1,1]\n");
  CHECK_MSG(m, "%s", g_err);
  const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  float y[16];
  const float want1[4] = {6.5f, 8.5f, 12.5f, 14.5f};
  CHECK_MSG(run1(m, "plain", x, y) == 0, "%s", g_err);
  CHECK_F32S(y, want1, 4, 0);
  const float want2[8] = {12, 1, 16, 3, 24, 7, 28, 9};
  CHECK_MSG(run1(m, "strided", x, y) == 0, "%s", g_err);
  CHECK_F32S(y, want2, 8, 0);

  /* x[n][h][w][c] = c ? 0.5 : n*4 + h*2 + w + 1; y = sum over the window of (c0 + 10*c1) */
  float x3[16], want3[8];
  for (int n = 0; n < 2; n++)
    for (int h = 0; h < 2; h++)
      for (int w = 0; w < 2; w++) {
        x3[((n * 2 + h) * 2 + w) * 2 + 0] = (float)(n * 4 + h * 2 + w + 1);
        x3[((n * 2 + h) * 2 + w) * 2 + 1] = 0.5f;
      }
  for (int n = 0; n < 2; n++)
    for (int oy = 0; oy < 2; oy++)
      for (int ox = 0; ox < 2; ox++) {
        float s = 0;
        for (int ky = 0; ky < 2; ky++)
          for (int kx = 0; kx < 2; kx++) {
            int iy = oy + ky, ix = ox + kx;
            if (iy > 1 || ix > 1) continue;
            s += x3[((n * 2 + iy) * 2 + ix) * 2] + 10 * 0.5f;
          }
        want3[(n * 2 + oy) * 2 + ox] = s;
      }
  CHECK_MSG(run1(m, "asym", x3, y) == 0, "%s", g_err);
  CHECK_F32S(y, want3, 8, 0);
  ref_model_free(m);
}

TEST(refmodel_conv2d_u8_per_axis_weights) {
  ref_model *m = build_model(
      "graph g\n"
      "  input x u8 [1,2,2,1] scale=1\n"
      "  static w i8 [1,1,1,2] axis=3 scales=[0.5,0.25] data=[2,4]\n"
      "  static b i32 [2] scale=0.5 data=[2,-2]\n"
      "  output y u8 [1,2,2,2] scale=0.5\n"
      "  op Conv2d x w b -> y\n");
  CHECK_MSG(m, "%s", g_err);
  /* w = [1,1], b = [1,-1]: channel 0 = x+1, channel 1 = x-1 (0 saturates at 0) */
  const uint8_t x[4] = {1, 2, 3, 0}, want[8] = {4, 0, 6, 2, 8, 4, 2, 0};
  uint8_t y[8];
  CHECK_MSG(run1(m, "g", x, y) == 0, "%s", g_err);
  CHECK_BYTES(y, want, 8);
  ref_model_free(m);
}

TEST(refmodel_relu_and_reshape) {
  ref_model *m = build_model(
      "graph relu_f32\n  input x f32 [4]\n  output y f32 [4]\n  op Relu x -> y\n"
      "graph relu_i8\n"
      "  input x i8 [3] scale=0.5\n"
      "  output y u8 [3] scale=0.25\n"
      "  op Relu x -> y\n"
      "graph reshape_f32\n  input x f32 [2,3]\n  output y f32 [3,2]\n  op Reshape x -> y\n"
      "graph reshape_u16\n" /* requantizes: 65535/2 = 32767.5 -> 32768 (even) */
      "  input x u16 [3] scale=1\n"
      "  output y u16 [1,3] scale=2\n"
      "  op Reshape x -> y\n");
  CHECK_MSG(m, "%s", g_err);
  const float xf[4] = {-1.5f, 0, 2.25f, -0.0f}, wf[4] = {0, 0, 2.25f, 0};
  float yf[6];
  CHECK_MSG(run1(m, "relu_f32", xf, yf) == 0, "%s", g_err);
  CHECK_F32S(yf, wf, 4, 0);
  const int8_t xi[3] = {-4, 0, 3};
  const uint8_t wi[3] = {0, 0, 6};
  uint8_t yi[3];
  CHECK_MSG(run1(m, "relu_i8", xi, yi) == 0, "%s", g_err);
  CHECK_BYTES(yi, wi, 3);
  const float xr[6] = {1, 2, 3, 4, 5, 6};
  CHECK_MSG(run1(m, "reshape_f32", xr, yf) == 0, "%s", g_err);
  CHECK_F32S(yf, xr, 6, 0);
  const uint16_t xu[3] = {0, 1000, 65535}, wu[3] = {0, 500, 32768};
  uint16_t yu[3];
  CHECK_MSG(run1(m, "reshape_u16", xu, yu) == 0, "%s", g_err);
  CHECK_BYTES(yu, wu, 3);
  ref_model_free(m);
}

TEST(refmodel_softmax) {
  ref_model *m = build_model(
      "graph sm\n  input x f32 [2,2]\n  output y f32 [2,2]\n  op Softmax x -> y\n"
      "graph sm_beta\n  input x f32 [1,2]\n  output y f32 [1,2]\n  op Softmax x -> y beta=0.5\n"
      "graph sm_u8\n"
      "  input x u8 [1,4] scale=1\n"
      "  output y u8 [1,4] scale=0.00390625\n" /* 1/256 */
      "  op Softmax x -> y\n");
  CHECK_MSG(m, "%s", g_err);
  const float x[4] = {0, logf(3.0f), 1000, 1000}; /* large equal values stay finite */
  const float want[4] = {0.25f, 0.75f, 0.5f, 0.5f};
  float y[4];
  CHECK_MSG(run1(m, "sm", x, y) == 0, "%s", g_err);
  CHECK_F32S(y, want, 4, 1e-6f);
  const float xb[2] = {0, 2 * logf(3.0f)};
  CHECK_MSG(run1(m, "sm_beta", xb, y) == 0, "%s", g_err);
  CHECK_F32S(y, want, 2, 1e-6f);
  /* [0,0,0,0] -> 0.25 each = 64/256; [1,1,1,1] is the same distribution */
  const uint8_t xu[4] = {7, 7, 7, 7}, wu[4] = {64, 64, 64, 64};
  uint8_t yu[4];
  CHECK_MSG(run1(m, "sm_u8", xu, yu) == 0, "%s", g_err);
  CHECK_BYTES(yu, wu, 4);
  ref_model_free(m);
}

TEST(refmodel_chained_graph_with_native_and_several_outputs) {
  ref_model *m = build_model(
      "graph chain\n"
      "  input x u8 [1,2] scale=0.5\n"
      "  static w u8 [2,2] scale=1 zero_point=1 data=[2,0, 3,3]\n" /* [[1,-1],[2,2]] */
      "  native h i8 [1,2] scale=0.5\n"
      "  output r u8 [1,2] scale=0.5\n"
      "  output s f32 [1,2]\n"
      "  op FullyConnected x w -> h\n"
      "  op Relu h -> r\n"
      "  op ElementWiseAdd h r -> s\n"
      "graph other\n  input x f32 [1]\n  output y f32 [1]\n  op Relu x -> y\n");
  CHECK_MSG(m, "%s", g_err);
  /* x = [0, 3]*0.5 = [0, 1.5]: h = [-1.5, 3]; r = [0, 3]; s = [-1.5, 6] */
  const uint8_t x[2] = {0, 3};
  uint8_t r[2];
  float s[2];
  const void *ins[1] = {x};
  void *outs[2] = {r, s};
  int g = ref_model_find_graph(m, "chain");
  CHECK_MSG(ref_graph_run(m, (uint32_t)g, ins, outs, g_err, sizeof g_err) == 0, "%s", g_err);
  const uint8_t want_r[2] = {0, 6};
  const float want_s[2] = {-1.5f, 6};
  CHECK_BYTES(r, want_r, 2);
  CHECK_F32S(s, want_s, 2, 0);
  const float xo = -3, want_o = 0;
  float yo;
  CHECK_MSG(run1(m, "other", &xo, &yo) == 0, "%s", g_err);
  CHECK(yo == want_o);
  ref_model_free(m);
}

TEST(refmodel_run_errors) {
  ref_model *m = build_model(
      "graph g\n  input x f32 [2]\n  output y u8 [2] scale=1\n  op Relu x -> y\n"
      "graph f\n  input x f32 [2]\n  output y f32 [2]\n  op Relu x -> y\n");
  CHECK_MSG(m, "%s", g_err);
  float x[2] = {1, NAN};
  uint8_t y[2];
  CHECK(run1(m, "g", x, y) != 0);
  CHECK_STR_CONTAINS(g_err, "graph 'g' op 0 (Relu): output 'y' element 1 is NaN");
  float yf[2];
  CHECK_MSG(run1(m, "f", x, yf) == 0, "%s", g_err); /* f32 carries NaN through */
  CHECK(yf[0] == 1.0f && isnan(yf[1]));
  const void *ins[1] = {NULL};
  void *outs[1] = {y};
  CHECK(ref_graph_run(m, 0, ins, outs, g_err, sizeof g_err) != 0);
  CHECK_STR_CONTAINS(g_err, "input 0 ('x') is NULL");
  CHECK(ref_graph_run(m, 7, ins, outs, g_err, sizeof g_err) != 0);
  CHECK_STR_CONTAINS(g_err, "graph index 7 out of range");
  CHECK(ref_graph_run(NULL, 0, ins, outs, g_err, sizeof g_err) != 0);
  ref_model_free(m);
  ref_model_free(NULL);
}

typedef struct conc_arg {
  const ref_model *m;
  int ok;
} conc_arg;

static void *conc_worker(void *p) {
  conc_arg *a = p;
  const float x[6] = {1, 2, 3, 4, 5, 6}, want[4] = {8, 2, 8, 6.5f};
  a->ok = 1;
  for (int it = 0; it < 200 && a->ok; it++) {
    float y[4];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    char e[256];
    if (ref_graph_run(a->m, 0, ins, outs, e, sizeof e) != 0 || first_diff_f32(y, want, 4, 0) >= 0)
      a->ok = 0;
  }
  return NULL;
}

TEST(refmodel_concurrent_runs_of_one_graph) {
  ref_model *m = build_model(
      "graph bias\n"
      "  input x f32 [2,3]\n"
      "  static w f32 [2,3] data=[1,0,-1, 0.5,0.5,0.5]\n"
      "  static b f32 [2] data=[10,-1]\n"
      "  native h f32 [2,2]\n"
      "  output y f32 [2,2]\n"
      "  op FullyConnected x w b -> h\n"
      "  op Reshape h -> y\n");
  CHECK_MSG(m, "%s", g_err);
  pthread_t th[4];
  conc_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (conc_arg){m, 0};
    CHECK(pthread_create(&th[i], NULL, conc_worker, &args[i]) == 0);
  }
  int ok = 1;
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ok &= args[i].ok;
  }
  ref_model_free(m);
  CHECK(ok);
}
