/* test_core_load_many_faults.c - htpu_context_open_many when something goes wrong: each model
 * still gets what a load of it alone would give it (one more create after a DSP restart, its
 * own error), a spill-fill group's first context is always a model that loaded and stays while
 * its members live, and a request's lent buffer is released exactly once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "load_rig.h"
#include "test.h"

/* Three copies of the weighted model from one file, without spill-fill sharing (so all three
 * go in the list), the second create failing with 1007 (`rule`): through the list call
 * (list_cap) or one after another, on a runtime with `retries` recovery retries. Each
 * request's rc in rcs; returns how many loaded models answered right. */
static int restart_during_loads(int list_cap, const char *rule, uint32_t retries, int *rcs,
                                uint32_t *qnn) {
  fx_reset_env();
  if (!list_cap)
    fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC, 1000);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.recovery_retries = retries;
  htpu_runtime *rt = NULL;
  if (htpu_runtime_open(&o, &rt) != HTPU_OK) printf("    runtime: %s\n", htpu_last_error());
  const char *p = fx_build_model_file("many_restart.bin", LR_WEIGHTED);
  char *path = p ? strdup(p) : NULL;
  char err[3][512] = {{0}};
  htpu_load_request req[3];
  memset(req, 0, sizeof req);
  for (int i = 0; i < 3; i++)
    req[i] = (htpu_load_request){.path = path, .error = err[i], .error_len = sizeof err[i],
                                 .rc = HTPU_EINVAL};
  if (rt && path && fx_ref_arm(rule) == 0) htpu_context_open_many(rt, req, 3);
  fx_ref_disarm();
  int answered = 0;
  for (int i = 0; i < 3; i++) {
    rcs[i] = req[i].rc;
    qnn[i] = req[i].qnn_code;
    if (req[i].rc) printf("    request %d: %s\n", i, err[i]);
    htpu_graph *g = NULL;
    if (req[i].ctx && htpu_graph_open(req[i].ctx, "weighted", &g) == 0 &&
        lr_weighted_check(g, (float)i) == 0)
      answered++;
    htpu_graph_close(&g);
    htpu_context_close(&req[i].ctx);
  }
  htpu_runtime_close(&rt);
  free(path);
  fx_ref_reset_capabilities();
  return answered;
}

/* A DSP restart (1007, with and without the restart itself) meeting one create of a list: the
 * model gets one more create, as a load of it alone does (and as one after another does), so
 * every model loads and answers. */
TEST(load_many_a_dsp_restart_gets_one_more_create_as_a_single_load) {
  static const char *const rules[] = {"contextCreateFromBinary:2:1007:1:ssr",
                                      "contextCreateFromBinary:2:1007:1"};
  unsigned long v0 = fx_ref_violations();
  for (int list = 1; list >= 0; list--)
    for (int k = 0; k < 2; k++) {
      int rcs[3];
      uint32_t qnn[3];
      int answered = restart_during_loads(list, rules[k], 1, rcs, qnn);
      for (int i = 0; i < 3; i++)
        CHECK_MSG(rcs[i] == HTPU_OK, "list %d, %s: request %d: %s", list, rules[k], i,
                  htpu_err_name(rcs[i]));
      CHECK_MSG(answered == 3, "list %d, %s: %d answered", list, rules[k], answered);
    }
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

/* Without recovery retries (the runtime option 0: off) a restart fails the model it met, in
 * the list as alone: one model fails with 1007, the others load. */
TEST(load_many_without_recovery_retries_a_dsp_restart_fails_its_model_alone) {
  for (int list = 1; list >= 0; list--) {
    int rcs[3];
    uint32_t qnn[3];
    restart_during_loads(list, "contextCreateFromBinary:2:1007:1", 0, rcs, qnn);
    int failed = 0;
    for (int i = 0; i < 3; i++) {
      if (!rcs[i]) continue;
      failed++;
      CHECK_EQ(rcs[i], HTPU_EQNN);
      CHECK_EQ(qnn[i], 1007);
    }
    CHECK_MSG(failed == 1, "list %d: %d failed", list, failed);
  }
}

typedef struct group_list {
  char *small, *big; /* paths: 1024-float and 4096-float spill models */
  htpu_load_request req[3];
  char err[3][512];
  htpu_profile *prof;
  htpu_load_options lo;
} group_list;

/* The small model (which a list starting a group creates first, alone) with options lo, and
 * the big one twice. */
static int group_list_init(group_list *t, const char *tag) {
  memset(t, 0, sizeof *t);
  char *s = lr_spill_model(tag, 1024), *b = lr_spill_model(tag, 4096), f[2][32];
  snprintf(f[0], sizeof f[0], "many_first_%s.bin", tag);
  snprintf(f[1], sizeof f[1], "many_member_%s.bin", tag);
  const char *ps = s ? fx_build_model_file(f[0], s) : NULL;
  t->small = ps ? strdup(ps) : NULL;
  const char *pb = b ? fx_build_model_file(f[1], b) : NULL;
  t->big = pb ? strdup(pb) : NULL;
  free(s);
  free(b);
  t->lo.profile = &t->prof;
  t->req[0] = (htpu_load_request){.path = t->small, .opts = &t->lo};
  t->req[1] = (htpu_load_request){.path = t->big};
  t->req[2] = (htpu_load_request){.path = t->big};
  for (int i = 0; i < 3; i++) t->req[i].error = t->err[i], t->req[i].error_len = 512;
  return t->small && t->big ? 0 : -1;
}

/* The two big models after the call: one group of their own, whose first context is one of
 * them (created alone, the other in the list), and both answer after a DSP restart (the group
 * recovered). Then closed, member and first in either order: 0 when all holds. */
static int members_hold(group_list *t, int close_first) {
  htpu_context_load_info li[2] = {lr_info(t->req[1].ctx), lr_info(t->req[2].ctx)};
  int rc = 0;
  if (!li[0].spill_fill_group || li[0].spill_fill_group != li[1].spill_fill_group ||
      li[0].list_loaded + li[1].list_loaded != 1) {
    printf("    groups %llu/%llu, list-loaded %d/%d\n",
           (unsigned long long)li[0].spill_fill_group,
           (unsigned long long)li[1].spill_fill_group, li[0].list_loaded, li[1].list_loaded);
    rc = -1;
  }
  fx_ref_trigger_ssr();
  for (int i = 1; i < 3 && !rc; i++) {
    htpu_graph *g = NULL;
    rc = htpu_graph_open(t->req[i].ctx, NULL, &g);
    if (!rc) rc = lr_spill_check(g, 4096);
    htpu_graph_close(&g);
  }
  /* the one created alone is the group's first */
  int first = li[0].list_loaded ? 2 : 1;
  int order[2] = {close_first ? first : 3 - first, close_first ? 3 - first : first};
  for (int k = 0; k < 2; k++) htpu_context_close(&t->req[order[k]].ctx);
  return rc;
}

static void group_list_free(group_list *t) {
  for (int i = 0; i < 3; i++) htpu_context_close(&t->req[i].ctx);
  htpu_profile_free(t->prof);
  free(t->small);
  free(t->big);
}

/* A model that failed already (its profile cannot be made: a bad level) is never created nor
 * made the group's first: the next smallest is, and the failed one's graphs are never
 * deserialized. */
TEST(load_many_group_first_is_a_model_still_good) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(1);
  group_list t;
  CHECK_EQ(group_list_init(&t, "g"), 0);
  t.lo.profile_level = 99;
  htpu_ref_stats s0 = fx_ref_stats();
  int rc = rt ? htpu_context_open_many(rt, t.req, 3) : -1;
  htpu_ref_stats s1 = fx_ref_stats();
  int held = members_hold(&t, 1);
  htpu_ref_stats s2 = fx_ref_stats();
  group_list_free(&t);
  htpu_runtime_close(&rt);
  CHECK_EQ(rc, HTPU_EINVAL);
  CHECK_EQ(t.req[0].rc, HTPU_EINVAL);
  CHECK_STR_CONTAINS(t.err[0], "profile level 99");
  CHECK_EQ(t.req[1].rc, HTPU_OK);
  CHECK_EQ(t.req[2].rc, HTPU_OK);
  CHECK_EQ(s1.graphs_deserialized - s0.graphs_deserialized, 2);
  CHECK_EQ(held, 0);
  CHECK_EQ(s2.unknown_behaviours, s0.unknown_behaviours);
  CHECK_MSG(s2.violations == s0.violations, "%s", fx_ref_last_violation());
}

/* The group's first model's load profile cannot be read back: it fails (as a load of it alone
 * does), before any other model named its context, which is freed then; the others form a
 * group whose first context stays while they live (no unknown behaviour in the backend). */
TEST(load_many_group_first_whose_profile_cannot_be_read_fails_before_others_join) {
  for (int close_first = 1; close_first >= 0; close_first--) {
    fx_reset_env();
    htpu_runtime *rt = lr_runtime(1);
    group_list t;
    CHECK_EQ(group_list_init(&t, close_first ? "h" : "i"), 0);
    t.lo.profile_level = HTPU_PROFILE_BASIC;
    htpu_ref_stats s0 = fx_ref_stats();
    CHECK_EQ(fx_ref_arm("profileGetEvents:1:1002"), 0);
    int rc = rt ? htpu_context_open_many(rt, t.req, 3) : -1;
    fx_ref_disarm();
    int held = members_hold(&t, close_first);
    htpu_ref_stats s1 = fx_ref_stats();
    group_list_free(&t);
    htpu_runtime_close(&rt);
    CHECK_EQ(rc, HTPU_EQNN);
    CHECK_EQ(t.req[0].rc, HTPU_EQNN);
    CHECK_EQ(t.req[0].qnn_code, 1002);
    CHECK(t.prof == NULL);
    CHECK_EQ(t.req[1].rc, HTPU_OK);
    CHECK_EQ(t.req[2].rc, HTPU_OK);
    CHECK_EQ(held, 0);
    CHECK_EQ(s1.unknown_behaviours, s0.unknown_behaviours);
    CHECK_MSG(s1.violations == s0.violations, "%s", fx_ref_last_violation());
    CHECK_EQ(fx_ref_stats().live_contexts, 0);
  }
}

typedef struct releases {
  int n;
} releases;
static void count_release(void *arg) { ((releases *)arg)->n++; }

/* A request's source is a path or a buffer: both, an empty buffer, a NULL one of some length
 * or neither is refused naming what is wrong; a lent buffer is released exactly once whatever
 * becomes of its request. */
TEST(load_many_bad_sources_refused_and_lent_buffers_released_once) {
  fx_reset_env();
  htpu_runtime *rt = lr_runtime(0);
  size_t len = 0;
  void *buf = fx_build_model(LR_WEIGHTED, &len);
  const char *p = fx_build_model_file("many_src.bin", LR_WEIGHTED);
  char *path = p ? strdup(p) : NULL;
  releases r[5] = {{0}};
  htpu_load_options lo[5];
  for (int i = 0; i < 5; i++)
    lo[i] = (htpu_load_options){.buffer_release = count_release, .buffer_release_arg = &r[i]};
  char err[5][512] = {{0}};
  htpu_load_request req[5] = {{.path = path, .buf = buf, .len = len, .opts = &lo[0]},
                              {.buf = buf, .len = 0, .opts = &lo[1]},
                              {.buf = NULL, .len = len, .opts = &lo[2]},
                              {.opts = &lo[3]},
                              {.buf = buf, .len = len, .opts = &lo[4]}};
  for (int i = 0; i < 5; i++) req[i].error = err[i], req[i].error_len = sizeof err[i];
  int rc = rt && buf && path ? htpu_context_open_many(rt, req, 5) : -1;
  int lent_before_close = r[4].n;
  for (int i = 0; i < 5; i++) htpu_context_close(&req[i].ctx);
  htpu_runtime_close(&rt);
  free(buf);
  free(path);
  CHECK_EQ(rc, HTPU_EINVAL);
  static const char *const says[4] = {"names both a path and a buffer; expected one of them",
                                      "has an empty buffer (len 0)",
                                      "has a NULL buffer of len > 0",
                                      "has neither a path nor a buffer"};
  for (int i = 0; i < 4; i++) {
    CHECK_EQ(req[i].rc, HTPU_EINVAL);
    CHECK_STR_CONTAINS(err[i], says[i]);
  }
  CHECK_EQ(req[4].rc, HTPU_OK);
  /* lent: the refused ones at once, the loaded one when its context went */
  CHECK_EQ(r[0].n, 1);
  CHECK_EQ(r[1].n, 1);
  CHECK_EQ(r[2].n, 0); /* no buffer was lent */
  CHECK_EQ(r[3].n, 0);
  CHECK_EQ(lent_before_close, 0);
  CHECK_EQ(r[4].n, 1);
}
