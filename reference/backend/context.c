/* context.c - contexts from reference binaries, their graphs, and contextFree's rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_htp_abi.h"
#include "rb_internal.h"
#include "rb_profile.h"

qnn_error_t rb_pin_backend(qnn_backend_handle_t bh, qnn_device_handle_t dh, rb_backend **b,
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

void rb_unpin_backend(rb_backend *b) { atomic_fetch_sub(&b->busy, 1); }

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

/* Parses the binary (a copy) and checks it is meant for this backend and its device. */
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

/* A context not (or no longer) registered: everything it holds. */
static void context_discard(rb_context *c) {
  if (!c) return;
  free(c->graphs);
  free(c->graph_hash);
  ref_model_free(c->model);
  free(c);
}

/* The context object for the binary: parsed (in place for a persistent binary), checked
 * against this backend and its device, its graphs deserialized as ENABLE_GRAPHS says. */
static qnn_error_t new_context(rb_backend *b, const char *api, const void *buf, size_t size,
                               const rb_ctx_cfg *cfg, rb_context **out) {
  rb_context *c = calloc(1, sizeof(*c));
  if (!c) return QNN_COMMON_ERROR_MEM_ALLOC;
  char err[256];
  qnn_error_t rc = QNN_SUCCESS;
  if (rb_persist_parse(c, cfg->persistent, buf, size, err, sizeof(err)) != 0) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: cannot deserialize the context binary (%zu "
            "bytes): %s", api, size, err);
    rc = QNN_CONTEXT_ERROR_CREATE_FROM_BINARY;
  }
  if (rc == QNN_SUCCESS) rc = rb_check_binary(b, api, c->model);
  if (rc == QNN_SUCCESS) {
    c->num_graphs = c->model->num_graphs;
    c->graphs = calloc(c->num_graphs ? c->num_graphs : 1, sizeof(*c->graphs));
    if (!c->graphs) rc = QNN_COMMON_ERROR_MEM_ALLOC;
  }
  if (rc == QNN_SUCCESS) rc = rb_enable_graphs(b, api, c, cfg->enable_graphs);
  if (rc != QNN_SUCCESS) {
    context_discard(c);
    return rc;
  }
  c->backend = b;
  c->priority = cfg->priority;
  c->async_depth = cfg->async_depth;
  c->memory_limit_mb = cfg->memory_limit_mb;
  *out = c;
  return QNN_SUCCESS;
}

/* Registers c (g_rb.lock held): handles, its spill-fill group, the context list. */
static qnn_error_t publish(rb_backend *b, const char *api, rb_context *c, rb_device *d,
                           const rb_ctx_cfg *cfg) {
  c->device = d;
  c->handle = rb_new_handle();
  const rb_context *first = cfg->group_first ? rb_find_context(cfg->group_first) : NULL;
  qnn_error_t rc = rb_sf_attach(b, api, c, cfg, first);
  if (rc != QNN_SUCCESS) return rc;
  for (uint32_t i = 0; i < c->num_graphs; i++) {
    c->graphs[i].handle = rb_new_handle();
    c->graphs[i].ctx = c;
    c->graphs[i].index = i;
    c->graphs[i].priority = c->priority;
  }
  c->next = g_rb.contexts;
  g_rb.contexts = c;
  return QNN_SUCCESS;
}

static void log_created(rb_backend *b, const char *api, const rb_context *c) {
  rb_logf(b->log, QNN_LOG_LEVEL_INFO, "%s: context 0x%lx with %u graph(s) (%u deserialized), "
          "priority %s, async queue depth %u, %s binary, spill-fill %llu bytes%s", api,
          (unsigned long)c->handle, c->num_graphs, c->num_enabled, rb_priority_name(c->priority),
          c->async_depth, c->persistent ? "persistent" : "copied",
          (unsigned long long)c->spill_fill, c->group ? " (shared by its group)" : "");
  uint64_t mb = (c->spill_fill + (1u << 20) - 1) >> 20;
  if (c->memory_limit_mb && !c->group && mb > c->memory_limit_mb)
    rb_logf(b->log, QNN_LOG_LEVEL_WARN, "%s: context 0x%lx needs a %llu MB spill-fill buffer, "
            "above its memory limit hint of %llu MB", api, (unsigned long)c->handle,
            (unsigned long long)mb, (unsigned long long)c->memory_limit_mb);
}

/* The profile's init events around the creation proper (rb_create_one). */
static qnn_error_t create_checked(rb_backend *b, rb_device *d, qnn_device_handle_t dh,
                                  const char *api, const qnn_context_config_t **cfg,
                                  const void *buf, size_t size, const rb_watch *w,
                                  rb_prof_call *pc, rb_context **out) {
  rb_stop st = RB_STOP_NONE;
  qnn_error_t rc = rb_fault_watched(b, FR_CONTEXT_CREATE_FROM_BINARY, b->log, w, &st);
  if (st != RB_STOP_NONE) rc = load_stopped(b, api, w, st, "during its injected latency");
  /* A board rule rather than an API rule: loading while another graph executes has
   * coincided with device resets (creating a session tears down and recreates the DSP
   * process domain), so a client must hold loads off until executes finish. */
  int busy = rb_exec_in_flight();
  if (busy > 0)
    rb_violation(b->log, "%s while %d graphExecute call(s) are in flight in this process "
                 "(loading during inference has reset the device)", api, busy);
  rb_ctx_cfg cc;
  if (rc == QNN_SUCCESS) rc = rb_context_configs(b, api, cfg, &cc);
  rb_context *c = NULL;
  pc->t_run0 = rb_mono_ns();
  if (rc == QNN_SUCCESS) rc = new_context(b, api, buf, size, &cc, &c);
  pc->t_run1 = rb_mono_ns();
  if (rc == QNN_SUCCESS && (st = rb_watch_check(w)) != RB_STOP_NONE)
    rc = load_stopped(b, api, w, st, "after deserializing the binary");
  /* Loading a context opens the FastRPC session (if the device did not already). */
  if (rc == QNN_SUCCESS) rb_fastrpc_session_open(b->log);
  pthread_mutex_lock(&g_rb.lock);
  /* The device may have been freed while we parsed unlocked. */
  if (rc == QNN_SUCCESS && dh && rb_find_device(dh) != d) rc = QNN_CONTEXT_ERROR_INVALID_HANDLE;
  if (rc == QNN_SUCCESS) rc = publish(b, api, c, d, &cc);
  pthread_mutex_unlock(&g_rb.lock);
  if (rc != QNN_SUCCESS) {
    context_discard(c);
    return rc;
  }
  *out = c;
  return QNN_SUCCESS;
}

qnn_error_t rb_create_one(rb_backend *b, rb_device *d, qnn_device_handle_t dh, const char *api,
                          const qnn_context_config_t **cfg, const void *buf,
                          qnn_context_binary_size_t size, qnn_profile_handle_t profile,
                          const rb_watch *w, rb_context **out) {
  *out = NULL;
  /* The load's init events (rb_profile.h); the handle is held until the load returns. */
  rb_prof_call pc;
  qnn_error_t rc = rb_profile_begin(b, profile, 0, QNN_CONTEXT_ERROR_INVALID_HANDLE,
                                    QNN_PROFILE_ERROR_HANDLE_IN_USE, &pc);
  if (!buf || !size) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: the binary buffer is NULL/empty", api);
    rc = QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  }
  if (rc == QNN_SUCCESS)
    rc = create_checked(b, d, dh, api, cfg, buf, (size_t)size, w, &pc, out);
  if (rc == QNN_SUCCESS) {
    rb_count_graphs_deserialized((*out)->num_enabled);
    log_created(b, api, *out);
  }
  rb_profile_end_load(&pc, rc); /* empty after a failure; the handle is free again */
  return rc;
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
  qnn_error_t rc = rb_pin_backend(bh, dh, &b, &d, signal, api, start, &w);
  if (rc != QNN_SUCCESS) return rc;
  rb_context *c = NULL;
  if (!out) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: the context out-pointer is NULL", api);
    rc = QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  } else {
    rc = rb_create_one(b, d, dh, api, cfg, buf, size, profile, &w, &c);
  }
  if (rc == QNN_SUCCESS) *out = (qnn_context_handle_t)c->handle;
  pthread_mutex_lock(&g_rb.lock);
  rb_signal_release(&w);
  pthread_mutex_unlock(&g_rb.lock);
  rb_unpin_backend(b);
  return rc;
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
  /* The promise of a persistent binary runs until here (checked, then freed anyway). */
  (void)rb_persist_check(c, -1, "contextFree");
  /* After a subsystem restart nothing is left on the DSP side: the handles died with it. */
  uint32_t mems = rb_mem_count(c);
  if (mems && !atomic_load(&c->stale))
    rb_violation(b->log, "contextFree of context 0x%lx with %u mem handle(s) still registered "
                 "(memDeRegister them first; freeing them now)", (unsigned long)c->handle, mems);
  rb_sf_check_free(b, c);
  /* Unlink before the (possibly slow) fault check so no new execute can start on it. */
  rb_context_destroy(c);
  atomic_fetch_add(&b->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);
  /* An injected failure still frees the context: after a DSP restart there is nothing left
   * to free on the DSP side, and the caller cannot do anything else with the handle. */
  qnn_error_t rc = rb_fault(b, FR_CONTEXT_FREE, b->log);
  rb_unpin_backend(b);
  return rc;
}

qnn_error_t rb_context_validate_binary(qnn_backend_handle_t bh, qnn_device_handle_t dh,
                                       const qnn_context_config_t **cfg, const void *buf,
                                       qnn_context_binary_size_t size) {
  (void)cfg;
  rb_backend *b;
  rb_device *d;
  rb_watch w;
  qnn_error_t rc = rb_pin_backend(bh, dh, &b, &d, NULL, "contextValidateBinary", 0, &w);
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
  rb_unpin_backend(b);
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
  rb_unpin_backend(b);
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
  if (rc == QNN_SUCCESS) rc = rb_persist_check(c, -1, "graphRetrieve");
  if (rc == QNN_SUCCESS) {
    int g = ref_model_find_graph(c->model, name);
    if (g >= 0 && !c->graphs[g].enabled) {
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "graphRetrieve: graph '%s' of context 0x%lx was not "
              "deserialized: the context's ENABLE_GRAPHS config did not list it", name,
              (unsigned long)c->handle);
      rc = QNN_GRAPH_ERROR_INVALID_NAME;
    } else if (g < 0) {
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
    case QNN_HTP_CONTEXT_GET_PROP_MAX_SPILLFILL_BUFFER_SIZE:
      /* of its deserialized graphs (ENABLE_GRAPHS), as spill_fill.c accounts it */
      p->u.spill_fill_buffer_size = c->spill_fill;
      return QNN_SUCCESS;
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
