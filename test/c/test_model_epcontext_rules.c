/* test_model_epcontext_rules.c - what an EPContext model must be (ONNX Runtime's rules), and
 * hostile files: every malformed one is a clear error naming what and where, never a crash
 * (this runner is built with ASan and UBSan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epc_rig.h"
#include "fixture.h"
#include "test.h"

static int inspect_model(const ob_model *m) {
  size_t n = 0;
  uint8_t *b = ob_build(m, &n);
  htpu_model_info *info = NULL;
  int rc = epc_inspect_buffer(b, n, &info);
  htpu_model_info_free(info);
  free(b);
  return rc;
}

TEST(epc_main_context_rule) {
  fx_reset_env();
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  /* a node with main_context 0 names a graph of a main node's binary */
  ob_node ok[2] = {OB_NODE(.name = "carrier", .cache = bin, .cache_len = n),
                   OB_NODE(.name = "add_f32", .main_context = OB_INT(0), .source = "QNN")};
  ob_model m = {.num_nodes = 2, .nodes = ok};
  size_t mn = 0;
  uint8_t *mb = ob_build(&m, &mn);
  htpu_model_info *info = NULL;
  int rc = epc_inspect_buffer(mb, mn, &info);
  free(mb);
  CHECK_MSG(rc == 0, "%s", epc_msg);
  int good = info->source->num_contexts == 1 && info->source->nodes[1].main_context == 0 &&
             info->source->nodes[1].context == 0 && info->source->nodes[1].cache_bytes == 0;
  htpu_model_info_free(info);
  CHECK(good);
  /* ... by its partition_name too; a graph no context holds is refused */
  ok[1] = OB_NODE(.name = "other", .partition_name = "add_f32", .main_context = OB_INT(0));
  CHECK_EQ(inspect_model(&m), 0);
  ok[1] = OB_NODE(.name = "lost", .main_context = OB_INT(0));
  CHECK_EQ(inspect_model(&m), HTPU_EMODEL);
  CHECK_STR_CONTAINS(epc_msg, "no context holds a graph named 'lost' (context 0 (node 'carrier'): add_f32)");
  /* no main node at all */
  ob_node none[1] = {OB_NODE(.name = "n", .main_context = OB_INT(0), .cache = bin, .cache_len = n)};
  ob_model m2 = {.num_nodes = 1, .nodes = none};
  CHECK_EQ(inspect_model(&m2), HTPU_EMODEL);
  CHECK_STR_CONTAINS(epc_msg, "none of the model's 1 EPContext nodes is a main context");
}

TEST(epc_nodes_breaking_the_rules_are_named) {
  fx_reset_env();
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  static const struct {
    ob_node node;
    const char *msg;
  } cases[] = {
      {OB_NODE(.name = "ov", .source = "OpenVINOExecutionProvider"),
       "node 'ov' comes from 'OpenVINOExecutionProvider', not from QNN"},
      {OB_NODE(.name = "d", .ep_context_type = "dlc"), "holds a 'dlc' context"},
      {OB_NODE(.name = "e", .embed_mode = OB_INT(2)), "node 'e' has embed_mode 2; expected 0 or 1"},
      {OB_NODE(.name = "mc", .main_context = OB_INT(7)), "node 'mc' has main_context 7"},
      {OB_NODE(.name = "empty"), "without its ep_cache_context"},
      {OB_NODE(.name = "dom", .domain = ""), "EPContext node of domain ''; expected com.microsoft"},
      {OB_NODE(.name = "nul", .embed_mode = OB_INT(0), .cache = "a\0b.bin", .cache_len = 7),
       "holds a NUL byte"},
      {OB_NODE(.embed_mode = OB_INT(0), .cache = "x.bin"), "node #0 (unnamed, at byte"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ob_node nd = cases[i].node;
    if (!nd.cache && i != 4) {
      nd.cache = bin;
      nd.cache_len = n;
    }
    ob_model m = {.num_nodes = 1, .nodes = &nd};
    int rc = inspect_model(&m);
    CHECK_MSG(rc == HTPU_EMODEL || (i == 7 && rc == HTPU_EINVAL), "case %zu: %s (%s)", i,
              htpu_err_name(rc), epc_msg);
    CHECK_STR_CONTAINS(epc_msg, cases[i].msg);
  }
}

TEST(epc_onnx_without_epcontext_says_what_to_do) {
  fx_reset_env();
  ob_node qdq[3] = {OB_NODE(.name = "q", .op_type = "QuantizeLinear", .domain = ""),
                    OB_NODE(.name = "c", .op_type = "Conv", .domain = ""),
                    OB_NODE(.name = "d", .op_type = "DequantizeLinear", .domain = "")};
  ob_model m = {.num_nodes = 3, .nodes = qdq};
  const char *path = test_tmp_path("yolo11s_qdq.onnx");
  CHECK_EQ(epc_write(path, &m), 0);
  CHECK_EQ(epc_load_and_run(path, NULL, NULL), HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(epc_msg, "is an ONNX model without an EPContext node (3 nodes: "
                              "QuantizeLinear, Conv, DequantizeLinear)");
  CHECK_STR_CONTAINS(epc_msg, "docs/context-binaries.md");
}

/* An ONNX model is recognised by its first field being one of ModelProto's, whatever the order
 * its writer chose, not only by ir_version coming first; a context binary is not taken for one. */
TEST(epc_models_are_recognised_whatever_their_field_order) {
  fx_reset_env();
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  ob_node node = OB_NODE(.name = "ctx", .cache = bin, .cache_len = n);
  ob_model m = {.num_nodes = 1, .nodes = &node};
  size_t mn = 0;
  uint8_t *mb = ob_build(&m, &mn);
  CHECK(mb && mb[0] == 0x08);
  /* doc_string (field 6) then producer_name (2) before the rest, as a writer may put them */
  pbw w = {0};
  pbw_str(&w, 6, "a model whose writer puts its doc string first");
  pbw_str(&w, 2, "reordering writer");
  for (size_t i = 0; i < mn; i++) {
    if (w.len == w.cap) {
      w.cap = w.cap ? 2 * w.cap : 64;
      w.p = realloc(w.p, w.cap);
    }
    w.p[w.len++] = mb[i];
  }
  free(mb);
  htpu_model_info *info = NULL;
  int rc = epc_inspect_buffer(w.p, w.len, &info);
  pbw_free(&w);
  CHECK_MSG(rc == 0, "%s", epc_msg);
  int ok = info->source && info->source->num_nodes == 1 && info->num_graphs == 1;
  htpu_model_info_free(info);
  CHECK(ok);
  /* the raw binary itself is still a binary */
  CHECK_EQ(epc_inspect_buffer(bin, n, &info), 0);
  CHECK(info->source == NULL);
  htpu_model_info_free(info);
}
