/* refb_rig.c - the QNN stack the reference-backend tests drive directly (refb_rig.h). */
#include "refb_rig.h"

#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "qnn/qnn_signal_abi.h"
#include "test.h"

const char *const RB_ADD =
    "graph add\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n";

/* Captured log lines ("<level>:<text>\n"), shared by all tests. */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_log[16384];
static unsigned g_log_calls;

void log_cb(const char *fmt, uint32_t level, uint64_t ts, va_list args) {
  (void)ts;
  char line[1024];
  vsnprintf(line, sizeof(line), fmt, args);
  pthread_mutex_lock(&g_log_lock);
  size_t used = strlen(g_log);
  if (used + strlen(line) + 8 < sizeof(g_log))
    snprintf(g_log + used, sizeof(g_log) - used, "%u:%s\n", level, line);
  g_log_calls++;
  pthread_mutex_unlock(&g_log_lock);
}

void log_clear(void) {
  pthread_mutex_lock(&g_log_lock);
  g_log[0] = '\0';
  g_log_calls = 0;
  pthread_mutex_unlock(&g_log_lock);
}

int ctl_open(ctl *c) {
  log_clear();
  return ref_ctl_open(c);
}

void ctl_close(ctl *c) { ref_ctl_close(c); }

htpu_ref_stats stats_of(const ctl *c) { return ref_ctl_stats(c); }

/* Opens the stack up to the graph `graph` of `text`, with HTPU_REF_FAULTS/HTPU_REF_LATENCY
 * set (when non-NULL) around backendCreate only. Returns the first failing QNN code, or 0. */
qnn_error_t rig_open_env(rig *r, const char *text, const char *graph, const char *faults,
                                const char *latency) {
  memset(r, 0, sizeof(*r));
  if (ctl_open(&r->c) != 0) return 1;
  const qnn_interface_t *p = ref_first_provider(&r->c);
  if (!p) return 2;
  r->t = &p->table;
  qnn_error_t rc;
  if ((rc = r->t->log_create(log_cb, QNN_LOG_LEVEL_DEBUG, &r->log))) return rc;
  if (faults) setenv("HTPU_REF_FAULTS", faults, 1);
  if (latency) setenv("HTPU_REF_LATENCY", latency, 1);
  rc = r->t->backend_create(r->log, NULL, &r->be);
  ref_reset_env();
  if (rc) return rc;
  if ((rc = r->t->device_create(r->log, NULL, &r->dev))) return rc;
  if (!text) return 0;
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return 3;
  char err[256];
  if (ref_model_parse(bin, len, &r->model, err, sizeof(err)) != 0) {
    printf("    parse: %s\n", err);
    free(bin);
    return 4;
  }
  rc = r->t->context_create_from_binary(r->be, r->dev, NULL, bin, len, &r->ctx, NULL);
  free(bin); /* the backend must not keep the caller's buffer */
  if (rc) return rc;
  if (graph) rc = r->t->graph_retrieve(r->ctx, graph, &r->g);
  return rc;
}

qnn_error_t rig_open(rig *r, const char *text, const char *graph) {
  return rig_open_env(r, text, graph, NULL, NULL);
}

void rig_close(rig *r) {
  if (r->t) {
    if (r->ctx) r->t->context_free(r->ctx, NULL);
    if (r->dev) r->t->device_free(r->dev);
    if (r->be) r->t->backend_free(r->be);
    if (r->log) r->t->log_free(r->log);
  }
  ref_model_free(r->model);
  ctl_close(&r->c);
}

static void io_tensor(const ref_tensor *rt, uint32_t type, uint32_t *dims, void *buf,
                      qnn_tensor_t *t) {
  memset(t, 0, sizeof(*t));
  t->version = QNN_TENSOR_VERSION_1;
  t->u.v1.id = rt->id;
  t->u.v1.name = rt->name;
  t->u.v1.type = type;
  t->u.v1.data_type = rt->data_type;
  t->u.v1.rank = rt->rank;
  memcpy(dims, rt->dims, sizeof(rt->dims));
  t->u.v1.dimensions = dims;
  t->u.v1.mem_type = QNN_TENSORMEMTYPE_RAW;
  t->u.v1.u.client_buf.data = buf;
  t->u.v1.u.client_buf.data_size = (uint32_t)rt->nbytes;
}

int io_init(io *x, const ref_model *m, uint32_t gi) {
  memset(x, 0, sizeof(*x));
  const ref_graph *g = &m->graphs[gi];
  if (g->num_inputs > 4 || g->num_outputs > 4) return -1;
  x->nin = g->num_inputs;
  x->nout = g->num_outputs;
  for (uint32_t i = 0; i < x->nin + x->nout; i++) {
    int is_in = i < x->nin;
    const ref_tensor *rt = &m->tensors[is_in ? g->inputs[i] : g->outputs[i - x->nin]];
    x->buf[i] = calloc(1, rt->nbytes);
    if (!x->buf[i]) return -1;
    io_tensor(rt, is_in ? QNN_TENSOR_TYPE_APP_WRITE : QNN_TENSOR_TYPE_APP_READ, x->dims[i],
              x->buf[i], is_in ? &x->in[i] : &x->out[i - x->nin]);
  }
  return 0;
}

void io_free(io *x) {
  for (int i = 0; i < 8; i++) free(x->buf[i]);
}

qnn_error_t exec(rig *r, io *x) {
  return r->t->graph_execute(r->g, x->in, x->nin, x->out, x->nout, NULL, NULL);
}

const char *log_text(void) {
  static char copy[sizeof(g_log)];
  pthread_mutex_lock(&g_log_lock);
  memcpy(copy, g_log, sizeof(copy));
  pthread_mutex_unlock(&g_log_lock);
  return copy;
}

/* Reads the slots a provider's version has; all must be callable. */
int slots_all_set(const void *provider, size_t table_off, uint32_t slots) {
  const qnn_unused_fn *s = (const qnn_unused_fn *)(const void *)((const char *)provider + table_off);
  for (uint32_t i = 0; i < slots; i++)
    if (!s[i]) return 0;
  return 1;
}

/* ASan reports the requested size as the usable size; other allocators may round up. */
int block_size_ok(const void *p, size_t expected) {
  size_t got = malloc_usable_size((void *)p);
#if defined(__SANITIZE_ADDRESS__)
  return got == expected;
#else
  return got >= expected;
#endif
}

unsigned log_calls(void) {
  pthread_mutex_lock(&g_log_lock);
  unsigned n = g_log_calls;
  pthread_mutex_unlock(&g_log_lock);
  return n;
}

qnn_signal_handle_t sig_new(rig *r, uint32_t option, uint64_t timeout_us) {
  qnn_signal_config_t cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.option = option;
  if (option == QNN_SIGNAL_CONFIG_OPTION_TIMEOUT) cfg.u.timeout_duration_us = timeout_us;
  const qnn_signal_config_t *list[] = {&cfg, NULL};
  qnn_signal_handle_t s = NULL;
  if (r->t->signal_create(r->be, option ? list : NULL, &s) != QNN_SUCCESS) return NULL;
  return s;
}

qnn_error_t exec_sig(rig *r, io *x, qnn_signal_handle_t s) {
  return r->t->graph_execute(r->g, x->in, x->nin, x->out, x->nout, NULL, s);
}

double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int wait_graph(const ctl *c, const char *name, int running, int queued) {
  for (int i = 0; i < 30000; i++) {
    htpu_ref_graph_state st;
    if (c->graph_state(name, &st) == 0 && (running < 0 || (int)st.running == running) &&
        (queued < 0 || (int)st.queued == queued))
      return 0;
    usleep(1000);
  }
  return -1;
}

qnn_error_t rig_open_cfg(rig *r, const char *text, const char *graph,
                         const qnn_context_config_t **cfg) {
  qnn_error_t rc = rig_open(r, NULL, NULL);
  if (rc) return rc;
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return 3;
  char err[256];
  if (ref_model_parse(bin, len, &r->model, err, sizeof(err)) != 0) {
    printf("    parse: %s\n", err);
    free(bin);
    return 4;
  }
  rc = r->t->context_create_from_binary(r->be, r->dev, cfg, bin, len, &r->ctx, NULL);
  free(bin);
  if (rc) {
    r->ctx = NULL;
    return rc;
  }
  return graph ? r->t->graph_retrieve(r->ctx, graph, &r->g) : 0;
}
