/*
 * test_refmodel.c - the reference model: text builder, binary format (parser, writer, every
 * kind of malformed file), and the interpreter's ops against hand-computed results.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hexagon_tpu.h"
#include "qnn/qnn_abi.h"
#include "refmodel.h"
#include "refmodel_priv.h"
#include "test.h"

static char g_err[1024];

/* Builds text into a binary (caller frees) or NULL with the message in g_err. */
static void *build_bin(const char *text, size_t *len) {
  void *bin = NULL;
  g_err[0] = '\0';
  if (ref_build_from_text(text, &bin, len, g_err, sizeof g_err) != 0) return NULL;
  return bin;
}

/* Builds and parses; the binary is freed right away (the model keeps its own copy). */
static ref_model *build_model(const char *text) {
  size_t len;
  void *bin = build_bin(text, &len);
  if (!bin) return NULL;
  ref_model *m = NULL;
  if (ref_model_parse(bin, len, &m, g_err, sizeof g_err) != 0) m = NULL;
  memset(bin, 0xAB, len); /* the model must not point into the caller's buffer */
  free(bin);
  return m;
}

/* Runs graph `name` with one input and one output. */
static int run1(const ref_model *m, const char *name, const void *in, void *out) {
  int g = ref_model_find_graph(m, name);
  if (g < 0) {
    snprintf(g_err, sizeof g_err, "no graph %s", name);
    return -1;
  }
  const void *ins[1] = {in};
  void *outs[1] = {out};
  return ref_graph_run(m, (uint32_t)g, ins, outs, g_err, sizeof g_err);
}

static int run2(const ref_model *m, const char *name, const void *a, const void *b, void *out) {
  int g = ref_model_find_graph(m, name);
  if (g < 0) return -1;
  const void *ins[2] = {a, b};
  void *outs[1] = {out};
  return ref_graph_run(m, (uint32_t)g, ins, outs, g_err, sizeof g_err);
}

static int near(float a, float b, float tol) { return fabsf(a - b) <= tol; }

/* Index of the first element that differs by more than tol, or -1. */
static int first_diff_f32(const float *got, const float *want, size_t n, float tol) {
  for (size_t i = 0; i < n; i++)
    if (!near(got[i], want[i], tol)) return (int)i;
  return -1;
}

#define CHECK_F32S(got, want, n, tol)                                                        \
  do {                                                                                       \
    int d_ = first_diff_f32((got), (want), (n), (tol));                                      \
    CHECK_MSG(d_ < 0, "element %d: got %.9g, want %.9g", d_, (double)(got)[d_ < 0 ? 0 : d_], \
              (double)(want)[d_ < 0 ? 0 : d_]);                                              \
  } while (0)

#define CHECK_BYTES(got, want, n)                                                         \
  do {                                                                                    \
    for (size_t i_ = 0; i_ < (n); i_++)                                                   \
      CHECK_MSG((got)[i_] == (want)[i_], "element %zu: got %lld, want %lld", i_,          \
                (long long)(got)[i_], (long long)(want)[i_]);                             \
  } while (0)

/* ---- builder and format ------------------------------------------------------------------ */

static const char *const k_two_graphs =
    "# two graphs; names repeat across graphs, ids do not\n"
    "meta binary_info=2 graph_info=1 tensor=1 backend_id=6 build_id=\"v2.42.0-ref\"\n"
    "meta core_api=2.29.0 backend_api=5.42.1 context_blob=3.1.0 soc_model=35 dsp_arch=68 "
    "vtcm_bytes=4194304 soc_version=\"v68\"\n"
    "graph add_f32\n"
    "  input  a f32 [1,4]\n"
    "  input  b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "\n"
    "graph mlp\n"
    "  input  a f32 [1,2]\n"
    "  static w f32 [2,2] data=[1, -1,\n"
    "                           2, 0.5]  # wraps onto a second line\n"
    "  static bias f32 [2] data=[0.5, -10]\n"
    "  native h f32 [1,2]\n"
    "  output y f32 [1,2]\n"
    "  op FullyConnected a w bias -> h name=fc1\n"
    "  op Relu h -> y\n";

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

/* ---- malformed binaries -------------------------------------------------------------------- */

static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* Record of the tensor called name (first match) in a binary. */
static uint8_t *tensor_rec(uint8_t *bin, const char *name) {
  uint32_t strings = get32(bin + REFF_H_STRINGS_OFF), off = get32(bin + REFF_H_TENSORS_OFF);
  for (uint32_t i = 0; i < get32(bin + REFF_H_NUM_TENSORS); i++) {
    uint8_t *r = bin + off + i * REFF_TENSOR_SIZE;
    if (strcmp((const char *)bin + strings + get32(r + REFF_T_NAME), name) == 0) return r;
  }
  return NULL;
}

static uint8_t *graph_rec(uint8_t *bin, uint32_t g) {
  return bin + get32(bin + REFF_H_GRAPHS_OFF) + g * REFF_GRAPH_SIZE;
}

static uint8_t *op_rec(uint8_t *bin, uint32_t g, uint32_t o) {
  return bin + get32(bin + REFF_H_LISTS_OFF) + get32(graph_rec(bin, g) + REFF_G_OPS) +
         o * REFF_OP_SIZE;
}

/* Applies `patch` to a fresh copy of the k_two_graphs binary (plus a per-axis tensor) and
 * expects the parse to fail with `want` in the message. */
static const char *const k_patch_model =
    "graph add_f32\n"
    "  input  a f32 [1,4]\n"
    "  input  b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "graph mlp\n"
    "  input  x u8 [1,3] scale=0.5 zero_point=128\n"
    "  static w u8 [2,3] axis=0 scales=[0.25,0.5] zero_points=[128,128] data=[1,2,3,4,5,6]\n"
    "  native h u8 [1,2] scale=0.1\n"
    "  output z u8 [1,2] scale=0.1\n"
    "  op FullyConnected x w -> h\n"
    "  op Relu h -> z\n";

typedef void (*patch_fn)(uint8_t *bin);

static int patched_fails(patch_fn patch, const char *want, char *msg, size_t msglen) {
  size_t len;
  uint8_t *bin = build_bin(k_patch_model, &len);
  if (!bin) {
    snprintf(msg, msglen, "build failed: %s", g_err);
    return 0;
  }
  patch(bin);
  ref_model *m = NULL;
  int rc = ref_model_parse(bin, len, &m, g_err, sizeof g_err);
  free(bin);
  ref_model_free(m);
  if (rc == 0) {
    snprintf(msg, msglen, "parse succeeded, expected '%s'", want);
    return 0;
  }
  if (!strstr(g_err, want)) {
    snprintf(msg, msglen, "message '%s' lacks '%s'", g_err, want);
    return 0;
  }
  return 1;
}

static void p_magic(uint8_t *b) { b[0] ^= 0x20; }
static void p_version(uint8_t *b) { put32(b + REFF_H_VERSION, 2); }
static void p_header_size(uint8_t *b) { put32(b + REFF_H_HEADER_SIZE, 64); }
static void p_trailing(uint8_t *b) { put32(b + REFF_H_FILE_SIZE, get32(b + REFF_H_FILE_SIZE) - 8); }
static void p_rank(uint8_t *b) { put32(tensor_rec(b, "a") + REFF_T_RANK, 12); }
static void p_dim_overflow(uint8_t *b) {
  uint8_t *r = tensor_rec(b, "h");
  put32(r + REFF_T_DIMS, 0xFFFFFFFFu);
  put32(r + REFF_T_DIMS + 4, 0xFFFFFFFFu);
}
static void p_dim_zero(uint8_t *b) { put32(tensor_rec(b, "y") + REFF_T_DIMS + 4, 0); }
static void p_dtype(uint8_t *b) { put32(tensor_rec(b, "a") + REFF_T_DATA_TYPE, 0x1234); }
static void p_quant(uint8_t *b) { put32(tensor_rec(b, "x") + REFF_T_QUANT, 7); }
static void p_kind(uint8_t *b) { put32(tensor_rec(b, "x") + REFF_T_KIND, 9); }
static void p_float_quant(uint8_t *b) { put32(tensor_rec(b, "h") + REFF_T_DATA_TYPE, QNN_DATATYPE_FLOAT_32); }
static void p_strings(uint8_t *b) { put32(tensor_rec(b, "a") + REFF_T_NAME, 0x7FFFFFF0u); }
static void p_strings_nul(uint8_t *b) {
  b[get32(b + REFF_H_STRINGS_OFF) + get32(b + REFF_H_STRINGS_SIZE) - 1] = 'x';
}
static void p_tensor_table(uint8_t *b) { put32(b + REFF_H_NUM_TENSORS, 0x10000000u); }
static void p_section(uint8_t *b) { put32(b + REFF_H_DATA_SIZE, 0xFFFFFF00u); }
static void p_align(uint8_t *b) { put32(b + REFF_H_LISTS_OFF, get32(b + REFF_H_LISTS_OFF) + 4); }
static void p_static_size(uint8_t *b) { put32(tensor_rec(b, "w") + REFF_T_DATA_SIZE, 4); }
static void p_static_range(uint8_t *b) { put32(tensor_rec(b, "w") + REFF_T_DATA_OFF, 0x1000000u); }
static void p_axis_count(uint8_t *b) { put32(tensor_rec(b, "w") + REFF_T_NUM_AXIS, 1); }
static void p_axis(uint8_t *b) { put32(tensor_rec(b, "w") + REFF_T_AXIS, 5); }
static void p_scale(uint8_t *b) {
  float s = -1.0f;
  memcpy(tensor_rec(b, "x") + REFF_T_SCALE, &s, 4);
}
static void p_zero_point(uint8_t *b) { put32(tensor_rec(b, "x") + REFF_T_OFFSET, (uint32_t)-300); }
static void p_dup_id(uint8_t *b) { put32(tensor_rec(b, "b") + REFF_T_ID, get32(tensor_rec(b, "a") + REFF_T_ID)); }
static void p_id_zero(uint8_t *b) { put32(tensor_rec(b, "b") + REFF_T_ID, 0); }
static void p_dup_graph(uint8_t *b) { put32(graph_rec(b, 1) + REFF_G_NAME, get32(graph_rec(b, 0) + REFF_G_NAME)); }
static void p_no_inputs(uint8_t *b) { put32(graph_rec(b, 0) + REFF_G_NUM_INPUTS, 0); }
static void p_no_outputs(uint8_t *b) { put32(graph_rec(b, 1) + REFF_G_NUM_OUTPUTS, 0); }
static void p_graph_ops_range(uint8_t *b) { put32(graph_rec(b, 1) + REFF_G_NUM_OPS, 0x01000000u); }
static void p_op_type(uint8_t *b) { put32(op_rec(b, 0, 0) + REFF_O_TYPE, 42); }
static void p_op_arity(uint8_t *b) {
  uint8_t *r = op_rec(b, 0, 0);
  put32(r + REFF_O_NUM_INPUTS, 1);
  put32(r + REFF_O_INPUTS + 4, 0);
}
static void p_op_slots(uint8_t *b) { put32(op_rec(b, 0, 0) + REFF_O_NUM_INPUTS, 9); }
static void p_op_undefined(uint8_t *b) { put32(op_rec(b, 0, 0) + REFF_O_INPUTS + 4, 999); }
static void p_never_produced(uint8_t *b) {
  /* Relu reads z, which only it produces */
  put32(op_rec(b, 1, 1) + REFF_O_INPUTS, get32(tensor_rec(b, "z") + REFF_T_ID));
}
static void p_foreign_input(uint8_t *b) {
  /* mlp's FullyConnected reads add_f32's input a */
  put32(op_rec(b, 1, 0) + REFF_O_INPUTS, get32(tensor_rec(b, "a") + REFF_T_ID));
}
static void p_shape(uint8_t *b) { put32(tensor_rec(b, "y") + REFF_T_DIMS + 4, 5); }
static void p_conv_param_on_add(uint8_t *b) { put32(op_rec(b, 0, 0) + REFF_O_STRIDE, 2); }
static void p_output_static(uint8_t *b) { put32(op_rec(b, 1, 0) + REFF_O_OUTPUTS, get32(tensor_rec(b, "w") + REFF_T_ID)); }
static void p_graph_input_kind(uint8_t *b) {
  uint8_t *list = b + get32(b + REFF_H_LISTS_OFF) + get32(graph_rec(b, 0) + REFF_G_INPUTS);
  put32(list, get32(tensor_rec(b, "y") + REFF_T_ID));
}
static void p_meta(uint8_t *b) { put32(b + REFF_H_BINARY_INFO, 9); }
static void p_reserved(uint8_t *b) { put32(op_rec(b, 0, 0) + REFF_O_RESERVED, 1); }

/* The blob info's VTCM as written: bytes by default, the MB form on request, whatever order
 * the keys come in; the header field holds exactly that value. */
TEST(refmodel_vtcm_bytes_and_blob_unit) {
  static const struct {
    const char *meta;
    uint32_t blob;
  } cases[] = {
      {"meta vtcm_bytes=8388608\n", 8388608},
      {"meta vtcm_bytes=8388608 vtcm_blob_unit=bytes\n", 8388608},
      {"meta vtcm_blob_unit=mb\nmeta vtcm_bytes=8388608\n", 8},
      {"meta vtcm_bytes=16777216\nmeta vtcm_blob_unit=mb\n", 16},
      {"meta vtcm_blob_unit=mb\n", 2}, /* the default 2 MiB, as MB */
      {"meta vtcm_bytes=0 vtcm_blob_unit=mb\n", 0},
      {"meta vtcm_bytes=4294967295\n", 4294967295u},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[256];
    snprintf(text, sizeof text, "%sgraph g\n  input x f32 [1]\n  output y f32 [1]\n"
             "  op Relu x -> y\n", cases[i].meta);
    size_t len;
    uint8_t *bin = build_bin(text, &len);
    CHECK_MSG(bin, "case %zu: %s", i, g_err);
    uint32_t field = get32(bin + REFF_H_VTCM_BLOB);
    free(bin);
    CHECK_MSG(field == cases[i].blob, "case %zu: header field %u, want %u", i, field,
              cases[i].blob);
    ref_model *m = build_model(text);
    CHECK_MSG(m, "case %zu: %s", i, g_err);
    uint32_t blob = m->meta.vtcm_blob;
    ref_model_free(m);
    CHECK_EQ(blob, cases[i].blob);
  }
}

TEST(refmodel_rejects_each_kind_of_bad_binary) {
  static const struct {
    patch_fn fn;
    const char *want;
  } cases[] = {
      {p_magic, "bad magic"},
      {p_version, "unknown format version 2 (supported: 1)"},
      {p_header_size, "header size 64"},
      {p_trailing, "trailing data"},
      {p_rank, "rank 12 > 8"},
      {p_dim_overflow, "exceed the 2^31-byte limit"},
      {p_dim_zero, "dimension 1 is 0"},
      {p_dtype, "unknown data type 0x1234"},
      {p_quant, "unknown quantization encoding 7"},
      {p_kind, "unknown tensor kind 9"},
      {p_float_quant, "quantization parameters on non-quantized type f32"},
      {p_strings, "outside the string table"},
      {p_strings_nul, "string table does not end with a NUL"},
      {p_tensor_table, "truncated: tensor table needs"},
      {p_section, "truncated: data section needs"},
      {p_align, "not 8-byte aligned"},
      {p_static_size, "static data is 4 bytes"},
      {p_static_range, "static data needs 6 bytes at offset 16777216 of the data section"},
      {p_axis_count, "1 per-axis scales but dims[0] is 2"},
      {p_axis, "quantization axis 5 outside"},
      {p_scale, "scale -1 must be finite and > 0"},
      {p_zero_point, "zero point 300 outside [0, 255]"},
      {p_dup_id, "duplicate tensor id"},
      {p_id_zero, "has id 0"},
      {p_dup_graph, "duplicate graph name 'add_f32'"},
      {p_no_inputs, "graph 'add_f32' has no inputs"},
      {p_no_outputs, "graph 'mlp' has no outputs"},
      {p_graph_ops_range, "op list needs"},
      {p_op_type, "unknown op type 42"},
      {p_op_arity, "op 0 (ElementWiseAdd): takes 2 inputs, got 1"},
      {p_op_slots, "9 inputs"},
      {p_op_undefined, "tensor id 999 is not defined"},
      {p_never_produced, "tensor 'z' is not produced by an earlier op"},
      {p_foreign_input, "input tensor 'a' is not an input of this graph"},
      {p_shape, "output shape [1,5] != broadcast shape [1,4]"},
      {p_conv_param_on_add, "ElementWiseAdd takes no stride/pad"},
      {p_output_static, "output 'w' has kind static"},
      {p_graph_input_kind, "input 'y' has kind output, not input"},
      {p_meta, "binary info version 9"},
      {p_reserved, "reserved field is not 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char msg[1200];
    CHECK_MSG(patched_fails(cases[i].fn, cases[i].want, msg, sizeof msg), "case %zu: %s", i, msg);
  }
}

TEST(refmodel_every_truncation_fails_cleanly) {
  size_t len;
  uint8_t *bin = build_bin(k_patch_model, &len);
  CHECK_MSG(bin, "%s", g_err);
  for (size_t n = 0; n < len; n++) {
    /* a fresh allocation of exactly n bytes, so ASan catches any read past the end */
    uint8_t *cut = malloc(n ? n : 1);
    CHECK(cut);
    memcpy(cut, bin, n);
    ref_model *m = NULL;
    int rc = ref_model_parse(cut, n, &m, g_err, sizeof g_err);
    free(cut);
    if (rc == 0) {
      ref_model_free(m);
      free(bin);
      CHECK_MSG(0, "truncated to %zu of %zu bytes but parsed", n, len);
    }
    if (!strstr(g_err, "truncated")) {
      free(bin);
      CHECK_MSG(0, "length %zu: '%s' does not say truncated", n, g_err);
    }
    CHECK(m == NULL);
  }
  free(bin);
  ref_model *m = NULL;
  CHECK(ref_model_parse(NULL, 10, &m, g_err, sizeof g_err) != 0);
  CHECK(ref_model_parse("HTPU", 4, &m, NULL, 0) != 0); /* err may be NULL */
}

/* Runs every graph of a model with zeroed inputs: a model that parsed must run safely. */
static void run_all_graphs_zeroed(const ref_model *m) {
  for (uint32_t g = 0; g < m->num_graphs; g++) {
    const ref_graph *gr = &m->graphs[g];
    const void *ins[64];
    void *outs[64];
    if (gr->num_inputs > 64 || gr->num_outputs > 64) continue;
    for (uint32_t i = 0; i < gr->num_inputs; i++)
      ins[i] = calloc(1, m->tensors[gr->inputs[i]].nbytes + 1);
    for (uint32_t i = 0; i < gr->num_outputs; i++)
      outs[i] = calloc(1, m->tensors[gr->outputs[i]].nbytes + 1);
    char e[256];
    (void)ref_graph_run(m, g, ins, outs, e, sizeof e);
    for (uint32_t i = 0; i < gr->num_inputs; i++) free((void *)ins[i]);
    for (uint32_t i = 0; i < gr->num_outputs; i++) free(outs[i]);
  }
}

TEST(refmodel_byte_mutations_never_crash) {
  size_t len;
  uint8_t *bin = build_bin(k_patch_model, &len);
  CHECK_MSG(bin, "%s", g_err);
  static const uint8_t values[] = {0x00, 0x01, 0x07, 0x80, 0xFF};
  size_t parsed = 0, total = 0;
  uint8_t *copy = malloc(len);
  CHECK(copy);
  for (size_t pos = 0; pos < len; pos++) {
    for (size_t v = 0; v < sizeof values; v++) {
      if (bin[pos] == values[v]) continue;
      memcpy(copy, bin, len);
      copy[pos] = values[v];
      ref_model *m = NULL;
      total++;
      if (ref_model_parse(copy, len, &m, g_err, sizeof g_err) == 0) {
        parsed++;
        run_all_graphs_zeroed(m);
        ref_model_free(m);
      }
    }
  }
  free(copy);
  free(bin);
  /* most single-byte changes must be caught; the ones that parse change only values */
  CHECK_MSG(parsed < total / 2, "%zu of %zu mutations parsed", parsed, total);
}

/* ---- bad text ------------------------------------------------------------------------------ */

TEST(refmodel_bad_text_names_the_line) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Conv3d x -> y\n",
       "line 4: unknown op 'Conv3d'"},
      {"graph g\n  input x f64 [1]\n", "line 2: unknown type 'f64'"},
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu q -> y\n",
       "line 4: unknown tensor 'q' in graph 'g'"},
      {"graph g\n  input x f32 [1]\n  input x f32 [2]\n", "line 3: tensor 'x' already declared on line 2"},
      {"graph g\n  static w f32 [2,2] data=[1,2,3]\n", "line 2: tensor 'w' has 4 elements, data has 3 values"},
      {"graph g\n  static w u8 [2] data=[1,256]\n", "line 2: data: '256' is not an integer in u8's range [0, 255]"},
      {"graph g\n  static w i8 [2] data=[1,\n -129]\n", "line 3: data: '-129'"},
      {"input x f32 [1]\n", "line 1: 'input' outside a graph"},
      {"graph g\n  input a f32 [1,4]\n  input b f32 [1,3]\n  output y f32 [1,4]\n\n"
       "  op ElementWiseAdd a b -> y\n",
       "line 6: graph 'g' op 0 (ElementWiseAdd): shapes [1,4] and [1,3] do not broadcast"},
      {"# header\ngraph g\n  input a f32 [1]\n", "line 2: graph 'g' has no outputs"},
      {"graph g\n  output y f32 [1]\n", "line 1: graph 'g' has no inputs"},
      {"graph g\n  input a f32 [1]\n  output y f32 [1]\n", "line 1: graph 'g': output 'y' is never produced"},
      {"graph g\n  static w f32 [1,\n2\n", "line 2: '[' is never closed"},
      {"meta build_id=\"abc\n", "line 1: unterminated string"},
      {"graph g\n  input x f32 [1] colour=red\n", "line 2: a tensor takes no parameter 'colour'"},
      {"graph g\n  input x u8 [1] scale=0.1 zero_point=300\n", "line 2: tensor 'x': zero point 300 outside [0, 255]"},
      {"graph g\n  input x f32 [1] scale=0.1\n", "line 2: f32 tensors cannot carry quantization"},
      {"graph g\n  input x u8 [1] zero_point=3\n", "line 2: zero_point= needs scale="},
      {"graph g\n  input x u8 [1] scale=0\n", "line 2: tensor 'x': scale 0 must be finite and > 0"},
      {"graph g\n  static w u8 [2,2] axis=0 scales=[1,1,1] data=[1,2,3,4]\n",
       "line 2: tensor 'w': 3 per-axis scales but dims[0] is 2"},
      {"graph g\n  static w u8 [2] axis=0 scales=[1,1] zero_points=[1]\n", "line 2: zero_points= needs a list of 2"},
      {"meta flavour=3\n", "line 1: unknown meta key 'flavour'"},
      {"meta tensor=3\n", "line 1: tensor version 3"},
      {"meta core_api=2.x\n", "line 1: core_api: '2.x' is not a version"},
      {"meta vtcm_bytes=0\nmeta vtcm_bytes=0\n", "line 2: meta 'vtcm_bytes' given twice"},
      {"meta vtcm_bytes=8\n", "line 1: vtcm_bytes: 8 is below 1 MiB (1048576); give the VTCM "
       "in bytes"},
      {"meta vtcm_bytes=4294967296\n",
       "line 1: vtcm_bytes: '4294967296' is not an unsigned 32-bit"},
      {"meta vtcm_blob_unit=kb\n", "line 1: vtcm_blob_unit: 'kb' is not bytes or mb"},
      {"meta vtcm_bytes=1572864\nmeta vtcm_blob_unit=mb\ngraph g\n  input x f32 [1]\n"
       "  output y f32 [1]\n  op Relu x -> y\n",
       "line 2: vtcm_blob_unit=mb writes whole MB, but vtcm_bytes 1572864 is not a multiple of "
       "1048576"},
      {"meta vtcm_mb=2\n", "line 1: unknown meta key 'vtcm_mb' (binary_info"},
      {"graph g\n  input x f32 [1]\ngraph g\n", "line 3: graph 'g' already defined on line 1"},
      {"graph g\n  input x f32 [0]\n", "line 2: tensor 'x': dimension 0 is 0"},
      {"graph g\n  input x f32 [1,1,1,1,1,1,1,1,1]\n", "line 2: dims need 1 to 8 values, got 9"},
      {"graph g\n  input x f32 [65536,65536]\n", "line 2: tensor 'x': dims [65536,65536] x 4-byte"},
      {"graph g\n  static w f32 [1]\n", "line 2: static tensor 'w' needs exactly one of"},
      {"graph g\n  input x f32 [1] data=[1]\n", "line 2: data= is only for static tensors"},
      {"graph g\n  static w u8 [1] data_f32=[1]\n", "line 2: data_f32= needs a float or quantized tensor"},
      {"graph g\n  static w u8 [1] scale=1 data_f32=[nan]\n", "line 2: data_f32: value 0 is NaN"},
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu x y\n", "line 4: expected '->'"},
      {"graph g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu x -> y beta=2\n",
       "line 4: Relu takes no parameter 'beta'"},
      {"graph g\n  input x f32 [1,2,2,1]\n  static w f32 [1,1,1,1] data=[1]\n"
       "  output y f32 [1,2,2,1]\n  op Conv2d x w -> y stride=[1]\n",
       "line 5: 'stride' takes a list of 2 values"},
      {"graph g\n  input x f32 [1,2,2,1]\n  static w f32 [3,3,1,1] data=[1,1,1,1,1,1,1,1,1]\n"
       "  output y f32 [1,2,2,1]\n  op Conv2d x w -> y\n",
       "line 5: graph 'g' op 0 (Conv2d): kernel 3x3 larger than padded input 2x2"},
      {"graph g\n  input x f32 [1,4,4,1]\n  static w f32 [1,1,1,1] data=[1]\n"
       "  output y f32 [1,4,4,1]\n  op Conv2d x w -> y stride=[2,2]\n",
       "line 5: graph 'g' op 0 (Conv2d): output shape [1,4,4,1], expected [1,2,2,1]"},
      {"graph g\n  input x f32 [1,3]\n  static w f32 [2,4] data=[1,1,1,1,1,1,1,1]\n"
       "  output y f32 [1,2]\n  op FullyConnected x w -> y\n",
       "line 5: graph 'g' op 0 (FullyConnected): input 'x' shape [1,3] does not flatten to [N,4]"},
      {"graph g\n  input x f32 [1,3]\n  output y f32 [1,3]\n  op Softmax x -> y beta=inf\n",
       "line 4: graph 'g' op 0 (Softmax): beta inf is not finite"},
      {"graph g\n  input x f32 [6]\n  output y f32 [4]\n  op Reshape x -> y\n",
       "line 4: graph 'g' op 0 (Reshape): cannot reshape [6] to [4]"},
      {"graph g\n  input x f32 [2]\n  output y f32 [2]\n  op Relu x x -> y\n",
       "line 4: graph 'g' op 0 (Relu): takes 1 input, got 2"},
      {"graph g\n  input x f32 [2]\n  output y f32 [2]\n  op Relu x -> y\n  op Relu x -> y\n",
       "line 5: graph 'g' op 1 (Relu): 'y' is produced twice"},
      {"graph g\n  input x f32 [2]\n  native h f32 [2]\n  output y f32 [2]\n  op Relu h -> y\n",
       "line 5: graph 'g' op 0 (Relu): tensor 'h' is not produced by an earlier op"},
      {"graph g\n  input x f32 [2] ]\n", "line 2: ']' without '['"},
      {"graph g x\n", "line 1: expected 'graph NAME'"},
      {"graph g \\ x\n", "line 1: '\\' must end the line"},
      {"graph \\\n g\n  input x f32 [1]\n  output y f32 [1]\n  op Relu x -> z\n",
       "line 5: unknown tensor 'z'"},
      {"frobnicate\n", "line 1: unknown statement 'frobnicate'"},
      {"", "no graph defined"},
      {"graph g\n  input x f32 [1] scale\n", "line 2: expected key=value, got 'scale'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len;
    void *bin = build_bin(cases[i].text, &len);
    free(bin);
    CHECK_MSG(!bin, "case %zu built", i);
    CHECK_MSG(strstr(g_err, cases[i].want), "case %zu: '%s' lacks '%s'", i, g_err, cases[i].want);
  }
}

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

/* ---- htpu-refbuild --------------------------------------------------------------------------- */

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

TEST(refmodel_refbuild_command) {
  const char *tool = test_build_path("htpu-refbuild");
  if (!file_exists(tool)) {
    /* built by `make test`; a hand-compiled runner without HTPU_TEST_BUILD_DIR skips this */
    CHECK_MSG(!getenv("HTPU_TEST_BUILD_DIR"), "%s was not built", tool);
    return;
  }
  const char *in = test_tmp_path("refbuild_in.txt"), *out = test_tmp_path("refbuild_out.bin");
  const char *bad = test_tmp_path("refbuild_bad.txt"), *log = test_tmp_path("refbuild.log");
  CHECK(test_write_file(in, k_two_graphs, strlen(k_two_graphs)) == 0);
  const char *bad_text = "graph g\n  input x f32 [1]\n  op Nope x -> x\n";
  CHECK(test_write_file(bad, bad_text, strlen(bad_text)) == 0);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", tool, in, out);
  CHECK_EQ(system(cmd), 0);
  FILE *f = fopen(out, "rb");
  CHECK(f);
  static uint8_t buf[65536];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ref_model *m = NULL;
  CHECK_MSG(ref_model_parse(buf, n, &m, g_err, sizeof g_err) == 0, "%s", g_err);
  CHECK_EQ(m->num_graphs, 2);
  ref_model_free(m);

  snprintf(cmd, sizeof cmd, "'%s' - - < '%s' > '%s'", tool, in, out); /* stdin to stdout */
  CHECK_EQ(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' 2> '%s'", tool, bad, out, log);
  int rc = system(cmd);
  CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
  f = fopen(log, "r");
  CHECK(f);
  char msg[512] = {0};
  size_t got = fread(msg, 1, sizeof msg - 1, f);
  fclose(f);
  msg[got] = '\0';
  CHECK_STR_CONTAINS(msg, "line 3: unknown op 'Nope'");
  snprintf(cmd, sizeof cmd, "'%s' only-one-arg 2> /dev/null", tool);
  rc = system(cmd);
  CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
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
