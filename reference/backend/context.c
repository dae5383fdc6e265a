/* context.c - contexts from reference binaries, their graphs, and contextFree's rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_htp_abi.h"
#include "rb_internal.h"
#include "rb_profile.h"

/* Resolves backend (and optional device) and pins the backend for a call that runs unlocked;
 * takes the call's signal (NULL: none) for a call that started at start_ns. */
static qnn_error_t pin_backend(qnn_backend_handle_t bh, qnn_device_handle_t dh, rb_backend **b,
                               rb_device **d, const void *signal, const char *api,
                               uint64_t start_ns, rb_watch *w) {
  pthread_mutex_lock(&g_rb.lock);
  *b = rb_find_backend(bh);
  *d = dh ? rb_find_device(dh) : NULL;
  if (!*b || (dh && (!*d || (*d)->backend != *b))) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_CONTEXT_ERROR_INVALID_HANDLE;
  }
  int r = rb_signal_acquire(*b, signal, api, start_ns, w);
  if (r != 0) {
    rb_logf((*b)->log, QNN_LOG_LEVEL_ERROR, "%s: signal 0x%lx %s", api,
            (unsigned long)(uintptr_t)signal,
            r == -1 ? "is not a signal of this backend" : "is in use by another call");
    pthread_mutex_unlock(&g_rb.lock);
    /* QnnContext.h has no in-use code of its own: the signal family's says it */
    return r == -1 ? QNN_CONTEXT_ERROR_INVALID_HANDLE : QNN_SIGNAL_ERROR_SIGNAL_IN_USE;
  }
  atomic_fetch_add(&(*b)->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);
  return QNN_SUCCESS;
}

static void unpin_backend(rb_backend *b) { atomic_fetch_sub(&b->busy, 1); }

/* Parses the binary and checks it is meant for this backend and its device. */
static qnn_error_t load_model(rb_backend *b, const char *api, const void *buf,
                              qnn_context_binary_size_t size, ref_model **out) {
  char err[256];
  ref_model *m = NULL;
  if (ref_model_parse(buf, (size_t)size, &m, err, sizeof(err)) != 0) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: cannot deserialize the context binary (%llu "
            "bytes): %s", api, (unsigned long long)size, err);
    return QNN_CONTEXT_ERROR_CREATE_FROM_BINARY;
  }
  qnn_error_t rc = rb_check_binary(b, api, m);
  if (rc != QNN_SUCCESS) {
    ref_model_free(m);
    return rc;
  }
  *out = m;
  return QNN_SUCCESS;
}

/* A load ended by its signal: logged and counted; 5012 or 5013. */
static qnn_error_t load_stopped(rb_backend *b, const char *api, const rb_watch *w, rb_stop why,
                                const char *where) {
  rb_count_stop(why);
  if (why == RB_STOP_TIMEOUT) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: timed out %s: its signal's %llu us, counted from "
            "the call's start, ran out; no context was created", api, where,
            (unsigned long long)((w->deadline_ns - w->start_ns) / 1000u));
    return QNN_CONTEXT_ERROR_TIMED_OUT;
  }
  rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: aborted %s (signalTrigger on its signal); no "
          "context was created", api, where);
  return QNN_CONTEXT_ERROR_ABORTED;
}

/* contextCreateFromBinary and its WithSignal variant (signal NULL for the former). Both count
 * as contextCreateFromBinary in fault rules and latency; the latency ends early when the
 * signal says stop. */
static qnn_error_t create_from_binary(const char *api, qnn_backend_handle_t bh,
                                      qnn_device_handle_t dh, const qnn_context_config_t **cfg,
                                      const void *buf, qnn_context_binary_size_t size,
                                      qnn_context_handle_t *out, qnn_profile_handle_t profile,
                                      qnn_signal_handle_t signal) {
  uint64_t start = rb_mono_ns();
  rb_backend *b;
  rb_device *d;
  rb_watch w;
  qnn_error_t rc = pin_backend(bh, dh, &b, &d, signal, api, start, &w);
  if (rc != QNN_SUCCESS) return rc;
  ref_model *m = NULL;
  rb_context *c = NULL;
  uint32_t priority = QNN_PRIORITY_DEFAULT, depth = RB_ASYNC_DEPTH_DEFAULT;
  rb_stop st = RB_STOP_NONE;
  /* The load's init events (rb_profile.h); the handle is held until the load returns, and
   * released before the backend is unpinned (backendFree frees its profiles). */
  rb_prof_call pc;
  qnn_error_t prc = rb_profile_begin(b, profile, 0, QNN_CONTEXT_ERROR_INVALID_HANDLE,
                                     QNN_PROFILE_ERROR_HANDLE_IN_USE, &pc);
  if (!buf || !size || !out) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: %s is NULL/empty", api,
            !out ? "the context out-pointer" : "the binary buffer");
    rc = QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  } else if (prc != QNN_SUCCESS) {
    rc = prc; /* logged */
  } else {
    rc = rb_fault_watched(b, FR_CONTEXT_CREATE_FROM_BINARY, b->log, &w, &st);
    if (st != RB_STOP_NONE) rc = load_stopped(b, api, &w, st, "during its injected latency");
  }
  /* A board rule rather than an API rule: loading while another graph executes has
   * coincided with device resets (creating a session tears down and recreates the DSP
   * process domain), so a client must hold loads off until executes finish. */
  int busy = rb_exec_in_flight();
  if (busy > 0)
    rb_violation(b->log, "%s while %d graphExecute call(s) are in flight in this process "
                 "(loading during inference has reset the device)", api, busy);
  if (rc == QNN_SUCCESS) rc = rb_context_configs(b, api, cfg, &priority, &depth);
  pc.t_run0 = rb_mono_ns();
  if (rc == QNN_SUCCESS) rc = load_model(b, api, buf, size, &m);
  pc.t_run1 = rb_mono_ns();
  if (rc == QNN_SUCCESS && (st = rb_watch_check(&w)) != RB_STOP_NONE)
    rc = load_stopped(b, api, &w, st, "after deserializing the binary");
  /* Loading a context opens the FastRPC session (if the device did not already). */
  if (rc == QNN_SUCCESS) rb_fastrpc_session_open(b->log);
  if (rc == QNN_SUCCESS) {
    c = calloc(1, sizeof(*c));
    if (c) c->graphs = calloc(m->num_graphs ? m->num_graphs : 1, sizeof(*c->graphs));
    if (!c || !c->graphs) rc = QNN_COMMON_ERROR_MEM_ALLOC;
  }

  pthread_mutex_lock(&g_rb.lock);
  /* The device may have been freed while we parsed unlocked. */
  if (rc == QNN_SUCCESS && dh && rb_find_device(dh) != d) rc = QNN_CONTEXT_ERROR_INVALID_HANDLE;
  if (rc != QNN_SUCCESS) {
    rb_signal_release(&w);
    pthread_mutex_unlock(&g_rb.lock);
    rb_profile_end_load(&pc, rc); /* an empty recording; the handle is free again */
    unpin_backend(b);
    if (c) free(c->graphs);
    free(c);
    ref_model_free(m);
    return rc;
  }
  c->backend = b;
  c->device = d;
  c->model = m; /* the model holds its own copy: the caller's buffer may go away now */
  c->num_graphs = m->num_graphs;
  c->priority = priority;
  c->async_depth = depth;
  c->handle = rb_new_handle();
  for (uint32_t i = 0; i < c->num_graphs; i++) {
    c->graphs[i].handle = rb_new_handle();
    c->graphs[i].ctx = c;
    c->graphs[i].index = i;
    c->graphs[i].priority = priority;
  }
  c->next = g_rb.contexts;
  g_rb.contexts = c;
  *out = (qnn_context_handle_t)c->handle;
  rb_signal_release(&w);
  pthread_mutex_unlock(&g_rb.lock);
  rb_logf(b->log, QNN_LOG_LEVEL_INFO, "%s: context 0x%lx with %u graph(s), priority %s, async "
          "queue depth %u", api, (unsigned long)c->handle, m->num_graphs,
          rb_priority_name(priority), depth);
  rb_profile_end_load(&pc, QNN_SUCCESS);
  unpin_backend(b);
  return QNN_SUCCESS;
}

qnn_error_t rb_context_create_from_binary(qnn_backend_handle_t bh, qnn_device_handle_t dh,
                                          const qnn_context_config_t **cfg, const void *buf,
                                          qnn_context_binary_size_t size,
                                          qnn_context_handle_t *out,
                                          qnn_profile_handle_t profile) {
  return create_from_binary("contextCreateFromBinary", bh, dh, cfg, buf, size, out, profile,
                            NULL);
}

qnn_error_t rb_context_create_from_binary_with_signal(
    qnn_backend_handle_t bh, qnn_device_handle_t dh, const qnn_context_config_t **cfg,
    const void *buf, qnn_context_binary_size_t size, qnn_context_handle_t *out,
    qnn_profile_handle_t profile, qnn_signal_handle_t signal) {
  static const char api[] = "contextCreateFromBinaryWithSignal";
  if (rb_cap(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_WITH_SIGNALS) != QNN_SUCCESS) {
    pthread_mutex_lock(&g_rb.lock);
    rb_backend *b = rb_find_backend(bh);
    if (b)
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s is not supported by this backend (capability "
              "211 off): use contextCreateFromBinary", api);
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  return create_from_binary(api, bh, dh, cfg, buf, size, out, profile, signal);
}

qnn_error_t rb_context_free(qnn_context_handle_t h, qnn_profile_handle_t profile) {
  pthread_mutex_lock(&g_rb.lock);
  rb_context *c = rb_find_context(h);
  if (!c) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_CONTEXT_ERROR_INVALID_HANDLE;
  }
  rb_backend *b = c->backend;
  if (profile) {
    pthread_mutex_unlock(&g_rb.lock);
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "contextFree: unknown profile handle");
    return QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  }
  /* Async calls already notified (their client may free the context as soon as it hears of
   * the end) are waited for: only their last steps are left. Not under the registry lock, as
   * a notification may call back into the backend; the context is looked up again after. */
  while (atomic_load(&c->executing) && rb_wait_notified_round(c, NULL)) {
    c = rb_find_context(h);
    if (!c) {
      pthread_mutex_unlock(&g_rb.lock);
      return QNN_CONTEXT_ERROR_INVALID_HANDLE;
    }
  }
  if (atomic_load(&c->executing)) {
    rb_violation(b->log, "contextFree of context 0x%lx while %d graphExecute call(s) on its "
                 "graphs are in progress (async ones: until notified)",
                 (unsigned long)c->handle, atomic_load(&c->executing));
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED;
  }
  int busy = rb_exec_in_flight();
  if (busy > 0)
    rb_violation(b->log, "contextFree while %d graphExecute call(s) are in flight in this "
                 "process (the DSP process domain is shared)", busy);
  /* After a subsystem restart nothing is left on the DSP side: the handles died with it. */
  uint32_t mems = rb_mem_count(c);
  if (mems && !atomic_load(&c->stale))
    rb_violation(b->log, "contextFree of context 0x%lx with %u mem handle(s) still registered "
                 "(memDeRegister them first; freeing them now)", (unsigned long)c->handle, mems);
  /* Unlink before the (possibly slow) fault check so no new execute can start on it. */
  rb_context_destroy(c);
  atomic_fetch_add(&b->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);
  /* An injected failure still frees the context: after a DSP restart there is nothing left
   * to free on the DSP side, and the caller cannot do anything else with the handle. */
  qnn_error_t rc = rb_fault(b, FR_CONTEXT_FREE, b->log);
  unpin_backend(b);
  return rc;
}

qnn_error_t rb_context_validate_binary(qnn_backend_handle_t bh, qnn_device_handle_t dh,
                                       const qnn_context_config_t **cfg, const void *buf,
                                       qnn_context_binary_size_t size) {
  (void)cfg;
  rb_backend *b;
  rb_device *d;
  rb_watch w;
  qnn_error_t rc = pin_backend(bh, dh, &b, &d, NULL, "contextValidateBinary", 0, &w);
  if (rc != QNN_SUCCESS) return rc;
  ref_model *m = NULL;
  if (!buf || !size) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "contextValidateBinary: the binary buffer is "
            "NULL/empty");
    rc = QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  } else {
    rc = rb_fault(b, FR_CONTEXT_VALIDATE_BINARY, b->log);
  }
  if (rc == QNN_SUCCESS) rc = load_model(b, "contextValidateBinary", buf, size, &m);
  ref_model_free(m);
  unpin_backend(b);
  return rc;
}

qnn_error_t rb_graph_retrieve(qnn_context_handle_t h, const char *name, qnn_graph_handle_t *out) {
  pthread_mutex_lock(&g_rb.lock);
  rb_context *c = rb_find_context(h);
  if (!c) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_GRAPH_ERROR_INVALID_HANDLE;
  }
  rb_backend *b = c->backend;
  atomic_fetch_add(&b->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);

  qnn_error_t rc = rb_fault(b, FR_GRAPH_RETRIEVE, b->log);

  pthread_mutex_lock(&g_rb.lock);
  unpin_backend(b);
  c = rb_find_context(h); /* it may have been freed while the fault latency ran */
  if (rc == QNN_SUCCESS && !c) rc = QNN_GRAPH_ERROR_INVALID_HANDLE;
  if (rc == QNN_SUCCESS && atomic_load(&c->stale)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "graphRetrieve: context 0x%lx was lost in a DSP "
            "subsystem restart; free it and create a new one", (unsigned long)c->handle);
    rc = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  }
  if (rc == QNN_SUCCESS && (!name || !out)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "graphRetrieve: %s is NULL",
            !name ? "the graph name" : "the graph out-pointer");
    rc = QNN_GRAPH_ERROR_INVALID_NAME;
  }
  if (rc == QNN_SUCCESS) {
    int g = ref_model_find_graph(c->model, name);
    if (g < 0) {
      char names[512] = "";
      size_t used = 0;
      for (uint32_t i = 0; i < c->model->num_graphs && used < sizeof(names); i++) {
        int n = snprintf(names + used, sizeof(names) - used, "%s'%s'", i ? ", " : "",
                         c->model->graphs[i].name);
        if (n < 0) break;
        used += (size_t)n;
      }
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "graphRetrieve: no graph named '%s' in context "
              "0x%lx; it has: %s", name, (unsigned long)c->handle, names);
      rc = QNN_GRAPH_ERROR_INVALID_NAME;
    } else {
      *out = (qnn_graph_handle_t)c->graphs[g].handle;
    }
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

/* ---- contextGetProperty (slot 63) with HTP's custom properties (HTP/QnnHtpContext.h): the
 * context's weights buffer, its largest spill-fill buffer and the alignment its buffers need,
 * from the model (reference/model/memory.c). Announced by capability 215, whose default is
 * what every real HTP release observed answers: not supported (2.31 to 2.46; docs/abi.md).
 * Then the call is refused as HTP refuses an unsupported feature
 * (QNN_CONTEXT_ERROR_UNSUPPORTED_FEATURE), so a client that does not ask the capability first
 * fails here as it would on the board; switched on (htpu_ref_set_capability or HTPU_REF_CAPS),
 * the properties are answered. */

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
