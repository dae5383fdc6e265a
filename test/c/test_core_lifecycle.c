/* Lifecycle: any release order, children keep parents alive, use after close, counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

static int run_add(htpu_graph *g, float base, float *out4) {
  float a[4] = {base, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {out4, 4 * sizeof(float), HTPU_F32};
  return htpu_graph_execute(g, in, 2, &out, 1, NULL);
}

static void live_counts(uint64_t *r, uint64_t *c, uint64_t *g) {
  htpu_stats s;
  htpu_stats_get(&s);
  *r = s.live_runtimes;
  *c = s.live_contexts;
  *g = s.live_graphs;
}

TEST(lifecycle_every_release_order) {
  fx_reset_env();
  const char *path = fx_build_model_file("add.bin", FX_ADD_F32);
  CHECK(path);
  uint64_t r0, c0, g0;
  live_counts(&r0, &c0, &g0);
  static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  unsigned long violations0 = fx_ref_violations();
  for (int k = 0; k < 6; k++) {
    htpu_runtime *rt = fx_open_runtime();
    CHECK(rt);
    htpu_context *ctx = NULL;
    htpu_graph *g = NULL;
    CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
    CHECK_EQ(htpu_graph_open(ctx, "add_f32", &g), HTPU_OK);
    for (int step = 0; step < 3; step++) {
      int which = orders[k][step];
      if (which == 0) CHECK_EQ(htpu_runtime_close(&rt), HTPU_OK);
      if (which == 1) CHECK_EQ(htpu_context_close(&ctx), HTPU_OK);
      if (which == 2) CHECK_EQ(htpu_graph_close(&g), HTPU_OK);
      /* Whatever is still open keeps working. */
      if (g) {
        float y[4];
        CHECK_EQ(run_add(g, 1, y), HTPU_OK);
        CHECK(y[0] == 11 && y[3] == 44);
      }
    }
    uint64_t r, c, gg;
    live_counts(&r, &c, &gg);
    CHECK_EQ(r, r0);
    CHECK_EQ(c, c0);
    CHECK_EQ(gg, g0);
  }
  /* The reference backend saw the QNN teardown order respected every time. */
  CHECK_MSG(fx_ref_violations() == violations0, "violation: %s", fx_ref_last_violation());
}

TEST(lifecycle_child_outlives_parent_handles) {
  fx_reset_env();
  const char *path = fx_build_model_file("add2.bin", FX_ADD_F32);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), HTPU_OK);
  htpu_runtime_close(&rt);
  htpu_context_close(&ctx);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK(s.live_runtimes >= 1 && s.live_contexts >= 1);
  float y[4];
  for (int i = 0; i < 10; i++) CHECK_EQ(run_add(g, (float)i, y), HTPU_OK);
  CHECK(y[0] == 19);
  CHECK(htpu_graph_input(g, 0) && strcmp(htpu_graph_input(g, 0)->name, "a") == 0);
  CHECK_EQ(htpu_graph_close(&g), HTPU_OK);
}

TEST(lifecycle_use_after_close_is_an_error) {
  fx_reset_env();
  const char *path = fx_build_model_file("add3.bin", FX_ADD_F32);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), HTPU_OK);
  htpu_runtime *rt_copy = rt;
  htpu_context *ctx_copy = ctx;
  htpu_graph *g_copy = g;
  CHECK_EQ(htpu_graph_close(&g), HTPU_OK);
  CHECK_EQ(htpu_graph_close(&g), HTPU_OK); /* NULL now: no-op */
  htpu_graph *g_stale = g_copy; /* a copy of the closed handle, kept for the checks below */
  CHECK_EQ(htpu_graph_close(&g_copy), HTPU_ECLOSED);
  float y[4];
  htpu_graph *stale = (htpu_graph *)((htpu_context *)ctx_copy); /* wrong kind of handle */
  CHECK_EQ(run_add(stale, 1, y), HTPU_ECLOSED);
  CHECK(htpu_graph_get_info(stale) == NULL);
  CHECK_EQ(htpu_context_close(&ctx), HTPU_OK);
  htpu_context *ctx2 = ctx_copy;
  CHECK_EQ(htpu_context_close(&ctx2), HTPU_ECLOSED);
  CHECK(htpu_context_model_info(ctx_copy) == NULL);
  htpu_graph *g2 = NULL;
  CHECK_EQ(htpu_graph_open(ctx_copy, NULL, &g2), HTPU_ECLOSED);
  CHECK_EQ(htpu_runtime_close(&rt), HTPU_OK);
  htpu_context *c3 = NULL;
  CHECK_EQ(htpu_context_open_file(rt_copy, path, &c3), HTPU_ECLOSED);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt_copy, &info), HTPU_ECLOSED);
  char buf[64];
  htpu_graph_last_error(g_stale, buf, sizeof buf);
  CHECK_STR_CONTAINS(buf, "closed");
  /* Forged handles never crash. */
  CHECK_EQ(run_add((htpu_graph *)(uintptr_t)0xdeadbeefu, 1, y), HTPU_ECLOSED);
  CHECK_EQ(htpu_runtime_close(NULL), HTPU_OK);
}

TEST(lifecycle_many_cycles_return_to_baseline) {
  fx_reset_env();
  const char *path = fx_build_model_file("add4.bin", FX_ADD_F32);
  CHECK(path);
  uint64_t r0, c0, g0;
  live_counts(&r0, &c0, &g0);
  int cycles = test_under_valgrind() ? 50 : 1000;
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  for (int i = 0; i < cycles; i++) {
    htpu_context *ctx = NULL;
    htpu_graph *g = NULL;
    CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
    CHECK_EQ(htpu_graph_open(ctx, "add_f32", &g), HTPU_OK);
    float y[4];
    CHECK_EQ(run_add(g, (float)i, y), HTPU_OK);
    CHECK(y[0] == (float)i + 10);
    if (i % 2) {
      htpu_context_close(&ctx);
      htpu_graph_close(&g);
    } else {
      htpu_graph_close(&g);
      htpu_context_close(&ctx);
    }
  }
  htpu_runtime_close(&rt);
  uint64_t r, c, g;
  live_counts(&r, &c, &g);
  CHECK_EQ(r, r0);
  CHECK_EQ(c, c0);
  CHECK_EQ(g, g0);
}

TEST(lifecycle_runtime_cycles_load_and_unload_libraries) {
  fx_reset_env();
  int cycles = test_under_valgrind() ? 10 : 200;
  for (int i = 0; i < cycles; i++) {
    htpu_runtime *rt = fx_open_runtime();
    CHECK(rt);
    CHECK_EQ(htpu_runtime_close(&rt), HTPU_OK);
  }
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_runtimes, 0);
}
