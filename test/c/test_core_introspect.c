/* Introspection through the system library: every binary-info, graph-info and tensor version,
 * both graph-info strides, quantization metadata, and copies that outlive the system context. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "model/model_info.h"
#include "test.h"


static char *model_text(unsigned bi, unsigned gi, unsigned tv) {
  static char text[4096];
  snprintf(text, sizeof text,
           "meta binary_info=%u graph_info=%u tensor=%u backend_id=6 build_id=\"v2.42.0.ref\" "
           "core_api=2.32.0 backend_api=5.42.0 context_blob=3.3.4 soc_version=\"v68\" "
           "soc_model=35 dsp_arch=68 vtcm_bytes=2097152\n%s",
           bi, gi, tv, FX_MULTI_GRAPH);
  return text;
}

static void check_model(const htpu_model_info *m, unsigned bi, unsigned gi_expected, unsigned tv) {
  CHECK_EQ(m->binary_info_version, bi);
  CHECK_EQ(m->backend_id, 6);
  CHECK(strcmp(m->build_id, "v2.42.0.ref") == 0);
  CHECK_EQ(m->core_api_version.major, 2);
  CHECK_EQ(m->core_api_version.minor, 32);
  CHECK_EQ(m->backend_api_version.minor, 42);
  CHECK(strcmp(m->soc_version, "v68") == 0);
  if (bi >= 2) CHECK_EQ(m->soc_model, 35); /* v2: from the platform info; v3: also a field */
  CHECK_EQ(m->dsp_arch, bi >= 2 ? 68 : 0);   /* v1 carries no platform info */
  CHECK_EQ(m->num_graphs, 3);
  /* graphs[1] and [2] are only right when the library's stride was used. */
  CHECK(strcmp(m->graphs[0].name, "first") == 0);
  CHECK(strcmp(m->graphs[1].name, "second") == 0);
  CHECK(strcmp(m->graphs[2].name, "third") == 0);
  for (int i = 0; i < 3; i++) CHECK_EQ(m->graphs[i].graph_info_version, gi_expected);
  if (gi_expected == 3) CHECK_EQ(m->graphs[0].vtcm_bytes, 2097152);
  const htpu_tensor_info *x = &m->graphs[0].inputs[0];
  CHECK(strcmp(x->name, "x") == 0);
  CHECK_EQ(x->tensor_version, tv);
  CHECK_EQ(x->dtype, HTPU_U8);
  CHECK_EQ(x->qnn_data_type, 0x0408);
  CHECK_EQ(x->rank, 2);
  CHECK_EQ(x->dims[1], 3);
  CHECK_EQ(x->byte_size, 3);
  CHECK_EQ(x->quant.kind, HTPU_QUANT_PER_TENSOR);
  CHECK(x->quant.scale == 0.5f);
  CHECK_EQ(x->quant.zero_point, 3); /* QNN stores offset -3 */
  const htpu_tensor_info *p = &m->graphs[1].inputs[0];
  CHECK_EQ(p->dtype, HTPU_F16);
  CHECK_EQ(p->byte_size, 8);
  CHECK_EQ(p->quant.kind, HTPU_QUANT_NONE);
  const htpu_tensor_info *n = &m->graphs[2].outputs[0];
  CHECK_EQ(n->dtype, HTPU_I8);
  CHECK_EQ(n->quant.zero_point, -5);
  CHECK(m->graphs[0].inputs[0].id != m->graphs[2].inputs[0].id);

}

TEST(introspect_every_info_version_and_stride) {
  fx_reset_env();
  /* System API 1.4 and later lay graph infos out at 88 bytes, 1.1 at 64 (no V3 there). */
  const char *systems[] = {"SYS17:1.7.0", "SYS11:1.1.0", "SYS14:1.4.0"};
  for (int s = 0; s < 3; s++) {
    setenv("HTPU_REF_SYSTEM_PROVIDERS", systems[s], 1);
    for (unsigned bi = 1; bi <= 3; bi++)
      for (unsigned gi = 1; gi <= 3; gi++)
        for (unsigned tv = 1; tv <= 2; tv++) {
          size_t len = 0;
          void *bin = fx_build_model(model_text(bi, gi, tv), &len);
          CHECK(bin);
          htpu_model_info *m = NULL;
          int rc = htpu_inspect_buffer(test_build_path("libhtpu_refsystem.so"), bin, len, &m);
          free(bin);
          CHECK_MSG(rc == HTPU_OK, "%s bi=%u gi=%u tv=%u: %s", systems[s], bi, gi, tv,
                    htpu_last_error());
          /* A 64-byte-stride library reports graph info v3 requests as v2. */
          unsigned gi_expected = (s == 1 && gi == 3) ? 2 : gi;
          check_model(m, bi, gi_expected, tv);
          htpu_model_info_free(m);
          if (test_failed()) {
            printf("    (at %s bi=%u gi=%u tv=%u)\n", systems[s], bi, gi, tv);
            fx_reset_env();
            return;
          }
        }
  }
  fx_reset_env();
}

TEST(introspect_per_axis_quantization_and_context) {
  fx_reset_env();
  const char *path = fx_build_model_file("multi.bin", model_text(3, 3, 2));
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  const htpu_model_info *m = htpu_context_model_info(ctx);
  CHECK(m);
  CHECK_EQ(m->num_graphs, 3);
  CHECK_EQ(m->dsp_arch, 68);
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "'first', 'second', 'third'");
  CHECK_EQ(htpu_graph_open(ctx, "fourth", &g), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(htpu_last_error(), "no graph named 'fourth'");
  char buf[256];
  htpu_context_last_error(ctx, buf, sizeof buf);
  CHECK_STR_CONTAINS(buf, "fourth");
  CHECK_EQ(htpu_graph_open(ctx, "third", &g), HTPU_OK);
  CHECK(strcmp(htpu_graph_get_info(g)->name, "third") == 0);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

TEST(introspect_bad_files) {
  fx_reset_env();
  const char *sys = test_build_path("libhtpu_refsystem.so");
  htpu_model_info *m = NULL;
  CHECK_EQ(htpu_inspect_file(sys, "/nonexistent/model.bin", &m), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "/nonexistent/model.bin");
  const char *empty = test_tmp_path("empty.bin");
  CHECK_EQ(test_write_file(empty, "", 0), 0);
  CHECK_EQ(htpu_inspect_file(sys, empty, &m), HTPU_EMODEL);
  CHECK_STR_CONTAINS(htpu_last_error(), "empty");
  const char *garbage = test_tmp_path("garbage.bin");
  char junk[333];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(i * 7 + 3);
  CHECK_EQ(test_write_file(garbage, junk, sizeof junk), 0);
  CHECK_EQ(htpu_inspect_file(sys, garbage, &m), HTPU_EMODEL);
  CHECK_EQ(htpu_last_qnn_code(), 30010);
  CHECK_STR_CONTAINS(htpu_last_error(), "QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY");
  CHECK(m == NULL);
  /* Every truncation of a valid binary fails cleanly, in the inspector and in a context. */
  size_t len = 0;
  void *bin = fx_build_model(model_text(3, 3, 2), &len);
  CHECK(bin);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  for (size_t cut = 1; cut < len; cut += (len / 97) + 1) {
    int rc = htpu_inspect_buffer(sys, bin, cut, &m);
    CHECK_MSG(rc == HTPU_EMODEL, "cut at %zu of %zu: %s", cut, len, htpu_err_name(rc));
    htpu_context *ctx = NULL;
    rc = htpu_context_open_buffer(rt, bin, cut, &ctx);
    CHECK_MSG(rc == HTPU_EMODEL && ctx == NULL, "context from cut %zu: %s", cut, htpu_err_name(rc));
  }
  free(bin);
  htpu_context *ctx = NULL;
  CHECK_EQ(htpu_context_open_file(rt, garbage, &ctx), HTPU_EMODEL);
  CHECK_STR_CONTAINS(htpu_last_error(), "garbage.bin");
  CHECK_EQ(htpu_context_open_buffer(rt, NULL, 0, &ctx), HTPU_EINVAL);
  htpu_runtime_close(&rt);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_contexts, 0);
}

TEST(introspect_backend_rejects_binary_from_other_backend) {
  fx_reset_env();
  size_t len = 0;
  void *bin = fx_build_model(
      "meta binary_info=3 graph_info=3 tensor=2 backend_id=3\n"
      "graph g\n  input a f32 [2]\n  output b f32 [2]\n  op Relu a -> b\n",
      &len);
  CHECK(bin);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  int rc = htpu_context_open_buffer(rt, bin, len, &ctx);
  free(bin);
  /* Caught by the preflight, before QNN is asked, with both sides named. */
  CHECK_EQ(rc, HTPU_EINCOMPATIBLE);
  CHECK_STR_CONTAINS(htpu_last_error(), "built for QNN backend id 3");
  CHECK_STR_CONTAINS(htpu_last_error(), "backend is id 6");
  htpu_runtime_close(&rt);
}

/* ---- a system library whose structs are not the sizes its API version implies ------------- */

/* Two inputs and two outputs in one graph: tensors[1] of each list is misread at a wrong
 * tensor stride. */
static const char *TWO_BY_TWO =
    "graph two\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  output z f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "  op Relu a -> z\n";

/* One input, two outputs: only the output list is misread. */
static const char *ONE_BY_TWO =
    "graph fan\n"
    "  input a f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  output z f32 [1,4]\n"
    "  op Relu a -> y\n"
    "  op Relu a -> z\n";

/* Inspects `text` through the reference system library of this build. */
static int inspect_text(const char *text, htpu_model_info **m) {
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return 99;
  int rc = htpu_inspect_buffer(test_build_path("libhtpu_refsystem.so"), bin, len, m);
  free(bin);
  return rc;
}

/* QAIRT 2.13's libQnnSystem.so reports System API 1.1.0 (as 2.25's) but lays out 48-byte graph
 * infos and 120-byte tensors; read at 2.25's 64/144 its graphs[1..] and tensors[1..] are
 * garbage. The reference library answers that way with HTPU_REF_SYSTEM_LAYOUT=v1only. */
TEST(introspect_refuses_a_library_with_older_strides) {
  fx_reset_env();
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "QAIRT213:1.1.0", 1);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v1only", 1);
  char lib[1024];
  snprintf(lib, sizeof lib, "unsupported system library layout: '%s' (System API 1.1.0): ",
           test_build_path("libhtpu_refsystem.so"));
  /* Three graphs of one input and one output each: graph 1 is misread (its "name" is the
   * first bytes of a tensor array), at every binary info version. */
  for (unsigned bi = 1; bi <= 3; bi++) {
    htpu_model_info *m = NULL;
    int rc = inspect_text(model_text(bi, 3, 2), &m);
    CHECK_MSG(rc == HTPU_ESYSTEM_LAYOUT, "bi=%u: %s: %s", bi, htpu_err_name(rc),
              htpu_last_error());
    CHECK(m == NULL);
    CHECK_STR_CONTAINS(htpu_last_error(), lib);
    CHECK_STR_CONTAINS(htpu_last_error(), "graph 1");
  }
  htpu_model_info *m = NULL;
  CHECK_EQ(inspect_text(TWO_BY_TWO, &m), HTPU_ESYSTEM_LAYOUT);
  CHECK_STR_CONTAINS(htpu_last_error(), lib);
  /* tensors[1] read 24 bytes into the real one: its type (APP_WRITE = 0) as the version */
  CHECK_STR_CONTAINS(htpu_last_error(), "graph 0 ('two') input 1 has tensor version 0");
  CHECK_EQ(inspect_text(ONE_BY_TWO, &m), HTPU_ESYSTEM_LAYOUT);
  CHECK_STR_CONTAINS(htpu_last_error(), "graph 0 ('fan') output 1");
  /* The 1.7 stride misreads the same answer differently; also refused. */
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "ODD17:1.7.0", 1);
  CHECK_EQ(inspect_text(model_text(3, 3, 2), &m), HTPU_ESYSTEM_LAYOUT);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "(System API 1.7.0): graph 1 (of 3) has graph info version");
  CHECK(m == NULL);

  /* A context is refused the same way, before QNN is asked to create it. */
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "QAIRT213:1.1.0", 1);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  size_t len = 0;
  void *bin = fx_build_model(model_text(3, 3, 2), &len);
  CHECK(bin);
  htpu_context *ctx = NULL;
  int rc = htpu_context_open_buffer(rt, bin, len, &ctx);
  free(bin);
  CHECK_EQ(rc, HTPU_ESYSTEM_LAYOUT);
  CHECK(ctx == NULL);
  CHECK_STR_CONTAINS(htpu_last_error(), lib);
  htpu_runtime_close(&rt);
  fx_reset_env();
}

/* Element 0 of every array is at the same place whatever the stride, so an answer with one
 * graph of one input and one output is read correctly from such a library: it passes. */
TEST(introspect_reads_single_entries_at_any_stride) {
  fx_reset_env();
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "QAIRT213:1.1.0", 1);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v1only", 1);
  htpu_model_info *m = NULL;
  int rc = inspect_text("graph one\n"
                        "  input x u8 [1,3] scale=0.5 zero_point=3\n"
                        "  output y u8 [1,3] scale=0.5 zero_point=3\n"
                        "  op Relu x -> y\n",
                        &m);
  fx_reset_env();
  CHECK_MSG(rc == HTPU_OK, "%s: %s", htpu_err_name(rc), htpu_last_error());
  CHECK_EQ(m->num_graphs, 1);
  CHECK(strcmp(m->graphs[0].name, "one") == 0);
  CHECK_EQ(m->graphs[0].graph_info_version, 1); /* a 48-byte graph info holds only V1 */
  const htpu_tensor_info *x = &m->graphs[0].inputs[0], *y = &m->graphs[0].outputs[0];
  CHECK(strcmp(x->name, "x") == 0 && strcmp(y->name, "y") == 0);
  CHECK_EQ(x->tensor_version, 1);
  CHECK_EQ(x->rank, 2);
  CHECK_EQ(x->dims[1], 3);
  CHECK_EQ(x->quant.zero_point, 3);
  CHECK(y->quant.scale == 0.5f);
  htpu_model_info_free(m);
}

/* The execute descriptors are copied from the templates. A zero-filled V2 tensor says its
 * sparse layout is hybrid COO (0); a dense one carries UNDEFINED, as the V2 initializer and
 * the system library's own tensors do. V1 has no such field. */
TEST(introspect_v2_templates_are_not_sparse) {
  fx_reset_env();
  for (unsigned tv = 1; tv <= 2; tv++) {
    htpu_model_info *pub = NULL;
    int rc = inspect_text(model_text(3, 3, tv), &pub);
    CHECK_MSG(rc == HTPU_OK, "%s: %s", htpu_err_name(rc), htpu_last_error());
    const model_info *m = (const model_info *)pub; /* the public view is its first member */
    for (uint32_t g = 0; g < pub->num_graphs; g++) {
      const graph_templates *t = &m->templates[g];
      for (uint32_t i = 0; i < pub->graphs[g].num_inputs + pub->graphs[g].num_outputs; i++) {
        uint32_t nin = pub->graphs[g].num_inputs;
        const qnn_tensor_t *d = i < nin ? &t->inputs[i] : &t->outputs[i - nin];
        CHECK_EQ(d->version, tv);
        if (tv == 2)
          CHECK_MSG(d->u.v2.sparse_params.type == QNN_SPARSE_LAYOUT_UNDEFINED,
                    "graph %u tensor %u: sparse layout %d", g, i, d->u.v2.sparse_params.type);
      }
    }
    htpu_model_info_free(pub);
  }
}

/* A graph input or output's data format is checked: only DENSE is laid out as its dims say,
 * and QnnTypes.h allows SPARSE only for NATIVE tensors, so a binary declaring a sparse graph
 * input or output is refused, at inspection and at load, naming the graph, the tensor and the
 * format (it was run as dense). Both tensor versions carry the field. */
TEST(introspect_refuses_sparse_graph_io) {
  fx_reset_env();
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"meta tensor=2\ngraph g\n  input a f32 [4] format=sparse\n  output b f32 [4]\n"
       "  op Relu a -> b\n",
       "graph 'g' input 'a': data format SPARSE (1), but sparse tensors may only be NATIVE"},
      {"meta tensor=1\ngraph g\n  input a f32 [4]\n  output b f32 [4] format=sparse\n"
       "  op Relu a -> b\n",
       "graph 'g' output 'b': data format SPARSE (1), but sparse tensors may only be NATIVE"},
  };
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    htpu_model_info *pub = NULL;
    CHECK_EQ(inspect_text(cases[i].text, &pub), HTPU_EMODEL);
    CHECK(pub == NULL);
    CHECK_STR_CONTAINS(htpu_last_error(), cases[i].want);
    size_t len = 0;
    void *bin = fx_build_model(cases[i].text, &len);
    CHECK(bin);
    htpu_context *ctx = NULL;
    int rc = htpu_context_open_buffer(rt, bin, len, &ctx);
    free(bin);
    CHECK_EQ(rc, HTPU_EMODEL);
    CHECK(ctx == NULL);
    CHECK_STR_CONTAINS(htpu_last_error(), cases[i].want);
  }
  /* a sparse tensor inside the graph is not the client's business */
  htpu_model_info *pub = NULL;
  CHECK_EQ(inspect_text("graph g\n  input a f32 [4]\n  native h f32 [4] format=sparse\n"
                        "  output b f32 [4]\n  op Relu a -> h\n  op Relu h -> b\n",
                        &pub),
           HTPU_OK);
  htpu_model_info_free(pub);
  htpu_runtime_close(&rt);
}
