/* test_core_load_graphs.c - only the graphs asked for (htpu_load_options.graphs): QNN's
 * ENABLE_GRAPHS where announced (206), so the backend deserializes those alone; the same API
 * where not; a graph not asked for is refused at open naming the option; the memory-limit
 * hint passed where announced (207). */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "load_rig.h"
#include "test.h"

/* Loads LR_FOUR asking for `names` (n of them); *ctx on success. */
static int load_four(htpu_runtime *rt, const char *const *names, uint32_t n, uint64_t hint_mb,
                     htpu_context **ctx) {
  const char *path = fx_build_model_file("four.bin", LR_FOUR);
  if (!path) return -1;
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.graphs = names;
  lo.num_graphs = n;
  lo.memory_limit_mb = hint_mb;
  return htpu_context_open_file_ex(rt, path, &lo, ctx);
}

TEST(load_only_the_graph_asked_for_is_deserialized) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL, *other = NULL;
  uint64_t d0 = fx_ref_stats().graphs_deserialized;
  static const char *const one[] = {"g2"};
  CHECK_EQ(load_four(rt, one, 1, 0, &ctx), HTPU_OK);
  CHECK_EQ(fx_ref_stats().graphs_deserialized, d0 + 1);
  htpu_context_load_info li = lr_info(ctx);
  CHECK_EQ(li.graphs_enabled, 1);
  CHECK_EQ(li.enable_graphs_passed, 1);
  htpu_ref_context_state rs;
  CHECK_EQ(fx_ref_context_state("g2", &rs), 0);
  CHECK_EQ(rs.graphs_deserialized, 1);
  CHECK_EQ(rs.num_graphs, 4);
  /* no name: the only graph it holds now */
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), HTPU_OK);
  CHECK_EQ(lr_four_check(g, 2), 0);
  CHECK_EQ(htpu_graph_open(ctx, "g0", &other), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(htpu_last_error(), "graph 'g0' was not loaded");
  CHECK_STR_CONTAINS(htpu_last_error(), "only 'g2' (htpu_load_options.graphs");
  CHECK_EQ(htpu_graph_open(ctx, "nope", &other), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(htpu_last_error(), "it holds 'g0', 'g1', 'g2', 'g3'");
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  /* all of them, the old way: four deserialized */
  CHECK_EQ(load_four(rt, NULL, 0, 0, &ctx), HTPU_OK);
  CHECK_EQ(fx_ref_stats().graphs_deserialized, d0 + 5);
  CHECK_EQ(lr_info(ctx).graphs_enabled, 4);
  CHECK_EQ(lr_info(ctx).enable_graphs_passed, 0);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), HTPU_EINVAL);
  CHECK_EQ(htpu_graph_open(ctx, "g0", &g), HTPU_OK);
  CHECK_EQ(lr_four_check(g, 0), 0);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

TEST(load_graphs_two_of_four_and_bad_names) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *a = NULL, *b = NULL;
  static const char *const two[] = {"g3", "g1", "g3"}; /* a repeat is the same graph */
  CHECK_EQ(load_four(rt, two, 3, 0, &ctx), HTPU_OK);
  CHECK_EQ(lr_info(ctx).graphs_enabled, 2);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &a), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "holds 2 graphs ('g1', 'g3')");
  CHECK_EQ(htpu_graph_open(ctx, "g1", &a), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "g3", &b), HTPU_OK);
  CHECK_EQ(lr_four_check(a, 1), 0);
  CHECK_EQ(lr_four_check(b, 3), 0);
  htpu_graph_close(&a);
  htpu_graph_close(&b);
  htpu_context_close(&ctx);
  /* a name the binary does not hold: refused before QNN is asked */
  uint32_t live = fx_ref_stats().live_contexts;
  static const char *const bad[] = {"g1", "g9"};
  CHECK_EQ(load_four(rt, bad, 2, 0, &ctx), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "the binary holds no graph 'g9' (entry 1 of the graphs option); it holds "
                     "'g0', 'g1', 'g2', 'g3'");
  /* named by the graph option (passed as graphs too, as Elixir's :graph and htpu's --graph
   * are): the message names that option */
  const char *path = fx_build_model_file("four.bin", LR_FOUR);
  static const char *const g9[] = {"g9"};
  htpu_load_options by_graph = {.graph = "g9", .graphs = g9, .num_graphs = 1};
  CHECK_EQ(htpu_context_open_file_ex(rt, path, &by_graph, &ctx), HTPU_ENOT_FOUND);
  CHECK_STR_CONTAINS(htpu_last_error(), "the binary holds no graph 'g9' (the graph option)");
  CHECK_EQ(fx_ref_stats().live_contexts, live);
  static const char *const null_name[] = {NULL};
  CHECK_EQ(load_four(rt, null_name, 1, 0, &ctx), HTPU_EINVAL);
  CHECK_EQ(load_four(rt, NULL, 2, 0, &ctx), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "num_graphs is 2 but graphs is NULL");
  htpu_runtime_close(&rt);
}

/* Capability 206 off: every graph is deserialized, and the API stays the same. */
TEST(load_graphs_without_enable_graphs_capability) {
  fx_reset_env();
  CHECK_EQ(fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_ENABLE_GRAPHS, 1000), 0);
  htpu_runtime *rt = lr_runtime(1);
  htpu_runtime_info ri;
  memset(&ri, 0, sizeof ri);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL, *other = NULL;
  uint64_t d0 = fx_ref_stats().graphs_deserialized;
  static const char *const one[] = {"g1"};
  int rc = rt ? htpu_runtime_get_info(rt, &ri) : -1;
  if (!rc) rc = load_four(rt, one, 1, 0, &ctx);
  uint64_t deserialized = fx_ref_stats().graphs_deserialized - d0;
  htpu_context_load_info li = lr_info(ctx);
  int open = rc ? rc : htpu_graph_open(ctx, NULL, &g);
  int refused = rc ? rc : htpu_graph_open(ctx, "g0", &other);
  int answer = open ? open : lr_four_check(g, 1);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  fx_ref_reset_capabilities();
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(ri.enable_graphs, 0);
  CHECK_EQ(deserialized, 4);
  CHECK_EQ(li.graphs_enabled, 1);
  CHECK_EQ(li.enable_graphs_passed, 0);
  CHECK_EQ(open, HTPU_OK);
  CHECK_EQ(refused, HTPU_ENOT_FOUND);
  CHECK_EQ(answer, 0);
}

/* The memory-limit hint reaches QNN where announced (207), and only there. */
TEST(load_memory_limit_hint) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_context *ctx = NULL;
  CHECK_EQ(load_four(rt, NULL, 0, 64, &ctx), HTPU_OK);
  htpu_context_load_info li = lr_info(ctx);
  htpu_ref_context_state rs;
  CHECK_EQ(fx_ref_context_state("g0", &rs), 0);
  htpu_context_close(&ctx);
  CHECK_EQ(li.memory_limit_mb, 64);
  CHECK_EQ(li.memory_limit_passed, 1);
  CHECK_EQ(rs.memory_limit_mb, 64);
  htpu_runtime_close(&rt);
  CHECK_EQ(fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_MEMORY_LIMIT_HINT, 1000),
           0);
  rt = lr_runtime(1);
  int rc = rt ? load_four(rt, NULL, 0, 64, &ctx) : -1;
  li = lr_info(ctx);
  memset(&rs, 0, sizeof rs);
  fx_ref_context_state("g0", &rs);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  fx_ref_reset_capabilities();
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(li.memory_limit_mb, 64);
  CHECK_EQ(li.memory_limit_passed, 0);
  CHECK_EQ(rs.memory_limit_mb, 0);
}

/* The hint's range: QNN's MEMORY_LIMIT_HINT is MB in 64 bits, so 1 to HTPU_MAX_MEMORY_LIMIT_MB
 * (2^44 - 1: in bytes it still fits them) is passed; above, HTPU_EINVAL naming the option and
 * the range, nothing created. */
TEST(load_memory_limit_hint_range) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(0);
  CHECK(rt);
  htpu_context *ctx = NULL;
  CHECK_EQ(HTPU_MAX_MEMORY_LIMIT_MB, (1ull << 44) - 1);
  CHECK_EQ(load_four(rt, NULL, 0, HTPU_MAX_MEMORY_LIMIT_MB, &ctx), HTPU_OK);
  htpu_ref_context_state rs;
  CHECK_EQ(fx_ref_context_state("g0", &rs), 0);
  CHECK(rs.memory_limit_mb == HTPU_MAX_MEMORY_LIMIT_MB);
  htpu_context_close(&ctx);
  uint32_t live = fx_ref_stats().live_contexts;
  static const uint64_t bad[] = {HTPU_MAX_MEMORY_LIMIT_MB + 1, UINT64_MAX};
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(load_four(rt, NULL, 0, bad[i], &ctx), HTPU_EINVAL);
    CHECK_STR_CONTAINS(htpu_last_error(), "memory_limit_mb");
    CHECK_STR_CONTAINS(htpu_last_error(), "expected 0 (no hint) to 17592186044415");
    CHECK(ctx == NULL);
  }
  /* in a list too: that model alone */
  const char *path = fx_build_model_file("four.bin", LR_FOUR);
  htpu_load_options lo = {.memory_limit_mb = UINT64_MAX};
  char err[512] = "";
  htpu_load_request req[2] = {{.path = path, .opts = &lo, .error = err, .error_len = sizeof err},
                              {.path = path}};
  CHECK_EQ(htpu_context_open_many(rt, req, 2), HTPU_EINVAL);
  CHECK_STR_CONTAINS(err, "memory_limit_mb 18446744073709551615 is out of range");
  CHECK_EQ(req[1].rc, HTPU_OK);
  htpu_context_close(&req[1].ctx);
  CHECK_EQ(fx_ref_stats().live_contexts, live);
  htpu_runtime_close(&rt);
}
