/*
 * test_refmodel_malformed.c - binaries the parser must refuse: each kind of bad field patched
 * into a built file, every truncation, and single-byte mutations (a file that still parses must
 * run safely); and the VTCM header field as written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_abi.h"
#include "refmodel.h"
#include "refmodel_priv.h"
#include "refmodel_rig.h"
#include "test.h"

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
static void p_version(uint8_t *b) { put32(b + REFF_H_VERSION, 3); }
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
      {p_version, "unknown format version 3 (supported: 1, 2)"},
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
