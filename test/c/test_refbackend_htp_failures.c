/* test_refbackend_htp_failures.c - what the reference HTP device refuses or loses: binaries
 * validated against the device, DSP subsystem restarts, start-up faults across runtimes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "htp_rig.h"
#include "test.h"

/* ---- 5. binary validation ------------------------------------------------------------------- */

static qnn_error_t validate_text(stack *s, const char *meta, qnn_error_t *create_rc) {
  char text[1024];
  snprintf(text, sizeof(text), "meta %s\n%s", meta, HTP_ADD);
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return 3;
  qnn_error_t rc = s->t->context_validate_binary(s->be, s->dev, NULL, bin, len);
  qnn_context_handle_t ctx = NULL;
  *create_rc = s->t->context_create_from_binary(s->be, s->dev, NULL, bin, len, &ctx, NULL);
  if (ctx) s->t->context_free(ctx, NULL);
  free(bin);
  return rc;
}

TEST(htp_validate_binary_against_device) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  qnn_error_t crc = 0;
  CHECK_EQ(validate_text(&s, "dsp_arch=68 soc_model=35", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  hlog_clear();
  CHECK_EQ(validate_text(&s, "dsp_arch=73 soc_version=\"v73\"", &crc),
           QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_EQ(crc, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_STR_CONTAINS(hlog(),
                     "contextValidateBinary: the binary was built for v73, this device is v68");
  CHECK_STR_CONTAINS(hlog(), "contextCreateFromBinary: the binary was built for v73");
  hlog_clear();
  CHECK_EQ(validate_text(&s, "core_api=2.40.0", &crc), QNN_CONTEXT_ERROR_BINARY_VERSION);
  CHECK_EQ(crc, QNN_CONTEXT_ERROR_BINARY_VERSION);
  CHECK_STR_CONTAINS(hlog(), "core API 2.40.0");
  /* older minors are fine; another major is not */
  CHECK_EQ(validate_text(&s, "core_api=2.18.3", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  CHECK_EQ(validate_text(&s, "core_api=3.0.0", &crc), QNN_CONTEXT_ERROR_BINARY_VERSION);
  CHECK_EQ(validate_text(&s, "backend_api=6.0.0", &crc), QNN_CONTEXT_ERROR_BINARY_VERSION);
  /* soc model differences are not rejected (35 in binaries, 93 reported by the board) */
  hlog_clear();
  CHECK_EQ(validate_text(&s, "soc_model=93", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  CHECK_STR_CONTAINS(hlog(), "soc model 93");
  CHECK_EQ(s.c.arm("contextValidateBinary:1:5005"), 0);
  CHECK_EQ(validate_text(&s, "dsp_arch=68", &crc), QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  s.c.disarm();
  stack_close(&s);
  /* a v73 device takes the v73 binary and rejects the v68 one */
  CHECK_EQ(stack_open(&s, "arch=73,soc_model=43"), 0);
  CHECK_EQ(validate_text(&s, "dsp_arch=73", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  hlog_clear();
  CHECK_EQ(validate_text(&s, "dsp_arch=68", &crc), QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_STR_CONTAINS(hlog(), "built for v68, this device is v73");
  stack_close(&s);
}

/* ---- 6. subsystem restart -------------------------------------------------------------------- */

TEST(htp_ssr_rule_makes_contexts_stale) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  qnn_htp_mem_descriptor_t hd3[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                     htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d3[3];
  for (int i = 0; i < 3; i++) d3[i] = custom_desc(&hd3[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t hh[3];
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  qnn_context_handle_t other = NULL;
  qnn_graph_handle_t og = NULL;
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &other, &og), QNN_SUCCESS);
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, hh, in, out, dims);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:1:ssr"), 0);
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_STR_CONTAINS(hlog(), "DSP subsystem restart: 2 context(s) lost");
  x.s.c.disarm();
  htpu_ref_stats st = hstats(&x.s.c);
  CHECK_EQ(st.stale_contexts, 2);
  CHECK_EQ(st.ssr_events, 1);
  /* both contexts are gone on the DSP side */
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(x.s.t->graph_retrieve(other, "add", &g), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  qnn_mem_handle_t h1 = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 1, &h1), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  /* recovery: free (no violation despite the mem handles), recreate, re-register */
  x.s.c.reset_stats();
  CHECK_EQ(x.s.t->context_free(x.ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(x.s.t->context_free(other, NULL), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &x.ctx, &x.g), QNN_SUCCESS);
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  mh_tensors(x.model, hh, in, out, dims);
  float *a = (float *)(void *)x.buf;
  a[0] = 2.0f;
  a[4] = 3.0f;
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  CHECK(a[8] == 5.0f);
  CHECK_EQ(x.s.t->mem_de_register(hh, 3), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  shared_close(&x);
}

TEST(htp_ssr_control_and_plain_1007) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  float a[4] = {1, 2, 3, 4}, b[4] = {0}, y[4] = {0};
  const ref_graph *rg = &x.model->graphs[0];
  qnn_tensor_t in[2], out[1];
  void *bufs[3] = {a, b, y};
  for (int i = 0; i < 3; i++) {
    const ref_tensor *rt = &x.model->tensors[i < 2 ? rg->inputs[i] : rg->outputs[0]];
    qnn_tensor_t *t = i < 2 ? &in[i] : &out[0];
    memset(t, 0, sizeof(*t));
    t->version = QNN_TENSOR_VERSION_1;
    t->u.v1.id = rt->id;
    t->u.v1.type = i < 2 ? QNN_TENSOR_TYPE_APP_WRITE : QNN_TENSOR_TYPE_APP_READ;
    t->u.v1.data_type = rt->data_type;
    t->u.v1.rank = rt->rank;
    t->u.v1.u.client_buf.data = bufs[i];
    t->u.v1.u.client_buf.data_size = 16;
  }
  /* plain 1007: transient, the context stays usable */
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007"), 0);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  CHECK(y[3] == 4.0f);
  x.s.c.disarm();
  CHECK_EQ(hstats(&x.s.c).stale_contexts, 0);
  /* the control call */
  CHECK_EQ(x.s.c.trigger_ssr(), 1);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(x.s.c.trigger_ssr(), 0); /* already stale */
  CHECK_EQ(x.s.t->context_free(x.ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &x.ctx, &x.g), QNN_SUCCESS);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  /* the rule syntax: ssr with or without a count */
  CHECK_EQ(x.s.c.arm("graphExecute:2:1007:ssr"), 0);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:2:ssr,contextFree:1:1007"), 0);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:2:xyz"), -1);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:2:ssr:1"), -1);
  x.s.c.disarm();
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  shared_close(&x);
}

/* ---- 7. start-up failures across runtimes -------------------------------------------------- */

TEST(htp_startup_env_rules_count_process_wide) {
  hctl c;
  CHECK(hctl_open(&c) == 0);
  const qnn_interface_table_t *t = htp_table(&c);
  setenv("HTPU_REF_FAULTS", "deviceCreate:1:1003:2,backendCreate:1:1003:2", 1);
  /* a loader retrying start-up: backend + device, freed on failure */
  qnn_error_t got[5][2];
  for (int attempt = 0; attempt < 5; attempt++) {
    qnn_backend_handle_t be = NULL;
    qnn_device_handle_t dev = NULL;
    got[attempt][0] = t->backend_create(NULL, NULL, &be);
    got[attempt][1] = be ? t->device_create(NULL, NULL, &dev) : 0;
    if (dev) t->device_free(dev);
    if (be) t->backend_free(be);
  }
  unsetenv("HTPU_REF_FAULTS");
  CHECK_EQ(got[0][0], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[1][0], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[2][0], QNN_SUCCESS);
  CHECK_EQ(got[2][1], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[3][0], QNN_SUCCESS);
  CHECK_EQ(got[3][1], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[4][0], QNN_SUCCESS); /* "fails the first 2 times, then works" */
  CHECK_EQ(got[4][1], QNN_SUCCESS);
  CHECK_EQ(hstats(&c).faults_injected, 4);
  hctl_close(&c);
}
