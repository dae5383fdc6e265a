/* test_model_epcontext.c - ONNX EPContext models (src/model/): embedded and external binaries,
 * several contexts, the main_context rule, metadata and class names; each answers as the raw
 * binary does. The models are the tests' own (onnx_build.c), written as ONNX Runtime's QNN
 * execution provider and Ultralytics write theirs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epc_rig.h"
#include "fixture.h"
#include "test.h"

static const char *const ULTRA_PROPS[][2] = {
    {"description", "Ultralytics YOLO11n model"},
    {"stride", "32"},
    {"task", "detect"},
    {"imgsz", "[640, 640]"},
    {"names", "{0: 'person', 1: \"it's\", 2: 'caf\\xe9', 3: 'a\\\\b'}"},
};

TEST(epc_embedded_answers_as_the_raw_binary) {
  fx_reset_env();
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  CHECK(bin);
  /* Ultralytics' form: one node, main_context and embed_mode left to their defaults */
  ob_node node = OB_NODE(.name = "main_graph_ctx", .cache = bin, .cache_len = n,
                         .partition_name = "add_f32", .ep_sdk_version = "v2.48.0.250101_1",
                         .source = "QNNExecutionProvider");
  ob_model m = {.num_props = 5, .props = ULTRA_PROPS, .num_nodes = 1, .nodes = &node};
  const char *path = test_tmp_path("yolo_qnn.onnx");
  CHECK_EQ(epc_write(path, &m), 0);
  htpu_model_info *info = NULL;
  CHECK_MSG(epc_inspect_file(path, 0, &info) == 0, "%s", epc_msg);
  int ok = info->num_graphs == 1 && strcmp(info->graphs[0].name, "add_f32") == 0 &&
           info->graphs[0].num_inputs == 2 && info->source != NULL;
  const htpu_model_source *s = info->source;
  ok = ok && strcmp(s->format, "onnx-epcontext") == 0 && s->ir_version == 9 && s->opset == 17 &&
       s->num_contexts == 1 && s->context == 0 && s->num_props == 5 &&
       strcmp(s->props[4].key, "names") == 0 && s->num_class_names == 4 &&
       strcmp(s->class_names[0], "person") == 0 && strcmp(s->class_names[1], "it's") == 0 &&
       strcmp(s->class_names[2], "caf\xc3\xa9") == 0 && strcmp(s->class_names[3], "a\\b") == 0 &&
       s->num_nodes == 1 && s->nodes[0].main_context == 1 && s->nodes[0].embed_mode == 1 &&
       s->nodes[0].cache_bytes == n && strcmp(s->nodes[0].cache_file, "") == 0 &&
       strcmp(s->nodes[0].ep_sdk_version, "v2.48.0.250101_1") == 0 &&
       strcmp(s->nodes[0].source, "QNNExecutionProvider") == 0 && s->nodes[0].context == 0 &&
       strstr(s->origin, "embedded in node 'main_graph_ctx'") != NULL;
  htpu_model_info_free(info);
  CHECK_MSG(ok, "the model's facts are not as written");
  CHECK_MSG(epc_load_and_run(path, NULL, NULL) == 0, "%s", epc_msg);
  /* a raw binary has no source */
  CHECK_EQ(epc_inspect_buffer(bin, n, &info), 0);
  CHECK(info->source == NULL);
  htpu_model_info_free(info);
  /* the same model from a buffer */
  size_t mn = 0;
  uint8_t *mb = ob_build(&m, &mn);
  int rc = epc_inspect_buffer(mb, mn, &info);
  free(mb);
  CHECK_MSG(rc == 0, "%s", epc_msg);
  CHECK(info->source && info->source->num_class_names == 4);
  htpu_model_info_free(info);
}

/* External binaries: beside the model or in a folder under it; never absolute, never "..",
 * never through a symlink that leads out of the model's folder. */
TEST(epc_external_binary_stays_in_the_models_folder) {
  fx_reset_env();
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  const char *dir = test_tmp_path("ext");
  char sub[600], inside[700], outside[700], model[700], link_out[700], link_in[700];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  mkdir(dir, 0700);
  mkdir(sub, 0700);
  snprintf(inside, sizeof inside, "%s/add.bin", sub);
  snprintf(outside, sizeof outside, "%s", test_tmp_path("outside_add.bin"));
  CHECK_EQ(test_write_file(inside, bin, n), 0);
  CHECK_EQ(test_write_file(outside, bin, n), 0);
  snprintf(link_out, sizeof link_out, "%s/escape.bin", dir);
  snprintf(link_in, sizeof link_in, "%s/near.bin", dir);
  unlink(link_out);
  unlink(link_in);
  CHECK_EQ(symlink(outside, link_out), 0);
  CHECK_EQ(symlink("sub/add.bin", link_in), 0);
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  static const struct {
    const char *name;
    int rc;
    const char *msg;
  } cases[] = {
      {"sub/add.bin", 0, ""},
      {"near.bin", 0, ""},
      {"escape.bin", HTPU_EMODEL, "outside the model's folder"},
      {"../outside_add.bin", HTPU_EMODEL, "has a '..' component"},
      {"sub/../sub/add.bin", HTPU_EMODEL, "has a '..' component"},
      {"/etc/passwd", HTPU_EMODEL, "is an absolute path"},
      {"missing.bin", HTPU_EIO, "cannot be opened"},
      {"sub", HTPU_EIO, "a directory"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ob_node node = OB_NODE(.name = "ctx", .cache = cases[i].name, .embed_mode = OB_INT(0),
                           .main_context = OB_INT(1), .source = "QNN");
    ob_model m = {.num_nodes = 1, .nodes = &node};
    CHECK_EQ(epc_write(model, &m), 0);
    int rc = epc_load_and_run(model, NULL, NULL);
    CHECK_MSG(rc == cases[i].rc, "'%s': %s, expected %s (%s)", cases[i].name, htpu_err_name(rc),
              htpu_err_name(cases[i].rc), epc_msg);
    if (rc) CHECK_STR_CONTAINS(epc_msg, cases[i].msg);
  }
  /* the info names the file and its size */
  ob_node node = OB_NODE(.name = "ctx", .cache = "sub/add.bin", .embed_mode = OB_INT(0), .max_size = OB_INT(4096));
  ob_model m = {.num_nodes = 1, .nodes = &node};
  CHECK_EQ(epc_write(model, &m), 0);
  htpu_model_info *info = NULL;
  CHECK_MSG(epc_inspect_file(model, 0, &info) == 0, "%s", epc_msg);
  const htpu_epcontext_node *e = &info->source->nodes[0];
  int ok = e->embed_mode == 0 && strcmp(e->cache_file, "sub/add.bin") == 0 &&
           e->cache_bytes == n && e->max_size == 4096 && strstr(info->source->origin, "sub/add.bin");
  htpu_model_info_free(info);
  CHECK(ok);
  /* from a buffer there is no folder to look in */
  size_t mn = 0;
  uint8_t *mb = ob_build(&m, &mn);
  int rc = epc_inspect_buffer(mb, mn, &info);
  free(mb);
  CHECK_EQ(rc, HTPU_EINVAL);
  CHECK_STR_CONTAINS(epc_msg, "open the model by its path");
}

/* Two main nodes, two contexts: a load names its graph; inspection goes context by context. */
TEST(epc_several_contexts_are_chosen_by_graph) {
  fx_reset_env();
  size_t n1 = 0, n2 = 0;
  const uint8_t *b1 = epc_add_bin(&n1), *b2 = epc_add_two_bin(&n2);
  ob_node nodes[2] = {
      OB_NODE(.name = "first", .cache = b1, .cache_len = n1, .source = "QNNExecutionProvider"),
      OB_NODE(.name = "second", .cache = b2, .cache_len = n2, .main_context = OB_INT(1), .embed_mode = OB_INT(1),
              .source = "QNNExecutionProvider"),
  };
  ob_model m = {.num_nodes = 2, .nodes = nodes};
  const char *path = test_tmp_path("two_ctx.onnx");
  CHECK_EQ(epc_write(path, &m), 0);
  int rc = epc_load_and_run(path, NULL, NULL);
  CHECK_EQ(rc, HTPU_EINVAL);
  CHECK_STR_CONTAINS(epc_msg, "holds 2 context binaries; name the graph");
  CHECK_STR_CONTAINS(epc_msg, "context 1 (node 'second'): add_two");
  CHECK_MSG(epc_load_and_run(path, "add_two", "add_two") == 0, "%s", epc_msg);
  CHECK_MSG(epc_load_and_run(path, "add_f32", "add_f32") == 0, "%s", epc_msg);
  CHECK_EQ(epc_load_and_run(path, "nope", NULL), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(epc_msg, "no context of file");
  htpu_model_info *info = NULL;
  CHECK_MSG(epc_inspect_file(path, 1, &info) == 0, "%s", epc_msg);
  int ok = info->source->num_contexts == 2 && info->source->context == 1 &&
           strcmp(info->graphs[0].name, "add_two") == 0 && info->source->nodes[1].context == 1 &&
           info->source->nodes[0].context == 0;
  htpu_model_info_free(info);
  CHECK(ok);
  CHECK_EQ(epc_inspect_file(path, 2, &info), HTPU_EINVAL);
  CHECK_STR_CONTAINS(epc_msg, "there is no context 2");
}

/* The graphs option of a load of the model above: the code, and the message in epc_msg. */
static int load_graphs(const char *path, const char *graph, const char *const *graphs,
                       uint32_t n) {
  htpu_runtime *rt = fx_open_runtime();
  if (!rt) return -1;
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.graph = graph;
  lo.graphs = graphs;
  lo.num_graphs = n;
  htpu_context *ctx = NULL;
  int rc = htpu_context_open_file_ex(rt, path, &lo, &ctx);
  snprintf(epc_msg, sizeof epc_msg, "%s", rc ? htpu_last_error() : "");
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  return rc;
}

/* One load makes one context: graphs of two contexts in one graphs option are refused with
 * the context holding each (not "the binary holds no graph", as though it were not there). */
TEST(epc_graphs_of_two_contexts_name_the_context_holding_each) {
  fx_reset_env();
  size_t n1 = 0, n2 = 0;
  const uint8_t *b1 = epc_add_bin(&n1), *b2 = epc_add_two_bin(&n2);
  ob_node nodes[2] = {OB_NODE(.name = "first", .cache = b1, .cache_len = n1),
                      OB_NODE(.name = "second", .cache = b2, .cache_len = n2)};
  ob_model m = {.num_nodes = 2, .nodes = nodes};
  const char *path = test_tmp_path("two_ctx_graphs.onnx");
  CHECK_EQ(epc_write(path, &m), 0);
  const char *both[2] = {"add_two", "add_f32"};
  CHECK_EQ(load_graphs(path, NULL, both, 2), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(epc_msg, "graph 'add_f32' (entry 1 of the graphs option) is in context 0 "
                              "(node 'first'), not in context 1 (node 'second'), which holds "
                              "'add_two' (entry 0 of the graphs option)");
  CHECK_STR_CONTAINS(epc_msg, "one load makes one context, so load each context on its own");
  CHECK_EQ(load_graphs(path, "add_two", both + 1, 1), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(epc_msg, "graph 'add_f32' (entry 0 of the graphs option) is in context 0 "
                              "(node 'first'), not in context 1 (node 'second'), which holds "
                              "'add_two' (the graph option)");
  /* a graph no context holds: the chosen binary's graphs, as before */
  const char *missing[2] = {"add_f32", "nope"};
  CHECK_EQ(load_graphs(path, NULL, missing, 2), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(epc_msg, "the binary holds no graph 'nope' (entry 1 of the graphs option); "
                              "it holds 'add_f32'");
  CHECK_EQ(load_graphs(path, NULL, both + 1, 1), HTPU_OK);
}
