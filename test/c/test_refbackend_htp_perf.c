/* test_refbackend_htp_perf.c - the reference backend's HTP perf infrastructure: power config ids,
 * votes, validation, RPC polling.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "htp_rig.h"
#include "test.h"

/* ---- 2. perf infrastructure ------------------------------------------------------------------ */

static const qnn_htp_perf_infrastructure_t *perf_of(stack *s) {
  const qnn_htp_device_infrastructure_t *infra = NULL;
  if (s->t->device_get_infrastructure((void *const *)&infra) != QNN_SUCCESS || !infra ||
      infra->infra_type != QNN_HTP_DEVICE_INFRASTRUCTURE_TYPE_PERF)
    return NULL;
  return &infra->u.perf_infra;
}

static qnn_htp_power_config_t dcvs_cfg(uint32_t id, uint32_t mode, uint32_t latency,
                                       uint32_t corner, uint32_t dcvs_enable) {
  qnn_htp_power_config_t c;
  memset(&c, 0, sizeof(c));
  c.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3;
  qnn_htp_dcvs_v3_t *d = &c.u.dcvs_v3_config;
  d->context_id = id;
  d->set_dcvs_enable = 1;
  d->dcvs_enable = dcvs_enable;
  d->power_mode = mode;
  d->set_sleep_latency = 1;
  d->sleep_latency = latency;
  d->set_bus_params = d->set_core_params = 1;
  d->bus_voltage_corner_min = d->bus_voltage_corner_target = d->bus_voltage_corner_max = corner;
  d->core_voltage_corner_min = d->core_voltage_corner_target = d->core_voltage_corner_max =
      corner;
  return c;
}

static qnn_error_t set1(const qnn_htp_perf_infrastructure_t *perf, uint32_t id,
                        const qnn_htp_power_config_t *c) {
  const qnn_htp_power_config_t *list[] = {c, NULL};
  return perf->set_power_config(id, list);
}

TEST(htp_perf_capability_and_ids) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  CHECK_EQ(s.t->property_has_capability(QNN_PROPERTY_DEVICE_SUPPORT_INFRASTRUCTURE), QNN_SUCCESS);
  CHECK_EQ(s.t->property_has_capability(QNN_PROPERTY_MEM_SUPPORT_ION), QNN_SUCCESS);
  CHECK_EQ(s.t->property_has_capability(QNN_PROPERTY_MEM_SUPPORT_CUSTOM), QNN_SUCCESS);
  CHECK_EQ(s.t->property_has_capability(QNN_PROPERTY_MEM_SUPPORT_DMA_BUF),
           QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(s.t->device_get_infrastructure(NULL), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  const qnn_htp_perf_infrastructure_t *perf = perf_of(&s);
  CHECK(perf && perf->create_power_config_id && perf->destroy_power_config_id &&
        perf->set_power_config);
  uint32_t a = 0, b = 0, bad = 0;
  CHECK_EQ(perf->create_power_config_id(0, 0, &a), QNN_SUCCESS);
  CHECK_EQ(perf->create_power_config_id(0xFFFFFFFFu, 0xFFFFFFFFu, &b), QNN_SUCCESS);
  /* Process-wide ids: whatever earlier tests used, never 0 (QNN's "NULL power client"). */
  CHECK(a != 0 && b != 0 && a != b);
  CHECK_EQ(perf->create_power_config_id(1, 0, &bad), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  CHECK_EQ(perf->create_power_config_id(0, 2, &bad), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  CHECK_EQ(perf->create_power_config_id(0, 0, NULL), 13000);
  CHECK_EQ(s.c.live_power_ids(), 2);
  CHECK_EQ(hstats(&s.c).live_power_config_ids, 2);
  htpu_ref_power_state ps;
  CHECK_EQ(s.c.power_state(a, &ps), 0);
  CHECK_EQ(ps.set_calls, 0);
  CHECK_EQ(ps.has_dcvs_v3, 0);
  CHECK_EQ(perf->destroy_power_config_id(a), QNN_SUCCESS);
  CHECK_EQ(perf->destroy_power_config_id(a), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  CHECK_EQ(s.c.power_state(a, &ps), 1);
  CHECK_EQ(ps.destroyed, 1);
  CHECK_EQ(s.c.power_state(b + 1, &ps), -1); /* not handed out yet */
  /* b leaks: a violation at backendFree, and the vote is released */
  s.c.reset_stats();
  CHECK_EQ(s.t->device_free(s.dev), QNN_SUCCESS);
  s.dev = NULL;
  CHECK_EQ(s.t->backend_free(s.be), QNN_SUCCESS);
  s.be = NULL;
  CHECK_EQ(hstats(&s.c).violations, 1);
  CHECK_EQ(hstats(&s.c).leaked_handles, 1);
  char want[64];
  snprintf(want, sizeof want, "power config id %u", b);
  CHECK_STR_CONTAINS(s.c.last_violation(), want);
  CHECK_EQ(s.c.live_power_ids(), 0);
  CHECK_EQ(s.c.power_state(b, &ps), 1);
  /* ids do not restart with a new backend: a released id stays unknown */
  CHECK_EQ(s.t->backend_create(s.log, NULL, &s.be), QNN_SUCCESS);
  uint32_t c = 0;
  CHECK_EQ(perf->create_power_config_id(0, 0, &c), QNN_SUCCESS);
  CHECK(c != 0 && c != a && c != b);
  qnn_htp_power_config_t ok = dcvs_cfg(b, 0x10, 100, DCVS_VOLTAGE_VCORNER_TURBO, 0);
  CHECK_EQ(set1(perf, b, &ok), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  CHECK_EQ(perf->destroy_power_config_id(b), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  CHECK_EQ(s.c.live_power_ids(), 1);
  CHECK_EQ(perf->destroy_power_config_id(c), QNN_SUCCESS);
  stack_close(&s);
}

/* The perf calls take no backend handle: an id is found by itself, whichever backend created
 * it and whichever is newest. Backend 1 (older) and backend 2 each hold one id. */
TEST(htp_perf_ids_are_process_wide_across_backends) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  const qnn_htp_perf_infrastructure_t *perf = perf_of(&s);
  CHECK(perf);
  uint32_t id1 = 0, id2 = 0;
  CHECK_EQ(perf->create_power_config_id(0, 0, &id1), QNN_SUCCESS);
  qnn_backend_handle_t be2 = NULL;
  CHECK_EQ(s.t->backend_create(s.log, NULL, &be2), QNN_SUCCESS);
  CHECK_EQ(perf->create_power_config_id(0, 0, &id2), QNN_SUCCESS); /* on backend 2, newest */
  CHECK(id1 != 0 && id2 != 0 && id1 != id2);
  /* the older backend's id is still reachable while a newer backend exists */
  qnn_htp_power_config_t v1 = dcvs_cfg(id1, 0x10, 1000, DCVS_VOLTAGE_VCORNER_SVS, 1);
  qnn_htp_power_config_t v2 = dcvs_cfg(id2, 0x10, 40, DCVS_VOLTAGE_VCORNER_MAX_VOLTAGE_CORNER, 0);
  CHECK_EQ(set1(perf, id1, &v1), QNN_SUCCESS);
  CHECK_EQ(set1(perf, id2, &v2), QNN_SUCCESS);
  /* destroying the older id leaves the newer one alone */
  CHECK_EQ(perf->destroy_power_config_id(id1), QNN_SUCCESS);
  CHECK_EQ(perf->destroy_power_config_id(id1), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  CHECK_EQ(set1(perf, id1, &v1), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  htpu_ref_power_state ps;
  CHECK_EQ(s.c.power_state(id1, &ps), 1);
  CHECK_EQ(ps.bus_corner_target, DCVS_VOLTAGE_VCORNER_SVS);
  CHECK_EQ(s.c.power_state(id2, &ps), 0);
  CHECK_EQ(ps.set_calls, 1);
  CHECK_EQ(ps.bus_corner_target, DCVS_VOLTAGE_VCORNER_MAX_VOLTAGE_CORNER);
  v2 = dcvs_cfg(id2, 0x10, 1000, DCVS_VOLTAGE_VCORNER_NOM, 1);
  CHECK_EQ(set1(perf, id2, &v2), QNN_SUCCESS);
  /* the id of backend 2 may be destroyed after backend 2 is no longer the newest */
  qnn_backend_handle_t be3 = NULL;
  CHECK_EQ(s.t->backend_create(s.log, NULL, &be3), QNN_SUCCESS);
  CHECK_EQ(perf->destroy_power_config_id(id2), QNN_SUCCESS);
  CHECK_EQ(s.c.live_power_ids(), 0);
  CHECK_EQ(s.t->backend_free(be3), QNN_SUCCESS);
  CHECK_EQ(s.t->backend_free(be2), QNN_SUCCESS);
  /* no backendFree found an id left behind, and nothing else was flagged */
  CHECK_MSG(hstats(&s.c).violations == 0, "%s", s.c.last_violation());
  CHECK_EQ(hstats(&s.c).leaked_handles, 0);
  stack_close(&s);
}

TEST(htp_perf_profiles_recorded) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  const qnn_htp_perf_infrastructure_t *perf = perf_of(&s);
  CHECK(perf);
  uint32_t id = 0;
  CHECK_EQ(perf->create_power_config_id(0, 0, &id), QNN_SUCCESS);
  /* burst, as ExecuTorch/ORT vote it: one DCVS_V3, then RPC latency in its own call */
  qnn_htp_power_config_t burst =
      dcvs_cfg(id, QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE, 40,
               DCVS_VOLTAGE_VCORNER_MAX_VOLTAGE_CORNER, 0);
  CHECK_EQ(set1(perf, id, &burst), QNN_SUCCESS);
  qnn_htp_power_config_t lat;
  memset(&lat, 0, sizeof(lat));
  lat.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY;
  lat.u.rpc_control_latency_config = 100;
  CHECK_EQ(set1(perf, id, &lat), QNN_SUCCESS);
  /* RPC polling is v69+: on v68 an unsupported config, logged, nothing applied */
  qnn_htp_power_config_t poll;
  memset(&poll, 0, sizeof(poll));
  poll.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_POLLING_TIME;
  poll.u.rpc_polling_time_config = 9999;
  hlog_clear();
  CHECK_EQ(set1(perf, id, &poll), QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG);
  CHECK_STR_CONTAINS(hlog(), "RPC_POLLING_TIME is only supported on v69 and later");
  htpu_ref_power_state ps;
  CHECK_EQ(s.c.power_state(id, &ps), 0);
  CHECK_EQ(ps.set_calls, 2);
  CHECK_EQ(ps.rejected_calls, 1);
  CHECK_EQ(ps.has_dcvs_v3, 1);
  CHECK_EQ(ps.set_dcvs_enable, 1);
  CHECK_EQ(ps.dcvs_enable, 0);
  CHECK_EQ(ps.power_mode, 0x10);
  CHECK_EQ(ps.sleep_latency_us, 40);
  CHECK_EQ(ps.bus_corner_min, 0xA0);
  CHECK_EQ(ps.bus_corner_target, 0xA0);
  CHECK_EQ(ps.core_corner_max, 0xA0);
  CHECK_EQ(ps.has_rpc_control_latency, 1);
  CHECK_EQ(ps.rpc_control_latency_us, 100);
  CHECK_EQ(ps.has_rpc_polling_time, 0);
  /* merging: a DCVS config that only sets sleep latency keeps the corners */
  qnn_htp_power_config_t only_sleep;
  memset(&only_sleep, 0, sizeof(only_sleep));
  only_sleep.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3;
  only_sleep.u.dcvs_v3_config.context_id = id;
  only_sleep.u.dcvs_v3_config.set_sleep_latency = 1;
  only_sleep.u.dcvs_v3_config.sleep_latency = 1000;
  CHECK_EQ(set1(perf, id, &only_sleep), QNN_SUCCESS);
  CHECK_EQ(s.c.power_state(id, &ps), 0);
  CHECK_EQ(ps.sleep_latency_us, 1000);
  CHECK_EQ(ps.core_corner_target, 0xA0);
  CHECK_EQ(ps.power_mode, 0x10);
  /* a down-vote (power saver, SVS2) replaces everything it sets */
  qnn_htp_power_config_t down = dcvs_cfg(id, QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_POWER_SAVER_MODE,
                                         2000, DCVS_VOLTAGE_VCORNER_SVS2, 1);
  CHECK_EQ(set1(perf, id, &down), QNN_SUCCESS);
  CHECK_EQ(perf->destroy_power_config_id(id), QNN_SUCCESS);
  CHECK_EQ(s.c.power_state(id, &ps), 1);
  CHECK_EQ(ps.power_mode, 0x4);
  CHECK_EQ(ps.dcvs_enable, 1);
  CHECK_EQ(ps.bus_corner_max, 0x30);
  CHECK_EQ(ps.sleep_latency_us, 2000);
  CHECK_EQ(ps.set_calls, 4);
  CHECK_EQ(s.c.live_power_ids(), 0);
  CHECK_EQ(hstats(&s.c).violations, 0);
  stack_close(&s);
}

TEST(htp_perf_validation) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  const qnn_htp_perf_infrastructure_t *perf = perf_of(&s);
  CHECK(perf);
  uint32_t id = 0;
  CHECK_EQ(perf->create_power_config_id(0, 0, &id), QNN_SUCCESS);
  qnn_htp_power_config_t ok = dcvs_cfg(id, 0x10, 100, DCVS_VOLTAGE_VCORNER_TURBO, 0);
  qnn_htp_power_config_t c;
#define EXPECT(code, needle)                                           \
  do {                                                                 \
    hlog_clear();                                                      \
    CHECK_EQ(set1(perf, id, &c), code);                                \
    CHECK_STR_CONTAINS(hlog(), needle);                                \
    c = ok;                                                            \
  } while (0)
  c = ok;
  c.u.dcvs_v3_config.context_id = id + 5;
  EXPECT(QNN_HTP_PERF_ERROR_INVALID_INPUT, "contextId");
  c.u.dcvs_v3_config.power_mode = 0x3;
  EXPECT(QNN_HTP_PERF_ERROR_INVALID_INPUT, "powerMode 0x3");
  c.u.dcvs_v3_config.bus_voltage_corner_target = 0x85;
  EXPECT(QNN_HTP_PERF_ERROR_INVALID_INPUT, "bus voltage corner target 0x85");
  c.u.dcvs_v3_config.core_voltage_corner_min = 0;
  EXPECT(QNN_HTP_PERF_ERROR_INVALID_INPUT, "core voltage corner min 0x0");
  c.u.dcvs_v3_config.sleep_latency = 5;
  EXPECT(QNN_HTP_PERF_ERROR_INVALID_INPUT, "sleepLatency 5");
  c.u.dcvs_v3_config.sleep_latency = 70000;
  EXPECT(QNN_HTP_PERF_ERROR_INVALID_INPUT, "outside 10..65535");
  c.option = 4; /* HMX timeout: not supported here */
  EXPECT(QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG, "option 4 is not supported");
#undef EXPECT
  /* corners may be 0 when their set flag is 0; sleep latency is free when not set */
  c = ok;
  c.u.dcvs_v3_config.set_core_params = 0;
  c.u.dcvs_v3_config.core_voltage_corner_min = c.u.dcvs_v3_config.core_voltage_corner_target =
      c.u.dcvs_v3_config.core_voltage_corner_max = 0;
  c.u.dcvs_v3_config.set_sleep_latency = 0;
  c.u.dcvs_v3_config.sleep_latency = 0;
  CHECK_EQ(set1(perf, id, &c), QNN_SUCCESS);
  /* TURBO_L2 is a defined corner */
  c = dcvs_cfg(id, 0x10, 100, 0x92, 0);
  CHECK_EQ(set1(perf, id, &c), QNN_SUCCESS);
  /* all or nothing: a bad second config leaves the first unapplied */
  qnn_htp_power_config_t lat;
  memset(&lat, 0, sizeof(lat));
  lat.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY;
  lat.u.rpc_control_latency_config = 123;
  qnn_htp_power_config_t bad = ok;
  bad.u.dcvs_v3_config.power_mode = 0;
  const qnn_htp_power_config_t *pair[] = {&lat, &bad, NULL};
  CHECK_EQ(perf->set_power_config(id, pair), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  htpu_ref_power_state ps;
  CHECK_EQ(s.c.power_state(id, &ps), 0);
  CHECK_EQ(ps.has_rpc_control_latency, 0);
  CHECK_EQ(ps.set_calls, 2);
  CHECK_EQ(ps.rejected_calls, 8);
  /* unknown ids; a NULL array is "no options": success, nothing changes */
  CHECK_EQ(set1(perf, id + 1, &ok), QNN_HTP_PERF_ERROR_INVALID_INPUT); /* not handed out */
  CHECK_EQ(perf->set_power_config(id, NULL), QNN_SUCCESS);
  htpu_ref_power_state after_null;
  CHECK_EQ(s.c.power_state(id, &after_null), 0);
  CHECK_EQ(after_null.set_calls, ps.set_calls + 1);
  CHECK_EQ(after_null.rejected_calls, ps.rejected_calls); /* an unknown id is nobody's */
  CHECK_EQ(after_null.has_rpc_control_latency, 0);
  CHECK_EQ(after_null.power_mode, ps.power_mode);
  /* fault rules reach the perf calls */
  CHECK_EQ(s.c.arm("setPowerConfig:1:13003,createPowerConfigId:1:13005"), 0);
  uint32_t id2 = 0;
  CHECK_EQ(perf->create_power_config_id(0, 0, &id2), 13005);
  CHECK_EQ(set1(perf, id, &ok), 13003);
  CHECK_EQ(set1(perf, id, &ok), QNN_SUCCESS);
  s.c.disarm();
  CHECK_EQ(perf->destroy_power_config_id(id), QNN_SUCCESS);
  stack_close(&s);
}

TEST(htp_perf_rpc_polling_on_v69) {
  stack s;
  CHECK_EQ(stack_open(&s, "arch=69"), 0);
  const qnn_htp_perf_infrastructure_t *perf = perf_of(&s);
  CHECK(perf);
  uint32_t id = 0;
  CHECK_EQ(perf->create_power_config_id(0, 0, &id), QNN_SUCCESS);
  qnn_htp_power_config_t poll;
  memset(&poll, 0, sizeof(poll));
  poll.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_POLLING_TIME;
  poll.u.rpc_polling_time_config = 9999;
  CHECK_EQ(set1(perf, id, &poll), QNN_SUCCESS);
  poll.u.rpc_polling_time_config = 10000;
  CHECK_EQ(set1(perf, id, &poll), QNN_HTP_PERF_ERROR_INVALID_INPUT);
  htpu_ref_power_state ps;
  CHECK_EQ(s.c.power_state(id, &ps), 0);
  CHECK_EQ(ps.has_rpc_polling_time, 1);
  CHECK_EQ(ps.rpc_polling_time_us, 9999);
  CHECK_EQ(perf->destroy_power_config_id(id), QNN_SUCCESS);
  stack_close(&s);
}
