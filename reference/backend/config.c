/*
 * config.c - context configs (priority, async queue depth) and graphSetConfig (a graph's
 * priority), and the control API's view of a graph.
 *
 * QnnContext.h: the context PRIORITY is "the default priority for graphs in this context";
 * QnnGraph.h: a graph's PRIORITY config overrides it, and for a graph retrieved from a binary
 * graphSetConfig is the only way to give one. Invalid values: context configs 5010
 * (INVALID_CONFIG), graph configs 6000 (INVALID_ARGUMENT). Without the capability (205 context
 * configs, 302 graphSetConfig, 306 priority control) the call fails with 1000.
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

qnn_error_t rb_context_configs(rb_backend *b, const char *api, const qnn_context_config_t **cfg,
                               uint32_t *priority, uint32_t *async_depth) {
  *priority = QNN_PRIORITY_DEFAULT;
  *async_depth = RB_ASYNC_DEPTH_DEFAULT;
  if (!cfg || !cfg[0]) return QNN_SUCCESS;
  if (rb_cap(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION) != QNN_SUCCESS) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: context configs are not supported by this "
            "backend (capability 205 off): pass NULL", api);
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  uint32_t prio = *priority, depth = *async_depth;
  for (uint32_t i = 0; cfg[i]; i++) {
    const qnn_context_config_t *c = cfg[i];
    qnn_error_t rc;
    switch (c->option) {
      case QNN_CONTEXT_CONFIG_OPTION_PRIORITY:
        if ((rc = priority_off(b->log, api, i)) != QNN_SUCCESS) return rc;
        if (!rb_priority_name(c->u.priority)) {
          rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: config %u: priority %u (expected LOW 0, "
                  "NORMAL 100, NORMAL_HIGH 150 or HIGH 200)", api, i, c->u.priority);
          return QNN_CONTEXT_ERROR_INVALID_CONFIG;
        }
        prio = c->u.priority; /* repeated: the last one wins */
        break;
      case QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH:
        if (c->u.async_queue_depth.type != QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_NUMERIC ||
            c->u.async_queue_depth.depth < 1 ||
            c->u.async_queue_depth.depth > RB_ASYNC_DEPTH_MAX) {
          rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: config %u: async queue depth type %u depth "
                  "%u (expected type NUMERIC (0) and a depth of 1..%u)", api, i,
                  c->u.async_queue_depth.type, c->u.async_queue_depth.depth,
                  RB_ASYNC_DEPTH_MAX);
          return QNN_CONTEXT_ERROR_INVALID_CONFIG;
        }
        depth = c->u.async_queue_depth.depth;
        break;
      default:
        rb_logf(b->log, QNN_LOG_LEVEL_VERBOSE, "%s: config option %u accepted and ignored", api,
                c->option);
        break;
    }
  }
  *priority = prio;
  *async_depth = depth;
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
    if (gi < 0) continue;
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
