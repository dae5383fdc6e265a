/* memory.c - see memory.h; and htpu_context_get_memory. */
#include "memory.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "device/device.h"
#include "internal.h"
#include "loader/loader.h"
#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_htp_abi.h"

void memory_read_blob(const void *blob, uint32_t size, htpu_graph_memory *out, uint64_t *vtcm) {
  memset(out, 0, sizeof *out);
  if (!blob || size < sizeof(uint32_t)) return;
  uint32_t version;
  memcpy(&version, blob, sizeof version);
  /* V1 up to its VTCM field at least; the fields after it only where the size covers them */
  if (version == QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V1 &&
      size >= offsetof(qnn_htp_graph_blob_info_t, u.v1.optimization_level)) {
    const qnn_htp_graph_blob_info_v1_t *b = &((const qnn_htp_graph_blob_info_t *)blob)->u.v1;
    out->blob_info_version = 1;
    out->spill_fill_bytes = b->spill_fill_buffer_size;
    *vtcm = vtcm_reported_to_bytes(b->vtcm_size);
    if (size >= offsetof(qnn_htp_graph_blob_info_t, u.v1.htp_dlbc))
      out->optimization_level = b->optimization_level;
    if (size >= sizeof(qnn_htp_graph_blob_info_t)) out->hvx_threads = b->num_hvx_threads;
  } else if (version == QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V2 &&
             size >= sizeof(qnn_htp_graph_blob_info_v2_t)) {
    const qnn_htp_graph_blob_info_v2_t *b = blob;
    out->blob_info_version = 2;
    out->native_k_channel_bytes = b->native_k_channel_size;
    out->native_v_channel_bytes = b->native_v_channel_size;
    out->safe_share_io = b->is_safe_share_io != 0;
    out->io_tensor_bytes = b->io_tensor_size;
    out->op_data_bytes = b->op_data_size;
    out->const_bytes = b->const_size;
    out->ddr_tensor_bytes = b->ddr_tensor_size;
    out->shared_weights_bytes = b->shared_weights_size;
  }
}

/* Saturating: figures come from a file. */
static uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint64_t memory_spill_fill_bytes(const htpu_graph_memory *g, uint32_t n, const uint8_t *graph_on) {
  uint64_t spill = 0;
  for (uint32_t i = 0; i < n; i++)
    if ((!graph_on || graph_on[i]) && g[i].spill_fill_bytes > spill) spill = g[i].spill_fill_bytes;
  return spill;
}

uint64_t memory_load_estimate(const htpu_graph_memory *g, uint32_t n, uint64_t binary_bytes) {
  uint64_t total = binary_bytes, shared = 0;
  uint64_t spill = memory_spill_fill_bytes(g, n, NULL); /* one buffer serves them in turn */
  for (uint32_t i = 0; i < n; i++) {
    /* shared weights exist once */
    if (g[i].shared_weights_bytes > shared) shared = g[i].shared_weights_bytes;
    total = add(total, g[i].io_tensor_bytes);
    total = add(total, g[i].op_data_bytes);
    total = add(total, g[i].const_bytes);
    total = add(total, g[i].ddr_tensor_bytes);
  }
  return add(add(total, spill), shared);
}

/* The three HTP custom properties in one call. Under the gate (shared): the context's QNN
 * handle is replaced only under it, exclusively (recovery). */
static int ask_backend(context_obj *c, htpu_context_memory *out) {
  runtime_obj *rt = c->rt;
  qnn_htp_context_custom_property_t htp[3] = {
      {.option = QNN_HTP_CONTEXT_GET_PROP_WEIGHTS_BUFFER_SIZE},
      {.option = QNN_HTP_CONTEXT_GET_PROP_MAX_SPILLFILL_BUFFER_SIZE},
      {.option = QNN_HTP_CONTEXT_GET_PROP_BUFFER_START_ALIGNMENT}};
  qnn_context_property_t props[3];
  qnn_context_property_t *list[4] = {&props[0], &props[1], &props[2], NULL};
  for (int i = 0; i < 3; i++)
    props[i] = (qnn_context_property_t){.option = QNN_CONTEXT_PROPERTY_OPTION_CUSTOM,
                                        .u.custom_property = &htp[i]};
  uint64_t mark = qnn_log_mark();
  gate_reader node;
  gate_enter_shared(&htpu_exec_gate, &node, 0, NULL, 0, NULL, NULL); /* no lane: no execute */
  /* dead, or stale (a recovery stopped by its call's bound): no QNN context to ask now */
  int gone = c->dead || atomic_load(&c->stale) || !c->qnn;
  qnn_error_t e = gone ? QNN_SUCCESS : rt->backend_lib.context_get_property(c->qnn, list);
  gate_leave_shared(&htpu_exec_gate, &node);
  if (gone)
    return htpu_set_error(HTPU_EDEVICE_RESET, 0, "reading the context's memory properties: the "
                          "DSP restarted and the model %s", c->dead ? "could not be recovered; "
                          "close it and load it again" : "is not recovered yet; its next call "
                          "or graph open recovers it");
  if (e != QNN_SUCCESS) return qnn_fail(e, mark, "reading the context's memory properties");
  out->reported = 1;
  out->weights_bytes = htp[0].u.weights_buffer_size;
  out->spill_fill_bytes = htp[1].u.spill_fill_buffer_size;
  out->buffer_alignment = htp[2].u.buffer_start_alignment;
  return 0;
}

int htpu_context_get_memory(htpu_context *h, htpu_context_memory *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_get_memory: out is NULL");
  memset(out, 0, sizeof *out);
  context_obj *c = (context_obj *)obj_acquire(h, OBJ_CONTEXT);
  if (!c) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_context_get_memory: the context is closed");
  out->binary_bytes = c->bin.len;
  const qnn_backend_lib *b = &c->rt->backend_lib;
  int rc = 0;
  if (!b->context_get_property)
    snprintf(out->note, sizeof out->note, "the backend's table has no contextGetProperty (core "
             "API %u.%u)", b->core_api.major, b->core_api.minor);
  else if (!b->property_has_capability ||
           b->property_has_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY) != QNN_SUCCESS)
    snprintf(out->note, sizeof out->note, "the backend does not announce context custom "
             "properties (capability 215)");
  else
    rc = ask_backend(c, out);
  obj_release(&c->base);
  return rc;
}
