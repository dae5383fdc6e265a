/* test_refbackend_batch_multiple.c - batch multiples in the reference backend (QnnGraph.h:
 * the batch dimension of every input and output may be one integer multiple of the graph's):
 * k row groups computed in one execute, wrong multiples refused, capability 312 off, a graph
 * marked batch_multiple=no (the model format's graph flag), and the same through
 * graphExecuteAsync.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "htp_rig.h"
#include "refb_rig.h"
#include "test.h"

/* y = relu(x W^T + b): rows are independent, so k row groups must equal k executes */
static const char *const RB_FC =
    "graph fc\n"
    "  input x f32 [2,3]\n"
    "  static w f32 [2,3] data=[1,-1,0.5, 2,0,-1]\n"
    "  static b f32 [2] data=[0.25,-0.5]\n"
    "  native h f32 [2,2]\n"
    "  output y f32 [2,2]\n"
    "  op FullyConnected x w b -> h\n"
    "  op Relu h -> y\n";

static const char *const RB_FC_FIXED =
    "graph fc batch_multiple=no\n"
    "  input x f32 [2,3]\n"
    "  static w f32 [2,3] data=[1,-1,0.5, 2,0,-1]\n"
    "  static b f32 [2] data=[0.25,-0.5]\n"
    "  output y f32 [2,2]\n"
    "  op FullyConnected x w b -> y\n";

static float fc_ref(const float *x, int out) {
  static const float w[2][3] = {{1, -1, 0.5f}, {2, 0, -1}}, b[2] = {0.25f, -0.5f};
  float v = b[out];
  for (int k = 0; k < 3; k++) v += x[k] * w[out][k];
  return v > 0 ? v : 0;
}

/* Buffers for k row groups of the fc graph: x [2k,3], y [2k,2]. */
typedef struct kio {
  io x;
  float *in, *out;
} kio;

static int kio_init(kio *k, rig *r, uint32_t mult) {
  if (io_init(&k->x, r->model, 0) != 0) return -1;
  k->in = calloc(6u * mult, sizeof(float));
  k->out = calloc(4u * mult, sizeof(float));
  if (!k->in || !k->out) return -1;
  for (uint32_t i = 0; i < 6u * mult; i++) k->in[i] = (float)((int)(i * 7 % 11) - 5) * 0.5f;
  for (uint32_t i = 0; i < 4u * mult; i++) k->out[i] = -99.0f;
  k->x.dims[0][0] = 2 * mult;
  k->x.dims[1][0] = 2 * mult;
  k->x.in[0].u.v1.u.client_buf.data = k->in;
  k->x.in[0].u.v1.u.client_buf.data_size = 24u * mult;
  k->x.out[0].u.v1.u.client_buf.data = k->out;
  k->x.out[0].u.v1.u.client_buf.data_size = 16u * mult;
  return 0;
}

static void kio_free(kio *k) {
  free(k->in);
  free(k->out);
  io_free(&k->x);
}

/* Every row of a k-group execute equals the graph applied to that row. */
static int rows_right(const kio *k, uint32_t mult) {
  for (uint32_t row = 0; row < 2 * mult; row++)
    for (int o = 0; o < 2; o++)
      if (k->out[row * 2 + o] != fc_ref(&k->in[row * 3], o)) return 0;
  return 1;
}

TEST(refb_batch_multiple_computes_every_row_group) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_FC, "fc"), 0);
  CHECK_EQ(r.t->property_has_capability(QNN_PROPERTY_GRAPH_SUPPORT_BATCH_MULTIPLE), 0);
  kio k;
  CHECK(kio_init(&k, &r, 5) == 0);
  htpu_ref_stats before = stats_of(&r.c);
  CHECK_EQ(exec(&r, &k.x), QNN_SUCCESS);
  CHECK(rows_right(&k, 5));
  htpu_ref_stats after = stats_of(&r.c);
  CHECK_EQ(after.total_executes, before.total_executes + 1); /* one execute, not five */
  CHECK_EQ(after.batch_multiple_executes, before.batch_multiple_executes + 1);
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("fc", &st), 0);
  CHECK_EQ(st.last_batch_multiple, 5);
  /* the graph's own batch (dims as created, or NULL) is multiple 1 */
  kio one;
  CHECK(kio_init(&one, &r, 1) == 0);
  one.x.in[0].u.v1.dimensions = NULL;
  CHECK_EQ(exec(&r, &one.x), QNN_SUCCESS);
  CHECK(rows_right(&one, 1));
  CHECK_EQ(r.c.graph_state("fc", &st), 0);
  CHECK_EQ(st.last_batch_multiple, 1);
  kio_free(&one);
  kio_free(&k);
  rig_close(&r);
}

TEST(refb_batch_multiple_wrong_multiples_are_refused) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_FC, "fc"), 0);
  kio k;
  CHECK(kio_init(&k, &r, 3) == 0);
  /* not a multiple of the graph's batch 2 */
  k.x.dims[0][0] = 5;
  log_clear();
  CHECK_EQ(exec(&r, &k.x), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(log_text(), "dimensions [5,3], the graph has [2,3] (only the batch "
                                 "dimension, dims[0], may differ: an integer multiple of 2)");
  /* another dimension differs */
  k.x.dims[0][0] = 6;
  k.x.dims[0][1] = 6;
  CHECK_EQ(exec(&r, &k.x), QNN_GRAPH_ERROR_INVALID_TENSOR);
  k.x.dims[0][1] = 3;
  /* inputs and outputs with different multiples */
  k.x.dims[1][0] = 4;
  k.x.out[0].u.v1.u.client_buf.data_size = 32;
  log_clear();
  CHECK_EQ(exec(&r, &k.x), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(log_text(), "tensor 'y' has batch multiple 2, input 0 has 3: all inputs "
                                 "and outputs must have the same batch multiple");
  /* an output left at the graph's dims (NULL) is multiple 1 too */
  k.x.out[0].u.v1.dimensions = NULL;
  k.x.out[0].u.v1.u.client_buf.data_size = 16;
  CHECK_EQ(exec(&r, &k.x), QNN_GRAPH_ERROR_INVALID_TENSOR);
  k.x.out[0].u.v1.dimensions = k.x.dims[1];
  k.x.dims[1][0] = 6;
  /* buffers must hold k batches */
  k.x.in[0].u.v1.u.client_buf.data_size = 24;
  log_clear();
  CHECK_EQ(exec(&r, &k.x), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(log_text(), "clientBuf.dataSize 24, expected 72 (batch multiple 3");
  k.x.in[0].u.v1.u.client_buf.data_size = 72;
  k.x.out[0].u.v1.u.client_buf.data_size = 48;
  CHECK(k.out[0] == -99.0f); /* nothing was written by a refused call */
  CHECK_EQ(exec(&r, &k.x), QNN_SUCCESS);
  CHECK(rows_right(&k, 3));
  kio_free(&k);
  rig_close(&r);
}

TEST(refb_batch_multiple_capability_off_and_refusing_graph) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_FC, "fc"), 0);
  kio k;
  CHECK(kio_init(&k, &r, 2) == 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_BATCH_MULTIPLE, 1000), 0);
  log_clear();
  CHECK_EQ(exec(&r, &k.x), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "batch multiple 2: this backend does not support batch "
                                 "multiples (capability 312 off)");
  CHECK(k.out[0] == -99.0f);
  kio_free(&k);
  rig_close(&r);

  /* a graph whose ops fix the batch refuses a multiple with the same code; batch 1 works */
  CHECK_EQ(rig_open(&r, RB_FC_FIXED, "fc"), 0);
  CHECK_EQ(r.model->graphs[0].flags, REF_GRAPH_NO_BATCH_MULTIPLE);
  CHECK(kio_init(&k, &r, 4) == 0);
  log_clear();
  CHECK_EQ(exec(&r, &k.x), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "graph 'fc': batch multiple 4: this graph does not accept "
                                 "batch multiples");
  kio one;
  CHECK(kio_init(&one, &r, 1) == 0);
  CHECK_EQ(exec(&r, &one.x), QNN_SUCCESS);
  for (int row = 0; row < 2; row++)
    for (int o = 0; o < 2; o++) {
      float v = 0.25f * (o == 0) - 0.5f * (o == 1);
      static const float w[2][3] = {{1, -1, 0.5f}, {2, 0, -1}};
      for (int c = 0; c < 3; c++) v += one.in[row * 3 + c] * w[o][c];
      CHECK(one.out[row * 2 + o] == v); /* no relu in this graph */
    }
  kio_free(&one);
  kio_free(&k);
  rig_close(&r);
}

TEST(refb_batch_multiple_graph_flag_in_the_format) {
  size_t len = 0;
  char err[256];
  /* the builder: yes/no only; the flag survives a write/parse round trip */
  void *bin = fx_build_model(RB_FC_FIXED, &len);
  CHECK(bin);
  ref_model *m = NULL;
  CHECK(ref_model_parse(bin, len, &m, err, sizeof(err)) == 0);
  CHECK_EQ(m->graphs[0].flags, REF_GRAPH_NO_BATCH_MULTIPLE);
  void *again = NULL;
  size_t len2 = 0;
  CHECK(ref_model_write(m, &again, &len2, err, sizeof(err)) == 0);
  CHECK(len2 == len && memcmp(again, bin, len) == 0);
  free(again);
  ref_model_free(m);
  void *out = NULL;
  CHECK(ref_build_from_text("graph g batch_multiple=maybe\n input a f32 [1]\n output y f32 [1]\n"
                            " op Relu a -> y\n", &out, &len2, err, sizeof(err)) != 0);
  CHECK_STR_CONTAINS(err, "line 1: batch_multiple: 'maybe' (expected yes or no)");
  CHECK(ref_build_from_text("graph g colour=red\n input a f32 [1]\n output y f32 [1]\n"
                            " op Relu a -> y\n", &out, &len2, err, sizeof(err)) != 0);
  CHECK_STR_CONTAINS(err, "graph takes no parameter 'colour' (batch_multiple)");
  /* the parser refuses flag bits it does not know: the graph record's word at offset 28 */
  uint8_t *b = bin;
  uint32_t graph_table = (uint32_t)b[112] | (uint32_t)b[113] << 8 | (uint32_t)b[114] << 16 |
                         (uint32_t)b[115] << 24;
  b[graph_table + 28] |= 0x4;
  CHECK(ref_model_parse(bin, len, &m, err, sizeof(err)) != 0);
  CHECK_STR_CONTAINS(err, "graph 'fc': unknown flags 0x4");
  free(bin);
}

static void notify_count(void *param, qnn_notify_status_t status) {
  qnn_error_t *out = param;
  *out = status.error;
}

TEST(refb_batch_multiple_through_execute_async) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_FC, "fc"), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, 0), 0);
  kio k;
  CHECK(kio_init(&k, &r, 8) == 0);
  volatile qnn_error_t status = 999;
  CHECK_EQ(r.t->graph_execute_async(r.g, k.x.in, 1, k.x.out, 1, NULL, NULL, notify_count,
                                    (void *)&status),
           QNN_SUCCESS);
  for (int i = 0; i < 30000 && stats_of(&r.c).async_pending; i++) usleep(1000);
  CHECK_EQ(stats_of(&r.c).async_pending, 0);
  CHECK_EQ(status, QNN_SUCCESS);
  CHECK(rows_right(&k, 8));
  /* refused at the call, never notified */
  k.x.dims[1][0] = 2;
  status = 999;
  CHECK_EQ(r.t->graph_execute_async(r.g, k.x.in, 1, k.x.out, 1, NULL, NULL, notify_count,
                                    (void *)&status),
           QNN_GRAPH_ERROR_INVALID_TENSOR);
  usleep(10000);
  CHECK_EQ(status, 999);
  kio_free(&k);
  rig_close(&r);
}

TEST(refb_batch_multiple_not_with_mem_handles) {
  shared x;
  qnn_error_t rc = shared_open(&x);
  CHECK_MSG(rc == 0, "shared_open: %llu", (unsigned long long)rc);
  qnn_htp_mem_descriptor_t hd[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                    htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d[3];
  for (int i = 0; i < 3; i++) d[i] = custom_desc(&hd[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t h[3] = {0};
  CHECK_EQ(x.s.t->mem_register(x.ctx, d, 3, h), QNN_SUCCESS);
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, h, in, out, dims);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  /* a registered buffer holds one batch: a multiple is refused, naming the way out */
  for (int i = 0; i < 3; i++) dims[i][0] = 2;
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "batch multiple 2 with a MEMHANDLE tensor");
  CHECK_EQ(x.s.t->mem_de_register(h, 3), QNN_SUCCESS);
  shared_close(&x);
}
