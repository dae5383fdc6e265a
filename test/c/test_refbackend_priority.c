/* test_refbackend_priority.c - priorities in the reference backend: the context's PRIORITY
 * config (the default of its graphs) at contextCreateFromBinary[WithSignal], graphSetConfig's
 * PRIORITY on a retrieved graph, the errors for bad values and for capabilities switched off
 * (205 context configs, 302 graphSetConfig, 306 priority control), and what the control API
 * reports so that tests of the core can check what was passed.
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "refb_rig.h"
#include "test.h"

static qnn_context_config_t prio_cfg(uint32_t p) {
  qnn_context_config_t c;
  memset(&c, 0, sizeof(c));
  c.option = QNN_CONTEXT_CONFIG_OPTION_PRIORITY;
  c.u.priority = p;
  return c;
}

TEST(refb_priority_context_config) {
  static const uint32_t valid[] = {QNN_PRIORITY_LOW, QNN_PRIORITY_NORMAL,
                                   QNN_PRIORITY_NORMAL_HIGH, QNN_PRIORITY_HIGH};
  for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
    rig r;
    qnn_context_config_t c = prio_cfg(valid[i]);
    const qnn_context_config_t *cfg[] = {&c, NULL};
    CHECK_EQ(rig_open_cfg(&r, RB_ADD, "add", cfg), 0);
    htpu_ref_graph_state st;
    CHECK_EQ(r.c.graph_state("add", &st), 0);
    CHECK_EQ(st.context_priority, valid[i]);
    CHECK_EQ(st.graph_priority, valid[i]); /* the default of its graphs */
    CHECK_EQ(st.graph_priority_set, 0);
    CHECK_EQ(st.context_handle, (uint64_t)(uintptr_t)r.ctx);
    rig_close(&r);
  }
  /* none given: NORMAL; the last of several wins */
  rig r;
  CHECK_EQ(rig_open_cfg(&r, RB_ADD, "add", NULL), 0);
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.context_priority, QNN_PRIORITY_NORMAL);
  rig_close(&r);
  qnn_context_config_t lo = prio_cfg(QNN_PRIORITY_LOW), hi = prio_cfg(QNN_PRIORITY_HIGH);
  const qnn_context_config_t *two[] = {&lo, &hi, NULL};
  CHECK_EQ(rig_open_cfg(&r, RB_ADD, "add", two), 0);
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.context_priority, QNN_PRIORITY_HIGH);
  rig_close(&r);
  /* values that are no priority: 5010, no context */
  static const uint32_t bad[] = {1, 99, 250, QNN_PRIORITY_UNDEFINED};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    qnn_context_config_t c = prio_cfg(bad[i]);
    const qnn_context_config_t *cfg[] = {&lo, &c, NULL};
    log_clear();
    CHECK_EQ(rig_open_cfg(&r, RB_ADD, "add", cfg), QNN_CONTEXT_ERROR_INVALID_CONFIG);
    CHECK_STR_CONTAINS(log_text(), "(expected LOW 0, NORMAL 100, NORMAL_HIGH 150 or HIGH 200)");
    CHECK_EQ(stats_of(&r.c).live_contexts, 0);
    rig_close(&r);
  }
}

TEST(refb_priority_capabilities_off) {
  qnn_context_config_t hi = prio_cfg(QNN_PRIORITY_HIGH);
  const qnn_context_config_t *cfg[] = {&hi, NULL};
  rig r;
  /* 306 off: a priority config is refused (a context without one loads) */
  CHECK_EQ(rig_open(&r, NULL, NULL), 0);
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL, 1000), 0);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t ctx = NULL;
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 306 off");
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &ctx, NULL),
           QNN_SUCCESS);
  CHECK_EQ(r.t->context_free(ctx, NULL), QNN_SUCCESS);
  /* 205 off: any context config is refused; NULL or an empty list are not configs */
  r.c.reset_capabilities();
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION, 1000), 0);
  log_clear();
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, cfg, bin, len, &ctx, NULL),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 205 off");
  const qnn_context_config_t *empty[] = {NULL};
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, empty, bin, len, &ctx, NULL),
           QNN_SUCCESS);
  CHECK_EQ(r.t->context_free(ctx, NULL), QNN_SUCCESS);
  /* the signal variant reads the same configs */
  r.c.reset_capabilities();
  CHECK_EQ(r.t->context_create_from_binary_with_signal(r.be, r.dev, cfg, bin, len, &ctx, NULL,
                                                       NULL),
           QNN_SUCCESS);
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.context_priority, QNN_PRIORITY_HIGH);
  CHECK_EQ(r.t->context_free(ctx, NULL), QNN_SUCCESS);
  free(bin);
  rig_close(&r);
}

static qnn_error_t set_graph_prio(rig *r, uint32_t p) {
  qnn_graph_config_t c;
  memset(&c, 0, sizeof(c));
  c.option = QNN_GRAPH_CONFIG_OPTION_PRIORITY;
  c.u.priority = p;
  const qnn_graph_config_t *cfg[] = {&c, NULL};
  return r->t->graph_set_config(r->g, cfg);
}

TEST(refb_priority_graph_set_config) {
  rig r;
  qnn_context_config_t lo = prio_cfg(QNN_PRIORITY_LOW);
  const qnn_context_config_t *cfg[] = {&lo, NULL};
  CHECK_EQ(rig_open_cfg(&r, RB_ADD, "add", cfg), 0);
  /* a retrieved graph takes its own priority; its context keeps the default */
  CHECK_EQ(set_graph_prio(&r, QNN_PRIORITY_NORMAL_HIGH), QNN_SUCCESS);
  htpu_ref_graph_state st;
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.graph_priority, QNN_PRIORITY_NORMAL_HIGH);
  CHECK_EQ(st.graph_priority_set, 1);
  CHECK_EQ(st.context_priority, QNN_PRIORITY_LOW);
  /* a bad value: 6000, nothing changes (all or nothing with a good one before it) */
  qnn_graph_config_t good, badc, other;
  memset(&good, 0, sizeof(good));
  good.option = QNN_GRAPH_CONFIG_OPTION_PRIORITY;
  good.u.priority = QNN_PRIORITY_HIGH;
  badc = good;
  badc.u.priority = 7;
  const qnn_graph_config_t *mixed[] = {&good, &badc, NULL};
  log_clear();
  CHECK_EQ(r.t->graph_set_config(r.g, mixed), QNN_GRAPH_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(log_text(), "graphSetConfig: config 1: priority 7");
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.graph_priority, QNN_PRIORITY_NORMAL_HIGH);
  /* other options are not supported here; NULL changes nothing */
  memset(&other, 0, sizeof(other));
  other.option = QNN_GRAPH_CONFIG_OPTION_CUSTOM;
  const qnn_graph_config_t *other_l[] = {&other, NULL};
  CHECK_EQ(r.t->graph_set_config(r.g, other_l), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(r.t->graph_set_config(r.g, NULL), QNN_SUCCESS);
  CHECK_EQ(r.t->graph_set_config((void *)0x77, NULL), QNN_GRAPH_ERROR_INVALID_HANDLE);
  /* 306 off: priority refused; 302 off: graphSetConfig itself */
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL, 1000), 0);
  CHECK_EQ(set_graph_prio(&r, QNN_PRIORITY_HIGH), QNN_COMMON_ERROR_NOT_SUPPORTED);
  r.c.reset_capabilities();
  CHECK_EQ(r.c.set_capability(QNN_PROPERTY_GRAPH_SUPPORT_CONFIG, 1000), 0);
  log_clear();
  CHECK_EQ(set_graph_prio(&r, QNN_PRIORITY_HIGH), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_STR_CONTAINS(log_text(), "capability 302 off");
  r.c.reset_capabilities();
  /* after a DSP restart the graph is gone */
  CHECK(r.c.trigger_ssr() >= 1);
  CHECK_EQ(set_graph_prio(&r, QNN_PRIORITY_HIGH), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(r.c.graph_state("add", &st), 0);
  CHECK_EQ(st.graph_priority, QNN_PRIORITY_NORMAL_HIGH);
  CHECK_EQ(r.c.graph_state("no_such_graph", &st), -1);
  rig_close(&r);
}
