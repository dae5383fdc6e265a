/*
 * test_refmodel_format.c - the reference model's text builder and binary format: metadata,
 * defaults and quantized types, data_f32 and data files, the byte-identical round trip, and
 * the bound on activation memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hexagon_tpu.h"
#include "qnn/qnn_abi.h"
#include "refmodel.h"
#include "refmodel_rig.h"
#include "test.h"

/* ---- builder and format ------------------------------------------------------------------ */

TEST(refmodel_build_and_parse_metadata) {
  ref_model *m = build_model(k_two_graphs);
  CHECK_MSG(m, "%s", g_err);
  CHECK_EQ(m->meta.binary_info_version, 2);
  CHECK_EQ(m->meta.graph_info_version, 1);
  CHECK_EQ(m->meta.tensor_version, 1);
  CHECK_EQ(m->meta.backend_id, 6);
  CHECK(strcmp(m->meta.build_id, "v2.42.0-ref") == 0);
  CHECK_EQ(m->meta.core_api[1], 29);
  CHECK_EQ(m->meta.backend_api[2], 1);
  CHECK_EQ(m->meta.context_blob_version[0], 3);
  CHECK(strcmp(m->meta.soc_version, "v68") == 0);
  CHECK_EQ(m->meta.soc_model, 35);
  CHECK_EQ(m->meta.dsp_arch, 68);
  CHECK_EQ(m->meta.vtcm_blob, 4194304);

  CHECK_EQ(m->num_graphs, 2);
  CHECK_EQ(m->num_tensors, 8);
  CHECK_EQ(ref_model_find_graph(m, "mlp"), 1);
  CHECK_EQ(ref_model_find_graph(m, "nope"), -1);
  const ref_graph *g = &m->graphs[1];
  CHECK(strcmp(g->name, "mlp") == 0);
  CHECK_EQ(g->num_inputs, 1);
  CHECK_EQ(g->num_outputs, 1);
  CHECK_EQ(g->num_ops, 2);
  CHECK(strcmp(g->ops[0].name, "fc1") == 0);
  CHECK(strcmp(g->ops[1].name, "Relu_1") == 0);
  CHECK_EQ(g->ops[0].type, REF_OP_FULLY_CONNECTED);
  const ref_tensor *a0 = &m->tensors[m->graphs[0].inputs[0]];
  const ref_tensor *a1 = &m->tensors[g->inputs[0]];
  CHECK(strcmp(a0->name, "a") == 0 && strcmp(a1->name, "a") == 0);
  CHECK(a0->id != a1->id);
  for (uint32_t i = 0; i < m->num_tensors; i++) {
    CHECK_EQ(m->tensors[i].id, i + 1); /* builder assigns 1..N in declaration order */
    CHECK_EQ(ref_model_find_tensor(m, i + 1), i);
  }
  CHECK_EQ(ref_model_find_tensor(m, 99), -1);
  const ref_tensor *w = &m->tensors[g->ops[0].inputs[1]];
  CHECK_EQ(w->kind, REF_TENSOR_STATIC);
  CHECK_EQ(w->data_type, QNN_DATATYPE_FLOAT_32);
  CHECK_EQ(w->nbytes, 16);
  CHECK_EQ(ref_tensor_elements(w), 4);
  const float *wd = w->data;
  CHECK(wd[3] == 0.5f);
  CHECK_EQ(m->tensors[g->ops[0].outputs[0]].kind, REF_TENSOR_NATIVE);
  ref_model_free(m);
}

TEST(refmodel_defaults_and_quant_types) {
  ref_model *m = build_model(
      "graph q\n"
      "  input x u8 [1,3] scale=0.02 zero_point=128\n"
      "  input z i8 [3] scale=0.5\n"
      "  static w u8 [2,3] axis=0 scales=[0.01,0.02] zero_points=[100,128] data=[1,2,3,4,5,6]\n"
      "  static b i32 [2] scale=0.0002 zero_point=0 data=[-5,7]\n"
      "  static p u16 [1] data=[65535]\n"
      "  static s i16 [1] scale=1 data=[-3]\n"
      "  static t u16 [1] scale=1 data=[9]\n"
      "  static h f16 [2] data=[1.5,-2]\n"
      "  output y u8 [1,2] scale=0.05 zero_point=0\n"
      "  op FullyConnected x w b -> y\n");
  CHECK_MSG(m, "%s", g_err);
  CHECK_EQ(m->meta.binary_info_version, 3);
  CHECK_EQ(m->meta.tensor_version, 2);
  CHECK_EQ(m->meta.core_api[0], 2);
  CHECK_EQ(m->meta.vtcm_blob, 2097152); /* 2 MB, in bytes as real binaries carry it */
  CHECK(strcmp(m->meta.soc_version, "v68") == 0);
  const ref_tensor *x = &m->tensors[0], *z = &m->tensors[1], *w = &m->tensors[2];
  const ref_tensor *b = &m->tensors[3], *p = &m->tensors[4], *s = &m->tensors[5];
  const ref_tensor *t = &m->tensors[6], *h = &m->tensors[7];
  CHECK_EQ(x->data_type, QNN_DATATYPE_UFIXED_POINT_8);
  CHECK_EQ(x->quant, REF_QUANT_SCALE_OFFSET);
  CHECK(x->scale == 0.02f);
  CHECK_EQ(x->offset, -128); /* QNN offset = -zero_point */
  CHECK_EQ(z->data_type, QNN_DATATYPE_SFIXED_POINT_8);
  CHECK_EQ(z->offset, 0);
  CHECK_EQ(w->quant, REF_QUANT_AXIS_SCALE_OFFSET);
  CHECK_EQ(w->axis, 0);
  CHECK_EQ(w->num_axis, 2);
  CHECK(w->scales[1] == 0.02f);
  CHECK_EQ(w->offsets[0], -100);
  CHECK_EQ(w->offsets[1], -128);
  CHECK_EQ(b->data_type, QNN_DATATYPE_SFIXED_POINT_32);
  CHECK_EQ(((const int32_t *)b->data)[0], -5);
  CHECK_EQ(p->data_type, QNN_DATATYPE_UINT_16);
  CHECK_EQ(p->quant, REF_QUANT_NONE);
  CHECK_EQ(((const uint16_t *)p->data)[0], 65535);
  CHECK_EQ(s->data_type, QNN_DATATYPE_SFIXED_POINT_16);
  CHECK_EQ(t->data_type, QNN_DATATYPE_UFIXED_POINT_16);
  CHECK_EQ(h->data_type, QNN_DATATYPE_FLOAT_16);
  CHECK_EQ(((const uint16_t *)h->data)[0], htpu_f32_to_f16(1.5f));
  CHECK_EQ(((const uint16_t *)h->data)[1], htpu_f32_to_f16(-2.0f));
  CHECK_EQ(ref_dtype_size(QNN_DATATYPE_FLOAT_16), 2);
  CHECK_EQ(ref_dtype_size(QNN_DATATYPE_BOOL_8), 0);
  ref_model_free(m);
}

TEST(refmodel_data_f32_is_quantized_with_the_tensors_params) {
  ref_model *m = build_model(
      "graph g\n"
      "  input x u8 [1,3] scale=1\n"
      "  static w u8 [2,3] axis=0 scales=[0.25,0.5] zero_points=[128,128] \\\n"
      "     data_f32=[1,-1,0, 1,1,-64]\n"
      "  static r i8 [4] scale=0.5 data_f32=[0.25, 0.75, -100, 1.25]\n"
      "  static f f32 [2] data_f32=[1.5, -0.25]\n"
      "  output y u8 [1,2] scale=1\n"
      "  op FullyConnected x w -> y\n");
  CHECK_MSG(m, "%s", g_err);
  const uint8_t want_w[6] = {132, 124, 128, 130, 130, 0};
  CHECK(memcmp(m->tensors[1].data, want_w, 6) == 0);
  /* /0.5 = [0.5, 1.5, -200, 2.5] -> [0, 2, -128, 2]: half to even, saturating */
  const int8_t want_r[4] = {0, 2, -128, 2};
  CHECK(memcmp(m->tensors[2].data, want_r, 4) == 0);
  const float *f = m->tensors[3].data;
  CHECK(f[0] == 1.5f && f[1] == -0.25f);
  ref_model_free(m);
}

TEST(refmodel_data_file_relative_to_base_dir) {
  const float w[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  CHECK(test_write_file(test_tmp_path("refmodel_w.bin"), w, sizeof w) == 0);
  char dir[600];
  snprintf(dir, sizeof dir, "%s", test_tmp_path("x"));
  *strrchr(dir, '/') = '\0';
  const char *text =
      "graph g\n"
      "  input x f32 [1,2]\n"
      "  static w f32 [2,2] data_file=\"refmodel_w.bin\"\n"
      "  output y f32 [1,2]\n"
      "  op FullyConnected x w -> y\n";
  void *bin = NULL;
  size_t len = 0;
  CHECK_MSG(ref_build_from_text_at(text, dir, &bin, &len, g_err, sizeof g_err) == 0, "%s", g_err);
  ref_model *m = NULL;
  int rc = ref_model_parse(bin, len, &m, g_err, sizeof g_err);
  free(bin);
  CHECK_MSG(rc == 0, "%s", g_err);
  CHECK(memcmp(m->tensors[1].data, w, sizeof w) == 0);
  const float x[2] = {1, 1};
  float y[2];
  CHECK_MSG(run1(m, "g", x, y) == 0, "%s", g_err);
  CHECK(y[0] == 3.0f && y[1] == 7.0f);
  ref_model_free(m);

  /* wrong size and missing file name the line and the path */
  CHECK(test_write_file(test_tmp_path("refmodel_short.bin"), w, 12) == 0);
  const char *short_text =
      "graph g\n  input x f32 [1,2]\n  static w f32 [2,2] data_file=refmodel_short.bin\n";
  CHECK(ref_build_from_text_at(short_text, dir, &bin, &len, g_err, sizeof g_err) != 0);
  CHECK_STR_CONTAINS(g_err, "line 3: data_file");
  CHECK_STR_CONTAINS(g_err, "has 12 bytes, tensor 'w' needs 16");
  const char *missing = "graph g\n  static w f32 [1] data_file=nope.bin\n";
  CHECK(ref_build_from_text_at(missing, dir, &bin, &len, g_err, sizeof g_err) != 0);
  CHECK_STR_CONTAINS(g_err, "line 2: data_file");
  CHECK_STR_CONTAINS(g_err, "nope.bin");
}

/* A FIFO as data file is refused at once (fopen of a FIFO without a writer blocked forever);
 * the writer end is opened non-blocking by nobody, so the old code would hang here. */
TEST(refmodel_data_file_fifo_is_refused_without_blocking) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s", test_tmp_path("x"));
  *strrchr(dir, '/') = '\0';
  const char *fifo = test_tmp_path("refmodel_fifo.bin");
  unlink(fifo);
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  const char *text = "graph g\n  static w f32 [1] data_file=refmodel_fifo.bin\n";
  void *bin = NULL;
  size_t len = 0;
  alarm(10); /* a blocked open dies here instead of hanging the runner */
  int rc = ref_build_from_text_at(text, dir, &bin, &len, g_err, sizeof g_err);
  alarm(0);
  unlink(fifo);
  CHECK(rc != 0);
  CHECK_STR_CONTAINS(g_err, "line 2: data_file");
  CHECK_STR_CONTAINS(g_err, "is a FIFO (named pipe); expected a regular file");
}

TEST(refmodel_round_trip_is_byte_identical) {
  size_t len;
  void *bin = build_bin(k_two_graphs, &len);
  CHECK_MSG(bin, "%s", g_err);
  CHECK(ref_model_has_magic(bin, len));
  CHECK(!ref_model_has_magic(bin, 7));
  ref_model *m = NULL;
  int rc = ref_model_parse(bin, len, &m, g_err, sizeof g_err);
  CHECK_MSG(rc == 0, "%s", g_err);
  void *again = NULL;
  size_t again_len = 0;
  rc = ref_model_write(m, &again, &again_len, g_err, sizeof g_err);
  int same = rc == 0 && again_len == len && memcmp(again, bin, len) == 0;
  free(again);
  free(bin);
  ref_model_free(m);
  CHECK_MSG(rc == 0, "%s", g_err);
  CHECK(same);
}

/* A tiny model can declare gigabytes of activations (here 2 x 1.2 GB as f32): the builder and
 * the parser refuse it by name, under a limit the environment can raise. */
TEST(refmodel_activation_memory_is_bounded) {
  const char *text =
      "graph huge\n"
      "  input x f32 [1,300000000]\n"
      "  output y f32 [1,300000000]\n"
      "  op Relu x -> y\n";
  unsetenv("HTPU_REF_MAX_ACTIVATION_BYTES");
  size_t len = 0;
  CHECK(build_bin(text, &len) == NULL);
  CHECK_STR_CONTAINS(g_err, "graph 'huge': its tensors need 2400000000 bytes as f32");
  CHECK_STR_CONTAINS(g_err, "'x', 1200000000");
  CHECK_STR_CONTAINS(g_err, "limit of 1073741824 bytes (HTPU_REF_MAX_ACTIVATION_BYTES)");

  setenv("HTPU_REF_MAX_ACTIVATION_BYTES", "2400000000", 1);
  void *bin = build_bin(text, &len);
  ref_model *m = NULL;
  int parsed = bin ? ref_model_parse(bin, len, &m, g_err, sizeof g_err) : -1;
  ref_model_free(m);
  m = NULL;
  /* the same file under the default limit: refused when read, as the backends read it */
  unsetenv("HTPU_REF_MAX_ACTIVATION_BYTES");
  int refused = bin ? ref_model_parse(bin, len, &m, g_err, sizeof g_err) : 0;
  free(bin);
  ref_model_free(m);
  CHECK_MSG(len < 1024, "the model is %zu bytes", len);
  CHECK_EQ(parsed, 0);
  CHECK(refused != 0);
  CHECK_STR_CONTAINS(g_err, "2400000000 bytes as f32");
}
