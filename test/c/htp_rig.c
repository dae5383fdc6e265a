/* htp_rig.c - the QNN stack the HTP device-feature tests drive directly (htp_rig.h). */
#include "htp_rig.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

const char *const HTP_ADD =
    "graph add\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n";

static pthread_mutex_t g_hlog_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_hlog[32768];

void hlog_cb(const char *fmt, uint32_t level, uint64_t ts, va_list args) {
  (void)ts;
  char line[1024];
  vsnprintf(line, sizeof(line), fmt, args);
  pthread_mutex_lock(&g_hlog_lock);
  size_t used = strlen(g_hlog);
  if (used + strlen(line) + 8 < sizeof(g_hlog))
    snprintf(g_hlog + used, sizeof(g_hlog) - used, "%u:%s\n", level, line);
  pthread_mutex_unlock(&g_hlog_lock);
}

void hlog_clear(void) {
  pthread_mutex_lock(&g_hlog_lock);
  g_hlog[0] = '\0';
  pthread_mutex_unlock(&g_hlog_lock);
}

const char *hlog(void) {
  static char copy[sizeof(g_hlog)];
  pthread_mutex_lock(&g_hlog_lock);
  memcpy(copy, g_hlog, sizeof(copy));
  pthread_mutex_unlock(&g_hlog_lock);
  return copy;
}

/* The QNN functions of the first provider (with no HTPU_REF_PROVIDERS: the default one). */
const qnn_interface_table_t *htp_table(const hctl *c) {
  const qnn_interface_t *p = ref_first_provider(c);
  return p ? &p->table : NULL;
}

int hctl_open(hctl *c) {
  if (ref_ctl_open(c) != 0 || !htp_table(c)) return -1;
  c->forget_power();
  hlog_clear();
  return 0;
}

void hctl_close(hctl *c) { ref_ctl_close(c); }

htpu_ref_stats hstats(const hctl *c) { return ref_ctl_stats(c); }

qnn_error_t stack_open(stack *s, const char *device_env) {
  memset(s, 0, sizeof(*s));
  if (hctl_open(&s->c) != 0) return 1;
  s->t = htp_table(&s->c);
  qnn_error_t rc = s->t->log_create(hlog_cb, QNN_LOG_LEVEL_DEBUG, &s->log);
  if (rc) return rc;
  if (device_env) setenv("HTPU_REF_DEVICE", device_env, 1);
  rc = s->t->backend_create(s->log, NULL, &s->be);
  unsetenv("HTPU_REF_DEVICE");
  if (rc) return rc;
  return s->t->device_create(s->log, NULL, &s->dev);
}

void stack_close(stack *s) {
  if (s->t) {
    if (s->dev) s->t->device_free(s->dev);
    if (s->be) s->t->backend_free(s->be);
    if (s->log) s->t->log_free(s->log);
  }
  hctl_close(&s->c);
}

/* A context of `text` on the stack's device, and its graph `graph`. */
qnn_error_t load(stack *s, const char *text, const char *graph, qnn_context_handle_t *ctx,
                 qnn_graph_handle_t *g) {
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return 3;
  qnn_error_t rc = s->t->context_create_from_binary(s->be, s->dev, NULL, bin, len, ctx, NULL);
  free(bin);
  if (rc == QNN_SUCCESS && graph) rc = s->t->graph_retrieve(*ctx, graph, g);
  return rc;
}

uint32_t g_dims14[2] = {1, 4};

qnn_htp_mem_descriptor_t htp_desc(int fd, uint64_t size, uint64_t offset) {
  qnn_htp_mem_descriptor_t h;
  memset(&h, 0, sizeof(h));
  h.type = QNN_HTP_MEM_SHARED_BUFFER;
  h.size = size;
  h.u.shared_buffer_config.fd = fd;
  h.u.shared_buffer_config.offset = offset;
  return h;
}

qnn_mem_descriptor_t custom_desc(qnn_htp_mem_descriptor_t *h, uint32_t dtype) {
  qnn_mem_descriptor_t d;
  memset(&d, 0, sizeof(d));
  d.mem_shape.num_dim = 2;
  d.mem_shape.dim_size = g_dims14;
  d.data_type = dtype;
  d.mem_type = QNN_MEM_TYPE_CUSTOM;
  d.u.custom_info = h;
  return d;
}

/* Graph tensors of `add` (a, b in; y out) bound to mem handles. */
void mh_tensors(const ref_model *m, qnn_mem_handle_t h[3], qnn_tensor_t in[2],
                qnn_tensor_t out[1], uint32_t dims[3][2]) {
  const ref_graph *g = &m->graphs[0];
  for (int i = 0; i < 3; i++) {
    const ref_tensor *rt = &m->tensors[i < 2 ? g->inputs[i] : g->outputs[0]];
    qnn_tensor_t *t = i < 2 ? &in[i] : &out[0];
    memset(t, 0, sizeof(*t));
    t->version = QNN_TENSOR_VERSION_2;
    t->u.v2.id = rt->id;
    t->u.v2.type = i < 2 ? QNN_TENSOR_TYPE_APP_WRITE : QNN_TENSOR_TYPE_APP_READ;
    t->u.v2.data_type = rt->data_type;
    t->u.v2.rank = rt->rank;
    dims[i][0] = rt->dims[0];
    dims[i][1] = rt->dims[1];
    t->u.v2.dimensions = dims[i];
    t->u.v2.mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
    t->u.v2.u.mem_handle = h[i];
  }
}

qnn_error_t shared_open(shared *x) {
  memset(x, 0, sizeof(*x));
  qnn_error_t rc = stack_open(&x->s, NULL);
  if (rc) return rc;
  if ((rc = load(&x->s, HTP_ADD, "add", &x->ctx, &x->g))) return rc;
  size_t len = 0;
  void *bin = fx_build_model(HTP_ADD, &len);
  char err[256];
  if (!bin || ref_model_parse(bin, len, &x->model, err, sizeof(err)) != 0) {
    free(bin);
    return 4;
  }
  free(bin);
  x->size = 64;
  x->buf = x->s.c.rpc_alloc(25, 1, (int)x->size);
  if (!x->buf) return 5;
  x->fd = x->s.c.rpc_to_fd(x->buf);
  return 0;
}

void shared_close(shared *x) {
  if (x->ctx) x->s.t->context_free(x->ctx, NULL);
  if (x->buf) x->s.c.rpc_free(x->buf);
  ref_model_free(x->model);
  stack_close(&x->s);
}
