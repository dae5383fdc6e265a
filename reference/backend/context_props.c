/*
 * context_props.c - contextGetProperty (slot 63) with HTP's custom properties
 * (HTP/QnnHtpContext.h): the context's weights buffer, its largest spill-fill buffer and the
 * alignment its buffers need, from the model (reference/model/memory.c).
 *
 * Announced by capability 215, whose default is what every real HTP release observed answers:
 * not supported (2.31 to 2.46; docs/abi.md). Then the call is refused as HTP refuses an
 * unsupported feature (QNN_CONTEXT_ERROR_UNSUPPORTED_FEATURE), so a client that does not ask
 * the capability first fails here as it would on the board; switched on
 * (htpu_ref_set_capability / HTPU_REF_CAPS), the properties are answered.
 */
#include "qnn/qnn_htp_abi.h"
#include "rb_internal.h"

/* The alignment the reference's persistent buffers get (its allocations, and the FastRPC
 * stand-in's, are 64-byte aligned). */
#define RB_BUFFER_ALIGNMENT 64u

static qnn_error_t answer(const rb_context *c, qnn_htp_context_custom_property_t *p) {
  switch (p->option) {
    case QNN_HTP_CONTEXT_GET_PROP_BUFFER_START_ALIGNMENT:
      p->u.buffer_start_alignment = RB_BUFFER_ALIGNMENT;
      return QNN_SUCCESS;
    case QNN_HTP_CONTEXT_GET_PROP_MAX_SPILLFILL_BUFFER_SIZE: {
      uint64_t max = 0;
      for (uint32_t g = 0; g < c->model->num_graphs; g++) {
        ref_graph_memory m;
        ref_graph_memory_of(c->model, g, &m);
        if (m.spill_fill_bytes > max) max = m.spill_fill_bytes;
      }
      p->u.spill_fill_buffer_size = max;
      return QNN_SUCCESS;
    }
    case QNN_HTP_CONTEXT_GET_PROP_WEIGHTS_BUFFER_SIZE:
      p->u.weights_buffer_size = ref_model_weights_bytes(c->model);
      return QNN_SUCCESS;
    case 4:
    case 5: /* HTP's reserved options */
      return QNN_CONTEXT_ERROR_UNSUPPORTED_FEATURE;
    default:
      return QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  }
}

qnn_error_t rb_context_get_property(qnn_context_handle_t h, qnn_context_property_t **props) {
  if (rb_cap(QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY) != QNN_SUCCESS)
    return QNN_CONTEXT_ERROR_UNSUPPORTED_FEATURE;
  pthread_mutex_lock(&g_rb.lock);
  rb_context *c = rb_find_context(h);
  qnn_error_t rc = QNN_SUCCESS;
  if (!c)
    rc = QNN_CONTEXT_ERROR_INVALID_HANDLE;
  else if (!props)
    rc = QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  else if (atomic_load(&c->stale))
    rc = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  for (size_t i = 0; rc == QNN_SUCCESS && props[i]; i++) {
    if (props[i]->option != QNN_CONTEXT_PROPERTY_OPTION_CUSTOM || !props[i]->u.custom_property) {
      rb_logf(c->backend->log, QNN_LOG_LEVEL_ERROR, "contextGetProperty: property %zu has option "
              "%u (only custom properties, with their struct, are supported)", i,
              props[i]->option);
      rc = QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
    } else {
      rc = answer(c, props[i]->u.custom_property);
    }
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}
