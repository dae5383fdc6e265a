/* test_refbackend_shapes.c - the reference backend's rules on tensor layouts, driven through its
 * own table: a binary with a sparse graph input or output is refused at contextCreateFromBinary
 * (QnnTypes.h: sparse tensors may only be NATIVE), and an output with dynamic dimensions (a
 * NonZero's) needs a dimensions array, into which graphExecute writes the dims it produced,
 * while its fixed dimensions are still checked. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "refb_rig.h"
#include "test.h"

TEST(refb_sparse_graph_io_is_refused_at_load) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  static const char *const texts[] = {
      "graph g\n  input a f32 [4] format=sparse\n  output b f32 [4]\n  op Relu a -> b\n",
      "graph g\n  input a f32 [4]\n  output b f32 [4] format=sparse\n  op Relu a -> b\n"};
  for (int i = 0; i < 2; i++) {
    size_t len = 0;
    void *bin = fx_build_model(texts[i], &len);
    CHECK(bin);
    qnn_context_handle_t ctx = NULL;
    log_clear();
    qnn_error_t rc = r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &ctx, NULL);
    free(bin);
    CHECK_EQ(rc, QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
    CHECK_STR_CONTAINS(log_text(), i ? "graph 'g' output 'b' is sparse" : "graph 'g' input 'a' is "
                                                                         "sparse");
    CHECK_STR_CONTAINS(log_text(), "sparse tensors may only be NATIVE");
  }
  rig_close(&r);
  /* sparse inside the graph is the backend's business: loaded */
  CHECK_EQ(rig_open_cfg(&r, "graph g\n  input a f32 [4]\n  native h f32 [4] format=sparse\n"
                            "  output b f32 [4]\n  op Relu a -> h\n  op Relu h -> b\n",
                        "g", NULL),
           0);
  rig_close(&r);
}

static const char *const NZ = "graph nz\n  input x f32 [2,3]\n  output idx u32 [6,2] dynamic=[0]\n"
                              "  op NonZero x -> idx\n";

TEST(refb_dynamic_output_dims_are_written) {
  rig r;
  CHECK_EQ(rig_open(&r, NZ, "nz"), 0);
  io x;
  CHECK_EQ(io_init(&x, r.model, 0), 0);
  float *in = x.buf[0];
  uint32_t *out = x.buf[1];
  const float v[6] = {0, 2, 0, 0, 0, -1};
  memcpy(in, v, sizeof v);
  for (int i = 0; i < 12; i++) out[i] = 99;
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  uint32_t *dims = x.out[0].u.v1.dimensions;
  CHECK_EQ(dims[0], 2); /* two nonzero elements: [0,1] and [1,2] */
  CHECK_EQ(dims[1], 2);
  static const uint32_t want[4] = {0, 1, 1, 2};
  CHECK(memcmp(out, want, sizeof want) == 0);
  for (int i = 4; i < 12; i++) CHECK_EQ(out[i], 99); /* past the rows produced: untouched */
  /* the array passed back with the written dims is taken again (the dynamic one is not compared) */
  memset(in, 0, 6 * sizeof(float));
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK_EQ(dims[0], 0);
  /* a dynamic output without a dimensions array: nowhere to write them */
  x.out[0].u.v1.dimensions = NULL;
  log_clear();
  CHECK_EQ(exec(&r, &x), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(log_text(), "needs a dimensions array");
  /* the fixed dimension is still checked */
  uint32_t wrong[2] = {6, 3};
  x.out[0].u.v1.dimensions = wrong;
  log_clear();
  CHECK_EQ(exec(&r, &x), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(log_text(), "dimensions [6,3], the graph has [6,2]");
  io_free(&x);
  rig_close(&r);
}
