/* test_refbackend_execute.c - the reference backend's QNN objects from log to graph, execute and
 * its validation, stale handles and bad context binaries.
 */
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_device_abi.h"
#include "fixture.h"
#include "refb_rig.h"
#include "test.h"

/* ---- lifecycle and execute ---------------------------------------------------------------- */

TEST(refb_lifecycle_execute_f32) {
  rig r;
  qnn_error_t rc = rig_open(&r, RB_ADD, "add");
  CHECK_MSG(rc == 0, "rig_open: %llu", (unsigned long long)rc);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK(s.live_logs >= 1 && s.live_backends >= 1 && s.live_devices >= 1 && s.live_contexts >= 1);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  float *a = x.buf[0], *b = x.buf[1], *y = x.buf[2];
  for (int i = 0; i < 4; i++) {
    a[i] = (float)i + 0.5f;
    b[i] = 10.0f * (float)i;
  }
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  for (int i = 0; i < 4; i++) CHECK(y[i] == a[i] + b[i]);
  /* V2 tensors work the same */
  for (uint32_t i = 0; i < 2; i++) {
    qnn_tensor_v1_t v1 = x.in[i].u.v1;
    memset(&x.in[i], 0, sizeof(x.in[i]));
    x.in[i].version = QNN_TENSOR_VERSION_2;
    memcpy(&x.in[i].u.v2, &v1, sizeof(v1));
  }
  memset(y, 0, 16);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK(y[3] == 3.5f + 30.0f);
  CHECK_EQ(stats_of(&r.c).total_executes, 2);
  io_free(&x);
  /* orderly teardown: no violations, nothing left */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  CHECK_EQ(r.t->device_free(r.dev), QNN_SUCCESS);
  r.dev = NULL;
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = NULL;
  CHECK_EQ(r.t->log_free(r.log), QNN_SUCCESS);
  r.log = NULL;
  s = stats_of(&r.c);
  CHECK_EQ(s.violations, 0);
  CHECK_EQ(s.leaked_handles, 0);
  CHECK_STR_CONTAINS(log_text(), "backendCreate");
  rig_close(&r);
}

TEST(refb_log_levels_and_null_device) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  qnn_log_handle_t l2 = NULL;
  CHECK_EQ(r.t->log_create(log_cb, 0, &l2), QNN_LOG_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->log_create(log_cb, 6, &l2), QNN_LOG_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->log_set_log_level(r.log, 9), QNN_LOG_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->log_set_log_level((qnn_log_handle_t)(uintptr_t)0x42, 1),
           QNN_LOG_ERROR_INVALID_HANDLE);
  /* at ERROR level, INFO lines are filtered out */
  CHECK_EQ(r.t->log_set_log_level(r.log, QNN_LOG_LEVEL_ERROR), QNN_SUCCESS);
  log_clear();
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t ctx = NULL;
  /* NULL device = the default device */
  qnn_error_t rc = r.t->context_create_from_binary(r.be, NULL, NULL, bin, len, &ctx, NULL);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  CHECK(strstr(log_text(), "3:") == NULL);
  CHECK_EQ(r.t->context_free(ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  rig_close(&r);
}

TEST(refb_execute_validation) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  qnn_tensor_t *in = x.in, *out = x.out;
  qnn_tensor_t save_in0 = in[0], save_in1 = in[1], save_out = out[0];
#define EXPECT_REJECT(code, needle)                                                   \
  do {                                                                                \
    log_clear();                                                                      \
    CHECK_EQ(exec(&r, &x), code);                                                     \
    CHECK_STR_CONTAINS(log_text(), needle);                                           \
    in[0] = save_in0;                                                                 \
    in[1] = save_in1;                                                                 \
    out[0] = save_out;                                                                \
    x.nin = 2;                                                                        \
    x.nout = 1;                                                                       \
  } while (0)
  x.nin = 1;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "takes 2 input(s)");
  x.nout = 0;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "got 2 and 0");
  CHECK_EQ(r.t->graph_execute(r.g, NULL, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_ARGUMENT);
  in[0].version = 3;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "input 0 ('a'");
  in[0].version = 3;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "tensor version 3");
  in[0] = save_in1; /* b passed first: wrong order */
  in[1] = save_in0;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "graph order");
  in[0].u.v1.id = 9999;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "not a graph input");
  in[0].u.v1.id = save_out.u.v1.id;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "graph output");
  in[1].u.v1.type = QNN_TENSOR_TYPE_APP_READ;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "input 1 ('b'");
  out[0].u.v1.type = QNN_TENSOR_TYPE_APP_WRITE;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "output 0 ('y'");
  in[0].u.v1.data_type = QNN_DATATYPE_FLOAT_16;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "data type 0x0216");
  in[0].u.v1.rank = 1;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "rank 1");
  uint32_t bad_dims[2] = {4, 1};
  in[0].u.v1.dimensions = bad_dims;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "dimensions [4,1]");
  in[0].u.v1.mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "memType 1");
  out[0].u.v1.u.client_buf.data = NULL;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "data is NULL");
  in[1].u.v1.u.client_buf.data_size = 15;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "dataSize 15, expected 16");
  /* QnnGraph.h lists an invalid profile handle under QNN_GRAPH_ERROR_INVALID_ARGUMENT */
  CHECK_EQ(r.t->graph_execute(r.g, in, 2, out, 1, (qnn_profile_handle_t)(uintptr_t)7, NULL),
           QNN_GRAPH_ERROR_INVALID_ARGUMENT);
#undef EXPECT_REJECT
  /* NULL dimensions are allowed (QnnGraph.h), and a correct call still works */
  in[0].u.v1.dimensions = NULL;
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK_EQ(stats_of(&r.c).total_executes, 1);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_handles_stale_and_unknown) {
  rig r;
  CHECK_EQ(rig_open(&r, FX_MULTI_GRAPH, "second"), 0);
  void *bogus = (void *)(uintptr_t)0xdead0;
  CHECK_EQ(r.t->backend_free(bogus), QNN_BACKEND_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->device_free(bogus), QNN_DEVICE_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_free(bogus, NULL), QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->log_free(bogus), QNN_LOG_ERROR_INVALID_HANDLE);
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(r.t->graph_retrieve(bogus, "second", &g), QNN_GRAPH_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->graph_execute(bogus, NULL, 0, NULL, 0, NULL, NULL),
           QNN_GRAPH_ERROR_INVALID_HANDLE);
  /* a context handle is not a graph handle, nor the reverse */
  CHECK_EQ(r.t->graph_execute(r.ctx, NULL, 0, NULL, 0, NULL, NULL),
           QNN_GRAPH_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_free(r.g, NULL), QNN_CONTEXT_ERROR_INVALID_HANDLE);
  qnn_backend_handle_t be2 = NULL;
  CHECK_EQ(r.t->backend_create(bogus, NULL, &be2), QNN_BACKEND_ERROR_INVALID_HANDLE);
  qnn_device_handle_t dev2 = NULL;
  CHECK_EQ(r.t->device_create(bogus, NULL, &dev2), QNN_DEVICE_ERROR_INVALID_HANDLE);
  qnn_context_handle_t c2 = NULL;
  char junk[16] = {0};
  CHECK_EQ(r.t->context_create_from_binary(bogus, NULL, NULL, junk, 16, &c2, NULL),
           QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_create_from_binary(r.be, bogus, NULL, junk, 16, &c2, NULL),
           QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, NULL, 16, &c2, NULL),
           QNN_CONTEXT_ERROR_INVALID_ARGUMENT);
  /* graph names */
  log_clear();
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "fourth", &g), QNN_GRAPH_ERROR_INVALID_NAME);
  CHECK_STR_CONTAINS(log_text(), "no graph named 'fourth'");
  CHECK_STR_CONTAINS(log_text(), "'first', 'second', 'third'");
  CHECK_EQ(r.t->graph_retrieve(r.ctx, NULL, &g), QNN_GRAPH_ERROR_INVALID_NAME);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "third", NULL), QNN_GRAPH_ERROR_INVALID_NAME);
  qnn_graph_handle_t g1 = NULL, g3 = NULL;
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "first", &g1), QNN_SUCCESS);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "third", &g3), QNN_SUCCESS);
  CHECK(g1 && g3 && g1 != g3 && g1 != r.g);
  /* after contextFree every handle of it is stale */
  qnn_context_handle_t old = r.ctx;
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  CHECK_EQ(r.t->context_free(old, NULL), QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->graph_execute(g1, NULL, 0, NULL, 0, NULL, NULL), QNN_GRAPH_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->graph_retrieve(old, "first", &g), QNN_GRAPH_ERROR_INVALID_HANDLE);
  qnn_backend_handle_t old_be = r.be;
  CHECK_EQ(r.t->device_free(r.dev), QNN_SUCCESS);
  r.dev = NULL;
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = NULL;
  CHECK_EQ(r.t->backend_free(old_be), QNN_BACKEND_ERROR_INVALID_HANDLE);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  rig_close(&r);
}

TEST(refb_context_binary_errors) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  qnn_context_handle_t ctx = NULL;
  static const char garbage[] = "this is not a context binary at all, just some text.....";
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, garbage, sizeof(garbage), &ctx,
                                           NULL),
           QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  CHECK_STR_CONTAINS(log_text(), "magic");
  CHECK_EQ(r.t->context_validate_binary(r.be, r.dev, NULL, garbage, sizeof(garbage)),
           QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  /* truncated */
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len / 2, &ctx, NULL),
           QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  CHECK_STR_CONTAINS(log_text(), "cannot deserialize");
  CHECK_EQ(r.t->context_validate_binary(r.be, r.dev, NULL, bin, len), QNN_SUCCESS);
  free(bin);
  /* a binary for another backend id */
  bin = fx_build_model("meta backend_id=3\ngraph g\n  input a f32 [2]\n  output b f32 [2]\n"
              "  op Relu a -> b\n", &len);
  CHECK(bin);
  log_clear();
  qnn_error_t rc = r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &ctx, NULL);
  qnn_error_t rc2 = r.t->context_validate_binary(r.be, NULL, NULL, bin, len);
  free(bin);
  CHECK_EQ(rc, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_EQ(rc2, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_STR_CONTAINS(log_text(), "backend id 3");
  CHECK_EQ(stats_of(&r.c).live_contexts, 0);
  rig_close(&r);
}

TEST(refb_backend_id_from_provider) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  setenv("HTPU_REF_PROVIDERS", "CPU_REF:3:2.32.0:1.0.0", 1);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  qnn_backend_handle_t be = NULL;
  CHECK_EQ(p->table.backend_create(NULL, NULL, &be), QNN_SUCCESS);
  size_t len = 0;
  void *bin = fx_build_model("meta backend_id=3 backend_api=1.0.0\ngraph g\n  input a f32 [2]\n  output b f32 [2]\n"
                    "  op Relu a -> b\n", &len);
  size_t len6 = 0;
  void *bin6 = fx_build_model(RB_ADD, &len6);
  CHECK(bin && bin6);
  qnn_context_handle_t ctx = NULL;
  qnn_error_t ok = p->table.context_validate_binary(be, NULL, NULL, bin, len);
  qnn_error_t bad = p->table.context_create_from_binary(be, NULL, NULL, bin6, len6, &ctx, NULL);
  free(bin);
  free(bin6);
  CHECK_EQ(ok, QNN_SUCCESS);
  CHECK_EQ(bad, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_EQ(p->table.backend_free(be), QNN_SUCCESS);
  ctl_close(&c);
}
