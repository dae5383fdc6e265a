/* test_model_memory.c - memory figures (src/model/memory.c): the HTP graph blob info V1 and
 * V2 as the reference system library reports them from its format, the load estimate, the
 * blob reader on short and unknown blobs, and the context's custom properties after a load,
 * capability-checked, with the reference backend refusing the call where HTP would. The
 * expected figures are computed by hand from the model text below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "model/memory.h"
#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_htp_abi.h"
#include "refb_rig.h"
#include "test.h"

/* chain: io 32+32, 3 ops x 80, constant w 32, intermediates t1+t2 64, and t1 and t2 are both
 * alive at op 1 and op 2 (spill-fill 64); small: io 8+8, 1 op, nothing else. */
#define MEM_TEXT(blob)                                          \
  "meta graph_blob=" blob "\n"                                  \
  "graph chain\n"                                               \
  "  input x f32 [1,8]\n"                                       \
  "  static w f32 [1,8] data=[1,2,3,4,5,6,7,8]\n"               \
  "  native t1 f32 [1,8]\n"                                     \
  "  native t2 f32 [1,8]\n"                                     \
  "  output y f32 [1,8]\n"                                      \
  "  op ElementWiseMultiply x w -> t1\n"                        \
  "  op Relu t1 -> t2\n"                                        \
  "  op ElementWiseAdd t2 t1 -> y\n"                            \
  "graph small\n"                                               \
  "  input a f32 [2]\n"                                         \
  "  output b f32 [2]\n"                                        \
  "  op Relu a -> b\n"

static htpu_model_info *inspect_text(const char *text, size_t *len) {
  void *bin = fx_build_model(text, len);
  if (!bin) return NULL;
  htpu_model_info *m = NULL;
  int rc = htpu_inspect_buffer(test_build_path("libhtpu_refsystem.so"), bin, *len, &m);
  if (rc) printf("    inspect: %s\n", htpu_last_error());
  free(bin);
  return m;
}

TEST(memory_blob_info_v2_figures_and_estimate) {
  size_t len = 0;
  htpu_model_info *m = inspect_text(MEM_TEXT("2"), &len);
  CHECK(m && m->num_graphs == 2 && m->graph_memory);
  const htpu_graph_memory *c = &m->graph_memory[0], *s = &m->graph_memory[1];
  int ok = c->blob_info_version == 2 && c->io_tensor_bytes == 64 && c->op_data_bytes == 240 &&
           c->const_bytes == 32 && c->ddr_tensor_bytes == 64 && c->shared_weights_bytes == 0 &&
           c->spill_fill_bytes == 0 && s->io_tensor_bytes == 16 && s->op_data_bytes == 80 &&
           s->const_bytes == 0 && s->ddr_tensor_bytes == 0 &&
           /* V2 carries no VTCM */
           m->graphs[0].vtcm_bytes == 0 && m->binary_bytes == len &&
           m->load_estimate_bytes == len + 64 + 240 + 32 + 64 + 16 + 80;
  htpu_model_info_free(m);
  CHECK_MSG(ok, "blob info v2 figures are not the model's");
}

TEST(memory_blob_info_v1_figures_and_estimate) {
  size_t len = 0;
  htpu_model_info *m = inspect_text(MEM_TEXT("1"), &len);
  CHECK(m && m->num_graphs == 2);
  const htpu_graph_memory *c = &m->graph_memory[0], *s = &m->graph_memory[1];
  int ok = c->blob_info_version == 1 && c->spill_fill_bytes == 64 && c->optimization_level == 2 &&
           c->hvx_threads == 4 && c->io_tensor_bytes == 0 && s->spill_fill_bytes == 0 &&
           m->graphs[0].vtcm_bytes == 2097152 &&
           /* one spill-fill buffer for the context: the largest */
           m->load_estimate_bytes == len + 64;
  htpu_model_info_free(m);
  CHECK_MSG(ok, "blob info v1 figures are not the model's");
  /* no blob below graph info V3 (QAIRT before 2.28): nothing but the binary */
  char text[1024];
  snprintf(text, sizeof text, "meta graph_info=2\n%s", strstr(MEM_TEXT("1"), "graph chain"));
  m = inspect_text(text, &len);
  CHECK(m);
  ok = m->graph_memory[0].blob_info_version == 0 && m->load_estimate_bytes == len;
  htpu_model_info_free(m);
  CHECK(ok);
}

/* The reader on blobs a library could hand over: short ones are read as far as they go. */
TEST(memory_blob_reader_bounds) {
  qnn_htp_graph_blob_info_t v1 = {.version = 1};
  v1.u.v1.spill_fill_buffer_size = 7000;
  v1.u.v1.vtcm_size = 4u << 20;
  v1.u.v1.optimization_level = 3;
  v1.u.v1.num_hvx_threads = 2;
  htpu_graph_memory m;
  uint64_t vtcm = 0;
  memory_read_blob(&v1, sizeof v1, &m, &vtcm);
  CHECK(m.blob_info_version == 1 && m.spill_fill_bytes == 7000 && vtcm == 4u << 20 &&
        m.optimization_level == 3 && m.hvx_threads == 2);
  vtcm = 0;
  memory_read_blob(&v1, 20, &m, &vtcm); /* up to the VTCM field only */
  CHECK(m.blob_info_version == 1 && m.spill_fill_bytes == 7000 && vtcm == 4u << 20 &&
        m.optimization_level == 0 && m.hvx_threads == 0);
  vtcm = 9;
  memory_read_blob(&v1, 16, &m, &vtcm); /* short of the VTCM field: not read at all */
  CHECK(m.blob_info_version == 0 && m.spill_fill_bytes == 0 && vtcm == 9);
  qnn_htp_graph_blob_info_v2_t v2 = {.version = 2, .io_tensor_size = 5, .const_size = 6,
                                     .is_safe_share_io = 1};
  memory_read_blob(&v2, sizeof v2, &m, &vtcm);
  CHECK(m.blob_info_version == 2 && m.io_tensor_bytes == 5 && m.const_bytes == 6 &&
        m.safe_share_io == 1 && vtcm == 9);
  memory_read_blob(&v2, sizeof v2 - 1, &m, &vtcm);
  CHECK(m.blob_info_version == 0);
  v2.version = 7;
  memory_read_blob(&v2, sizeof v2, &m, &vtcm);
  CHECK(m.blob_info_version == 0);
  memory_read_blob(NULL, 64, &m, &vtcm);
  CHECK(m.blob_info_version == 0);
  /* the estimate saturates instead of wrapping */
  htpu_graph_memory big[2] = {{.const_bytes = UINT64_MAX - 5}, {.const_bytes = 100}};
  CHECK(memory_load_estimate(big, 2, 10) == UINT64_MAX);
}

/* After a load: no call where capability 215 is not announced (every HTP release observed);
 * the properties where it is. */
TEST(memory_context_properties_are_capability_checked) {
  fx_reset_env();
  const ref_ctl *rc_ = ref_ctl_get();
  CHECK(rc_);
  const char *path = fx_build_model_file("mem_ctx.bin", MEM_TEXT("1"));
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt && path);
  htpu_context *ctx = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), 0);
  htpu_context_memory cm;
  CHECK_EQ(htpu_context_get_memory(ctx, &cm), 0);
  int off = !cm.reported && cm.weights_bytes == 0 && cm.binary_bytes > 0 &&
            strstr(cm.note, "capability 215") != NULL;
  rc_->set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY, 0);
  int rc = htpu_context_get_memory(ctx, &cm);
  int on = rc == 0 && cm.reported && cm.weights_bytes == 32 && cm.spill_fill_bytes == 64 &&
           cm.buffer_alignment == 64 && cm.note[0] == 0;
  rc_->reset_capabilities();
  htpu_context_close(&ctx);
  CHECK_EQ(htpu_context_get_memory(ctx, &cm), HTPU_ECLOSED);
  CHECK_EQ(htpu_context_get_memory(NULL, NULL), HTPU_EINVAL);
  htpu_runtime_close(&rt);
  CHECK_MSG(off, "without capability 215: reported %d, note '%s'", cm.reported, cm.note);
  CHECK_MSG(on, "with 215: rc %d, weights %llu, spill-fill %llu", rc,
            (unsigned long long)cm.weights_bytes, (unsigned long long)cm.spill_fill_bytes);
}

/* The reference backend itself refuses what HTP refuses: the call without the capability,
 * reserved and unknown options, a NULL list. */
TEST(memory_reference_backend_refuses_as_htp) {
  rig r;
  CHECK_EQ(rig_open(&r, MEM_TEXT("1"), "chain"), 0);
  qnn_htp_context_custom_property_t htp = {.option = QNN_HTP_CONTEXT_GET_PROP_WEIGHTS_BUFFER_SIZE};
  qnn_context_property_t p = {.option = QNN_CONTEXT_PROPERTY_OPTION_CUSTOM,
                              .u.custom_property = &htp};
  qnn_context_property_t *list[] = {&p, NULL};
  qnn_error_t off = r.t->context_get_property(r.ctx, list);
  r.c.set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY, 0);
  qnn_error_t on = r.t->context_get_property(r.ctx, list);
  uint64_t weights = htp.u.weights_buffer_size;
  htp.option = 4;
  qnn_error_t reserved = r.t->context_get_property(r.ctx, list);
  htp.option = 99;
  qnn_error_t unknown = r.t->context_get_property(r.ctx, list);
  qnn_error_t null_list = r.t->context_get_property(r.ctx, NULL);
  qnn_error_t bad_handle = r.t->context_get_property((qnn_context_handle_t)0x1234, list);
  rig_close(&r);
  CHECK_EQ(off, QNN_CONTEXT_ERROR_UNSUPPORTED_FEATURE);
  CHECK_EQ(on, QNN_SUCCESS);
  CHECK_EQ(weights, 32);
  CHECK_EQ(reserved, QNN_CONTEXT_ERROR_UNSUPPORTED_FEATURE);
  CHECK_EQ(unknown, QNN_CONTEXT_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(null_list, QNN_CONTEXT_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(bad_handle, QNN_CONTEXT_ERROR_INVALID_HANDLE);
}
