/* test_core_load_many.c - htpu_context_open_many: several models in one call, through
 * contextCreateFromBinaryListAsync where announced (212) and one after another where not, with
 * the same results: each model's context or its own error, its options (graphs, deadline),
 * one spill-fill group sized by the largest, and no load beside an execute. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "load_rig.h"
#include "test.h"

typedef struct three {
  htpu_load_request req[3];
  char err[3][512];
  htpu_load_options lo[3];
  void *buf;
  size_t len;
} three;

/* weighted from a file, LR_FOUR (only g1) from a buffer, a spill model from a file. */
static int three_init(three *t, int tag) {
  memset(t, 0, sizeof *t);
  char *spill = lr_spill_model("z", 1024), f0[32], f2[32];
  snprintf(f0, sizeof f0, "many_w%d.bin", tag);
  snprintf(f2, sizeof f2, "many_s%d.bin", tag);
  const char *p0 = fx_build_model_file(f0, LR_WEIGHTED);
  char *p0_copy = p0 ? strdup(p0) : NULL; /* the path ring is reused by the next call */
  const char *p2 = spill ? fx_build_model_file(f2, spill) : NULL;
  free(spill);
  t->buf = fx_build_model(LR_FOUR, &t->len);
  if (!p0_copy || !p2 || !t->buf) {
    free(p0_copy);
    return -1;
  }
  static const char *const g1[] = {"g1"};
  t->lo[1].graphs = g1;
  t->lo[1].num_graphs = 1;
  t->req[0] = (htpu_load_request){.path = p0_copy, .opts = &t->lo[0]};
  t->req[1] = (htpu_load_request){.buf = t->buf, .len = t->len, .opts = &t->lo[1]};
  t->req[2] = (htpu_load_request){.path = strdup(p2), .opts = &t->lo[2]};
  for (int i = 0; i < 3; i++) {
    t->req[i].error = t->err[i];
    t->req[i].error_len = sizeof t->err[i];
  }
  return 0;
}

static void three_free(three *t) {
  for (int i = 0; i < 3; i++) {
    htpu_context_close(&t->req[i].ctx);
    free((void *)t->req[i].path);
  }
  free(t->buf);
}

/* Every model answers right through its context. */
static int three_answers(three *t) {
  htpu_graph *g[3] = {NULL};
  int rc = htpu_graph_open(t->req[0].ctx, "weighted", &g[0]);
  if (!rc) rc = htpu_graph_open(t->req[1].ctx, NULL, &g[1]);
  if (!rc) rc = htpu_graph_open(t->req[2].ctx, "spillz", &g[2]);
  if (!rc) rc = lr_weighted_check(g[0], 9);
  if (!rc) rc = lr_four_check(g[1], 1);
  if (!rc) rc = lr_spill_check(g[2], 1024);
  for (int i = 0; i < 3; i++) htpu_graph_close(&g[i]);
  return rc;
}

/* The same three models with and without the list call: the same contexts and answers.
 * Without spill-fill sharing, so that all three go in the list (with it, a list's first model
 * of a new group is created alone first: load_many_spill_fill_group_sized_by_the_largest). */
static void three_loads(int list_cap) {
  fx_reset_env();
  if (!list_cap)
    CHECK_EQ(fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC,
                                   1000), 0);
  three t;
  memset(&t, 0, sizeof t);
  htpu_runtime *rt = lr_runtime(0);
  uint64_t lists0 = fx_ref_stats().list_async_calls;
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  int rc = rt && three_init(&t, 0) == 0 ? htpu_context_open_many(rt, t.req, 3) : -1;
  htpu_stats_get(&s1);
  htpu_runtime_info ri;
  memset(&ri, 0, sizeof ri);
  if (rt) htpu_runtime_get_info(rt, &ri);
  int answers = rc ? rc : three_answers(&t);
  htpu_context_load_info li[3];
  for (int i = 0; i < 3; i++) li[i] = lr_info(t.req[i].ctx);
  uint64_t lists = fx_ref_stats().list_async_calls - lists0;
  three_free(&t);
  htpu_runtime_close(&rt);
  fx_ref_reset_capabilities();
  CHECK_MSG(rc == HTPU_OK, "%s / %s / %s", t.err[0], t.err[1], t.err[2]);
  for (int i = 0; i < 3; i++) CHECK_EQ(t.req[i].rc, 0);
  CHECK_EQ(answers, 0);
  CHECK_EQ(ri.list_load, list_cap);
  CHECK_EQ(lists, list_cap ? 1 : 0);
  CHECK_EQ(s1.list_loads - s0.list_loads, list_cap ? 3 : 0);
  for (int i = 0; i < 3; i++) CHECK_EQ(li[i].list_loaded, list_cap);
  CHECK_EQ(li[1].graphs_enabled, 1);
  CHECK(strcmp(li[1].binary, "copied") == 0);
}

TEST(load_many_through_one_list_call) { three_loads(1); }
TEST(load_many_one_after_another_without_the_list_call) { three_loads(0); }

/* Each model fails or loads on its own: a missing file, a buffer that is no model, a graph
 * the binary does not hold; the good one loads; the call returns the first failure. */
static void errors_per_model(int list_cap) {
  fx_reset_env();
  if (!list_cap)
    fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC, 1000);
  htpu_runtime *rt = lr_runtime(1);
  const char *good = fx_build_model_file("many_good.bin", LR_WEIGHTED);
  char *good_path = good ? strdup(good) : NULL;
  const char *four = fx_build_model_file("many_four.bin", LR_FOUR);
  static const char *const g7[] = {"g7"};
  htpu_load_options bad_graph = {.graphs = g7, .num_graphs = 1};
  char junk[64] = "not a model at all, just some bytes";
  char err[4][512] = {{0}};
  htpu_load_request req[4] = {
      {.path = "/nonexistent/model.bin"},
      {.buf = junk, .len = sizeof junk},
      {.path = four, .opts = &bad_graph},
      {.path = good_path},
  };
  for (int i = 0; i < 4; i++) req[i].error = err[i], req[i].error_len = sizeof err[i];
  int rc = rt && good_path && four ? htpu_context_open_many(rt, req, 4) : -1;
  htpu_graph *g = NULL;
  int answer = req[3].ctx ? htpu_graph_open(req[3].ctx, NULL, &g) : -1;
  if (!answer) answer = lr_weighted_check(g, 2);
  htpu_graph_close(&g);
  for (int i = 0; i < 4; i++) htpu_context_close(&req[i].ctx);
  htpu_runtime_close(&rt);
  free(good_path);
  fx_ref_reset_capabilities();
  CHECK_EQ(rc, HTPU_EIO);
  CHECK_EQ(req[0].rc, HTPU_EIO);
  CHECK_STR_CONTAINS(err[0], "/nonexistent/model.bin");
  CHECK_EQ(req[1].rc, HTPU_EMODEL);
  CHECK_STR_CONTAINS(err[1], "a 64-byte buffer");
  CHECK_EQ(req[2].rc, HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(err[2], "'g7'");
  CHECK_EQ(req[3].rc, HTPU_OK);
  CHECK_EQ(answer, 0);
}

TEST(load_many_errors_per_model_list) { errors_per_model(1); }
TEST(load_many_errors_per_model_one_by_one) { errors_per_model(0); }

/* A model with a deadline shorter than a load (each takes 300 ms here) times out alone; the
 * one without a deadline loads, in the list and one after another. */
static void deadline_per_model(int list_cap) {
  fx_reset_env();
  if (!list_cap)
    fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC, 1000);
  htpu_runtime *rt = lr_runtime(1);
  const char *p = fx_build_model_file("many_dl.bin", LR_WEIGHTED);
  char *path = p ? strdup(p) : NULL;
  htpu_load_options quick = {.timeout_ns = 50000000ull}; /* 50 ms */
  char err[2][512] = {{0}};
  htpu_load_request req[2] = {{.path = path, .opts = &quick}, {.path = path}};
  for (int i = 0; i < 2; i++) req[i].error = err[i], req[i].error_len = sizeof err[i];
  uint32_t live0 = fx_ref_stats().live_contexts;
  fx_ref_set_latency("contextCreateFromBinary", 300000);
  int rc = rt && path ? htpu_context_open_many(rt, req, 2) : -1;
  fx_ref_set_latency("contextCreateFromBinary", 0);
  uint32_t live = fx_ref_stats().live_contexts - live0;
  for (int i = 0; i < 2; i++) htpu_context_close(&req[i].ctx);
  htpu_runtime_close(&rt);
  free(path);
  fx_ref_reset_capabilities();
  CHECK_EQ(rc, HTPU_ETIMEDOUT);
  CHECK_EQ(req[0].rc, HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(err[0], "50 ms deadline");
  CHECK(req[0].ctx == NULL);
  CHECK_EQ(req[1].rc, HTPU_OK);
  CHECK_EQ(live, 1); /* the late one was freed again */
}

TEST(load_many_deadline_per_model_list) { deadline_per_model(1); }
TEST(load_many_deadline_per_model_one_by_one) { deadline_per_model(0); }

/* The list's models share one spill-fill group sized by the largest of them, whatever their
 * order: the first is created alone (it registers the group), the others join it. */
TEST(load_many_spill_fill_group_sized_by_the_largest) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  static const uint32_t floats[3] = {512, 4096, 1024};
  static const char *tags[3] = {"p", "q", "r"};
  char *paths[3] = {NULL};
  htpu_load_request req[3];
  memset(req, 0, sizeof req);
  for (int i = 0; i < 3; i++) {
    char *text = lr_spill_model(tags[i], floats[i]), file[32];
    snprintf(file, sizeof file, "many_sp%d.bin", i);
    const char *p = text ? fx_build_model_file(file, text) : NULL;
    free(text);
    paths[i] = p ? strdup(p) : NULL;
    req[i].path = paths[i];
  }
  int rc = htpu_context_open_many(rt, req, 3);
  htpu_context_load_info li[3];
  uint64_t reported[3] = {0}, largest = 0; /* each binary's figure, as its model info says */
  for (int i = 0; i < 3; i++) {
    li[i] = lr_info(req[i].ctx);
    const htpu_model_info *mi = req[i].ctx ? htpu_context_model_info(req[i].ctx) : NULL;
    reported[i] = mi ? mi->graph_memory[0].spill_fill_bytes : 0;
    if (reported[i] > largest) largest = reported[i];
  }
  uint64_t held = fx_ref_stats().spill_fill_bytes;
  int answers = 0;
  for (int i = 0; i < 3 && !answers; i++) {
    htpu_graph *g = NULL;
    answers = req[i].ctx ? htpu_graph_open(req[i].ctx, NULL, &g) : -1;
    if (!answers) answers = lr_spill_check(g, floats[i]);
    htpu_graph_close(&g);
  }
  for (int i = 0; i < 3; i++) {
    htpu_context_close(&req[i].ctx);
    free(paths[i]);
  }
  htpu_runtime_close(&rt);
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(answers, 0);
  CHECK(li[0].spill_fill_group != 0);
  CHECK_EQ(largest, 8ull * 4096);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(reported[i], 8ull * floats[i]);
    CHECK_EQ(li[i].spill_fill_bytes, reported[i]);
    CHECK_EQ(li[i].spill_fill_group, li[0].spill_fill_group);
    CHECK_EQ(li[i].spill_fill_group_bytes, largest);
  }
  CHECK_EQ(li[0].list_loaded, 0); /* the group's first, created alone */
  CHECK_EQ(li[1].list_loaded, 1);
  CHECK_EQ(held, 8ull * 4096);
}

/* A list starting a spill-fill group creates its smallest binary first, alone (a load's time
 * grows with its binary: the shortest head start); the larger one joins in the list. */
TEST(load_many_group_starts_with_the_smallest_binary) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  char text[4096];
  int n = snprintf(text, sizeof text,
                   "graph heavy\n  input x f32 [1,256]\n  native t f32 [1,256]\n"
                   "  output y f32 [1,256]\n  static w f32 [1,256] data=[");
  for (int i = 0; i < 256; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%s1", i ? "," : "");
  snprintf(text + n, sizeof text - (size_t)n,
           "]\n  op Relu x -> t\n  op ElementWiseMultiply t w -> y\n");
  char *light = lr_spill_model("light", 256);
  const char *p0 = fx_build_model_file("many_heavy.bin", text);
  char *heavy = p0 ? strdup(p0) : NULL;
  const char *p1 = light ? fx_build_model_file("many_light.bin", light) : NULL;
  htpu_load_request req[2];
  memset(req, 0, sizeof req);
  req[0].path = heavy;
  req[1].path = p1;
  int rc = htpu_context_open_many(rt, req, 2);
  htpu_context_load_info li[2];
  for (int i = 0; i < 2; i++) li[i] = lr_info(req[i].ctx);
  for (int i = 0; i < 2; i++) htpu_context_close(&req[i].ctx);
  htpu_runtime_close(&rt);
  free(light);
  free(heavy);
  CHECK_EQ(rc, HTPU_OK);
  CHECK(li[1].binary_bytes < li[0].binary_bytes);
  CHECK(li[0].spill_fill_group != 0);
  CHECK_EQ(li[0].spill_fill_group, li[1].spill_fill_group);
  CHECK_EQ(li[1].list_loaded, 0); /* the smaller, created alone: the group's first */
  CHECK_EQ(li[0].list_loaded, 1);
}

/* A list load waits for the executes in flight, as a single load does: the backend, which
 * reports a load beside an execute, sees none, though one runs (300 ms in the backend) when
 * the list load starts. */
typedef struct slow_add {
  htpu_graph *g;
  int rc;
} slow_add;

static void *slow_add_main(void *p) {
  slow_add *s = p;
  float y[4];
  s->rc = fx_add(s->g, 1, NULL, NULL, y);
  return NULL;
}

TEST(load_many_waits_for_the_executes_in_flight) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "many_gate.bin", 1), HTPU_OK);
  three t;
  memset(&t, 0, sizeof t);
  CHECK_EQ(three_init(&t, 1), 0);
  unsigned long v0 = fx_ref_violations();
  CHECK_EQ(fx_ref_set_graph_latency("add_f32", 300000), 0);
  slow_add s = {r.g, -1};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, slow_add_main, &s) == 0);
  int in_flight = -1;
  for (int i = 0; i < 30000 && in_flight; i++) {
    if (fx_ref_stats().executes_in_flight == 1) in_flight = 0;
    else usleep(1000);
  }
  int rc = htpu_context_open_many(r.rt, t.req, 3);
  pthread_join(th, NULL);
  fx_ref_set_graph_latency("add_f32", 0);
  int answers = rc ? rc : three_answers(&t);
  three_free(&t);
  fx_rig_close(&r);
  CHECK_EQ(in_flight, 0);
  CHECK_EQ(s.rc, HTPU_OK);
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(answers, 0);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

typedef struct many_thread {
  htpu_runtime *rt;
  three t[3]; /* prepared by the main thread: the test helpers' path ring is not shared */
  int rc;
} many_thread;

static void *many_thread_main(void *p) {
  many_thread *m = p;
  for (int round = 0; round < 3 && !m->rc; round++) {
    m->rc = htpu_context_open_many(m->rt, m->t[round].req, 3);
    if (!m->rc) m->rc = three_answers(&m->t[round]);
    for (int i = 0; i < 3; i++) htpu_context_close(&m->t[round].req[i].ctx);
  }
  return NULL;
}

/* Lists loaded from four threads at once on one runtime while a fifth executes: every load
 * and answer right, the spill-fill groups shared across them, no rule broken (TSan runs it). */
TEST(load_many_from_threads_beside_executes) {
  fx_reset_env();
  fx_rig r;
  CHECK_EQ(fx_rig_open(&r, NULL, "many_threads.bin", 1), HTPU_OK);
  unsigned long v0 = fx_ref_violations();
  static many_thread m[4];
  int prepared = 0;
  for (int i = 0; i < 4; i++) {
    m[i].rt = r.rt;
    m[i].rc = 0;
    for (int k = 0; k < 3; k++) prepared |= three_init(&m[i].t[k], 10 + 3 * i + k);
  }
  CHECK_EQ(prepared, 0);
  pthread_t th[4];
  for (int i = 0; i < 4; i++) CHECK(pthread_create(&th[i], NULL, many_thread_main, &m[i]) == 0);
  int adds = 0;
  for (int i = 0; i < 50 && !adds; i++) {
    float y[4];
    adds = fx_add(r.g, (float)i, NULL, NULL, y);
    if (!adds && y[0] != (float)i + 10) adds = -100;
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 3; k++) three_free(&m[i].t[k]);
  fx_rig_close(&r);
  CHECK_EQ(adds, 0);
  for (int i = 0; i < 4; i++) CHECK_MSG(m[i].rc == 0, "thread %d: %s", i, htpu_err_name(m[i].rc));
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  CHECK_EQ(fx_ref_stats().live_contexts, 0);
}
