/* graph_exec.c - graphExecute: the checks the real backend makes, then the interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"
#include "rb_profile.h"

/* The fields graphExecute looks at, read through the member the version selects. */
typedef struct tview {
  uint32_t id, type, data_type, rank, mem_type, data_size;
  const uint32_t *dims;
  const void *data;
} tview;

static int view(const qnn_tensor_t *t, tview *v) {
#define RB_VIEW(m)                              \
  v->id = t->u.m.id;                            \
  v->type = t->u.m.type;                        \
  v->data_type = t->u.m.data_type;              \
  v->rank = t->u.m.rank;                        \
  v->dims = t->u.m.dimensions;                  \
  v->mem_type = t->u.m.mem_type;                \
  v->data = t->u.m.u.client_buf.data;           \
  v->data_size = t->u.m.u.client_buf.data_size
  if (t->version == QNN_TENSOR_VERSION_1) {
    RB_VIEW(v1);
  } else if (t->version == QNN_TENSOR_VERSION_2) {
    RB_VIEW(v2);
  } else {
    return -1;
  }
#undef RB_VIEW
  return 0;
}

static void shape_str(char *buf, size_t len, uint32_t rank, const uint32_t *dims) {
  size_t used = (size_t)snprintf(buf, len, "[");
  for (uint32_t i = 0; i < rank && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "," : "", dims[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

/* Index of id among list[0..n) (tensor indices into m), or -1. */
static int position_of(const ref_model *m, const uint32_t *list, uint32_t n, uint32_t id) {
  for (uint32_t i = 0; i < n; i++)
    if (m->tensors[list[i]].id == id) return (int)i;
  return -1;
}

/* Checks tensor t against graph input/output i of context c. Logs why it is rejected. A
 * MEMHANDLE tensor's handle is pinned in *pin until the execute ends. */
static qnn_error_t check_tensor(rb_log *log, rb_context *c, const ref_graph *rg, int is_input,
                                uint32_t i, const qnn_tensor_t *t, const void **data,
                                rb_mem **pin) {
  const ref_model *m = c->model;
  const char *role = is_input ? "input" : "output";
  const ref_tensor *want = &m->tensors[is_input ? rg->inputs[i] : rg->outputs[i]];
  tview v;
#define REJECT(...)                                                                         \
  do {                                                                                      \
    char why_[384];                                                                         \
    snprintf(why_, sizeof(why_), __VA_ARGS__);                                              \
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "graphExecute: graph '%s' %s %u ('%s', id %u): %s",   \
            rg->name, role, i, want->name, want->id, why_);                                 \
    return QNN_GRAPH_ERROR_INVALID_TENSOR;                                                  \
  } while (0)
  if (view(t, &v) != 0) REJECT("tensor version %u (expected 1 or 2)", t->version);
  if (v.id != want->id) {
    int in_pos = position_of(m, rg->inputs, rg->num_inputs, v.id);
    int out_pos = position_of(m, rg->outputs, rg->num_outputs, v.id);
    if ((is_input ? in_pos : out_pos) >= 0)
      REJECT("got id %u, which is %s %d: tensors must be passed in graph order", v.id, role,
             is_input ? in_pos : out_pos);
    if ((is_input ? out_pos : in_pos) >= 0)
      REJECT("got id %u, which is a graph %s", v.id, is_input ? "output" : "input");
    REJECT("got id %u, which is not a graph %s", v.id, role);
  }
  uint32_t want_type = is_input ? QNN_TENSOR_TYPE_APP_WRITE : QNN_TENSOR_TYPE_APP_READ;
  if (v.type != want_type)
    REJECT("tensor type %u, expected %u (%s)", v.type, want_type,
           is_input ? "APP_WRITE" : "APP_READ");
  if (v.data_type != want->data_type)
    REJECT("data type 0x%04x, the graph has 0x%04x", v.data_type, want->data_type);
  if (v.rank != want->rank) REJECT("rank %u, the graph has %u", v.rank, want->rank);
  /* QnnGraph.h: dimensions may be NULL; when given they must match. */
  if (v.dims && memcmp(v.dims, want->dims, want->rank * sizeof(uint32_t)) != 0) {
    char got[128], exp[128];
    shape_str(got, sizeof(got), v.rank, v.dims);
    shape_str(exp, sizeof(exp), want->rank, want->dims);
    REJECT("dimensions %s, the graph has %s", got, exp);
  }
  if (v.mem_type == QNN_TENSORMEMTYPE_MEMHANDLE) {
    /* The handle shares the union's first word with clientBuf.data. */
    char why[320];
    void *p = rb_mem_resolve(c, v.data, want, pin, why, sizeof(why));
    if (!p) REJECT("%s", why);
    *data = p;
    return QNN_SUCCESS;
  }
  if (v.mem_type != QNN_TENSORMEMTYPE_RAW)
    REJECT("memType %u: expected RAW (0) or MEMHANDLE (1)", v.mem_type);
  if (!v.data) REJECT("clientBuf.data is NULL");
  size_t esize = ref_dtype_size(want->data_type), n = ref_tensor_elements(want);
  if ((size_t)v.data_size != n * esize)
    REJECT("clientBuf.dataSize %u, expected %zu (%zu elements x %zu bytes)", v.data_size,
           n * esize, n, esize);
#undef REJECT
  *data = v.data;
  return QNN_SUCCESS;
}

static qnn_error_t run(rb_log *log, rb_context *c, uint32_t gi, const qnn_tensor_t *in,
                       uint32_t nin, qnn_tensor_t *out, uint32_t nout, rb_prof_call *pc) {
  const ref_model *m = c->model;
  const ref_graph *rg = &m->graphs[gi];
  if (nin != rg->num_inputs || nout != rg->num_outputs) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "graphExecute: graph '%s' takes %u input(s) and %u "
            "output(s), got %u and %u", rg->name, rg->num_inputs, rg->num_outputs, nin, nout);
    return QNN_GRAPH_ERROR_INVALID_TENSOR;
  }
  if ((nin && !in) || (nout && !out)) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "graphExecute: graph '%s': the %s array is NULL",
            rg->name, nin && !in ? "input" : "output");
    return QNN_GRAPH_ERROR_INVALID_ARGUMENT;
  }
  const void **inp = calloc(nin + 1, sizeof(*inp));
  void **outp = calloc(nout + 1, sizeof(*outp));
  rb_mem **pins = calloc(nin + nout + 1, sizeof(*pins));
  qnn_error_t rc = inp && outp && pins ? QNN_SUCCESS : QNN_COMMON_ERROR_MEM_ALLOC;
  for (uint32_t i = 0; rc == QNN_SUCCESS && i < nin; i++)
    rc = check_tensor(log, c, rg, 1, i, &in[i], &inp[i], &pins[i]);
  for (uint32_t i = 0; rc == QNN_SUCCESS && i < nout; i++) {
    const void *p = NULL;
    rc = check_tensor(log, c, rg, 0, i, &out[i], &p, &pins[nin + i]);
    outp[i] = (void *)(uintptr_t)p; /* output buffers are the caller's writable memory */
  }
  if (rc == QNN_SUCCESS && getenv("HTPU_REF_SKIP_OUTPUTS")) {
    /* a backend that reports success without writing its outputs (tests that a client never
     * shows memory nobody wrote) */
    rb_logf(log, QNN_LOG_LEVEL_WARN, "graphExecute: graph '%s': outputs not written "
            "(HTPU_REF_SKIP_OUTPUTS)", rg->name);
    rb_count_execute();
  } else if (rc == QNN_SUCCESS) {
    char err[256];
    pc->t_checked = pc->t_run0 = rb_now_ns();
    int bad = ref_graph_run_timed(m, gi, (const void *const *)inp, (void *const *)outp,
                                  pc->num_ops ? pc->op_start : NULL,
                                  pc->num_ops ? pc->op_end : NULL, err, sizeof(err));
    pc->t_run1 = rb_now_ns();
    if (bad) {
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "graphExecute: graph '%s' failed: %s", rg->name, err);
      rc = QNN_COMMON_ERROR_GENERAL;
    } else {
      rb_count_execute();
    }
  }
  if (pins)
    for (uint32_t i = 0; i < nin + nout; i++) rb_mem_unpin(pins[i]);
  free(pins);
  free(inp);
  free(outp);
  return rc;
}

qnn_error_t rb_graph_execute(qnn_graph_handle_t gh, const qnn_tensor_t *inputs, uint32_t nin,
                             qnn_tensor_t *outputs, uint32_t nout, qnn_profile_handle_t profile,
                             qnn_signal_handle_t signal) {
  pthread_mutex_lock(&g_rb.lock);
  rb_graph *g = rb_find_graph(gh);
  if (!g) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_GRAPH_ERROR_INVALID_HANDLE;
  }
  /* Registered under the registry lock, so contextFree/backendFree see this call. */
  rb_context *c = g->ctx;
  rb_backend *b = c->backend;
  atomic_fetch_add(&c->executing, 1);
  atomic_fetch_add(&b->busy, 1);
  rb_exec_in_flight_add(1);
  int concurrent = atomic_fetch_add(&g->in_flight, 1) > 0;
  pthread_mutex_unlock(&g_rb.lock);

  const ref_model *m = c->model;
  const char *name = m->graphs[g->index].name;
  if (concurrent)
    rb_violation(b->log, "graphExecute of graph '%s' while another graphExecute of the same "
                 "graph is in progress (QNN queues them; callers should serialize per graph)",
                 name);
  /* The profile handle serves this call alone (rb_profile.h). */
  rb_prof_call pc;
  qnn_error_t rc = rb_profile_begin(b, profile, m->graphs[g->index].num_ops,
                                    QNN_GRAPH_ERROR_INVALID_ARGUMENT,
                                    QNN_GRAPH_ERROR_PROFILE_IN_USE, &pc);
  pthread_mutex_lock(&g->exec_lock);
  pc.t_locked = rb_now_ns();
  if (rc == QNN_SUCCESS && signal) {
    /* signalCreate is not supported, so no such handle can be valid. */
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "graphExecute: graph '%s': unknown signal handle",
            name);
    rc = QNN_GRAPH_ERROR_INVALID_HANDLE;
  }
  if (rc == QNN_SUCCESS && atomic_load(&c->stale)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "graphExecute: graph '%s': context 0x%lx was lost in "
            "a DSP subsystem restart; free it and create a new one", name,
            (unsigned long)c->handle);
    rc = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  }
  /* An injected failure leaves the graph untouched (and, unless the rule says ssr, usable:
   * a recovered DSP restart). */
  if (rc == QNN_SUCCESS) rc = rb_fault(b, FR_GRAPH_EXECUTE, b->log);
  if (rc == QNN_SUCCESS) rc = run(b->log, c, g->index, inputs, nin, outputs, nout, &pc);
  pthread_mutex_unlock(&g->exec_lock);
  rb_profile_end_execute(&pc, m, g->index, rc);

  /* Release in child-to-parent order: once c->executing drops, contextFree may free g and c;
   * once b->busy drops, backendFree may free b; once the count of calls in flight drops, the
   * exit-time destructor may free everything (registry.c). */
  atomic_fetch_sub(&g->in_flight, 1);
  atomic_fetch_sub(&c->executing, 1);
  atomic_fetch_sub(&b->busy, 1);
  rb_exec_in_flight_add(-1);
  return rc;
}
