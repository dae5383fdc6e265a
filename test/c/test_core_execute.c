/* Execute: float and quantized graphs against known outputs, zero-copy and converting paths,
 * every mismatch named, NaN, injected backend faults. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

/* y = relu(x * w^T + b) in u8, with per-axis weights; and an f16 graph. */
static const char *QMODEL =
    "graph fc_u8\n"
    "  input x u8 [1,3] scale=0.5 zero_point=10\n"
    "  static w u8 [2,3] axis=0 scales=[0.25,0.5] zero_points=[4,8] data=[8,4,4,10,8,6]\n"
    "  static b i32 [2] scale=0.125 zero_point=0 data=[8,-16]\n"
    "  output y u8 [1,2] scale=0.25 zero_point=2\n"
    "  op FullyConnected x w b -> y\n"
    "graph relu_f16\n"
    "  input p f16 [4]\n"
    "  output q f16 [4]\n"
    "  op Relu p -> q\n";

typedef struct open_model {
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *g;
} open_model;

static int open_graph(open_model *m, const char *text, const char *file, const char *graph) {
  memset(m, 0, sizeof *m);
  const char *path = fx_build_model_file(file, text);
  if (!path) return -1;
  m->rt = fx_open_runtime();
  if (!m->rt) return -1;
  if (htpu_context_open_file(m->rt, path, &m->ctx)) return -1;
  return htpu_graph_open(m->ctx, graph, &m->g);
}

static void close_model(open_model *m) {
  htpu_graph_close(&m->g);
  htpu_context_close(&m->ctx);
  htpu_runtime_close(&m->rt);
}

/* Expected result computed here from the definition, independently of the backend:
 * x = (q - 10) * 0.5; w[o][k] = (q - zp[o]) * s[o]; b = q * 0.125;
 * y = (x.w[o] + b[o]) -> q = round(y / 0.25) + 2 clamped to u8. */
static void expected_fc(const uint8_t xq[3], uint8_t out[2]) {
  const uint8_t wq[2][3] = {{8, 4, 4}, {10, 8, 6}};
  const float ws[2] = {0.25f, 0.5f};
  const int wz[2] = {4, 8};
  const int bq[2] = {8, -16};
  for (int o = 0; o < 2; o++) {
    double acc = bq[o] * 0.125;
    for (int k = 0; k < 3; k++) acc += ((xq[k] - 10) * 0.5) * ((wq[o][k] - wz[o]) * ws[o]);
    double q = nearbyint(acc / 0.25) + 2;
    out[o] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
  }
}

TEST(execute_quantized_native_and_f32_paths_agree) {
  fx_reset_env();
  open_model m;
  CHECK_EQ(open_graph(&m, QMODEL, "q.bin", "fc_u8"), HTPU_OK);
  const uint8_t cases[][3] = {{10, 10, 10}, {12, 14, 18}, {0, 255, 7}, {200, 3, 90}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    uint8_t want[2];
    expected_fc(cases[c], want);
    /* Native u8 in and out: no conversion, no copy. */
    uint8_t y[2] = {0, 0};
    htpu_io in = {(void *)cases[c], 3, HTPU_U8}, out = {y, 2, HTPU_U8};
    htpu_exec_stats st;
    CHECK_EQ(htpu_graph_execute(m.g, &in, 1, &out, 1, &st), HTPU_OK);
    CHECK_MSG(y[0] == want[0] && y[1] == want[1], "case %zu: got %u,%u want %u,%u", c, y[0],
              y[1], want[0], want[1]);
    CHECK_EQ(st.quantize_ns, 0);
    CHECK(st.total_ns >= st.execute_ns);
    /* f32 in and out: quantized in, dequantized out with the model's own parameters. */
    float xf[3], yf[2];
    for (int k = 0; k < 3; k++) xf[k] = (cases[c][k] - 10) * 0.5f;
    htpu_io inf = {xf, sizeof xf, HTPU_F32}, outf = {yf, sizeof yf, HTPU_F32};
    CHECK_EQ(htpu_graph_execute(m.g, &inf, 1, &outf, 1, NULL), HTPU_OK);
    for (int o = 0; o < 2; o++) CHECK(yf[o] == (want[o] - 2) * 0.25f);
  }
  close_model(&m);
}

TEST(execute_f16_graph) {
  fx_reset_env();
  open_model m;
  CHECK_EQ(open_graph(&m, QMODEL, "q16.bin", "relu_f16"), HTPU_OK);
  float in[4] = {-1.5f, 0.0f, 2.25f, 65504.0f}, out[4];
  htpu_io i = {in, sizeof in, HTPU_F32}, o = {out, sizeof out, HTPU_F32};
  CHECK_EQ(htpu_graph_execute(m.g, &i, 1, &o, 1, NULL), HTPU_OK);
  CHECK(out[0] == 0.0f && out[1] == 0.0f && out[2] == 2.25f && out[3] == 65504.0f);
  uint16_t hin[4] = {htpu_f32_to_f16(-3.0f), htpu_f32_to_f16(0.5f), 0, htpu_f32_to_f16(7.0f)};
  uint16_t hout[4];
  htpu_io hi = {hin, sizeof hin, HTPU_F16}, ho = {hout, sizeof hout, HTPU_F16};
  CHECK_EQ(htpu_graph_execute(m.g, &hi, 1, &ho, 1, NULL), HTPU_OK);
  CHECK(htpu_f16_to_f32(hout[0]) == 0.0f && htpu_f16_to_f32(hout[1]) == 0.5f);
  CHECK(htpu_f16_to_f32(hout[3]) == 7.0f);
  close_model(&m);
}

TEST(execute_mismatches_name_tensor_expected_and_given) {
  fx_reset_env();
  open_model m;
  CHECK_EQ(open_graph(&m, QMODEL, "qm.bin", "fc_u8"), HTPU_OK);
  uint8_t x[3] = {1, 2, 3}, y[2];
  float xf[3] = {0}, yf[2];
  htpu_io in = {x, 3, HTPU_U8}, out = {y, 2, HTPU_U8};
  /* counts */
  CHECK_EQ(htpu_graph_execute(m.g, &in, 0, &out, 1, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "has 1 inputs and 1 outputs; given 0 and 1");
  htpu_io two[2] = {in, in};
  CHECK_EQ(htpu_graph_execute(m.g, two, 2, &out, 1, NULL), HTPU_EMISMATCH);
  /* size */
  htpu_io short_in = {x, 2, HTPU_U8};
  CHECK_EQ(htpu_graph_execute(m.g, &short_in, 1, &out, 1, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "input 'x': expected 3 bytes");
  CHECK_STR_CONTAINS(htpu_last_error(), "given 2");
  htpu_io f_short = {xf, 8, HTPU_F32};
  CHECK_EQ(htpu_graph_execute(m.g, &f_short, 1, &out, 1, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "expected 12 bytes");
  /* type */
  htpu_io wrong_type = {x, 3, HTPU_I8};
  CHECK_EQ(htpu_graph_execute(m.g, &wrong_type, 1, &out, 1, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "expected u8 data (or f32 to convert), given i8");
  htpu_io out_f_wrong = {yf, 4, HTPU_F32};
  CHECK_EQ(htpu_graph_execute(m.g, &in, 1, &out_f_wrong, 1, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'y'");
  /* NULL data */
  htpu_io null_in = {NULL, 3, HTPU_U8};
  CHECK_EQ(htpu_graph_execute(m.g, &null_in, 1, &out, 1, NULL), HTPU_EINVAL);
  /* NaN */
  xf[1] = NAN;
  htpu_io nan_in = {xf, sizeof xf, HTPU_F32};
  CHECK_EQ(htpu_graph_execute(m.g, &nan_in, 1, &out, 1, NULL), HTPU_ENAN);
  CHECK_STR_CONTAINS(htpu_last_error(), "'x'");
  CHECK_STR_CONTAINS(htpu_last_error(), "element 1 is NaN");
  char buf[512];
  htpu_graph_last_error(m.g, buf, sizeof buf);
  CHECK_STR_CONTAINS(buf, "NaN");
  /* still works */
  CHECK_EQ(htpu_graph_execute(m.g, &in, 1, &out, 1, NULL), HTPU_OK);
  close_model(&m);
}

TEST(execute_injected_faults_surface_with_qnn_code_and_recover) {
  fx_reset_env();
  open_model m;
  CHECK_EQ(open_graph(&m, FX_ADD_F32, "faults.bin", "add_f32"), HTPU_OK);
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  const unsigned codes[] = {6004, 1002, 14002, 1003, 6031};
  for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
    char rule[64];
    snprintf(rule, sizeof rule, "graphExecute:1:%u", codes[i]);
    CHECK_EQ(fx_ref_arm(rule), 0);
    CHECK_EQ(htpu_graph_execute(m.g, in, 2, &out, 1, NULL), HTPU_EQNN);
    CHECK_EQ(htpu_last_qnn_code(), codes[i]);
    CHECK_STR_CONTAINS(htpu_last_error(), htpu_qnn_error_name(codes[i]));
    CHECK_STR_CONTAINS(htpu_last_error(), "executing graph 'add_f32'");
    /* The next call works. */
    CHECK_EQ(htpu_graph_execute(m.g, in, 2, &out, 1, NULL), HTPU_OK);
    CHECK(y[0] == 2 && y[3] == 5);
  }
  CHECK_STR_CONTAINS(htpu_qnn_error_message(1007), "restarted");
  CHECK_STR_CONTAINS(htpu_qnn_error_name(6031), "ABORTED");
  htpu_stats_get(&s1);
  CHECK_EQ(s1.execute_errors - s0.execute_errors, 5);
  CHECK_EQ(s1.executes - s0.executes, 10);
  /* Faults on load paths. */
  fx_ref_disarm();
  CHECK_EQ(fx_ref_arm("contextCreateFromBinary:1:5005"), 0);
  htpu_context *ctx = NULL;
  size_t len = 0;
  void *bin = fx_build_model(FX_ADD_F32, &len);
  CHECK(bin);
  CHECK_EQ(htpu_context_open_buffer(m.rt, bin, len, &ctx), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 5005);
  CHECK_EQ(htpu_context_open_buffer(m.rt, bin, len, &ctx), HTPU_OK);
  CHECK_EQ(fx_ref_arm("graphRetrieve:1:6003"), 0);
  htpu_graph *g2 = NULL;
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &g2), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 6003);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &g2), HTPU_OK);
  free(bin);
  fx_ref_disarm();
  htpu_graph_close(&g2);
  htpu_context_close(&ctx);
  close_model(&m);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.live_contexts, s0.live_contexts - 1);
}

TEST(execute_counters_and_timing) {
  fx_reset_env();
  open_model m;
  CHECK_EQ(open_graph(&m, FX_ADD_F32, "count.bin", "add_f32"), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 2000), 0);
  float a[4] = {0}, b[4] = {0}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  htpu_exec_stats st;
  CHECK_EQ(htpu_graph_execute(m.g, in, 2, &out, 1, &st), HTPU_OK);
  htpu_stats_get(&s1);
  fx_ref_disarm();
  /* graphExecute slept 2 ms inside the backend: the measured execute time covers it. */
  CHECK(st.execute_ns >= 2000000u);
  CHECK_EQ(s1.executes - s0.executes, 1);
  CHECK_EQ(s1.execute_ns_last, st.execute_ns);
  CHECK_EQ(s1.execute_ns_total - s0.execute_ns_total, st.execute_ns);
  close_model(&m);
}

TEST(execute_fatal_dsp_restart_fails_cleanly) {
  fx_reset_env();
  open_model m;
  CHECK_EQ(open_graph(&m, FX_ADD_F32, "fatal.bin", "add_f32"), HTPU_OK);
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  CHECK_EQ(fx_ref_arm("graphExecute:1:1011"), 0);
  CHECK_EQ(htpu_graph_execute(m.g, in, 2, &out, 1, NULL), HTPU_EDEVICE_RESET);
  CHECK_EQ(htpu_last_qnn_code(), 1011);
  CHECK_STR_CONTAINS(htpu_last_error(), "did not recover");
  fx_ref_disarm();
  /* The device is gone for this backend: calls keep failing, closing stays safe. */
  CHECK_EQ(htpu_graph_execute(m.g, in, 2, &out, 1, NULL), HTPU_EDEVICE_RESET);
  CHECK_STR_CONTAINS(htpu_last_error(), "load it again");
  close_model(&m);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_runtimes, 0);
  /* A new runtime starts from scratch and works. */
  CHECK_EQ(open_graph(&m, FX_ADD_F32, "fatal2.bin", "add_f32"), HTPU_OK);
  CHECK_EQ(htpu_graph_execute(m.g, in, 2, &out, 1, NULL), HTPU_OK);
  CHECK(y[0] == 2);
  close_model(&m);
}
