/*
 * config.c - context configs (priority, async queue depth, the graphs to deserialize, the
 * memory-limit hint, a persistent binary, the HTP custom config's spill-fill group) and
 * graphSetConfig (a graph's priority), and the control API's view of a graph.
 *
 * QnnContext.h: the context PRIORITY is "the default priority for graphs in this context";
 * QnnGraph.h: a graph's PRIORITY config overrides it, and for a graph retrieved from a binary
 * graphSetConfig is the only way to give one. Invalid values: context configs 5010
 * (INVALID_CONFIG), graph configs 6000 (INVALID_ARGUMENT). Without the capability (205 context
 * configs, 206 ENABLE_GRAPHS, 207 MEMORY_LIMIT_HINT, 208 PERSISTENT_BINARY, 302 graphSetConfig,
 * 306 priority control) the call fails with 1000.
 */
#include <string.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

const char *rb_priority_name(uint32_t p) {
  switch (p) {
    case QNN_PRIORITY_LOW: return "LOW";
    case QNN_PRIORITY_NORMAL: return "NORMAL";
    case QNN_PRIORITY_NORMAL_HIGH: return "NORMAL_HIGH";
    case QNN_PRIORITY_HIGH: return "HIGH";
    default: return NULL;
  }
}

static qnn_error_t priority_off(rb_log *log, const char *api, uint32_t i) {
  if (rb_cap(QNN_PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL) == QNN_SUCCESS) return QNN_SUCCESS;
  rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: priorities are not supported by this "
          "backend (capability 306 off)", api, i);
  return QNN_COMMON_ERROR_NOT_SUPPORTED;
}

/* A capability-gated context config: QNN_SUCCESS when `key` is announced, else 1000 (logged
 * naming the option and the key). */
static qnn_error_t config_cap(rb_log *log, const char *api, uint32_t i, uint32_t key,
                              const char *what) {
  if (rb_cap(key) == QNN_SUCCESS) return QNN_SUCCESS;
  rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: %s is not supported by this backend "
          "(capability %u off)", api, i, what, key);
  return QNN_COMMON_ERROR_NOT_SUPPORTED;
}

/* A CUSTOM context config: on HTP a QnnHtpContext_CustomConfig_t. REGISTER_MULTI_CONTEXTS is
 * read; the other HTP options are accepted and ignored. */
static qnn_error_t custom_config(rb_backend *b, const char *api, uint32_t i, const void *p,
                                 rb_ctx_cfg *out) {
  if (!p || b->backend_id != QNN_BACKEND_ID_HTP) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: config %u: %s", api, i,
            !p ? "a CUSTOM config with a NULL customConfig"
               : "an HTP custom config, but this backend is not HTP (backend id != 6)");
    return QNN_CONTEXT_ERROR_INVALID_CONFIG;
  }
  const qnn_htp_context_custom_config_t *h = p;
  if (h->option != QNN_HTP_CONTEXT_CONFIG_OPTION_REGISTER_MULTI_CONTEXTS) {
    rb_logf(b->log, QNN_LOG_LEVEL_VERBOSE, "%s: config %u: HTP context option %u accepted and "
            "ignored", api, i, h->option);
    return QNN_SUCCESS;
  }
  out->group = true;
  out->group_first = h->u.group_registration.first_group_handle;
  out->group_max = h->u.group_registration.max_spill_fill_buffer;
  return QNN_SUCCESS;
}

static qnn_error_t queue_depth_config(rb_log *log, const char *api, uint32_t i,
                                      const qnn_context_config_t *c, rb_ctx_cfg *out) {
  if (c->u.async_queue_depth.type != QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_NUMERIC ||
      c->u.async_queue_depth.depth < 1 || c->u.async_queue_depth.depth > RB_ASYNC_DEPTH_MAX) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: async queue depth type %u depth %u "
            "(expected type NUMERIC (0) and a depth of 1..%u)", api, i,
            c->u.async_queue_depth.type, c->u.async_queue_depth.depth, RB_ASYNC_DEPTH_MAX);
    return QNN_CONTEXT_ERROR_INVALID_CONFIG;
  }
  out->async_depth = c->u.async_queue_depth.depth;
  return QNN_SUCCESS;
}

/* One config into *out (a repeated option: the last wins). */
static qnn_error_t one_config(rb_backend *b, const char *api, uint32_t i,
                              const qnn_context_config_t *c, rb_ctx_cfg *out) {
  qnn_error_t rc;
  switch (c->option) {
    case QNN_CONTEXT_CONFIG_OPTION_PRIORITY:
      if ((rc = priority_off(b->log, api, i)) != QNN_SUCCESS) return rc;
      if (!rb_priority_name(c->u.priority)) {
        rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: config %u: priority %u (expected LOW 0, "
                "NORMAL 100, NORMAL_HIGH 150 or HIGH 200)", api, i, c->u.priority);
        return QNN_CONTEXT_ERROR_INVALID_CONFIG;
      }
      out->priority = c->u.priority;
      return QNN_SUCCESS;
    case QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH:
      return queue_depth_config(b->log, api, i, c, out);
    case QNN_CONTEXT_CONFIG_ENABLE_GRAPHS:
      rc = config_cap(b->log, api, i, QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_ENABLE_GRAPHS,
                      "ENABLE_GRAPHS");
      if (rc == QNN_SUCCESS && (!c->u.enable_graphs || !c->u.enable_graphs[0])) {
        rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: config %u: ENABLE_GRAPHS names no graph (a "
                "NULL-terminated list of at least one name)", api, i);
        rc = QNN_CONTEXT_ERROR_INVALID_CONFIG;
      }
      if (rc == QNN_SUCCESS) out->enable_graphs = c->u.enable_graphs;
      return rc;
    case QNN_CONTEXT_CONFIG_MEMORY_LIMIT_HINT:
      rc = config_cap(b->log, api, i, QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_MEMORY_LIMIT_HINT,
                      "MEMORY_LIMIT_HINT");
      if (rc == QNN_SUCCESS) out->memory_limit_mb = c->u.memory_limit_hint;
      return rc;
    case QNN_CONTEXT_CONFIG_PERSISTENT_BINARY:
      rc = config_cap(b->log, api, i, QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY,
                      "PERSISTENT_BINARY");
      if (rc == QNN_SUCCESS) out->persistent = c->u.is_persistent_binary != 0;
      return rc;
    case QNN_CONTEXT_CONFIG_OPTION_CUSTOM:
      return custom_config(b, api, i, c->u.custom_config, out);
    default:
      rb_logf(b->log, QNN_LOG_LEVEL_VERBOSE, "%s: config option %u accepted and ignored", api,
              c->option);
      return QNN_SUCCESS;
  }
}

qnn_error_t rb_context_configs(rb_backend *b, const char *api, const qnn_context_config_t **cfg,
                               rb_ctx_cfg *out) {
  memset(out, 0, sizeof(*out));
  out->priority = QNN_PRIORITY_DEFAULT;
  out->async_depth = RB_ASYNC_DEPTH_DEFAULT;
  if (!cfg || !cfg[0]) return QNN_SUCCESS;
  if (rb_cap(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION) != QNN_SUCCESS) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: context configs are not supported by this "
            "backend (capability 205 off): pass NULL", api);
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  rb_ctx_cfg next = *out; /* nothing applies unless every config is taken */
  for (uint32_t i = 0; cfg[i]; i++) {
    qnn_error_t rc = one_config(b, api, i, cfg[i], &next);
    if (rc != QNN_SUCCESS) return rc;
  }
  *out = next;
  return QNN_SUCCESS;
}

qnn_error_t rb_enable_graphs(rb_backend *b, const char *api, rb_context *c,
                             const char *const *names) {
  for (uint32_t g = 0; g < c->num_graphs; g++) c->graphs[g].enabled = names == NULL;
  for (size_t i = 0; names && names[i]; i++) {
    int g = ref_model_find_graph(c->model, names[i]);
    if (g < 0) {
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: ENABLE_GRAPHS names graph '%s', which the "
              "binary does not hold", api, names[i]);
      return QNN_CONTEXT_ERROR_INVALID_CONFIG;
    }
    c->graphs[g].enabled = true;
  }
  c->num_enabled = 0;
  for (uint32_t g = 0; g < c->num_graphs; g++) c->num_enabled += c->graphs[g].enabled;
  return QNN_SUCCESS;
}

qnn_error_t rb_graph_set_config(qnn_graph_handle_t gh, const qnn_graph_config_t **cfg) {
  static const char api[] = "graphSetConfig";
  pthread_mutex_lock(&g_rb.lock);
  rb_graph *g = rb_find_graph(gh);
  rb_log *log = g ? g->ctx->backend->log : NULL;
  qnn_error_t rc = QNN_SUCCESS;
  if (rb_cap(QNN_PROPERTY_GRAPH_SUPPORT_CONFIG) != QNN_SUCCESS) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s is not supported by this backend (capability 302 "
            "off)", api);
    rc = QNN_COMMON_ERROR_NOT_SUPPORTED;
  } else if (!g) {
    rc = QNN_GRAPH_ERROR_INVALID_HANDLE;
  } else if (atomic_load(&g->ctx->stale)) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: context 0x%lx was lost in a DSP subsystem restart",
            api, (unsigned long)g->ctx->handle);
    rc = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  }
  uint32_t prio = 0;
  bool set = false;
  /* all or nothing: every config is checked before any applies */
  for (uint32_t i = 0; rc == QNN_SUCCESS && cfg && cfg[i]; i++) {
    const qnn_graph_config_t *c = cfg[i];
    if (c->option != QNN_GRAPH_CONFIG_OPTION_PRIORITY) {
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: option %u is not supported by this "
              "backend (only PRIORITY (3))", api, i, c->option);
      rc = QNN_COMMON_ERROR_NOT_SUPPORTED;
    } else if ((rc = priority_off(log, api, i)) != QNN_SUCCESS) {
      break;
    } else if (!rb_priority_name(c->u.priority)) {
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: config %u: priority %u (expected LOW 0, NORMAL "
              "100, NORMAL_HIGH 150 or HIGH 200)", api, i, c->u.priority);
      rc = QNN_GRAPH_ERROR_INVALID_ARGUMENT;
    } else {
      prio = c->u.priority;
      set = true;
    }
  }
  if (rc == QNN_SUCCESS && set) {
    g->priority = prio;
    g->priority_set = true;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

RB_EXPORT int htpu_ref_get_graph_state(const char *graph_name, htpu_ref_graph_state *out) {
  if (!graph_name || !out) return -1;
  memset(out, 0, sizeof(*out));
  int rc = -1;
  pthread_mutex_lock(&g_rb.lock);
  for (rb_context *c = g_rb.contexts; c && rc != 0; c = c->next) { /* head = newest */
    int gi = ref_model_find_graph(c->model, graph_name);
    if (gi < 0 || !c->graphs[gi].enabled) continue;
    rb_graph *g = &c->graphs[gi];
    out->context_handle = c->handle;
    out->context_priority = c->priority;
    out->graph_priority = g->priority;
    out->graph_priority_set = g->priority_set;
    out->async_queue_depth = c->async_depth;
    out->executes_done = atomic_load(&g->executes_done);
    out->last_batch_multiple = atomic_load(&g->last_batch_multiple);
    pthread_mutex_lock(&g_sched.lock);
    for (rb_job *j = g->q_head; j; j = j->next) out->queued++;
    out->running = g->running;
    out->async_pending = g->async_pending;
    out->worker_started = g->worker_started;
    pthread_mutex_unlock(&g_sched.lock);
    rc = 0;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}
