/* Concurrency: many threads on one graph and on separate graphs give the serial results;
 * the per-graph lock keeps QNN from seeing a graph executed concurrently with itself; a
 * context load waits for in-flight executes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

#define THREADS 8

static const char *TWO_GRAPHS =
    "graph add_f32\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "graph mul_f32\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply a b -> y\n";

typedef struct worker {
  htpu_graph *g;
  int mul;
  int iterations;
  int seed;
  int failures;
  char error[256];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (int i = 0; i < w->iterations; i++) {
    float a[4], b[4], y[4];
    for (int k = 0; k < 4; k++) {
      a[k] = (float)(w->seed * 100 + i + k);
      b[k] = (float)(k + 1);
    }
    htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
    htpu_io out = {y, sizeof y, HTPU_F32};
    int rc = htpu_graph_execute(w->g, in, 2, &out, 1, NULL);
    if (rc) {
      snprintf(w->error, sizeof w->error, "%s", htpu_last_error());
      w->failures++;
      continue;
    }
    for (int k = 0; k < 4; k++) {
      float want = w->mul ? a[k] * b[k] : a[k] + b[k];
      if (y[k] != want) {
        snprintf(w->error, sizeof w->error, "iteration %d element %d: %g != %g", i, k, y[k], want);
        w->failures++;
      }
    }
  }
  return NULL;
}

TEST(concurrency_threads_on_one_and_several_graphs) {
  fx_reset_env();
  const char *path = fx_build_model_file("two.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL, *ctx2 = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx2), HTPU_OK);
  htpu_graph *add = NULL, *mul = NULL, *add2 = NULL;
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "mul_f32", &mul), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx2, "add_f32", &add2), HTPU_OK);
  /* A little latency widens the window in which a missing lock would show. */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 50), 0);
  unsigned long v0 = fx_ref_violations();
  worker w[THREADS];
  pthread_t th[THREADS];
  int iterations = test_under_valgrind() ? 20 : 300;
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].g = (i % 3 == 0) ? add : (i % 3 == 1) ? mul : add2;
    w[i].mul = (i % 3 == 1);
    w[i].iterations = iterations;
    w[i].seed = i;
    CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  for (int i = 0; i < THREADS; i++) CHECK_MSG(w[i].failures == 0, "thread %d: %s", i, w[i].error);
  CHECK_MSG(fx_ref_violations() == v0, "backend saw: %s", fx_ref_last_violation());
  htpu_graph_close(&add);
  htpu_graph_close(&mul);
  htpu_graph_close(&add2);
  htpu_context_close(&ctx);
  htpu_context_close(&ctx2);
  htpu_runtime_close(&rt);
}

typedef struct loader_arg {
  htpu_runtime *rt;
  const char *path;
  int rc;
} loader_arg;

/* Loads and frees a context a few times while the workers' executes (2 ms each) are in
 * flight; without the execute gate the reference backend records a board-rule violation. */
static void *load(void *arg) {
  loader_arg *l = arg;
  l->rc = 0;
  for (int i = 0; i < 5 && l->rc == 0; i++) {
    usleep(3000);
    htpu_context *ctx = NULL;
    l->rc = htpu_context_open_file(l->rt, l->path, &ctx);
    htpu_context_close(&ctx);
  }
  return NULL;
}

TEST(concurrency_load_and_close_while_executing) {
  fx_reset_env();
  const char *path = fx_build_model_file("gate.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  htpu_graph *add = NULL;
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 2000), 0);
  unsigned long v0 = fx_ref_violations();
  worker w[4];
  pthread_t th[4], lt[4];
  loader_arg la[4];
  for (int i = 0; i < 4; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].g = add;
    w[i].iterations = test_under_valgrind() ? 3 : 20;
    w[i].seed = i;
    CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    la[i] = (loader_arg){rt, path, -1};
    CHECK(pthread_create(&lt[i], NULL, load, &la[i]) == 0);
  }
  /* Close the context's handle while executes are in flight: the graph keeps it alive. */
  htpu_context_close(&ctx);
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    pthread_join(lt[i], NULL);
  }
  fx_ref_disarm();
  for (int i = 0; i < 4; i++) {
    CHECK_MSG(w[i].failures == 0, "%s", w[i].error);
    CHECK_EQ(la[i].rc, HTPU_OK);
  }
  CHECK_MSG(fx_ref_violations() == v0, "backend saw: %s", fx_ref_last_violation());
  htpu_graph_close(&add);
  htpu_runtime_close(&rt);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_contexts, 0);
  CHECK_EQ(s.live_graphs, 0);
}

typedef struct one_call {
  htpu_graph *g;
  float want3; /* expected y[3]: 4 + 4 or 4 * 4 */
  int rc;
} one_call;

static void *execute_once(void *arg) {
  one_call *c = arg;
  float a[4] = {1, 2, 3, 4}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {a, sizeof a, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  c->rc = htpu_graph_execute(c->g, in, 2, &out, 1, NULL);
  if (c->rc == 0 && y[3] != c->want3) c->rc = -100;
  return NULL;
}

TEST(concurrency_every_handle_closed_during_executes) {
  fx_reset_env();
  const char *path = fx_build_model_file("closeall.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *add = NULL, *mul = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "mul_f32", &mul), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 50000), 0);
  unsigned long v0 = fx_ref_violations();
  one_call calls[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    calls[i] = (one_call){i % 2 ? mul : add, i % 2 ? 16.0f : 8.0f, -1};
    CHECK(pthread_create(&th[i], NULL, execute_once, &calls[i]) == 0);
  }
  usleep(10000); /* the calls are inside graphExecute (50 ms each, two graphs at a time) */
  /* Every handle goes while they run: the last call to finish drops the last references and
   * tears down context, device, backend and libraries on its own thread. */
  CHECK_EQ(htpu_graph_close(&add), HTPU_OK);
  CHECK_EQ(htpu_graph_close(&mul), HTPU_OK);
  CHECK_EQ(htpu_context_close(&ctx), HTPU_OK);
  CHECK_EQ(htpu_runtime_close(&rt), HTPU_OK);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  for (int i = 0; i < 4; i++) CHECK_MSG(calls[i].rc == 0, "call %d: %d %s", i, calls[i].rc, htpu_err_name(calls[i].rc));
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_runtimes, 0);
  CHECK_EQ(s.live_contexts, 0);
  CHECK_EQ(s.live_graphs, 0);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}
