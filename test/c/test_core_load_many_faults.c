/* test_core_load_many_faults.c - htpu_context_open_many when something goes wrong: each model
 * still gets what a load of it alone would give it (one more create after a DSP restart, its
 * own error). */
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
