/*
 * context_list.c - contextCreateFromBinaryListAsync: several contexts from binaries in one
 * call, each deserialized on a thread of its own, so N loads take about as long as the
 * slowest (QnnContext.h: "the deserialization/initialization of each context will occur in
 * the background").
 *
 * Each context goes through what contextCreateFromBinary does (rb_create_one: its fault rules
 * and latency, its configs, profile and checks) with its own configs followed by the call's
 * listConfig, which overrides them (the last value of an option wins). As each one ends, its
 * notify function is called from its thread: once per deserialized graph (GRAPH_INIT, with
 * the graph's handle and name) and then once for the context (CONTEXT_INIT, with its handle,
 * or NULL and the failure's code). The call returns after every notification, with 0 when
 * every context was created, else the code of the first that failed (in list order); the
 * ones created stay the caller's. The signal, if any, is in use until then and stops every
 * context still loading (5012/5013 for each). Refused at once, without any notification:
 * capability 212 off (1000), an empty or NULL list, a NULL binary, size 0 or notify function
 * (5000), params of version 2 (1000: data-provider callbacks are not implemented here).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"

static const char k_api[] = "contextCreateFromBinaryListAsync";

typedef struct list_item {
  rb_backend *b;
  rb_device *d;
  qnn_device_handle_t dh;
  const qnn_context_params_v1_t *p;
  const qnn_context_config_t **cfg; /* its own configs, then the list's */
  const rb_watch *w;
  qnn_error_t rc;
  rb_context *ctx;
  pthread_t thread;
  bool threaded;
} list_item;

/* The graphs a notification names, copied under the registry lock: once notified, the
 * context is the caller's to free. */
typedef struct graph_note {
  qnn_graph_handle_t handle;
  char name[128];
} graph_note;

static void notify(list_item *it) {
  const qnn_context_params_v1_t *p = it->p;
  qnn_context_handle_t ch = NULL;
  graph_note *notes = NULL;
  uint32_t n = 0;
  if (it->rc == QNN_SUCCESS) {
    pthread_mutex_lock(&g_rb.lock);
    rb_context *c = it->ctx;
    ch = (qnn_context_handle_t)c->handle;
    notes = calloc(c->num_graphs ? c->num_graphs : 1, sizeof(*notes));
    for (uint32_t g = 0; notes && g < c->num_graphs; g++) {
      if (!c->graphs[g].enabled) continue;
      notes[n].handle = (qnn_graph_handle_t)c->graphs[g].handle;
      snprintf(notes[n].name, sizeof notes[n].name, "%s", c->model->graphs[g].name);
      n++;
    }
    pthread_mutex_unlock(&g_rb.lock);
  }
  for (uint32_t g = 0; g < n; g++)
    p->notify_func(ch, notes[g].handle, notes[g].name, QNN_CONTEXT_NOTIFY_TYPE_GRAPH_INIT,
                   p->notify_param, QNN_SUCCESS);
  free(notes);
  p->notify_func(ch, NULL, NULL, QNN_CONTEXT_NOTIFY_TYPE_CONTEXT_INIT, p->notify_param, it->rc);
}

static void *create_item(void *arg) {
  list_item *it = arg;
  it->rc = rb_create_one(it->b, it->d, it->dh, k_api, it->cfg, it->p->binary_buffer,
                         it->p->binary_buffer_size, it->p->profile, it->w, &it->ctx);
  notify(it);
  return NULL;
}

/* The params and the list's configs before anything starts: 0, or the code (logged). */
static qnn_error_t check_params(rb_backend *b, const qnn_context_params_t **params, size_t *n) {
  *n = 0;
  if (rb_cap(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC) != QNN_SUCCESS) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s is not supported by this backend (capability 212 "
            "off): create the contexts one by one", k_api);
    return QNN_COMMON_ERROR_NOT_SUPPORTED;
  }
  if (!params || !params[0]) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: the list of context params is NULL or empty",
            k_api);
    return QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
  }
  for (size_t i = 0; params[i]; i++, (*n)++) {
    const qnn_context_params_t *p = params[i];
    if (p->version != QNN_CONTEXT_PARAMS_VERSION_1) {
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: params %zu: version %u (this backend takes "
              "version 1; version 2's data-provider callbacks are not supported)", k_api, i,
              p->version);
      return p->version == 2 ? QNN_COMMON_ERROR_NOT_SUPPORTED : QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
    }
    if (!p->u.v1.binary_buffer || !p->u.v1.binary_buffer_size || !p->u.v1.notify_func) {
      rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: params %zu: %s", k_api, i,
              !p->u.v1.notify_func ? "the notify function is NULL"
                                   : "the binary buffer is NULL/empty");
      return QNN_CONTEXT_ERROR_INVALID_ARGUMENT;
    }
  }
  return QNN_SUCCESS;
}

/* Item i's configs: its own then the list's, NULL-terminated (NULL when neither has any). */
static const qnn_context_config_t **merge_configs(const qnn_context_config_t **own,
                                                 const qnn_context_config_t **list, bool *oom) {
  size_t a = 0, c = 0;
  while (own && own[a]) a++;
  while (list && list[c]) c++;
  *oom = false;
  if (a + c == 0) return NULL;
  const qnn_context_config_t **all = calloc(a + c + 1, sizeof(*all));
  if (!all) {
    *oom = true;
    return NULL;
  }
  memcpy(all, own, a * sizeof(*all));
  if (c) memcpy(all + a, list, c * sizeof(*all));
  return all;
}

/* Runs every item, each on its own thread (inline when none can be started), and waits. */
static void run_items(list_item *items, size_t n) {
  for (size_t i = 0; i < n; i++)
    items[i].threaded = pthread_create(&items[i].thread, NULL, create_item, &items[i]) == 0;
  for (size_t i = 0; i < n; i++) {
    if (items[i].threaded) pthread_join(items[i].thread, NULL);
    else create_item(&items[i]);
  }
}

qnn_error_t rb_context_create_from_binary_list_async(qnn_backend_handle_t bh,
                                                     qnn_device_handle_t dh,
                                                     const qnn_context_params_t **params,
                                                     const qnn_context_config_t **list_cfg,
                                                     qnn_signal_handle_t signal) {
  rb_backend *b;
  rb_device *d;
  rb_watch w;
  qnn_error_t rc = rb_pin_backend(bh, dh, &b, &d, signal, k_api, rb_mono_ns(), &w);
  if (rc != QNN_SUCCESS) return rc;
  size_t n = 0;
  list_item *items = NULL;
  rc = check_params(b, params, &n);
  if (rc == QNN_SUCCESS && !(items = calloc(n, sizeof(*items)))) rc = QNN_COMMON_ERROR_MEM_ALLOC;
  for (size_t i = 0; rc == QNN_SUCCESS && i < n; i++) {
    bool oom;
    items[i] = (list_item){.b = b, .d = d, .dh = dh, .p = &params[i]->u.v1, .w = &w};
    items[i].cfg = merge_configs(params[i]->u.v1.config, list_cfg, &oom);
    if (oom) rc = QNN_COMMON_ERROR_MEM_ALLOC;
  }
  if (rc == QNN_SUCCESS) {
    rb_count_list_async();
    run_items(items, n);
    for (size_t i = 0; i < n && rc == QNN_SUCCESS; i++) rc = items[i].rc;
  }
  for (size_t i = 0; items && i < n; i++) free((void *)items[i].cfg);
  free(items);
  pthread_mutex_lock(&g_rb.lock);
  rb_signal_release(&w);
  pthread_mutex_unlock(&g_rb.lock);
  rb_unpin_backend(b);
  return rc;
}
