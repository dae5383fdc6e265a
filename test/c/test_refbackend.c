/* test_refbackend.c - the reference QNN libraries, driven directly through dlopen. */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../reference/backend/htpu_ref_control.h"
#include "qnn/qnn_abi.h"
#include "qnn/qnn_versions.h"
#include "refmodel.h"
#include "qnn/qnn_device_abi.h"
#include "fixture.h"
#include "ref_control.h"
#include "test.h"

/* ---- fixtures ----------------------------------------------------------------------------- */

static const char *RB_ADD =
    "graph add\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n";


/* Captured log lines ("<level>:<text>\n"), shared by all tests. */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_log[16384];
static unsigned g_log_calls;

static void log_cb(const char *fmt, uint32_t level, uint64_t ts, va_list args) {
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

static void log_clear(void) {
  pthread_mutex_lock(&g_log_lock);
  g_log[0] = '\0';
  g_log_calls = 0;
  pthread_mutex_unlock(&g_log_lock);
}

/* The control API, and a clean start and finish around each test (ref_control.h). */
typedef ref_ctl ctl;

static int ctl_open(ctl *c) {
  log_clear();
  return ref_ctl_open(c);
}

static void ctl_close(ctl *c) { ref_ctl_close(c); }

static htpu_ref_stats stats_of(const ctl *c) { return ref_ctl_stats(c); }

/* A backend stack: log -> backend -> device -> context -> graph. */
typedef struct rig {
  ctl c;
  const qnn_interface_table_t *t;
  qnn_log_handle_t log;
  qnn_backend_handle_t be;
  qnn_device_handle_t dev;
  qnn_context_handle_t ctx;
  qnn_graph_handle_t g;
  ref_model *model; /* the test's own parse, for tensor ids and shapes */
} rig;

/* Opens the stack up to the graph `graph` of `text`, with HTPU_REF_FAULTS/HTPU_REF_LATENCY
 * set (when non-NULL) around backendCreate only. Returns the first failing QNN code, or 0. */
static qnn_error_t rig_open_env(rig *r, const char *text, const char *graph, const char *faults,
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

static qnn_error_t rig_open(rig *r, const char *text, const char *graph) {
  return rig_open_env(r, text, graph, NULL, NULL);
}

static void rig_close(rig *r) {
  if (r->t) {
    if (r->ctx) r->t->context_free(r->ctx, NULL);
    if (r->dev) r->t->device_free(r->dev);
    if (r->be) r->t->backend_free(r->be);
    if (r->log) r->t->log_free(r->log);
  }
  ref_model_free(r->model);
  ctl_close(&r->c);
}

/* Execution buffers for graph gi of a model, as a correct caller builds them. */
typedef struct io {
  uint32_t nin, nout;
  qnn_tensor_t in[4], out[4];
  uint32_t dims[8][REF_MAX_RANK];
  void *buf[8];
} io;

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

static int io_init(io *x, const ref_model *m, uint32_t gi) {
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

static void io_free(io *x) {
  for (int i = 0; i < 8; i++) free(x->buf[i]);
}

static qnn_error_t exec(rig *r, io *x) {
  return r->t->graph_execute(r->g, x->in, x->nin, x->out, x->nout, NULL, NULL);
}

static const char *log_text(void) {
  static char copy[sizeof(g_log)];
  pthread_mutex_lock(&g_log_lock);
  memcpy(copy, g_log, sizeof(copy));
  pthread_mutex_unlock(&g_log_lock);
  return copy;
}

/* ---- providers ---------------------------------------------------------------------------- */

/* Reads the slots a provider's version has; all must be callable. */
static int slots_all_set(const void *provider, size_t table_off, uint32_t slots) {
  const qnn_unused_fn *s = (const qnn_unused_fn *)(const void *)((const char *)provider + table_off);
  for (uint32_t i = 0; i < slots; i++)
    if (!s[i]) return 0;
  return 1;
}

/* ASan reports the requested size as the usable size; other allocators may round up. */
static int block_size_ok(const void *p, size_t expected) {
  size_t got = malloc_usable_size((void *)p);
#if defined(__SANITIZE_ADDRESS__)
  return got == expected;
#else
  return got >= expected;
#endif
}

TEST(refb_providers_default) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t **list = NULL, **again = NULL;
  uint32_t n = 0, n2 = 0;
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 1);
  const qnn_interface_t *p = list[0];
  CHECK(strcmp(p->provider_name, "HTPU_REFERENCE") == 0);
  CHECK_EQ(p->backend_id, QNN_BACKEND_ID_HTP);
  CHECK_EQ(p->api_version.core_api_version.major, 2);
  CHECK_EQ(p->api_version.core_api_version.minor, 32);
  CHECK_EQ(p->api_version.backend_api_version.major, 5);
  CHECK_EQ(p->api_version.backend_api_version.minor, 42);
  CHECK(slots_all_set(p, offsetof(qnn_interface_t, table), 71));
  CHECK(block_size_ok(p, offsetof(qnn_interface_t, table) + 71 * sizeof(qnn_unused_fn)));
  /* same spec, same arrays */
  CHECK_EQ(c.get_providers(&again, &n2), QNN_SUCCESS);
  CHECK(again == list && n2 == 1);
  /* unimplemented slots answer NOT_SUPPORTED */
  qnn_error_t (*ctx_create)(void) = (qnn_error_t(*)(void))p->table.context_create;
  CHECK_EQ(ctx_create(), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(p->table.property_has_capability(QNN_PROPERTY_GROUP_DEVICE), QNN_SUCCESS);
  CHECK_EQ(p->table.property_has_capability(1104), QNN_COMMON_ERROR_NOT_SUPPORTED);
  const char *build_id = NULL;
  CHECK_EQ(p->table.backend_get_build_id(&build_id), QNN_SUCCESS);
  CHECK(strcmp(build_id, "htpu-reference-0.1.0") == 0);
  qnn_api_version_t v;
  CHECK_EQ(p->table.backend_get_api_version(&v), QNN_SUCCESS);
  CHECK_EQ(v.core_api_version.minor, 32);
  const char *msg = NULL;
  CHECK_EQ(p->table.error_get_message(QNN_GRAPH_ERROR_INVALID_TENSOR, &msg), QNN_SUCCESS);
  CHECK_STR_CONTAINS(msg, "tensor");
  CHECK(p->table.error_get_message(12345, &msg) != QNN_SUCCESS);
  ctl_close(&c);
}

TEST(refb_providers_spec_versions_and_slots) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  setenv("HTPU_REF_PROVIDERS",
         "OLD_HTP:6:2.18.0:5.25.0,CPU_ONE:3:2.32.1:1.2.3,ANCIENT:6:2.7.2:5.13.0", 1);
  const qnn_interface_t **list = NULL;
  uint32_t n = 0;
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 3);
  size_t off = offsetof(qnn_interface_t, table);
  CHECK(strcmp(list[0]->provider_name, "OLD_HTP") == 0);
  CHECK_EQ(list[0]->api_version.core_api_version.minor, 18);
  CHECK_EQ(list[0]->api_version.backend_api_version.minor, 25);
  uint32_t old_slots = qnn_core_table_slots(list[0]->api_version.core_api_version);
  CHECK_EQ(old_slots, 62);
  CHECK(slots_all_set(list[0], off, old_slots));
  CHECK(block_size_ok(list[0], off + old_slots * sizeof(qnn_unused_fn)));
  CHECK_EQ(list[1]->backend_id, 3);
  CHECK_EQ(list[1]->api_version.core_api_version.patch, 1);
  CHECK_EQ(list[1]->api_version.backend_api_version.patch, 3);
  CHECK(block_size_ok(list[1], off + 71 * sizeof(qnn_unused_fn)));
  /* unsupported 2.7: a different size, and nothing in it works */
  CHECK_EQ(qnn_core_table_slots(list[2]->api_version.core_api_version), 0);
  CHECK(block_size_ok(list[2], off + 44 * sizeof(qnn_unused_fn)));
  CHECK(slots_all_set(list[2], off, 44));
  CHECK_EQ(list[2]->table.property_has_capability(QNN_PROPERTY_GROUP_DEVICE),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  /* backendGetApiVersion follows the first provider handed out */
  qnn_api_version_t v;
  CHECK_EQ(list[0]->table.backend_get_api_version(&v), QNN_SUCCESS);
  CHECK_EQ(v.core_api_version.minor, 18);
  ctl_close(&c);
}

TEST(refb_providers_empty_error_and_bad_spec) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t **list = (const qnn_interface_t **)&c;
  uint32_t n = 99;
  setenv("HTPU_REF_PROVIDERS", "", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 0);
  CHECK(list == NULL);
  setenv("HTPU_REF_PROVIDERS", "X:6:2.32", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_GENERAL);
  setenv("HTPU_REF_PROVIDERS", "X:99:2.32.0:5.42.0", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_GENERAL);
  unsetenv("HTPU_REF_PROVIDERS");
  setenv("HTPU_REF_GETPROVIDERS_ERROR", "1008", 1);
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES);
  unsetenv("HTPU_REF_GETPROVIDERS_ERROR");
  CHECK_EQ(c.get_providers(NULL, &n), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 1);
  ctl_close(&c);
}

/* ---- lifecycle and execute ---------------------------------------------------------------- */

TEST(refb_lifecycle_execute_f32) {
  rig r;
  qnn_error_t rc = rig_open(&r, RB_ADD, "add");
  CHECK_MSG(rc == 0, "rig_open: %llu", (unsigned long long)rc);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK(s.live_logs >= 1 && s.live_backends >= 1 && s.live_devices >= 1 && s.live_contexts >= 1);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  float *a = x.buf[0], *b = x.buf[1], *y = x.buf[2];
  for (int i = 0; i < 4; i++) {
    a[i] = (float)i + 0.5f;
    b[i] = 10.0f * (float)i;
  }
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  for (int i = 0; i < 4; i++) CHECK(y[i] == a[i] + b[i]);
  /* V2 tensors work the same */
  for (uint32_t i = 0; i < 2; i++) {
    qnn_tensor_v1_t v1 = x.in[i].u.v1;
    memset(&x.in[i], 0, sizeof(x.in[i]));
    x.in[i].version = QNN_TENSOR_VERSION_2;
    memcpy(&x.in[i].u.v2, &v1, sizeof(v1));
  }
  memset(y, 0, 16);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK(y[3] == 3.5f + 30.0f);
  CHECK_EQ(stats_of(&r.c).total_executes, 2);
  io_free(&x);
  /* orderly teardown: no violations, nothing left */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  CHECK_EQ(r.t->device_free(r.dev), QNN_SUCCESS);
  r.dev = NULL;
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = NULL;
  CHECK_EQ(r.t->log_free(r.log), QNN_SUCCESS);
  r.log = NULL;
  s = stats_of(&r.c);
  CHECK_EQ(s.violations, 0);
  CHECK_EQ(s.leaked_handles, 0);
  CHECK_STR_CONTAINS(log_text(), "backendCreate");
  rig_close(&r);
}

TEST(refb_log_levels_and_null_device) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  qnn_log_handle_t l2 = NULL;
  CHECK_EQ(r.t->log_create(log_cb, 0, &l2), QNN_LOG_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->log_create(log_cb, 6, &l2), QNN_LOG_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->log_set_log_level(r.log, 9), QNN_LOG_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->log_set_log_level((qnn_log_handle_t)(uintptr_t)0x42, 1),
           QNN_LOG_ERROR_INVALID_HANDLE);
  /* at ERROR level, INFO lines are filtered out */
  CHECK_EQ(r.t->log_set_log_level(r.log, QNN_LOG_LEVEL_ERROR), QNN_SUCCESS);
  log_clear();
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t ctx = NULL;
  /* NULL device = the default device */
  qnn_error_t rc = r.t->context_create_from_binary(r.be, NULL, NULL, bin, len, &ctx, NULL);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  CHECK(strstr(log_text(), "3:") == NULL);
  CHECK_EQ(r.t->context_free(ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  rig_close(&r);
}

TEST(refb_execute_validation) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  qnn_tensor_t *in = x.in, *out = x.out;
  qnn_tensor_t save_in0 = in[0], save_in1 = in[1], save_out = out[0];
#define EXPECT_REJECT(code, needle)                                                   \
  do {                                                                                \
    log_clear();                                                                      \
    CHECK_EQ(exec(&r, &x), code);                                                     \
    CHECK_STR_CONTAINS(log_text(), needle);                                           \
    in[0] = save_in0;                                                                 \
    in[1] = save_in1;                                                                 \
    out[0] = save_out;                                                                \
    x.nin = 2;                                                                        \
    x.nout = 1;                                                                       \
  } while (0)
  x.nin = 1;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "takes 2 input(s)");
  x.nout = 0;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "got 2 and 0");
  CHECK_EQ(r.t->graph_execute(r.g, NULL, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_ARGUMENT);
  in[0].version = 3;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "input 0 ('a'");
  in[0].version = 3;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "tensor version 3");
  in[0] = save_in1; /* b passed first: wrong order */
  in[1] = save_in0;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "graph order");
  in[0].u.v1.id = 9999;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "not a graph input");
  in[0].u.v1.id = save_out.u.v1.id;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "graph output");
  in[1].u.v1.type = QNN_TENSOR_TYPE_APP_READ;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "input 1 ('b'");
  out[0].u.v1.type = QNN_TENSOR_TYPE_APP_WRITE;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "output 0 ('y'");
  in[0].u.v1.data_type = QNN_DATATYPE_FLOAT_16;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "data type 0x0216");
  in[0].u.v1.rank = 1;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "rank 1");
  uint32_t bad_dims[2] = {4, 1};
  in[0].u.v1.dimensions = bad_dims;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "dimensions [4,1]");
  in[0].u.v1.mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "memType 1");
  out[0].u.v1.u.client_buf.data = NULL;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "data is NULL");
  in[1].u.v1.u.client_buf.data_size = 15;
  EXPECT_REJECT(QNN_GRAPH_ERROR_INVALID_TENSOR, "dataSize 15, expected 16");
  CHECK_EQ(r.t->graph_execute(r.g, in, 2, out, 1, (qnn_profile_handle_t)(uintptr_t)7, NULL),
           QNN_GRAPH_ERROR_INVALID_HANDLE);
#undef EXPECT_REJECT
  /* NULL dimensions are allowed (QnnGraph.h), and a correct call still works */
  in[0].u.v1.dimensions = NULL;
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK_EQ(stats_of(&r.c).total_executes, 1);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_handles_stale_and_unknown) {
  rig r;
  CHECK_EQ(rig_open(&r, FX_MULTI_GRAPH, "second"), 0);
  void *bogus = (void *)(uintptr_t)0xdead0;
  CHECK_EQ(r.t->backend_free(bogus), QNN_BACKEND_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->device_free(bogus), QNN_DEVICE_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_free(bogus, NULL), QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->log_free(bogus), QNN_LOG_ERROR_INVALID_HANDLE);
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(r.t->graph_retrieve(bogus, "second", &g), QNN_GRAPH_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->graph_execute(bogus, NULL, 0, NULL, 0, NULL, NULL),
           QNN_GRAPH_ERROR_INVALID_HANDLE);
  /* a context handle is not a graph handle, nor the reverse */
  CHECK_EQ(r.t->graph_execute(r.ctx, NULL, 0, NULL, 0, NULL, NULL),
           QNN_GRAPH_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_free(r.g, NULL), QNN_CONTEXT_ERROR_INVALID_HANDLE);
  qnn_backend_handle_t be2 = NULL;
  CHECK_EQ(r.t->backend_create(bogus, NULL, &be2), QNN_BACKEND_ERROR_INVALID_HANDLE);
  qnn_device_handle_t dev2 = NULL;
  CHECK_EQ(r.t->device_create(bogus, NULL, &dev2), QNN_DEVICE_ERROR_INVALID_HANDLE);
  qnn_context_handle_t c2 = NULL;
  char junk[16] = {0};
  CHECK_EQ(r.t->context_create_from_binary(bogus, NULL, NULL, junk, 16, &c2, NULL),
           QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_create_from_binary(r.be, bogus, NULL, junk, 16, &c2, NULL),
           QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, NULL, 16, &c2, NULL),
           QNN_CONTEXT_ERROR_INVALID_ARGUMENT);
  /* graph names */
  log_clear();
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "fourth", &g), QNN_GRAPH_ERROR_INVALID_NAME);
  CHECK_STR_CONTAINS(log_text(), "no graph named 'fourth'");
  CHECK_STR_CONTAINS(log_text(), "'first', 'second', 'third'");
  CHECK_EQ(r.t->graph_retrieve(r.ctx, NULL, &g), QNN_GRAPH_ERROR_INVALID_NAME);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "third", NULL), QNN_GRAPH_ERROR_INVALID_NAME);
  qnn_graph_handle_t g1 = NULL, g3 = NULL;
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "first", &g1), QNN_SUCCESS);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "third", &g3), QNN_SUCCESS);
  CHECK(g1 && g3 && g1 != g3 && g1 != r.g);
  /* after contextFree every handle of it is stale */
  qnn_context_handle_t old = r.ctx;
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  CHECK_EQ(r.t->context_free(old, NULL), QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->graph_execute(g1, NULL, 0, NULL, 0, NULL, NULL), QNN_GRAPH_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->graph_retrieve(old, "first", &g), QNN_GRAPH_ERROR_INVALID_HANDLE);
  qnn_backend_handle_t old_be = r.be;
  CHECK_EQ(r.t->device_free(r.dev), QNN_SUCCESS);
  r.dev = NULL;
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = NULL;
  CHECK_EQ(r.t->backend_free(old_be), QNN_BACKEND_ERROR_INVALID_HANDLE);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  rig_close(&r);
}

TEST(refb_context_binary_errors) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  qnn_context_handle_t ctx = NULL;
  static const char garbage[] = "this is not a context binary at all, just some text.....";
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, garbage, sizeof(garbage), &ctx,
                                           NULL),
           QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  CHECK_STR_CONTAINS(log_text(), "magic");
  CHECK_EQ(r.t->context_validate_binary(r.be, r.dev, NULL, garbage, sizeof(garbage)),
           QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  /* truncated */
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len / 2, &ctx, NULL),
           QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  CHECK_STR_CONTAINS(log_text(), "cannot deserialize");
  CHECK_EQ(r.t->context_validate_binary(r.be, r.dev, NULL, bin, len), QNN_SUCCESS);
  free(bin);
  /* a binary for another backend id */
  bin = fx_build_model("meta backend_id=3\ngraph g\n  input a f32 [2]\n  output b f32 [2]\n"
              "  op Relu a -> b\n", &len);
  CHECK(bin);
  log_clear();
  qnn_error_t rc = r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &ctx, NULL);
  qnn_error_t rc2 = r.t->context_validate_binary(r.be, NULL, NULL, bin, len);
  free(bin);
  CHECK_EQ(rc, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_EQ(rc2, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_STR_CONTAINS(log_text(), "backend id 3");
  CHECK_EQ(stats_of(&r.c).live_contexts, 0);
  rig_close(&r);
}

TEST(refb_backend_id_from_provider) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  setenv("HTPU_REF_PROVIDERS", "CPU_REF:3:2.32.0:1.0.0", 1);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  qnn_backend_handle_t be = NULL;
  CHECK_EQ(p->table.backend_create(NULL, NULL, &be), QNN_SUCCESS);
  size_t len = 0;
  void *bin = fx_build_model("meta backend_id=3 backend_api=1.0.0\ngraph g\n  input a f32 [2]\n  output b f32 [2]\n"
                    "  op Relu a -> b\n", &len);
  size_t len6 = 0;
  void *bin6 = fx_build_model(RB_ADD, &len6);
  CHECK(bin && bin6);
  qnn_context_handle_t ctx = NULL;
  qnn_error_t ok = p->table.context_validate_binary(be, NULL, NULL, bin, len);
  qnn_error_t bad = p->table.context_create_from_binary(be, NULL, NULL, bin6, len6, &ctx, NULL);
  free(bin);
  free(bin6);
  CHECK_EQ(ok, QNN_SUCCESS);
  CHECK_EQ(bad, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_EQ(p->table.backend_free(be), QNN_SUCCESS);
  ctl_close(&c);
}

/* ---- rules -------------------------------------------------------------------------------- */

TEST(refb_rule_free_order) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.t->log_free(r.log), QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_EQ(stats_of(&r.c).violations, 1);
  CHECK_STR_CONTAINS(r.c.last_violation(), "logFree");
  CHECK_STR_CONTAINS(log_text(), "API rule violation");
  CHECK_EQ(r.t->device_free(r.dev), QNN_DEVICE_ERROR_ASSOCIATED_TO_CONTEXT);
  CHECK_EQ(stats_of(&r.c).violations, 2);
  CHECK_STR_CONTAINS(r.c.last_violation(), "deviceFree");
  /* backendFree with a context and a device alive: both leaked, freed, counted */
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = r.dev = r.ctx = NULL;
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.violations, 4);
  CHECK_EQ(s.leaked_handles, 2);
  CHECK_STR_CONTAINS(r.c.last_violation(), "leaked");
  CHECK_EQ(r.t->graph_execute(r.g, NULL, 0, NULL, 0, NULL, NULL), QNN_GRAPH_ERROR_INVALID_HANDLE);
  /* the log is free now */
  CHECK_EQ(r.t->log_free(r.log), QNN_SUCCESS);
  r.log = NULL;
  r.c.reset_stats();
  CHECK_EQ(stats_of(&r.c).violations, 0);
  CHECK(strcmp(r.c.last_violation(), "") == 0);
  rig_close(&r);
}

TEST(refb_rule_device_before_backend) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  htpu_ref_stats s = stats_of(&c);
  if (s.live_backends) { /* another holder of the library left one alive: nothing to test */
    ctl_close(&c);
    return;
  }
  qnn_device_handle_t d = NULL;
  CHECK_EQ(p->table.device_create(NULL, NULL, &d), QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE);
  CHECK_EQ(stats_of(&c).violations, 1);
  CHECK_STR_CONTAINS(c.last_violation(), "before backendCreate");
  ctl_close(&c);
}

typedef struct exec_job {
  rig *r;
  io *x;
  qnn_error_t rc;
} exec_job;

static void *exec_thread(void *arg) {
  exec_job *j = arg;
  j->rc = exec(j->r, j->x);
  return NULL;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Waits until n executes are in flight (at most ~2 s). */
static int wait_in_flight(const ctl *c, uint32_t n) {
  for (int i = 0; i < 400; i++) {
    if (stats_of(c).executes_in_flight >= n) return 1;
    sleep_ms(5);
  }
  return 0;
}

TEST(refb_rule_free_while_executing) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  CHECK_EQ(r.c.set_latency("graphExecute", 300000), 0);
  exec_job j = {&r, &x, 1};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, exec_thread, &j) == 0);
  int in_flight = wait_in_flight(&r.c, 1);
  qnn_error_t ctx_rc = r.t->context_free(r.ctx, NULL);
  qnn_error_t be_rc = r.t->backend_free(r.be);
  pthread_join(th, NULL);
  CHECK(in_flight);
  CHECK_EQ(ctx_rc, QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_EQ(be_rc, QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_EQ(j.rc, QNN_SUCCESS);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.violations, 2);
  CHECK_EQ(s.executes_in_flight, 0);
  CHECK_STR_CONTAINS(r.c.last_violation(), "backendFree");
  io_free(&x);
  /* the context is still valid and frees normally */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  rig_close(&r);
}

/* A process exits (exit(), as the BEAM does at halt) while a graphExecute runs on another
 * thread: the library's exit-time destructor must leave alone what that call is using. */
TEST(refb_unload_while_executing) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  htpu_ref_unload_handles_fn unload = r.c.unload_handles;
  CHECK(unload != NULL);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  float *a = x.buf[0], *b = x.buf[1], *y = x.buf[2];
  for (int i = 0; i < 4; i++) a[i] = 1.0f + (float)i, b[i] = 2.0f + (float)i;
  CHECK_EQ(r.c.set_latency("graphExecute", 300000), 0);
  exec_job j = {&r, &x, 1};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, exec_thread, &j) == 0);
  CHECK(wait_in_flight(&r.c, 1));
  if (unload) unload();
  pthread_join(th, NULL);
  CHECK_EQ(j.rc, QNN_SUCCESS);
  CHECK(y[0] == 3.0f && y[3] == 9.0f);
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  /* with nothing running, the handles are still the caller's, and free normally */
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_rule_concurrent_execute_same_graph) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x1, x2;
  CHECK(io_init(&x1, r.model, 0) == 0);
  CHECK(io_init(&x2, r.model, 0) == 0);
  CHECK_EQ(r.c.set_latency("graphExecute", 150000), 0);
  exec_job j1 = {&r, &x1, 1}, j2 = {&r, &x2, 1};
  pthread_t t1, t2;
  CHECK(pthread_create(&t1, NULL, exec_thread, &j1) == 0);
  wait_in_flight(&r.c, 1);
  CHECK(pthread_create(&t2, NULL, exec_thread, &j2) == 0);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  /* both ran (QNN queues them), and the overlap was recorded */
  CHECK_EQ(j1.rc, QNN_SUCCESS);
  CHECK_EQ(j2.rc, QNN_SUCCESS);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.total_executes, 2);
  CHECK_EQ(s.violations, 1);
  CHECK_STR_CONTAINS(r.c.last_violation(), "same graph");
  io_free(&x1);
  io_free(&x2);
  rig_close(&r);
}

/* ---- fault injection ---------------------------------------------------------------------- */

TEST(refb_faults_env_nth_count_every) {
  static const struct {
    const char *rules;
    qnn_error_t want[4];
  } cases[] = {
      {"graphExecute:2:1007", {0, 1007, 0, 0}},
      {"graphExecute:2:1007:2", {0, 1007, 1007, 0}},
      {"graphExecute:*:1003", {1003, 1003, 1003, 1003}},
      {"graphRetrieve:1:1002,graphExecute:4:1010", {0, 0, 0, 1010}},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    rig r;
    qnn_error_t rc = rig_open_env(&r, RB_ADD, "add", cases[k].rules, NULL);
    if (k == 3) {
      CHECK_EQ(rc, QNN_COMMON_ERROR_MEM_ALLOC);
      CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &r.g), QNN_SUCCESS);
    } else {
      CHECK_EQ(rc, 0);
    }
    io x;
    CHECK(io_init(&x, r.model, 0) == 0);
    ((float *)x.buf[0])[0] = 1.0f;
    for (int call = 0; call < 4; call++) {
      ((float *)x.buf[2])[0] = -1.0f;
      qnn_error_t got = exec(&r, &x);
      CHECK_MSG(got == cases[k].want[call], "rules '%s' call %d: got %llu, want %llu",
                cases[k].rules, call + 1, (unsigned long long)got,
                (unsigned long long)cases[k].want[call]);
      /* a failed call leaves the output alone; a good one after it computes normally */
      CHECK(((float *)x.buf[2])[0] == (got ? -1.0f : 1.0f));
    }
    if (k == 0) CHECK_STR_CONTAINS(log_text(), "injected fault, returning 1007");
    io_free(&x);
    rig_close(&r);
  }
}

TEST(refb_faults_env_per_backend_and_process) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  /* backendCreate and logCreate count process-wide, from when the variable was set */
  setenv("HTPU_REF_FAULTS", "backendCreate:2:4000,logCreate:1:1002,contextCreateFromBinary:1:1008",
         1);
  log_clear();
  qnn_log_handle_t log = NULL;
  CHECK_EQ(p->table.log_create(log_cb, QNN_LOG_LEVEL_ERROR, &log), 1002);
  CHECK(g_log_calls >= 1); /* reported through the callback it was given */
  CHECK_EQ(p->table.log_create(log_cb, QNN_LOG_LEVEL_ERROR, &log), QNN_SUCCESS);
  qnn_backend_handle_t b1 = NULL, b2 = NULL, b3 = NULL;
  CHECK_EQ(p->table.backend_create(log, NULL, &b1), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_create(log, NULL, &b2), QNN_BACKEND_ERROR_CANNOT_INITIALIZE);
  unsetenv("HTPU_REF_FAULTS");
  CHECK_EQ(p->table.backend_create(log, NULL, &b3), QNN_SUCCESS); /* no rules of its own */
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t c1 = NULL, c3 = NULL;
  qnn_error_t r1 = p->table.context_create_from_binary(b1, NULL, NULL, bin, len, &c1, NULL);
  qnn_error_t r1b = p->table.context_create_from_binary(b1, NULL, NULL, bin, len, &c1, NULL);
  qnn_error_t r3 = p->table.context_create_from_binary(b3, NULL, NULL, bin, len, &c3, NULL);
  free(bin);
  CHECK_EQ(r1, QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES);
  CHECK_EQ(r1b, QNN_SUCCESS);
  CHECK_EQ(r3, QNN_SUCCESS);
  CHECK_EQ(stats_of(&c).faults_injected, 3);
  CHECK_EQ(p->table.context_free(c1, NULL), QNN_SUCCESS);
  CHECK_EQ(p->table.context_free(c3, NULL), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(b1), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(b3), QNN_SUCCESS);
  CHECK_EQ(p->table.log_free(log), QNN_SUCCESS);
  /* a syntax error fails backendCreate */
  setenv("HTPU_REF_FAULTS", "graphExecute:first:1007", 1);
  c.disarm(); /* forget the process-wide set so only the per-backend parse sees it */
  CHECK_EQ(p->table.backend_create(NULL, NULL, &b1), QNN_BACKEND_ERROR_CANNOT_INITIALIZE);
  unsetenv("HTPU_REF_FAULTS");
  /* a latency from the nth call: n counts from 1; more fields are an error */
  const char *bad_latency[] = {"graphExecute:5:0", "graphExecute:5:x", "graphExecute:5:1:2"};
  for (int k = 0; k < 3; k++) {
    setenv("HTPU_REF_LATENCY", bad_latency[k], 1);
    c.disarm();
    CHECK_MSG(p->table.backend_create(NULL, NULL, &b1) == QNN_BACKEND_ERROR_CANNOT_INITIALIZE,
              "%s", bad_latency[k]);
  }
  setenv("HTPU_REF_LATENCY", "graphExecute:5:3", 1);
  c.disarm();
  CHECK_EQ(p->table.backend_create(NULL, NULL, &b1), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(b1), QNN_SUCCESS);
  unsetenv("HTPU_REF_LATENCY");
  c.disarm();
  /* getProviders */
  setenv("HTPU_REF_FAULTS", "getProviders:1:1010", 1);
  const qnn_interface_t **list = NULL;
  uint32_t n = 0;
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_RESOURCE_UNAVAILABLE);
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  ctl_close(&c);
}

/* What a loader does when logCreate fails (11002, as the real libQnnHtp does without a DSP):
 * go on with a NULL log handle, which QNN allows for backend, device and platform info. */
TEST(refb_null_log_after_failed_log_create) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  CHECK_EQ(c.arm("logCreate:*:11002"), 0);
  qnn_log_handle_t log = NULL;
  CHECK_EQ(p->table.log_create(log_cb, QNN_LOG_LEVEL_ERROR, &log), 11002);
  CHECK(log == NULL);
  CHECK_EQ(stats_of(&c).live_logs, 0);
  qnn_backend_handle_t be = NULL;
  qnn_device_handle_t dev = NULL;
  CHECK_EQ(p->table.backend_create(NULL, NULL, &be), QNN_SUCCESS);
  CHECK_EQ(p->table.device_create(NULL, NULL, &dev), QNN_SUCCESS);
  const qnn_device_platform_info_t *pi = NULL;
  CHECK_EQ(p->table.device_get_platform_info(NULL, &pi), QNN_SUCCESS);
  CHECK_EQ(p->table.device_free_platform_info(NULL, pi), QNN_SUCCESS);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t ctx = NULL;
  qnn_error_t rc = p->table.context_create_from_binary(be, dev, NULL, bin, len, &ctx, NULL);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  CHECK_EQ(p->table.context_free(ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(p->table.device_free(dev), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(be), QNN_SUCCESS);
  CHECK_EQ(stats_of(&c).violations, 0);
  ctl_close(&c);
}

/* HTPU_REF_BUILD_ID stands in for a real library's build id; each value handed out stays
 * valid after the variable changes, as QNN's pointer does. */
TEST(refb_build_id_override) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  const char *id = NULL, *real = NULL, *other = NULL;
  CHECK_EQ(p->table.backend_get_build_id(&id), QNN_SUCCESS);
  CHECK(strcmp(id, "htpu-reference-0.1.0") == 0);
  setenv("HTPU_REF_BUILD_ID", "v2.25.0.240728104910_97711", 1);
  CHECK_EQ(p->table.backend_get_build_id(&real), QNN_SUCCESS);
  setenv("HTPU_REF_BUILD_ID", "v2.42.0.251225", 1);
  CHECK_EQ(p->table.backend_get_build_id(&other), QNN_SUCCESS);
  unsetenv("HTPU_REF_BUILD_ID");
  CHECK(strcmp(real, "v2.25.0.240728104910_97711") == 0);
  CHECK(strcmp(other, "v2.42.0.251225") == 0);
  CHECK_EQ(p->table.backend_get_build_id(NULL), QNN_BACKEND_ERROR_INVALID_ARGUMENT);
  ctl_close(&c);
}

TEST(refb_faults_control_api) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.arm("graphExecute:first:1007"), -1);
  CHECK_EQ(r.c.arm("noSuchApi:1:1007"), -1);
  CHECK_EQ(r.c.arm("graphExecute:1:0"), -1);
  CHECK_EQ(r.c.set_latency("noSuchApi", 5), -1);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  CHECK_EQ(r.c.arm("graphExecute:2:1007:2,graphRetrieve:1:1002"), 0);
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &g), QNN_COMMON_ERROR_MEM_ALLOC);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &g), QNN_SUCCESS);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  /* re-arming restarts the counters */
  CHECK_EQ(r.c.arm("graphExecute:1:1003"), 0);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM);
  r.c.disarm();
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  /* latency */
  CHECK_EQ(r.c.set_latency("graphExecute", 60000), 0);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  CHECK_MSG(ms >= 55.0, "latency: execute took %.1f ms", ms);
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  /* 1011: the DSP did not recover; the backend stays dead until freed */
  CHECK_EQ(r.c.arm("graphExecute:1:1011"), 0);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL);
  r.c.disarm();
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &g), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.faults_injected, 5);
  CHECK_EQ(s.violations, 0);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_faults_env_latency) {
  rig r;
  CHECK_EQ(rig_open_env(&r, RB_ADD, NULL, NULL, "graphRetrieve:40000"), 0);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &r.g), QNN_SUCCESS);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  CHECK_MSG(ms >= 35.0, "latency: graphRetrieve took %.1f ms", ms);
  rig_close(&r);
}

/* ---- system library ----------------------------------------------------------------------- */

typedef struct sys {
  void *dl;
  qnn_system_interface_get_providers_fn get_providers;
  const qnn_system_interface_t *p;
} sys;

static int sys_open(sys *s, const char *spec) {
  memset(s, 0, sizeof(*s));
  ref_reset_env();
  if (spec) setenv("HTPU_REF_SYSTEM_PROVIDERS", spec, 1);
  s->dl = dlopen(test_build_path("libhtpu_refsystem.so"), RTLD_NOW | RTLD_LOCAL);
  if (!s->dl) {
    printf("    dlopen: %s\n", dlerror());
    return -1;
  }
  s->get_providers = (qnn_system_interface_get_providers_fn)dlsym(
      s->dl, QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL);
  const qnn_system_interface_t **list = NULL;
  uint32_t n = 0;
  if (!s->get_providers || s->get_providers(&list, &n) != QNN_SUCCESS || n == 0) return -1;
  s->p = list[0];
  return 0;
}

static void sys_close(sys *s) {
  ref_reset_env();
  if (s->dl) dlclose(s->dl);
}

TEST(refs_providers) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  size_t off = offsetof(qnn_system_interface_t, table);
  CHECK(strcmp(s.p->provider_name, "HTPU_REFERENCE_SYSTEM") == 0);
  CHECK_EQ(s.p->system_api_version.minor, 7);
  CHECK(slots_all_set(s.p, off, 16));
  CHECK(block_size_ok(s.p, off + 16 * sizeof(qnn_unused_fn)));
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "OLD_SYS:1.1.0,MID:1.6.2", 1);
  const qnn_system_interface_t **list = NULL;
  uint32_t n = 0;
  CHECK_EQ(s.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 2);
  CHECK(strcmp(list[0]->provider_name, "OLD_SYS") == 0);
  CHECK(slots_all_set(list[0], off, 4));
  CHECK(block_size_ok(list[0], off + 4 * sizeof(qnn_unused_fn)));
  CHECK_EQ(list[1]->system_api_version.patch, 2);
  uint32_t mid_slots = qnn_system_table_slots(list[1]->system_api_version);
  CHECK(mid_slots >= 4);
  CHECK(slots_all_set(list[1], off, mid_slots));
  CHECK(block_size_ok(list[1], off + mid_slots * sizeof(qnn_unused_fn)));
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "", 1);
  CHECK_EQ(s.get_providers(&list, &n), QNN_SUCCESS);
  CHECK_EQ(n, 0);
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "broken", 1);
  CHECK_EQ(s.get_providers(&list, &n), QNN_COMMON_ERROR_GENERAL);
  unsetenv("HTPU_REF_SYSTEM_PROVIDERS");
  setenv("HTPU_REF_SYSTEM_GETPROVIDERS_ERROR", "1009", 1);
  CHECK_EQ(s.get_providers(&list, &n), QNN_COMMON_ERROR_LOADING_BINARIES);
  sys_close(&s);
}

static char *multi_text(unsigned bi, unsigned gi, unsigned tv) {
  static char text[4096];
  snprintf(text, sizeof(text),
           "meta binary_info=%u graph_info=%u tensor=%u backend_id=6 build_id=\"v2.42.0.ref\" "
           "core_api=2.32.0 backend_api=5.42.0 context_blob=3.3.4 soc_version=\"v68\" "
           "soc_model=35 dsp_arch=68 vtcm_bytes=2097152\n%s",
           bi, gi, tv, FX_MULTI_GRAPH);
  return text;
}

/* Fields common to V1/V2 tensors, read through the member the version selects. */
static const qnn_tensor_v1_t *tensor_fields(const qnn_tensor_t *t) {
  return t->version == QNN_TENSOR_VERSION_2 ? (const qnn_tensor_v1_t *)(const void *)&t->u.v2
                                            : &t->u.v1;
}

static void check_info(const qnn_system_context_binary_info_t *info, unsigned bi, unsigned gi,
                       unsigned tv, uint32_t stride, uint64_t blob_len) {
  CHECK_EQ(info->version, bi);
  uint32_t num_graphs;
  const unsigned char *graphs;
  if (bi == 3) {
    const qnn_binary_info_v3_t *v = &info->u.v3;
    CHECK_EQ(v->backend_id, 6);
    CHECK(strcmp(v->build_id, "v2.42.0.ref") == 0);
    CHECK(strcmp(v->soc_version, "v68") == 0);
    CHECK_EQ(v->core_api_version.minor, 32);
    CHECK_EQ(v->backend_api_version.minor, 42);
    CHECK_EQ(v->context_blob_version.patch, 4);
    CHECK_EQ(v->context_blob_size, blob_len);
    CHECK_EQ(v->soc_model, 35);
    CHECK(v->platform_info != NULL);
    num_graphs = v->num_graphs;
    graphs = (const unsigned char *)v->graphs;
  } else {
    const qnn_binary_info_v1_t *v = &info->u.v1;
    CHECK_EQ(v->backend_id, 6);
    CHECK(strcmp(v->build_id, "v2.42.0.ref") == 0);
    CHECK(strcmp(v->soc_version, "v68") == 0);
    CHECK_EQ(v->context_blob_version.major, 3);
    CHECK_EQ(v->context_blob_size, blob_len);
    if (bi == 2) {
      /* V2 carries the device the binary was built for: HTP on-chip, arch 68, SoC 35. */
      const qnn_device_platform_info_t *p = info->u.v2.platform_info;
      CHECK(p && p->version == 1 && p->u.v1.num_hw_devices == 1);
      const qnn_htp_device_info_extension_t *ext = p->u.v1.hw_devices[0].u.v1.device_info_extension;
      CHECK(ext && ext->u.on_chip_device.arch == 68 && ext->u.on_chip_device.soc_model == 35);
    }
    num_graphs = v->num_graphs;
    graphs = (const unsigned char *)v->graphs;
  }
  CHECK_EQ(num_graphs, 3);
  static const char *const names[3] = {"first", "second", "third"};
  unsigned want_gi = (gi == 3 && stride < QNN_GRAPH_INFO_STRIDE_V3) ? 2 : gi;
  for (uint32_t i = 0; i < 3; i++) {
    const qnn_system_context_graph_info_t *g =
        (const qnn_system_context_graph_info_t *)(const void *)(graphs + (size_t)i * stride);
    CHECK_EQ(g->version, want_gi);
    const qnn_graph_info_v1_t *v = &g->u.v1;
    CHECK(strcmp(v->graph_name, names[i]) == 0);
    CHECK_EQ(v->num_graph_inputs, 1);
    CHECK_EQ(v->num_graph_outputs, 1);
    const qnn_tensor_t *in = v->graph_inputs, *out = v->graph_outputs;
    CHECK_EQ(in->version, tv);
    CHECK_EQ(out->version, tv);
    const qnn_tensor_v1_t *ti = tensor_fields(in), *to = tensor_fields(out);
    CHECK_EQ(ti->type, QNN_TENSOR_TYPE_APP_WRITE);
    CHECK_EQ(to->type, QNN_TENSOR_TYPE_APP_READ);
    CHECK_EQ(ti->mem_type, QNN_TENSORMEMTYPE_RAW);
    CHECK(ti->id != 0 && ti->id != to->id);
    if (i == 0) {
      CHECK(strcmp(ti->name, "x") == 0 && strcmp(to->name, "y") == 0);
      CHECK_EQ(ti->data_type, QNN_DATATYPE_UFIXED_POINT_8);
      CHECK_EQ(ti->rank, 2);
      CHECK(ti->dimensions[0] == 1 && ti->dimensions[1] == 3);
      CHECK_EQ(ti->quantize_params.encoding_definition, QNN_DEFINITION_DEFINED);
      CHECK_EQ(ti->quantize_params.quantization_encoding, QNN_QUANTIZATION_ENCODING_SCALE_OFFSET);
      CHECK(ti->quantize_params.u.scale_offset_encoding.scale == 0.5f);
      CHECK_EQ(ti->quantize_params.u.scale_offset_encoding.offset, -3);
    } else if (i == 1) {
      CHECK(strcmp(ti->name, "p") == 0);
      CHECK_EQ(ti->data_type, QNN_DATATYPE_FLOAT_16);
      CHECK_EQ(ti->quantize_params.encoding_definition, QNN_DEFINITION_UNDEFINED);
    } else {
      CHECK_EQ(ti->data_type, QNN_DATATYPE_SFIXED_POINT_8);
      CHECK_EQ(ti->quantize_params.u.scale_offset_encoding.offset, 5);
      CHECK(ti->dimensions[0] == 4);
    }
    if (want_gi >= 2) CHECK_EQ(g->u.v2.num_updateable_tensors, 0);
    if (want_gi == 3) {
      CHECK_EQ(g->u.v3.graph_blob_info_size, 40);
      const unsigned char *blob = g->u.v3.graph_blob_info;
      uint32_t blob_version, vtcm;
      memcpy(&blob_version, blob, 4);
      memcpy(&vtcm, blob + 16, 4);
      CHECK_EQ(blob_version, 1);
      CHECK_EQ(vtcm, 2097152); /* bytes, as real binaries carry it */
    }
  }
}

TEST(refs_binary_info_all_versions_and_strides) {
  static const char *const specs[2] = {"S17:1.7.0", "S11:1.1.0"};
  for (int sv = 0; sv < 2; sv++) {
    sys s;
    CHECK(sys_open(&s, specs[sv]) == 0);
    uint32_t stride = qnn_graph_info_stride(s.p->system_api_version);
    CHECK_EQ(stride, sv == 0 ? 88 : 64);
    for (unsigned bi = 1; bi <= 3; bi++)
      for (unsigned gi = 1; gi <= 3; gi++)
        for (unsigned tv = 1; tv <= 2; tv++) {
          size_t len = 0;
          void *bin = fx_build_model(multi_text(bi, gi, tv), &len);
          CHECK(bin);
          qnn_system_context_handle_t h = NULL;
          CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
          const void *info = NULL;
          qnn_context_binary_size_t info_size = 0;
          qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &info,
                                                                      &info_size);
          const void *meta = NULL;
          qnn_error_t rc2 = s.p->table.system_context_get_metadata(h, bin, len, &meta);
          free(bin); /* the answers must not point into the caller's buffer */
          CHECK_EQ(rc, QNN_SUCCESS);
          CHECK_EQ(rc2, QNN_SUCCESS);
          CHECK(info_size >= sizeof(qnn_system_context_binary_info_t));
          check_info(info, bi, gi, tv, stride, len);
          if (test_failed()) {
            printf("    binary_info=%u graph_info=%u tensor=%u stride=%u\n", bi, gi, tv, stride);
            s.p->table.system_context_free(h);
            sys_close(&s);
            return;
          }
          check_info(meta, bi, gi, tv, stride, len);
          CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
        }
    sys_close(&s);
  }
}

/* HTPU_REF_SYSTEM_LAYOUT=v1only: 48-byte graph infos and 120-byte tensors (version + V1 only,
 * QAIRT 2.13's layout) whatever version the provider reports and the binary asks for. */
TEST(refs_binary_info_v1only_layout) {
  sys s;
  CHECK(sys_open(&s, "S11:1.1.0") == 0);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v1only", 1);
  size_t len = 0;
  void *bin = fx_build_model(multi_text(3, 3, 2), &len);
  CHECK(bin);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *vinfo = NULL;
  qnn_context_binary_size_t sz = 0;
  qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &vinfo, &sz);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v2only", 1);
  const void *bad = NULL;
  qnn_error_t rc_bad = s.p->table.system_context_get_binary_info(h, bin, len, &bad, &sz);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  CHECK_EQ(rc_bad, QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT);
  const qnn_system_context_binary_info_t *info = vinfo;
  CHECK_EQ(info->u.v3.num_graphs, 3);
  const unsigned char *graphs = (const void *)info->u.v3.graphs;
  static const char *const names[3][3] = {{"first", "x", "y"}, {"second", "p", "q"},
                                          {"third", "m", "n"}};
  for (uint32_t i = 0; i < 3; i++) {
    const qnn_system_context_graph_info_t *g =
        (const void *)(graphs + (size_t)i * QNN_GRAPH_INFO_STRIDE_V1_ONLY);
    CHECK_EQ(g->version, QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_1);
    CHECK(strcmp(g->u.v1.graph_name, names[i][0]) == 0);
    const qnn_tensor_t *in = g->u.v1.graph_inputs, *out = g->u.v1.graph_outputs;
    CHECK_EQ(in->version, QNN_TENSOR_VERSION_1);
    CHECK(strcmp(in->u.v1.name, names[i][1]) == 0);
    CHECK(strcmp(out->u.v1.name, names[i][2]) == 0);
  }
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}

/* Two inputs: the second starts 120 bytes after the first, and the array ends there. */
TEST(refs_v1only_tensor_stride) {
  sys s;
  CHECK(sys_open(&s, "S11:1.1.0") == 0);
  setenv("HTPU_REF_SYSTEM_LAYOUT", "v1only", 1);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *vinfo = NULL;
  qnn_context_binary_size_t sz = 0;
  qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &vinfo, &sz);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  const qnn_system_context_binary_info_t *info = vinfo;
  const qnn_system_context_graph_info_t *g = info->u.v3.graphs;
  CHECK_EQ(g->u.v1.num_graph_inputs, 2);
  const unsigned char *in = (const void *)g->u.v1.graph_inputs;
  const qnn_tensor_t *b = (const void *)(in + QNN_TENSOR_STRIDE_V1_ONLY);
  CHECK_EQ(b->version, QNN_TENSOR_VERSION_1);
  CHECK(strcmp(b->u.v1.name, "b") == 0);
  CHECK_EQ(b->u.v1.type, QNN_TENSOR_TYPE_APP_WRITE);
  CHECK_EQ(b->u.v1.dimensions[1], 4);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}

TEST(refs_axis_scale_offset_tensor) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  size_t len = 0;
  void *bin = fx_build_model("graph q\n"
                    "  input x u8 [2,3] axis=0 scales=[0.5,0.25] zero_points=[1,2]\n"
                    "  output y u8 [2,3] scale=1.0 zero_point=0\n"
                    "  op Relu x -> y\n", &len);
  CHECK(bin);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *vinfo = NULL;
  qnn_error_t rc = s.p->table.system_context_get_metadata(h, bin, len, &vinfo);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  const qnn_system_context_binary_info_t *info = vinfo;
  const qnn_system_context_graph_info_t *g =
      info->version == 3 ? info->u.v3.graphs : info->u.v1.graphs;
  const qnn_tensor_v1_t *t = tensor_fields(g->u.v1.graph_inputs);
  CHECK_EQ(t->quantize_params.quantization_encoding,
           QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET);
  const qnn_axis_scale_offset_t *ax = &t->quantize_params.u.axis_scale_offset_encoding;
  CHECK_EQ(ax->axis, 0);
  CHECK_EQ(ax->num_scale_offsets, 2);
  CHECK(ax->scale_offset[0].scale == 0.5f && ax->scale_offset[1].scale == 0.25f);
  CHECK_EQ(ax->scale_offset[0].offset, -1);
  CHECK_EQ(ax->scale_offset[1].offset, -2);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}

/* The graph blob info carries the model's VTCM value as written: bytes as in real binaries
 * (8388608 for 8 MB), or the MB form (8) when the model asks for it. */
TEST(refs_graph_blob_vtcm_as_written) {
  static const struct {
    const char *meta;
    uint32_t want;
  } cases[] = {{"meta vtcm_bytes=8388608\n", 8388608}, {"", 2097152},
               {"meta vtcm_bytes=8388608 vtcm_blob_unit=mb\n", 8}};
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[256];
    snprintf(text, sizeof text, "%sgraph g\n  input x f32 [1]\n  output y f32 [1]\n"
             "  op Relu x -> y\n", cases[i].meta);
    size_t len = 0;
    void *bin = fx_build_model(text, &len);
    CHECK(bin);
    qnn_system_context_handle_t h = NULL;
    CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
    const void *vinfo = NULL;
    qnn_context_binary_size_t size = 0;
    qnn_error_t rc = s.p->table.system_context_get_binary_info(h, bin, len, &vinfo, &size);
    free(bin);
    uint32_t version = 0, vtcm = 0;
    if (rc == QNN_SUCCESS) {
      const qnn_system_context_binary_info_t *info = vinfo;
      const unsigned char *blob = info->u.v3.graphs[0].u.v3.graph_blob_info;
      memcpy(&version, blob, 4);
      memcpy(&vtcm, blob + 16, 4); /* vtcmSize of blob info v1 */
    }
    s.p->table.system_context_free(h);
    CHECK_EQ(rc, QNN_SUCCESS);
    CHECK_EQ(version, 1);
    CHECK_MSG(vtcm == cases[i].want, "case %zu: blob says %u, want %u", i, vtcm, cases[i].want);
  }
  sys_close(&s);
}

TEST(refs_malformed_and_errors) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  const void *info = NULL;
  qnn_context_binary_size_t sz = 0;
  char garbage[64] = "definitely not a reference binary";
  CHECK_EQ(s.p->table.system_context_get_binary_info(h, garbage, sizeof(garbage), &info, &sz),
           QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_error_t trunc = s.p->table.system_context_get_binary_info(h, bin, len - 8, &info, &sz);
  qnn_error_t null_out = s.p->table.system_context_get_binary_info(h, bin, len, NULL, &sz);
  qnn_error_t bad_h = s.p->table.system_context_get_binary_info(
      (qnn_system_context_handle_t)(uintptr_t)0x77, bin, len, &info, &sz);
  free(bin);
  CHECK_EQ(trunc, QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY);
  CHECK_EQ(null_out, QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(bad_h, QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(s.p->table.system_context_create(NULL), QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE);
  sys_close(&s);
}

TEST(refs_faults_env) {
  sys s;
  CHECK(sys_open(&s, NULL) == 0);
  setenv("HTPU_REF_FAULTS", "systemContextCreate:1:1002,systemContextGetBinaryInfo:*:30002", 1);
  qnn_system_context_handle_t h = NULL;
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_COMMON_ERROR_MEM_ALLOC);
  CHECK_EQ(s.p->table.system_context_create(&h), QNN_SUCCESS);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  const void *info = NULL;
  qnn_context_binary_size_t sz = 0;
  qnn_error_t r1 = s.p->table.system_context_get_binary_info(h, bin, len, &info, &sz);
  qnn_error_t r2 = s.p->table.system_context_get_binary_info(h, bin, len, &info, &sz);
  qnn_error_t r3 = s.p->table.system_context_get_metadata(h, bin, len, &info);
  free(bin);
  CHECK_EQ(r1, QNN_SYSTEM_CONTEXT_ERROR_OPERATION_FAILED);
  CHECK_EQ(r2, QNN_SYSTEM_CONTEXT_ERROR_OPERATION_FAILED);
  CHECK_EQ(r3, QNN_SUCCESS);
  CHECK_EQ(s.p->table.system_context_free(h), QNN_SUCCESS);
  sys_close(&s);
}
