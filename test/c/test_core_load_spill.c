/* test_core_load_spill.c - one spill-fill buffer for the contexts of a runtime (HTP's
 * REGISTER_MULTI_CONTEXTS, htpu_runtime_options.spill_fill_sharing): the reference backend
 * accounts one buffer per group against one per context, the group's size is its first
 * context's, a context that does not fit starts a new group, the group's contexts execute one
 * at a time (the backend reports a violation otherwise), a refused config turns sharing off
 * cleanly, and a DSP restart's recovery puts every context back in its group. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"
#include "load_rig.h"
#include "test.h"

#define FLOATS 4096u /* 16 KiB activations, a 32 KiB spill-fill buffer */

/* Loads spill model `tag` of `floats` into *ctx and opens its graph. */
static int load_spill(htpu_runtime *rt, const char *tag, uint32_t floats, htpu_context **ctx,
                      htpu_graph **g) {
  char *text = lr_spill_model(tag, floats), file[32], graph[32];
  snprintf(file, sizeof file, "spill%s.bin", tag);
  snprintf(graph, sizeof graph, "spill%s", tag);
  const char *path = text ? fx_build_model_file(file, text) : NULL;
  free(text);
  if (!path) return -1;
  int rc = htpu_context_open_file(rt, path, ctx);
  if (!rc) rc = htpu_graph_open(*ctx, graph, g);
  return rc;
}

/* Four contexts of 32 KiB spill-fill each: 128 KiB on their own, 32 KiB in one group. */
static void four(int sharing, uint64_t *held, uint64_t *group0, int *same, int *answers) {
  htpu_runtime *rt = lr_runtime(sharing);
  htpu_context *ctx[4] = {NULL};
  htpu_graph *g[4] = {NULL};
  static const char *tags[4] = {"a", "b", "c", "d"};
  *answers = rt ? 0 : -1;
  for (int i = 0; i < 4 && !*answers; i++)
    *answers = load_spill(rt, tags[i], FLOATS, &ctx[i], &g[i]);
  *held = fx_ref_stats().spill_fill_bytes;
  *group0 = lr_info(ctx[0]).spill_fill_group;
  *same = 1;
  for (int i = 1; i < 4; i++) *same &= lr_info(ctx[i]).spill_fill_group == *group0;
  for (int i = 0; i < 4 && !*answers; i++) *answers = lr_spill_check(g[i], FLOATS);
  /* the group's first context goes first: the others keep working on its buffer */
  htpu_graph_close(&g[0]);
  htpu_context_close(&ctx[0]);
  for (int i = 1; i < 4 && !*answers; i++) *answers = lr_spill_check(g[i], FLOATS);
  for (int i = 1; i < 4; i++) {
    htpu_graph_close(&g[i]);
    htpu_context_close(&ctx[i]);
  }
  htpu_runtime_close(&rt);
}

TEST(spill_fill_four_contexts_share_one_buffer) {
  fx_reset_env();
  unsigned long v0 = fx_ref_violations();
  uint64_t shared = 0, own = 0, group = 0, nogroup = 0;
  int same = 0, same_off = 0, answers = -1, answers_off = -1;
  four(1, &shared, &group, &same, &answers);
  four(0, &own, &nogroup, &same_off, &answers_off);
  CHECK_EQ(answers, 0);
  CHECK_EQ(answers_off, 0);
  CHECK_EQ(shared, 8ull * FLOATS);
  CHECK_EQ(own, 4 * 8ull * FLOATS);
  CHECK(group != 0);
  CHECK(same);
  CHECK_EQ(nogroup, 0);
  CHECK_EQ(fx_ref_stats().spill_fill_bytes, 0); /* every group went with its last member */
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

/* Off by default (a group's contexts execute one at a time): a runtime opened with the
 * default options gives each context its own buffer and says why. */
TEST(spill_fill_sharing_is_off_by_default) {
  fx_reset_env();
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  CHECK_EQ(o.spill_fill_sharing, 0);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *c1 = NULL, *c2 = NULL;
  htpu_graph *g1 = NULL, *g2 = NULL;
  int rc = load_spill(rt, "o", FLOATS, &c1, &g1);
  if (!rc) rc = load_spill(rt, "w", FLOATS, &c2, &g2);
  htpu_runtime_info ri;
  memset(&ri, 0, sizeof ri);
  htpu_runtime_get_info(rt, &ri);
  int sharing = ri.spill_fill_sharing;
  int note = ri.spill_fill_note && strstr(ri.spill_fill_note, "off, the default") != NULL;
  htpu_context_load_info i1 = lr_info(c1), i2 = lr_info(c2);
  uint64_t held = fx_ref_stats().spill_fill_bytes;
  htpu_graph_close(&g1);
  htpu_graph_close(&g2);
  htpu_context_close(&c1);
  htpu_context_close(&c2);
  htpu_runtime_close(&rt);
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(sharing, 0);
  CHECK(note);
  CHECK_EQ(i1.spill_fill_group, 0);
  CHECK_EQ(i2.spill_fill_group, 0);
  CHECK_STR_CONTAINS(i2.spill_fill_note, "htpu_runtime_options.spill_fill_sharing");
  CHECK_EQ(held, 2 * 8ull * FLOATS);
}

/* The group's size is its first context's: a bigger model starts a group of its own, a
 * smaller one joins the current group. */
TEST(spill_fill_bigger_model_starts_a_new_group) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_context *c1 = NULL, *c2 = NULL, *c3 = NULL;
  htpu_graph *g1 = NULL, *g2 = NULL, *g3 = NULL;
  CHECK_EQ(load_spill(rt, "s", FLOATS, &c1, &g1), HTPU_OK);
  CHECK_EQ(load_spill(rt, "b", 4 * FLOATS, &c2, &g2), HTPU_OK);
  CHECK_EQ(load_spill(rt, "t", FLOATS / 2, &c3, &g3), HTPU_OK);
  htpu_context_load_info i1 = lr_info(c1), i2 = lr_info(c2), i3 = lr_info(c3);
  CHECK(i1.spill_fill_group != i2.spill_fill_group);
  CHECK_EQ(i3.spill_fill_group, i2.spill_fill_group); /* the current group holds it */
  CHECK_EQ(i2.spill_fill_group_bytes, 4 * 8ull * FLOATS);
  CHECK_EQ(i3.spill_fill_bytes, 8ull * FLOATS / 2);
  CHECK_EQ(fx_ref_stats().spill_fill_bytes, 8ull * FLOATS + 4 * 8ull * FLOATS);
  CHECK_EQ(lr_spill_check(g3, FLOATS / 2), 0);
  htpu_graph_close(&g1);
  htpu_graph_close(&g2);
  htpu_graph_close(&g3);
  htpu_context_close(&c1);
  htpu_context_close(&c2);
  htpu_context_close(&c3);
  htpu_runtime_close(&rt);
  CHECK_EQ(fx_ref_stats().spill_fill_bytes, 0);
}

/* The backend refuses the group config (an injected 5010 at the first create): the load
 * goes on without it, and sharing is off for the runtime, saying why. */
TEST(spill_fill_refused_config_turns_sharing_off) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  CHECK_EQ(fx_ref_arm("contextCreateFromBinary:1:5010"), 0);
  htpu_context *c1 = NULL, *c2 = NULL;
  htpu_graph *g1 = NULL, *g2 = NULL;
  int rc = load_spill(rt, "r", FLOATS, &c1, &g1);
  fx_ref_disarm();
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(load_spill(rt, "q", FLOATS, &c2, &g2), HTPU_OK);
  htpu_runtime_info ri;
  CHECK_EQ(htpu_runtime_get_info(rt, &ri), HTPU_OK);
  CHECK_EQ(ri.spill_fill_sharing, 0);
  CHECK_STR_CONTAINS(ri.spill_fill_note, "refused the spill-fill group config");
  CHECK_STR_CONTAINS(ri.spill_fill_note, "5010");
  htpu_context_load_info li = lr_info(c2);
  CHECK_EQ(li.spill_fill_group, 0);
  CHECK_STR_CONTAINS(li.spill_fill_note, "refused");
  CHECK_EQ(fx_ref_stats().spill_fill_bytes, 2 * 8ull * FLOATS);
  CHECK_EQ(lr_spill_check(g1, FLOATS), 0);
  CHECK_EQ(lr_spill_check(g2, FLOATS), 0);
  htpu_graph_close(&g1);
  htpu_graph_close(&g2);
  htpu_context_close(&c1);
  htpu_context_close(&c2);
  htpu_runtime_close(&rt);
}

/* Without context configs (205 off) no group is asked for; sharing off by option says so. */
TEST(spill_fill_without_context_configs_or_option) {
  fx_reset_env();
  CHECK_EQ(fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION, 1000), 0);
  htpu_runtime *rt = lr_runtime(1);
  htpu_context *c = NULL;
  htpu_graph *g = NULL;
  int rc = rt ? load_spill(rt, "n", FLOATS, &c, &g) : -1;
  htpu_context_load_info li = lr_info(c);
  int answer = rc ? rc : lr_spill_check(g, FLOATS);
  htpu_graph_close(&g);
  htpu_context_close(&c);
  htpu_runtime_close(&rt);
  fx_ref_reset_capabilities();
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(answer, 0);
  CHECK_EQ(li.spill_fill_group, 0);
  CHECK_STR_CONTAINS(li.spill_fill_note, "capability 205");
  CHECK_EQ(li.persistent_binary, 0);
  rt = lr_runtime(0);
  CHECK(rt);
  htpu_runtime_info ri;
  CHECK_EQ(htpu_runtime_get_info(rt, &ri), HTPU_OK);
  CHECK_EQ(ri.spill_fill_sharing, 0);
  CHECK_STR_CONTAINS(ri.spill_fill_note, "htpu_runtime_options.spill_fill_sharing");
  htpu_runtime_close(&rt);
}

typedef struct exec_arg {
  htpu_graph *g;
  uint32_t floats;
  int rc;
} exec_arg;

static void *exec_thread(void *p) {
  exec_arg *a = p;
  a->rc = lr_spill_check(a->g, a->floats);
  return NULL;
}

/* Waits (polling, up to 30 s) until the backend runs `n` graphExecutes. */
static int wait_in_flight(uint32_t n) {
  for (int i = 0; i < 30000; i++) {
    if (fx_ref_stats().executes_in_flight == n) return 0;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return -1;
}

/* Two contexts of one group: while one executes (held in the backend by its graph's latency),
 * the other's execute waits for it, so the backend, which reports any overlap of a group's
 * contexts, sees none; both answers are right. */
TEST(spill_fill_group_contexts_execute_one_at_a_time) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_context *ca = NULL, *cb = NULL;
  htpu_graph *ga = NULL, *gb = NULL;
  CHECK_EQ(load_spill(rt, "x", FLOATS, &ca, &ga), HTPU_OK);
  CHECK_EQ(load_spill(rt, "y", FLOATS, &cb, &gb), HTPU_OK);
  CHECK_EQ(lr_info(ca).spill_fill_group, lr_info(cb).spill_fill_group);
  unsigned long v0 = fx_ref_violations();
  CHECK_EQ(fx_ref_set_graph_latency("spillx", 300000), 0);
  exec_arg a = {ga, FLOATS, -1};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, exec_thread, &a) == 0);
  int held = wait_in_flight(1);
  int rb = lr_spill_check(gb, FLOATS);
  pthread_join(t, NULL);
  fx_ref_set_graph_latency("spillx", 0);
  htpu_graph_close(&ga);
  htpu_graph_close(&gb);
  htpu_context_close(&ca);
  htpu_context_close(&cb);
  htpu_runtime_close(&rt);
  CHECK_EQ(held, 0);
  CHECK_EQ(a.rc, 0);
  CHECK_EQ(rb, 0);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

/* A DSP restart loses the group with its contexts. The member's call comes first: its
 * recovery finds the group's first context lost too, recovers it, and joins it again; the
 * first context then answers without another recovery. */
TEST(spill_fill_recovery_puts_the_group_back) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_context *ca = NULL, *cb = NULL;
  htpu_graph *ga = NULL, *gb = NULL;
  CHECK_EQ(load_spill(rt, "f", FLOATS, &ca, &ga), HTPU_OK);
  CHECK_EQ(load_spill(rt, "m", FLOATS, &cb, &gb), HTPU_OK);
  unsigned long v0 = fx_ref_violations();
  htpu_stats s0, s1, s2;
  htpu_stats_get(&s0);
  CHECK_EQ(fx_ref_trigger_ssr(), 2);
  CHECK_EQ(lr_spill_check(gb, FLOATS), 0);
  htpu_stats_get(&s1);
  CHECK_EQ(lr_spill_check(ga, FLOATS), 0);
  htpu_stats_get(&s2);
  htpu_ref_context_state sa, sb;
  CHECK_EQ(fx_ref_context_state("spillf", &sa), 0);
  CHECK_EQ(fx_ref_context_state("spillm", &sb), 0);
  CHECK_EQ(s1.recoveries, s0.recoveries + 2); /* the member's and, inside it, the first's */
  CHECK_EQ(s2.recoveries, s1.recoveries);
  CHECK(sa.group_id != 0);
  CHECK_EQ(sb.group_id, sa.group_id);
  CHECK_EQ(sa.group_members, 2);
  CHECK_EQ(fx_ref_stats().spill_fill_bytes, 8ull * FLOATS);
  CHECK_EQ(lr_info(cb).spill_fill_group, lr_info(ca).spill_fill_group);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  htpu_graph_close(&ga);
  htpu_graph_close(&gb);
  htpu_context_close(&ca);
  htpu_context_close(&cb);
  htpu_runtime_close(&rt);
}
