/* test_refbackend_loading.c - the reference backend's loading configs, driven directly:
 * PERSISTENT_BINARY (pointers into the caller's binary, checked at every use), ENABLE_GRAPHS
 * (only those deserialized), MEMORY_LIMIT_HINT, the HTP spill-fill group (accounted once;
 * its rules), and contextCreateFromBinaryListAsync (a thread and notifications per context);
 * each refused with 1000 while its capability (208, 206, 207, 212) is switched off. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixture.h"
#include "load_rig.h"
#include "qnn/qnn_htp_abi.h"
#include "qnn/qnn_signal_abi.h"
#include "refb_rig.h"
#include "test.h"

static qnn_context_config_t cfg_of(uint32_t option) {
  qnn_context_config_t c;
  memset(&c, 0, sizeof c);
  c.option = option;
  return c;
}

/* The backend stack without a context, and a binary of `text` in an 8-byte aligned block. */
static void *open_bare(rig *r, const char *text, size_t *len) {
  if (rig_open(r, NULL, NULL) != 0) return NULL;
  return fx_build_model(text, len);
}

static htpu_ref_context_state ctx_state(rig *r, qnn_context_handle_t h) {
  htpu_ref_context_state s;
  memset(&s, 0, sizeof s);
  r->c.context_state((uint64_t)(uintptr_t)h, &s);
  return s;
}

TEST(refb_load_persistent_binary_points_into_the_callers_buffer) {
  rig r;
  size_t len = 0;
  void *bin = open_bare(&r, LR_WEIGHTED, &len);
  CHECK(bin);
  qnn_context_config_t p = cfg_of(QNN_CONTEXT_CONFIG_PERSISTENT_BINARY);
  p.u.is_persistent_binary = 1;
  const qnn_context_config_t *cfg[] = {&p, NULL};
  qnn_context_handle_t a = NULL, b = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &a, NULL), 0);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &b, NULL), 0);
  CHECK_EQ(ctx_state(&r, a).persistent, 1);
  CHECK_EQ(ctx_state(&r, a).binary_copy_bytes, 0);
  CHECK_EQ(ctx_state(&r, b).persistent, 0);
  CHECK_EQ(ctx_state(&r, b).binary_copy_bytes, len);
  CHECK_EQ(stats_of(&r.c).binary_copy_bytes, len);
  /* an unaligned buffer is copied: the promise holds, the backend does not need it */
  unsigned char *odd = malloc(len + 1);
  CHECK(odd);
  memcpy(odd + 1, bin, len);
  qnn_context_handle_t c = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, odd + 1, len, &c, NULL), 0);
  CHECK_EQ(ctx_state(&r, c).persistent, 0);
  free(odd);
  CHECK_EQ(r.t->context_free(c, NULL), 0);
  CHECK_EQ(r.t->context_free(b, NULL), 0);
  CHECK_EQ(r.t->context_free(a, NULL), 0);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  /* capability 208 off: the config is refused */
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY, 1000), 0);
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &a, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 208 off");
  free(bin);
  rig_close(&r);
}

/* A persistent binary that goes away (unmapped) before contextFree: the next use is refused
 * with a violation instead of a fault; contextFree still frees the context. */
TEST(refb_load_persistent_binary_gone_is_a_violation_not_a_fault) {
  rig r;
  size_t len = 0;
  void *bin = open_bare(&r, LR_WEIGHTED, &len);
  CHECK(bin);
  void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(map != MAP_FAILED);
  memcpy(map, bin, len);
  free(bin);
  qnn_context_config_t p = cfg_of(QNN_CONTEXT_CONFIG_PERSISTENT_BINARY);
  p.u.is_persistent_binary = 1;
  const qnn_context_config_t *cfg[] = {&p, NULL};
  qnn_context_handle_t ctx = NULL;
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, map, len, &ctx, NULL), 0);
  CHECK_EQ(r.t->graph_retrieve(ctx, "weighted", &g), 0);
  CHECK_EQ(munmap(map, len), 0);
  CHECK_EQ(r.t->graph_retrieve(ctx, "weighted", &g), QNN_COMMON_ERROR_GENERAL);
  CHECK_EQ(stats_of(&r.c).violations, 1);
  CHECK_STR_CONTAINS(r.c.last_violation(), "no longer mapped");
  CHECK_EQ(r.t->context_free(ctx, NULL), 0);
  CHECK_EQ(stats_of(&r.c).violations, 2);
  CHECK_EQ(stats_of(&r.c).live_contexts, 0);
  rig_close(&r);
}

TEST(refb_load_enable_graphs) {
  rig r;
  size_t len = 0;
  void *bin = open_bare(&r, LR_FOUR, &len);
  CHECK(bin);
  static const char *const two[] = {"g3", "g1", NULL};
  qnn_context_config_t e = cfg_of(QNN_CONTEXT_CONFIG_ENABLE_GRAPHS);
  e.u.enable_graphs = two;
  const qnn_context_config_t *cfg[] = {&e, NULL};
  uint64_t d0 = stats_of(&r.c).graphs_deserialized;
  qnn_context_handle_t ctx = NULL;
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL), 0);
  CHECK_EQ(stats_of(&r.c).graphs_deserialized, d0 + 2);
  CHECK_EQ(ctx_state(&r, ctx).graphs_deserialized, 2);
  CHECK_EQ(r.t->graph_retrieve(ctx, "g1", &g), 0);
  CHECK_EQ(r.t->graph_retrieve(ctx, "g3", &g), 0);
  log_clear();
  CHECK_EQ(r.t->graph_retrieve(ctx, "g0", &g), QNN_GRAPH_ERROR_INVALID_NAME);
  CHECK_STR_CONTAINS(log_text(), "was not deserialized: the context's ENABLE_GRAPHS");
  CHECK_EQ(r.t->context_free(ctx, NULL), 0);
  /* a name the binary does not hold, an empty list: 5010, no context */
  static const char *const bad[] = {"g1", "nine", NULL}, *const none[] = {NULL};
  e.u.enable_graphs = bad;
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL),
           QNN_CONTEXT_ERROR_INVALID_CONFIG);
  CHECK_STR_CONTAINS(log_text(), "names graph 'nine', which the binary does not hold");
  e.u.enable_graphs = none;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL),
           QNN_CONTEXT_ERROR_INVALID_CONFIG);
  CHECK_EQ(stats_of(&r.c).live_contexts, 0);
  /* capability 206 off: 1000 */
  e.u.enable_graphs = two;
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_ENABLE_GRAPHS, 1000), 0);
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 206 off");
  free(bin);
  rig_close(&r);
}

TEST(refb_load_memory_limit_hint) {
  rig r;
  size_t len = 0;
  void *bin = open_bare(&r, LR_WEIGHTED, &len);
  CHECK(bin);
  qnn_context_config_t m = cfg_of(QNN_CONTEXT_CONFIG_MEMORY_LIMIT_HINT);
  m.u.memory_limit_hint = 48;
  const qnn_context_config_t *cfg[] = {&m, NULL};
  qnn_context_handle_t ctx = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL), 0);
  CHECK_EQ(ctx_state(&r, ctx).memory_limit_mb, 48);
  CHECK_EQ(r.t->context_free(ctx, NULL), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_MEMORY_LIMIT_HINT, 1000), 0);
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 207 off");
  free(bin);
  rig_close(&r);
}

/* The group config of context `first` (NULL: a new group of `bytes`). */
static void group_cfg(qnn_htp_context_custom_config_t *h, qnn_context_config_t *c,
                      qnn_context_handle_t first, uint64_t bytes) {
  memset(h, 0, sizeof *h);
  h->option = QNN_HTP_CONTEXT_CONFIG_OPTION_REGISTER_MULTI_CONTEXTS;
  h->u.group_registration.first_group_handle = first;
  h->u.group_registration.max_spill_fill_buffer = bytes;
  *c = cfg_of(QNN_CONTEXT_CONFIG_OPTION_CUSTOM);
  c->u.custom_config = h;
}

/* Four contexts of 8 KiB spill-fill each: 32 KiB on their own, 8 KiB in one group; the
 * group's rules; the group goes with its last member. */
TEST(refb_load_spill_fill_group_accounting_and_rules) {
  rig r;
  size_t len = 0;
  char *text = lr_spill_model("k", 1024);
  void *bin = text ? open_bare(&r, text, &len) : NULL;
  free(text);
  CHECK(bin);
  qnn_htp_context_custom_config_t h;
  qnn_context_config_t c;
  const qnn_context_config_t *cfg[] = {&c, NULL};
  qnn_context_handle_t ctx[4] = {NULL};
  group_cfg(&h, &c, NULL, 8192);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx[0], NULL), 0);
  group_cfg(&h, &c, ctx[0], 0); /* a member's size is disregarded */
  for (int i = 1; i < 4; i++)
    CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx[i], NULL), 0);
  CHECK_EQ(stats_of(&r.c).spill_fill_bytes, 8192);
  htpu_ref_context_state s = ctx_state(&r, ctx[3]);
  CHECK_EQ(s.spill_fill_bytes, 8192);
  CHECK_EQ(s.group_id, (uint64_t)(uintptr_t)ctx[0]);
  CHECK_EQ(s.group_members, 4);
  /* refusals: no size for a new group; too small a group; an unknown first handle; one in no
   * group (a context created without the config) */
  qnn_context_handle_t x = NULL, lone = NULL;
  group_cfg(&h, &c, NULL, 0);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &x, NULL),
           QNN_CONTEXT_ERROR_INVALID_CONFIG);
  group_cfg(&h, &c, NULL, 4096);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &x, NULL),
           QNN_CONTEXT_ERROR_INVALID_CONFIG);
  group_cfg(&h, &c, (qnn_context_handle_t)(uintptr_t)0x7777777, 8192);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &x, NULL),
           QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &lone, NULL), 0);
  CHECK_EQ(stats_of(&r.c).spill_fill_bytes, 2 * 8192);
  group_cfg(&h, &c, lone, 8192);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &x, NULL),
           QNN_CONTEXT_ERROR_INVALID_CONFIG);
  CHECK_EQ(r.t->context_free(lone, NULL), 0);
  /* the first context goes first, members alive: the headers leave that unknown (counted, no
   * violation); the group stays with the others, and its handle joins no one any more */
  uint64_t unknown0 = stats_of(&r.c).unknown_behaviours;
  for (int i = 0; i < 4; i++) {
    CHECK_EQ(r.t->context_free(ctx[i], NULL), 0);
    CHECK_EQ(stats_of(&r.c).spill_fill_bytes, i < 3 ? 8192 : 0);
    CHECK_EQ(stats_of(&r.c).unknown_behaviours, unknown0 + 1);
    if (i == 0) {
      group_cfg(&h, &c, ctx[0], 0);
      CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &x, NULL),
               QNN_CONTEXT_ERROR_INVALID_HANDLE);
    }
  }
  /* after a DSP restart the first handle is lost: 1007; freeing it before its (stale) members
   * is not counted, its group went with the DSP process */
  group_cfg(&h, &c, NULL, 8192);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx[0], NULL), 0);
  group_cfg(&h, &c, ctx[0], 0);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx[1], NULL), 0);
  CHECK_EQ(r.c.trigger_ssr(), 2);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &x, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(r.t->context_free(ctx[0], NULL), 0);
  CHECK_EQ(r.t->context_free(ctx[1], NULL), 0);
  CHECK_EQ(stats_of(&r.c).unknown_behaviours, unknown0 + 1);
  /* without context configs (205 off) the custom config is refused with the rest */
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION, 1000), 0);
  group_cfg(&h, &c, NULL, 8192);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &x, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  free(bin);
  rig_close(&r);
}

typedef struct bg_exec {
  const qnn_interface_table_t *t;
  qnn_graph_handle_t g;
  io *x;
  qnn_error_t rc;
} bg_exec;

static void *bg_exec_main(void *p) {
  bg_exec *b = p;
  b->rc = b->t->graph_execute(b->g, b->x->in, b->x->nin, b->x->out, b->x->nout, NULL, NULL);
  return NULL;
}

/* Runs graph `name` of ctx_a (held 200 ms in the backend) and, while it runs, graph `gb` of
 * ctx_b: returns the violations this caused. */
static uint64_t overlap(rig *r, ref_model *m, qnn_context_handle_t ca, const char *a,
                        qnn_context_handle_t cb, const char *b) {
  qnn_graph_handle_t ga = NULL, gb = NULL;
  io xa, xb;
  if (r->t->graph_retrieve(ca, a, &ga) || r->t->graph_retrieve(cb, b, &gb) ||
      io_init(&xa, m, (uint32_t)ref_model_find_graph(m, a)) ||
      io_init(&xb, m, (uint32_t)ref_model_find_graph(m, b)))
    return 999;
  uint64_t v0 = stats_of(&r->c).violations;
  r->c.set_graph_latency(a, 200000);
  bg_exec bg = {r->t, ga, &xa, 1};
  pthread_t t;
  pthread_create(&t, NULL, bg_exec_main, &bg);
  for (int i = 0; i < 30000 && stats_of(&r->c).executes_in_flight != 1; i++) usleep(1000);
  qnn_error_t rb = r->t->graph_execute(gb, xb.in, xb.nin, xb.out, xb.nout, NULL, NULL);
  pthread_join(t, NULL);
  r->c.set_graph_latency(a, 0);
  io_free(&xa);
  io_free(&xb);
  return bg.rc || rb ? 999 : stats_of(&r->c).violations - v0;
}

/* Contexts of one group must not execute at once (a violation); a context's own graphs may. */
TEST(refb_load_spill_fill_group_runs_one_context_at_a_time) {
  rig r;
  size_t len = 0;
  const char *two =
      "graph p\n  input x f32 [1,64]\n  native t f32 [1,64]\n  output y f32 [1,64]\n"
      "  op Relu x -> t\n  op Relu t -> y\n"
      "graph q\n  input x f32 [1,64]\n  native t f32 [1,64]\n  output y f32 [1,64]\n"
      "  op Relu x -> t\n  op Relu t -> y\n";
  void *bin = open_bare(&r, two, &len);
  CHECK(bin);
  ref_model *m = NULL;
  char err[128];
  CHECK_EQ(ref_model_parse(bin, len, &m, err, sizeof err), 0);
  qnn_htp_context_custom_config_t h;
  qnn_context_config_t c;
  const qnn_context_config_t *cfg[] = {&c, NULL};
  qnn_context_handle_t a = NULL, b = NULL;
  group_cfg(&h, &c, NULL, 1024);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &a, NULL), 0);
  group_cfg(&h, &c, a, 1024);
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &b, NULL), 0);
  CHECK_EQ(overlap(&r, m, a, "p", a, "q"), 0); /* one context's two graphs */
  CHECK_EQ(overlap(&r, m, a, "p", b, "q"), 1); /* two contexts of the group */
  CHECK_STR_CONTAINS(r.c.last_violation(), "contexts sharing a spill-fill buffer must run one "
                                           "at a time");
  CHECK_EQ(r.t->context_free(b, NULL), 0);
  CHECK_EQ(r.t->context_free(a, NULL), 0);
  ref_model_free(m);
  free(bin);
  rig_close(&r);
}

/* What the list call's notifications said. */
typedef struct notes {
  pthread_mutex_t m;
  int graph_inits, context_inits;
  qnn_context_handle_t ctx[4];
  qnn_error_t status[4];
  pthread_t thread[4];
} notes;
typedef struct note_slot {
  notes *n;
  int i;
} note_slot;

static void on_note(qnn_context_handle_t ctx, qnn_graph_handle_t graph, const char *name,
                    uint32_t type, void *param, qnn_error_t status) {
  note_slot *s = param;
  pthread_mutex_lock(&s->n->m);
  if (type == QNN_CONTEXT_NOTIFY_TYPE_GRAPH_INIT && graph && name && ctx) s->n->graph_inits++;
  if (type == QNN_CONTEXT_NOTIFY_TYPE_CONTEXT_INIT) {
    s->n->context_inits++;
    s->n->ctx[s->i] = ctx;
    s->n->status[s->i] = status;
    s->n->thread[s->i] = pthread_self();
  }
  pthread_mutex_unlock(&s->n->m);
}

typedef struct list3 {
  void *bin[3];
  size_t len[3];
  qnn_context_params_t p[3];
  const qnn_context_params_t *list[4];
  note_slot slot[3];
  notes n;
} list3;

/* weighted, LR_FOUR and the add model, each with configs cfg (NULL: none). */
static int list3_init(list3 *l, const qnn_context_config_t **cfg) {
  memset(l, 0, sizeof *l);
  pthread_mutex_init(&l->n.m, NULL);
  const char *texts[3] = {LR_WEIGHTED, LR_FOUR, RB_ADD};
  for (int i = 0; i < 3; i++) {
    l->bin[i] = fx_build_model(texts[i], &l->len[i]);
    if (!l->bin[i]) return -1;
    l->slot[i] = (note_slot){&l->n, i};
    l->p[i].version = QNN_CONTEXT_PARAMS_VERSION_1;
    l->p[i].u.v1 = (qnn_context_params_v1_t){cfg, l->bin[i], l->len[i], NULL, on_note,
                                             &l->slot[i]};
    l->list[i] = &l->p[i];
  }
  return 0;
}

static void list3_free(list3 *l) {
  for (int i = 0; i < 3; i++) free(l->bin[i]);
  pthread_mutex_destroy(&l->n.m);
}

TEST(refb_load_list_async_creates_each_context_on_a_thread_of_its_own) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  qnn_context_config_t lo = cfg_of(QNN_CONTEXT_CONFIG_OPTION_PRIORITY),
                       hi = cfg_of(QNN_CONTEXT_CONFIG_OPTION_PRIORITY);
  lo.u.priority = QNN_PRIORITY_LOW;
  hi.u.priority = QNN_PRIORITY_HIGH;
  const qnn_context_config_t *own[] = {&lo, NULL}, *over[] = {&hi, NULL};
  list3 l;
  CHECK_EQ(list3_init(&l, own), 0);
  uint64_t calls0 = stats_of(&r.c).list_async_calls;
  CHECK_EQ(r.t->context_create_from_binary_list_async(r.be, r.dev, l.list, over, NULL), 0);
  CHECK_EQ(l.n.context_inits, 3);
  CHECK_EQ(l.n.graph_inits, 1 + 4 + 1);
  CHECK_EQ(stats_of(&r.c).list_async_calls, calls0 + 1);
  CHECK(!pthread_equal(l.n.thread[0], l.n.thread[1]));
  CHECK(!pthread_equal(l.n.thread[1], l.n.thread[2]));
  CHECK(!pthread_equal(l.n.thread[0], pthread_self()));
  qnn_graph_handle_t g = NULL;
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(l.n.status[i], 0);
    CHECK(l.n.ctx[i] != NULL);
    CHECK_EQ(ctx_state(&r, l.n.ctx[i]).priority, QNN_PRIORITY_HIGH); /* listConfig wins */
  }
  CHECK_EQ(r.t->graph_retrieve(l.n.ctx[1], "g2", &g), 0);
  for (int i = 0; i < 3; i++) CHECK_EQ(r.t->context_free(l.n.ctx[i], NULL), 0);
  CHECK_EQ(stats_of(&r.c).violations, 0);
  list3_free(&l);
  rig_close(&r);
}

TEST(refb_load_list_async_failures_and_refusals) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  list3 l;
  CHECK_EQ(list3_init(&l, NULL), 0);
  memset(l.bin[1], 0, 16); /* no model any more */
  CHECK_EQ(r.t->context_create_from_binary_list_async(r.be, r.dev, l.list, NULL, NULL),
           QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  CHECK_EQ(l.n.context_inits, 3);
  CHECK_EQ(l.n.status[1], QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  CHECK(l.n.ctx[1] == NULL);
  CHECK_EQ(stats_of(&r.c).live_contexts, 2);
  r.t->context_free(l.n.ctx[0], NULL);
  r.t->context_free(l.n.ctx[2], NULL);
  /* refused at once, nothing notified */
  l.n.context_inits = 0;
  l.p[0].u.v1.notify_func = NULL;
  CHECK_EQ(r.t->context_create_from_binary_list_async(r.be, r.dev, l.list, NULL, NULL),
           QNN_CONTEXT_ERROR_INVALID_ARGUMENT);
  l.p[0].u.v1.notify_func = on_note;
  l.p[0].version = 2;
  CHECK_EQ(r.t->context_create_from_binary_list_async(r.be, r.dev, l.list, NULL, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  l.p[0].version = QNN_CONTEXT_PARAMS_VERSION_1;
  const qnn_context_params_t *empty[] = {NULL};
  CHECK_EQ(r.t->context_create_from_binary_list_async(r.be, r.dev, empty, NULL, NULL),
           QNN_CONTEXT_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC, 1000),
           0);
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary_list_async(r.be, r.dev, l.list, NULL, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 212 off");
  CHECK_EQ(l.n.context_inits, 0);
  CHECK_EQ(stats_of(&r.c).live_contexts, 0);
  list3_free(&l);
  rig_close(&r);
}

/* The list's signal bounds every context of it: each is notified with 5013 and none stays. */
TEST(refb_load_list_async_timeout_signal) {
  rig r;
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  list3 l;
  CHECK_EQ(list3_init(&l, NULL), 0);
  qnn_signal_handle_t sig = sig_new(&r, QNN_SIGNAL_CONFIG_OPTION_TIMEOUT, 30000);
  CHECK(sig);
  CHECK_EQ(r.c.set_latency("contextCreateFromBinary", 2000000), 0);
  CHECK_EQ(r.t->context_create_from_binary_list_async(r.be, r.dev, l.list, NULL, sig),
           QNN_CONTEXT_ERROR_TIMED_OUT);
  r.c.set_latency("contextCreateFromBinary", 0);
  CHECK_EQ(l.n.context_inits, 3);
  for (int i = 0; i < 3; i++) CHECK_EQ(l.n.status[i], QNN_CONTEXT_ERROR_TIMED_OUT);
  CHECK_EQ(stats_of(&r.c).live_contexts, 0);
  CHECK_EQ(r.t->signal_free(sig), 0);
  list3_free(&l);
  rig_close(&r);
}
