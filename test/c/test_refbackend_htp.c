/* test_refbackend_htp.c - the reference backend's HTP device features: platform info, device
 * configs, perf infrastructure (power votes), the rpcmem allocator, memRegister and MEMHANDLE
 * execution, binary validation against the device, DSP subsystem restarts and start-up faults.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../reference/backend/htpu_ref_control.h"
#include "../../reference/cdsprpc/htpu_refcdsprpc.h"
#include "qnn/qnn_abi.h"
#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_htp_abi.h"
#include "refmodel.h"
#include "fixture.h"
#include "ref_control.h"
#include "test.h"

/* ---- fixtures ----------------------------------------------------------------------------- */

static const char *HTP_ADD =
    "graph add\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n";

static pthread_mutex_t g_hlog_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_hlog[32768];

static void hlog_cb(const char *fmt, uint32_t level, uint64_t ts, va_list args) {
  (void)ts;
  char line[1024];
  vsnprintf(line, sizeof(line), fmt, args);
  pthread_mutex_lock(&g_hlog_lock);
  size_t used = strlen(g_hlog);
  if (used + strlen(line) + 8 < sizeof(g_hlog))
    snprintf(g_hlog + used, sizeof(g_hlog) - used, "%u:%s\n", level, line);
  pthread_mutex_unlock(&g_hlog_lock);
}

static void hlog_clear(void) {
  pthread_mutex_lock(&g_hlog_lock);
  g_hlog[0] = '\0';
  pthread_mutex_unlock(&g_hlog_lock);
}

static const char *hlog(void) {
  static char copy[sizeof(g_hlog)];
  pthread_mutex_lock(&g_hlog_lock);
  memcpy(copy, g_hlog, sizeof(copy));
  pthread_mutex_unlock(&g_hlog_lock);
  return copy;
}

/* The control API of the backend and the allocator library (ref_control.h), with a clean
 * start and finish around each test. */
typedef ref_ctl hctl;

static const qnn_interface_table_t *htp_table(const hctl *c);

static int hctl_open(hctl *c) {
  if (ref_ctl_open(c) != 0 || !htp_table(c)) return -1;
  c->forget_power();
  hlog_clear();
  return 0;
}

static void hctl_close(hctl *c) { ref_ctl_close(c); }

static htpu_ref_stats hstats(const hctl *c) { return ref_ctl_stats(c); }

/* The QNN functions of the first provider (with no HTPU_REF_PROVIDERS: the default one). */
static const qnn_interface_table_t *htp_table(const hctl *c) {
  const qnn_interface_t *p = ref_first_provider(c);
  return p ? &p->table : NULL;
}

/* log -> backend -> device (with `device_env` as HTPU_REF_DEVICE around backendCreate). */
typedef struct stack {
  hctl c;
  const qnn_interface_table_t *t;
  qnn_log_handle_t log;
  qnn_backend_handle_t be;
  qnn_device_handle_t dev;
} stack;

static qnn_error_t stack_open(stack *s, const char *device_env) {
  memset(s, 0, sizeof(*s));
  if (hctl_open(&s->c) != 0) return 1;
  s->t = htp_table(&s->c);
  qnn_error_t rc = s->t->log_create(hlog_cb, QNN_LOG_LEVEL_DEBUG, &s->log);
  if (rc) return rc;
  if (device_env) setenv("HTPU_REF_DEVICE", device_env, 1);
  rc = s->t->backend_create(s->log, NULL, &s->be);
  unsetenv("HTPU_REF_DEVICE");
  if (rc) return rc;
  return s->t->device_create(s->log, NULL, &s->dev);
}

static void stack_close(stack *s) {
  if (s->t) {
    if (s->dev) s->t->device_free(s->dev);
    if (s->be) s->t->backend_free(s->be);
    if (s->log) s->t->log_free(s->log);
  }
  hctl_close(&s->c);
}

/* A context of `text` on the stack's device, and its graph `graph`. */
static qnn_error_t load(stack *s, const char *text, const char *graph, qnn_context_handle_t *ctx,
                        qnn_graph_handle_t *g) {
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return 3;
  qnn_error_t rc = s->t->context_create_from_binary(s->be, s->dev, NULL, bin, len, ctx, NULL);
  free(bin);
  if (rc == QNN_SUCCESS && graph) rc = s->t->graph_retrieve(*ctx, graph, g);
  return rc;
}

static const qnn_htp_on_chip_device_info_t *on_chip(const qnn_device_platform_info_t *p) {
  if (!p || p->version != QNN_DEVICE_PLATFORM_INFO_VERSION_1 || p->u.v1.num_hw_devices != 1)
    return NULL;
  const qnn_device_hardware_device_info_t *d = &p->u.v1.hw_devices[0];
  if (d->version != QNN_DEVICE_HARDWARE_DEVICE_INFO_VERSION_1 || d->u.v1.num_cores != 1 ||
      d->u.v1.device_type != QNN_HTP_DEVICE_TYPE_ON_CHIP || !d->u.v1.cores ||
      d->u.v1.cores[0].version != QNN_DEVICE_CORE_INFO_VERSION_1)
    return NULL;
  const qnn_htp_device_info_extension_t *ext = d->u.v1.device_info_extension;
  if (!ext || ext->dev_type != QNN_HTP_DEVICE_TYPE_ON_CHIP) return NULL;
  return &ext->u.on_chip_device;
}

/* ---- 1. platform info and device configs ---------------------------------------------------- */

TEST(htp_platform_info_defaults_and_leaks) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  const qnn_device_platform_info_t *p = NULL, *p2 = NULL;
  CHECK_EQ(s.t->device_get_platform_info(s.log, &p), QNN_SUCCESS);
  const qnn_htp_on_chip_device_info_t *oc = on_chip(p);
  CHECK(oc);
  CHECK_EQ(oc->arch, 68);
  CHECK_EQ(oc->soc_model, 35);
  CHECK_EQ(oc->vtcm_size, 2); /* MB by default, the documented unit */
  CHECK_EQ(oc->signed_pd_support, 0);
  CHECK_EQ(oc->dlbc_support, 0);
  CHECK_EQ(p->u.v1.hw_devices[0].u.v1.cores[0].u.v1.core_type, 0);
  CHECK_EQ(hstats(&s.c).live_platform_infos, 1);
  CHECK_EQ(s.t->device_free_platform_info(s.log, p), QNN_SUCCESS);
  CHECK_EQ(hstats(&s.c).live_platform_infos, 0);
  /* freeing twice, or something never handed out, is a violation */
  CHECK_EQ(s.t->device_free_platform_info(s.log, p), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(s.c.last_violation(), "deviceFreePlatformInfo");
  CHECK_EQ(s.t->device_get_platform_info(s.log, NULL), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(s.t->device_free_platform_info(s.log, NULL), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(s.t->device_get_platform_info((qnn_log_handle_t)(uintptr_t)0x77, &p2),
           QNN_DEVICE_ERROR_INVALID_HANDLE);
  /* NULL log is allowed */
  CHECK_EQ(s.t->device_get_platform_info(NULL, &p2), QNN_SUCCESS);
  CHECK(on_chip(p2));
  /* deviceGetInfo: backend-owned, same device */
  const qnn_device_platform_info_t *di = NULL, *di2 = NULL;
  CHECK_EQ(s.t->device_get_info(s.dev, &di), QNN_SUCCESS);
  CHECK_EQ(s.t->device_get_info(s.dev, &di2), QNN_SUCCESS);
  CHECK(di == di2 && on_chip(di) && on_chip(di)->arch == 68);
  CHECK_EQ(s.t->device_get_info((qnn_device_handle_t)(uintptr_t)0x55, &di),
           QNN_DEVICE_ERROR_INVALID_HANDLE);
  CHECK_EQ(s.t->device_get_info(s.dev, NULL), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  /* p2 never freed: flagged and freed at backendFree */
  s.c.reset_stats();
  CHECK_EQ(s.t->device_free(s.dev), QNN_SUCCESS);
  s.dev = NULL;
  CHECK_EQ(s.t->backend_free(s.be), QNN_SUCCESS);
  s.be = NULL;
  htpu_ref_stats st = hstats(&s.c);
  CHECK_EQ(st.violations, 1);
  CHECK_EQ(st.leaked_handles, 1);
  CHECK_EQ(st.live_platform_infos, 0);
  CHECK_STR_CONTAINS(s.c.last_violation(), "deviceFreePlatformInfo");
  stack_close(&s);
}

TEST(htp_device_env_configures_the_device) {
  stack s;
  CHECK_EQ(stack_open(&s, "soc_model=93,vtcm_mb=4,arch=69,dlbc=1"), 0);
  const qnn_device_platform_info_t *p = NULL;
  CHECK_EQ(s.t->device_get_info(s.dev, &p), QNN_SUCCESS);
  const qnn_htp_on_chip_device_info_t *oc = on_chip(p);
  CHECK(oc);
  CHECK_EQ(oc->arch, 69);
  CHECK_EQ(oc->soc_model, 93);
  CHECK_EQ(oc->vtcm_size, 4);
  CHECK_EQ(oc->dlbc_support, 1);
  stack_close(&s);
  /* VTCM in bytes instead: the other encoding the core accepts */
  CHECK_EQ(stack_open(&s, "vtcm_bytes=8388608"), 0);
  CHECK_EQ(s.t->device_get_info(s.dev, &p), QNN_SUCCESS);
  oc = on_chip(p);
  CHECK(oc);
  CHECK_EQ(oc->vtcm_size, 8388608);
  stack_close(&s);
  /* a bad spec fails backendCreate with the reason in the log */
  static const char *const bad[] = {"arch=60", "vtcm=2", "arch", "soc_model=x", "signed_pd=2",
                                    "vtcm_bytes=1048575", "vtcm_mb=1025",
                                    "vtcm_mb=8,vtcm_bytes=8388608"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    qnn_error_t rc = stack_open(&s, bad[i]);
    CHECK_MSG(rc == QNN_BACKEND_ERROR_CANNOT_INITIALIZE, "'%s': %llu", bad[i],
              (unsigned long long)rc);
    CHECK_STR_CONTAINS(hlog(), "HTPU_REF_DEVICE");
    stack_close(&s);
  }
  CHECK_EQ(stack_open(&s, "vtcm_mb=8,vtcm_bytes=8388608"), QNN_BACKEND_ERROR_CANNOT_INITIALIZE);
  CHECK_STR_CONTAINS(hlog(), "VTCM given twice at 'vtcm_bytes=8388608'");
  stack_close(&s);
}

TEST(htp_device_custom_configs) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  qnn_htp_device_custom_config_t cc;
  qnn_device_config_t dc = {QNN_DEVICE_CONFIG_OPTION_CUSTOM, {&cc}};
  const qnn_device_config_t *cfg[] = {&dc, NULL};
  qnn_device_handle_t d = NULL;
#define TRY(want, needle)                                                       \
  do {                                                                          \
    hlog_clear();                                                               \
    d = NULL;                                                                   \
    CHECK_EQ(s.t->device_create(s.log, cfg, &d), want);                        \
    if (needle) CHECK_STR_CONTAINS(hlog(), (const char *)(needle));             \
    if (d) CHECK_EQ(s.t->device_free(d), QNN_SUCCESS);                          \
  } while (0)
  memset(&cc, 0, sizeof(cc));
  cc.option = QNN_HTP_DEVICE_CONFIG_OPTION_ARCH;
  cc.u.arch.arch = 73;
  TRY(QNN_DEVICE_ERROR_INVALID_CONFIG, "asks for v73, this device is v68");
  cc.u.arch.arch = QNN_HTP_DEVICE_ARCH_V68;
  TRY(QNN_SUCCESS, NULL);
  cc.u.arch.device_id = 3;
  TRY(QNN_DEVICE_ERROR_INVALID_CONFIG, "device id 3");
  memset(&cc, 0, sizeof(cc));
  cc.option = QNN_HTP_DEVICE_CONFIG_OPTION_SIGNEDPD;
  cc.u.use_signed_process_domain.use_signed_process_domain = true;
  TRY(QNN_DEVICE_ERROR_INVALID_CONFIG, "signed PD not available");
  cc.u.use_signed_process_domain.use_signed_process_domain = false;
  TRY(QNN_SUCCESS, NULL);
  memset(&cc, 0, sizeof(cc));
  cc.option = QNN_HTP_DEVICE_CONFIG_OPTION_SOC;
  cc.u.soc_model = 93; /* the board's runtime id: accepted with a warning */
  TRY(QNN_SUCCESS, "soc model 93");
  cc.u.soc_model = 35;
  TRY(QNN_SUCCESS, NULL);
  cc.option = 77;
  TRY(QNN_DEVICE_ERROR_INVALID_CONFIG, "unknown HTP device config option 77");
  dc.u.custom_config = NULL;
  TRY(QNN_DEVICE_ERROR_INVALID_CONFIG, "custom config is NULL");
#undef TRY
  CHECK_EQ(hstats(&s.c).violations, 0);
  stack_close(&s);
  /* a device configured with signed PD accepts it */
  CHECK_EQ(stack_open(&s, "signed_pd=1"), 0);
  memset(&cc, 0, sizeof(cc));
  cc.option = QNN_HTP_DEVICE_CONFIG_OPTION_SIGNEDPD;
  cc.u.use_signed_process_domain.use_signed_process_domain = true;
  dc.u.custom_config = &cc;
  d = NULL;
  CHECK_EQ(s.t->device_create(s.log, cfg, &d), QNN_SUCCESS);
  CHECK_EQ(s.t->device_free(d), QNN_SUCCESS);
  stack_close(&s);
}

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

/* ---- 3. the allocator --------------------------------------------------------------------- */

TEST(htp_rpcmem_semantics) {
  hctl c;
  CHECK(hctl_open(&c) == 0);
  htpu_refcdsprpc_stats st;
  c.rpc_stats(&st);
  uint32_t live0 = st.live;
  /* not initialised: nothing */
  c.rpc_deinit();
  CHECK(c.rpc_alloc(HTPU_RPCMEM_HEAP_ID_SYSTEM, HTPU_RPCMEM_DEFAULT_FLAGS, 64) == NULL);
  c.rpc_init();
  unsigned char *p = c.rpc_alloc(HTPU_RPCMEM_HEAP_ID_SYSTEM, HTPU_RPCMEM_DEFAULT_FLAGS, 100);
  unsigned char *q = c.rpc_alloc2(HTPU_RPCMEM_HEAP_ID_SYSTEM, HTPU_RPCMEM_DEFAULT_FLAGS, 4096);
  CHECK(p && q);
  int fd = c.rpc_to_fd(p);
  CHECK(fd >= 0 && c.rpc_to_fd(q) >= 0 && c.rpc_to_fd(q) != fd);
  CHECK_EQ(c.rpc_to_fd(p + 1), -1); /* only the base pointer */
  CHECK_EQ(c.rpc_to_fd(&st), -1);
  CHECK_EQ(lseek(fd, 0, SEEK_END), 100); /* the memfd is exactly the size asked for */
  /* the fd and the pointer are the same memory */
  p[7] = 0x5A;
  unsigned char byte = 0;
  CHECK_EQ(pread(fd, &byte, 1, 7), 1);
  CHECK_EQ(byte, 0x5A);
  CHECK(c.rpc_alloc(25, 1, 0) == NULL);
  CHECK(c.rpc_alloc(25, 1, -5) == NULL);
  setenv("HTPU_REF_RPCMEM_FAIL", "1", 1);
  CHECK(c.rpc_alloc(25, 1, 64) == NULL);
  unsetenv("HTPU_REF_RPCMEM_FAIL");
  c.rpc_stats(&st);
  CHECK_EQ(st.live, live0 + 2);
  CHECK_EQ(st.initialized, 1);
  /* the exit-time destructor leaves live allocations usable: another thread of an exiting
   * process may still be writing or executing with them */
  htpu_refcdsprpc_unload_fn unload = c.rpc_unload;
  CHECK(unload != NULL);
  if (unload) unload();
  p[8] = 0xA5;
  CHECK_EQ(pread(fd, &byte, 1, 8), 1);
  CHECK_EQ(byte, 0xA5);
  CHECK_EQ(c.rpc_to_fd(p), fd);
  c.rpc_free(p);
  c.rpc_free(q);
  c.rpc_free(NULL);
  c.rpc_stats(&st);
  CHECK_EQ(st.live, live0);
  /* a second rpcmem_init forgets what was allocated before it */
  unsigned char *r = c.rpc_alloc(25, 1, 32);
  CHECK(r);
  c.rpc_init();
  CHECK_EQ(c.rpc_to_fd(r), -1);
  c.rpc_stats(&st);
  CHECK(st.orphaned >= 1);
  hctl_close(&c);
}

TEST(htp_rpcmem_initialised_by_device_create) {
  stack s;
  CHECK(hctl_open(&s.c) == 0);
  s.c.rpc_deinit();
  CHECK(s.c.rpc_alloc(25, 1, 64) == NULL);
  hctl_close(&s.c);
  CHECK_EQ(stack_open(&s, NULL), 0); /* deviceCreate opens the FastRPC session */
  void *p = s.c.rpc_alloc(25, 1, 64);
  CHECK(p);
  CHECK(s.c.rpc_to_fd(p) >= 0);
  s.c.rpc_free(p);
  stack_close(&s);
}

/* ---- 4. memRegister and MEMHANDLE execution ------------------------------------------------ */

typedef struct shared {
  stack s;
  qnn_context_handle_t ctx;
  qnn_graph_handle_t g;
  ref_model *model;
  unsigned char *buf; /* one rpcmem allocation for a, b and y at offsets 0, 16, 32 (+ slack) */
  int fd;
  size_t size;
} shared;

static qnn_error_t shared_open(shared *x) {
  memset(x, 0, sizeof(*x));
  qnn_error_t rc = stack_open(&x->s, NULL);
  if (rc) return rc;
  if ((rc = load(&x->s, HTP_ADD, "add", &x->ctx, &x->g))) return rc;
  size_t len = 0;
  void *bin = fx_build_model(HTP_ADD, &len);
  char err[256];
  if (!bin || ref_model_parse(bin, len, &x->model, err, sizeof(err)) != 0) {
    free(bin);
    return 4;
  }
  free(bin);
  x->size = 64;
  x->buf = x->s.c.rpc_alloc(25, 1, (int)x->size);
  if (!x->buf) return 5;
  x->fd = x->s.c.rpc_to_fd(x->buf);
  return 0;
}

static void shared_close(shared *x) {
  if (x->ctx) x->s.t->context_free(x->ctx, NULL);
  if (x->buf) x->s.c.rpc_free(x->buf);
  ref_model_free(x->model);
  stack_close(&x->s);
}

static uint32_t g_dims14[2] = {1, 4};

static qnn_htp_mem_descriptor_t htp_desc(int fd, uint64_t size, uint64_t offset) {
  qnn_htp_mem_descriptor_t h;
  memset(&h, 0, sizeof(h));
  h.type = QNN_HTP_MEM_SHARED_BUFFER;
  h.size = size;
  h.u.shared_buffer_config.fd = fd;
  h.u.shared_buffer_config.offset = offset;
  return h;
}

static qnn_mem_descriptor_t custom_desc(qnn_htp_mem_descriptor_t *h, uint32_t dtype) {
  qnn_mem_descriptor_t d;
  memset(&d, 0, sizeof(d));
  d.mem_shape.num_dim = 2;
  d.mem_shape.dim_size = g_dims14;
  d.data_type = dtype;
  d.mem_type = QNN_MEM_TYPE_CUSTOM;
  d.u.custom_info = h;
  return d;
}

/* Graph tensors of `add` (a, b in; y out) bound to mem handles. */
static void mh_tensors(const ref_model *m, qnn_mem_handle_t h[3], qnn_tensor_t in[2],
                       qnn_tensor_t out[1], uint32_t dims[3][2]) {
  const ref_graph *g = &m->graphs[0];
  for (int i = 0; i < 3; i++) {
    const ref_tensor *rt = &m->tensors[i < 2 ? g->inputs[i] : g->outputs[0]];
    qnn_tensor_t *t = i < 2 ? &in[i] : &out[0];
    memset(t, 0, sizeof(*t));
    t->version = QNN_TENSOR_VERSION_2;
    t->u.v2.id = rt->id;
    t->u.v2.type = i < 2 ? QNN_TENSOR_TYPE_APP_WRITE : QNN_TENSOR_TYPE_APP_READ;
    t->u.v2.data_type = rt->data_type;
    t->u.v2.rank = rt->rank;
    dims[i][0] = rt->dims[0];
    dims[i][1] = rt->dims[1];
    t->u.v2.dimensions = dims[i];
    t->u.v2.mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
    t->u.v2.u.mem_handle = h[i];
  }
}

TEST(htp_mem_register_and_execute) {
  shared x;
  qnn_error_t rc = shared_open(&x);
  CHECK_MSG(rc == 0, "shared_open: %llu", (unsigned long long)rc);
  qnn_htp_mem_descriptor_t hd[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                    htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d[3];
  for (int i = 0; i < 3; i++) d[i] = custom_desc(&hd[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t h[3] = {0};
  CHECK_EQ(x.s.t->mem_register(x.ctx, d, 3, h), QNN_SUCCESS);
  CHECK(h[0] && h[1] && h[2] && h[0] != h[1]);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 3);
  float *a = (float *)(void *)x.buf, *b = a + 4, *y = a + 8;
  for (int i = 0; i < 4; i++) {
    a[i] = (float)i;
    b[i] = 100.0f * (float)i;
    y[i] = -1.0f;
  }
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, h, in, out, dims);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  for (int i = 0; i < 4; i++) CHECK(y[i] == 101.0f * (float)i);
  /* MEMHANDLE and RAW mix in one call */
  float raw_b[4] = {1, 1, 1, 1};
  in[1].u.v2.mem_type = QNN_TENSORMEMTYPE_RAW;
  in[1].u.v2.u.client_buf.data = raw_b;
  in[1].u.v2.u.client_buf.data_size = sizeof(raw_b);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  CHECK(y[3] == 4.0f);
  in[1].u.v2.mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
  in[1].u.v2.u.mem_handle = h[1];
  /* deregister: every valid one goes even if one is bad */
  qnn_mem_handle_t dl[4] = {h[0], (qnn_mem_handle_t)(uintptr_t)0x9999, h[1], h[2]};
  CHECK_EQ(x.s.t->mem_de_register(dl, 4), QNN_MEM_ERROR_INVALID_HANDLE);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  CHECK_EQ(x.s.t->mem_de_register(h, 1), QNN_MEM_ERROR_INVALID_HANDLE);
  CHECK_EQ(x.s.t->mem_de_register(NULL, 1), QNN_MEM_ERROR_INVALID_ARGUMENT);
  /* a deregistered handle no longer executes */
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "not registered");
  /* ION: one fd, one handle, offset 0 */
  qnn_mem_descriptor_t ion;
  memset(&ion, 0, sizeof(ion));
  ion.mem_shape.num_dim = 2;
  ion.mem_shape.dim_size = g_dims14;
  ion.data_type = QNN_DATATYPE_FLOAT_32;
  ion.mem_type = QNN_MEM_TYPE_ION;
  ion.u.ion_info.fd = x.fd;
  qnn_mem_handle_t hi = NULL, hi2 = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ion, 1, &hi), QNN_SUCCESS);
  hlog_clear();
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ion, 1, &hi2), QNN_MEM_ERROR_ALREADY_REGISTERED);
  CHECK(hi2 == NULL);
  CHECK_STR_CONTAINS(hlog(), "already registered");
  CHECK_EQ(x.s.t->mem_de_register(&hi, 1), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  shared_close(&x);
}

TEST(htp_mem_register_rules) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  qnn_htp_mem_descriptor_t hd;
  qnn_mem_descriptor_t d;
  qnn_mem_handle_t h[2];
#define REG1(want, needle)                                                     \
  do {                                                                         \
    hlog_clear();                                                              \
    h[0] = (qnn_mem_handle_t)(uintptr_t)1;                                     \
    CHECK_EQ(x.s.t->mem_register(x.ctx, &d, 1, h), want);                      \
    CHECK(h[0] == NULL);                                                       \
    CHECK_STR_CONTAINS(hlog(), needle);                                        \
  } while (0)
  hd = htp_desc(x.fd, 4096, 0);
  d = custom_desc(&hd, QNN_DATATYPE_FLOAT_32);
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "already mapped with mismatched size");
  hd = htp_desc(x.fd, 16, 0); /* the tensor's size is not the allocation's */
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "TOTAL size");
  hd = htp_desc(x.fd, x.size, 56);
  REG1(QNN_MEM_ERROR_INVALID_SHAPE, "offset 56 + tensor bytes 16");
  hd = htp_desc(987, x.size, 0);
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "fd 987 is not an open file descriptor");
  hd = htp_desc(x.fd, x.size, 0);
  hd.type = QNN_HTP_MEM_QURT;
  REG1(QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE, "SHARED_BUFFER");
  d.u.custom_info = NULL;
  REG1(QNN_MEM_ERROR_INVALID_ARGUMENT, "NULL customInfo");
  hd = htp_desc(x.fd, x.size, 0);
  d = custom_desc(&hd, QNN_DATATYPE_FLOAT_32);
  d.mem_type = QNN_MEM_TYPE_DMA_BUF;
  d.u.dma_buf_info.fd = x.fd;
  d.u.dma_buf_info.data = x.buf;
  REG1(QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE, "DMA_BUF");
  d = custom_desc(&hd, QNN_DATATYPE_FLOAT_32);
  d.mem_shape.num_dim = 0;
  REG1(QNN_MEM_ERROR_INVALID_SHAPE, "memShape");
  /* a pipe cannot be mapped */
  int pfd[2];
  CHECK(pipe(pfd) == 0);
  qnn_mem_descriptor_t ion;
  memset(&ion, 0, sizeof(ion));
  ion.mem_shape.num_dim = 1;
  uint32_t one = 1;
  ion.mem_shape.dim_size = &one;
  ion.data_type = QNN_DATATYPE_UINT_8;
  ion.mem_type = QNN_MEM_TYPE_ION;
  ion.u.ion_info.fd = pfd[0];
  d = ion;
  /* fstat works on a pipe but it has no size: the tensor does not fit, or mapping fails */
  hlog_clear();
  qnn_error_t prc = x.s.t->mem_register(x.ctx, &d, 1, h);
  CHECK(prc == QNN_MEM_ERROR_MAPPING || prc == QNN_MEM_ERROR_INVALID_SHAPE);
  close(pfd[0]);
  close(pfd[1]);
  /* the same fd+offset twice in one call: all or nothing */
  qnn_htp_mem_descriptor_t two[2] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 0)};
  qnn_mem_descriptor_t dd[2] = {custom_desc(&two[0], QNN_DATATYPE_FLOAT_32),
                                custom_desc(&two[1], QNN_DATATYPE_FLOAT_32)};
  CHECK_EQ(x.s.t->mem_register(x.ctx, dd, 2, h), QNN_MEM_ERROR_ALREADY_REGISTERED);
  CHECK(h[0] == NULL && h[1] == NULL);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  /* bad context, NULL arrays */
  CHECK_EQ(x.s.t->mem_register((qnn_context_handle_t)(uintptr_t)0x4242, dd, 1, h),
           QNN_MEM_ERROR_INVALID_HANDLE);
  CHECK_EQ(x.s.t->mem_register(x.ctx, NULL, 1, h), QNN_MEM_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(x.s.t->mem_register(x.ctx, dd, 1, NULL), QNN_MEM_ERROR_INVALID_ARGUMENT);
  /* registered in one context, executed in another: 6004 */
  qnn_context_handle_t ctx2 = NULL;
  qnn_graph_handle_t g2 = NULL;
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &ctx2, &g2), QNN_SUCCESS);
  qnn_htp_mem_descriptor_t hd3[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                     htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d3[3];
  for (int i = 0; i < 3; i++) d3[i] = custom_desc(&hd3[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t hh[3];
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  /* the same buffers in the second context are a separate registration */
  qnn_mem_handle_t hh2[3];
  CHECK_EQ(x.s.t->mem_register(ctx2, d3, 3, hh2), QNN_SUCCESS);
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, hh, in, out, dims);
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(g2, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "handles are per context");
  mh_tensors(x.model, hh2, in, out, dims);
  CHECK_EQ(x.s.t->graph_execute(g2, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  /* data type and shape of the registration must match the graph's tensor */
  qnn_htp_mem_descriptor_t hu = htp_desc(x.fd, x.size, 48);
  qnn_mem_descriptor_t du = custom_desc(&hu, QNN_DATATYPE_UINT_32);
  qnn_mem_handle_t hw = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &du, 1, &hw), QNN_SUCCESS);
  mh_tensors(x.model, hh, in, out, dims);
  in[0].u.v2.u.mem_handle = hw;
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "data type 0x0132");
  uint32_t d41[2] = {4, 1};
  qnn_htp_mem_descriptor_t hs = htp_desc(x.fd, x.size, 48);
  qnn_mem_descriptor_t ds = custom_desc(&hs, QNN_DATATYPE_FLOAT_32);
  ds.mem_shape.dim_size = d41;
  qnn_mem_handle_t hsh = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ds, 1, &hsh), QNN_MEM_ERROR_ALREADY_REGISTERED);
  hs.u.shared_buffer_config.offset = 44;
  CHECK_EQ(x.s.t->mem_register(x.ctx, &ds, 1, &hsh), QNN_SUCCESS);
  in[0].u.v2.u.mem_handle = hsh;
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(hlog(), "shape [4,1], the graph has [1,4]");
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  /* contextFree with handles still registered: a violation, and they are freed */
  CHECK_EQ(x.s.t->mem_de_register(hh2, 3), QNN_SUCCESS);
  CHECK_EQ(x.s.t->context_free(ctx2, NULL), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  CHECK_EQ(x.s.t->context_free(x.ctx, NULL), QNN_SUCCESS);
  x.ctx = NULL;
  CHECK_EQ(hstats(&x.s.c).violations, 1);
  CHECK_STR_CONTAINS(x.s.c.last_violation(), "5 mem handle(s) still registered");
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  shared_close(&x);
#undef REG1
}

TEST(htp_mem_freed_before_deregister) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  qnn_htp_mem_descriptor_t hd3[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                     htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d3[3];
  for (int i = 0; i < 3; i++) d3[i] = custom_desc(&hd3[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t hh[3];
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  x.s.c.rpc_free(x.buf); /* wrong order: the fd is closed under the registration */
  x.buf = NULL;
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, hh, in, out, dims);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_GRAPH_ERROR_INVALID_TENSOR);
  CHECK_STR_CONTAINS(x.s.c.last_violation(), "rpcmem_free before memDeRegister");
  x.s.c.reset_stats();
  CHECK_EQ(x.s.t->mem_de_register(hh, 3), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 3);
  shared_close(&x);
}

/* ---- 5. binary validation ------------------------------------------------------------------- */

static qnn_error_t validate_text(stack *s, const char *meta, qnn_error_t *create_rc) {
  char text[1024];
  snprintf(text, sizeof(text), "meta %s\n%s", meta, HTP_ADD);
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return 3;
  qnn_error_t rc = s->t->context_validate_binary(s->be, s->dev, NULL, bin, len);
  qnn_context_handle_t ctx = NULL;
  *create_rc = s->t->context_create_from_binary(s->be, s->dev, NULL, bin, len, &ctx, NULL);
  if (ctx) s->t->context_free(ctx, NULL);
  free(bin);
  return rc;
}

TEST(htp_validate_binary_against_device) {
  stack s;
  CHECK_EQ(stack_open(&s, NULL), 0);
  qnn_error_t crc = 0;
  CHECK_EQ(validate_text(&s, "dsp_arch=68 soc_model=35", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  hlog_clear();
  CHECK_EQ(validate_text(&s, "dsp_arch=73 soc_version=\"v73\"", &crc),
           QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_EQ(crc, QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_STR_CONTAINS(hlog(),
                     "contextValidateBinary: the binary was built for v73, this device is v68");
  CHECK_STR_CONTAINS(hlog(), "contextCreateFromBinary: the binary was built for v73");
  hlog_clear();
  CHECK_EQ(validate_text(&s, "core_api=2.40.0", &crc), QNN_CONTEXT_ERROR_BINARY_VERSION);
  CHECK_EQ(crc, QNN_CONTEXT_ERROR_BINARY_VERSION);
  CHECK_STR_CONTAINS(hlog(), "core API 2.40.0");
  /* older minors are fine; another major is not */
  CHECK_EQ(validate_text(&s, "core_api=2.18.3", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  CHECK_EQ(validate_text(&s, "core_api=3.0.0", &crc), QNN_CONTEXT_ERROR_BINARY_VERSION);
  CHECK_EQ(validate_text(&s, "backend_api=6.0.0", &crc), QNN_CONTEXT_ERROR_BINARY_VERSION);
  /* soc model differences are not rejected (35 in binaries, 93 reported by the board) */
  hlog_clear();
  CHECK_EQ(validate_text(&s, "soc_model=93", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  CHECK_STR_CONTAINS(hlog(), "soc model 93");
  CHECK_EQ(s.c.arm("contextValidateBinary:1:5005"), 0);
  CHECK_EQ(validate_text(&s, "dsp_arch=68", &crc), QNN_CONTEXT_ERROR_CREATE_FROM_BINARY);
  s.c.disarm();
  stack_close(&s);
  /* a v73 device takes the v73 binary and rejects the v68 one */
  CHECK_EQ(stack_open(&s, "arch=73,soc_model=43"), 0);
  CHECK_EQ(validate_text(&s, "dsp_arch=73", &crc), QNN_SUCCESS);
  CHECK_EQ(crc, QNN_SUCCESS);
  hlog_clear();
  CHECK_EQ(validate_text(&s, "dsp_arch=68", &crc), QNN_CONTEXT_ERROR_BINARY_CONFIGURATION);
  CHECK_STR_CONTAINS(hlog(), "built for v68, this device is v73");
  stack_close(&s);
}

/* ---- 6. subsystem restart -------------------------------------------------------------------- */

TEST(htp_ssr_rule_makes_contexts_stale) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  qnn_htp_mem_descriptor_t hd3[3] = {htp_desc(x.fd, x.size, 0), htp_desc(x.fd, x.size, 16),
                                     htp_desc(x.fd, x.size, 32)};
  qnn_mem_descriptor_t d3[3];
  for (int i = 0; i < 3; i++) d3[i] = custom_desc(&hd3[i], QNN_DATATYPE_FLOAT_32);
  qnn_mem_handle_t hh[3];
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  qnn_context_handle_t other = NULL;
  qnn_graph_handle_t og = NULL;
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &other, &og), QNN_SUCCESS);
  qnn_tensor_t in[2], out[1];
  uint32_t dims[3][2];
  mh_tensors(x.model, hh, in, out, dims);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:1:ssr"), 0);
  hlog_clear();
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_STR_CONTAINS(hlog(), "DSP subsystem restart: 2 context(s) lost");
  x.s.c.disarm();
  htpu_ref_stats st = hstats(&x.s.c);
  CHECK_EQ(st.stale_contexts, 2);
  CHECK_EQ(st.ssr_events, 1);
  /* both contexts are gone on the DSP side */
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(x.s.t->graph_retrieve(other, "add", &g), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  qnn_mem_handle_t h1 = NULL;
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 1, &h1), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  /* recovery: free (no violation despite the mem handles), recreate, re-register */
  x.s.c.reset_stats();
  CHECK_EQ(x.s.t->context_free(x.ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(x.s.t->context_free(other, NULL), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  CHECK_EQ(hstats(&x.s.c).live_mem_handles, 0);
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &x.ctx, &x.g), QNN_SUCCESS);
  CHECK_EQ(x.s.t->mem_register(x.ctx, d3, 3, hh), QNN_SUCCESS);
  mh_tensors(x.model, hh, in, out, dims);
  float *a = (float *)(void *)x.buf;
  a[0] = 2.0f;
  a[4] = 3.0f;
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  CHECK(a[8] == 5.0f);
  CHECK_EQ(x.s.t->mem_de_register(hh, 3), QNN_SUCCESS);
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  shared_close(&x);
}

TEST(htp_ssr_control_and_plain_1007) {
  shared x;
  CHECK_EQ(shared_open(&x), 0);
  float a[4] = {1, 2, 3, 4}, b[4] = {0}, y[4] = {0};
  const ref_graph *rg = &x.model->graphs[0];
  qnn_tensor_t in[2], out[1];
  void *bufs[3] = {a, b, y};
  for (int i = 0; i < 3; i++) {
    const ref_tensor *rt = &x.model->tensors[i < 2 ? rg->inputs[i] : rg->outputs[0]];
    qnn_tensor_t *t = i < 2 ? &in[i] : &out[0];
    memset(t, 0, sizeof(*t));
    t->version = QNN_TENSOR_VERSION_1;
    t->u.v1.id = rt->id;
    t->u.v1.type = i < 2 ? QNN_TENSOR_TYPE_APP_WRITE : QNN_TENSOR_TYPE_APP_READ;
    t->u.v1.data_type = rt->data_type;
    t->u.v1.rank = rt->rank;
    t->u.v1.u.client_buf.data = bufs[i];
    t->u.v1.u.client_buf.data_size = 16;
  }
  /* plain 1007: transient, the context stays usable */
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007"), 0);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  CHECK(y[3] == 4.0f);
  x.s.c.disarm();
  CHECK_EQ(hstats(&x.s.c).stale_contexts, 0);
  /* the control call */
  CHECK_EQ(x.s.c.trigger_ssr(), 1);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL),
           QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(x.s.c.trigger_ssr(), 0); /* already stale */
  CHECK_EQ(x.s.t->context_free(x.ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(load(&x.s, HTP_ADD, "add", &x.ctx, &x.g), QNN_SUCCESS);
  CHECK_EQ(x.s.t->graph_execute(x.g, in, 2, out, 1, NULL, NULL), QNN_SUCCESS);
  /* the rule syntax: ssr with or without a count */
  CHECK_EQ(x.s.c.arm("graphExecute:2:1007:ssr"), 0);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:2:ssr,contextFree:1:1007"), 0);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:2:xyz"), -1);
  CHECK_EQ(x.s.c.arm("graphExecute:1:1007:2:ssr:1"), -1);
  x.s.c.disarm();
  CHECK_EQ(hstats(&x.s.c).violations, 0);
  shared_close(&x);
}

/* ---- 7. start-up failures across runtimes -------------------------------------------------- */

TEST(htp_startup_env_rules_count_process_wide) {
  hctl c;
  CHECK(hctl_open(&c) == 0);
  const qnn_interface_table_t *t = htp_table(&c);
  setenv("HTPU_REF_FAULTS", "deviceCreate:1:1003:2,backendCreate:1:1003:2", 1);
  /* a loader retrying start-up: backend + device, freed on failure */
  qnn_error_t got[5][2];
  for (int attempt = 0; attempt < 5; attempt++) {
    qnn_backend_handle_t be = NULL;
    qnn_device_handle_t dev = NULL;
    got[attempt][0] = t->backend_create(NULL, NULL, &be);
    got[attempt][1] = be ? t->device_create(NULL, NULL, &dev) : 0;
    if (dev) t->device_free(dev);
    if (be) t->backend_free(be);
  }
  unsetenv("HTPU_REF_FAULTS");
  CHECK_EQ(got[0][0], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[1][0], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[2][0], QNN_SUCCESS);
  CHECK_EQ(got[2][1], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[3][0], QNN_SUCCESS);
  CHECK_EQ(got[3][1], QNN_COMMON_ERROR_SYSTEM);
  CHECK_EQ(got[4][0], QNN_SUCCESS); /* "fails the first 2 times, then works" */
  CHECK_EQ(got[4][1], QNN_SUCCESS);
  CHECK_EQ(hstats(&c).faults_injected, 4);
  hctl_close(&c);
}
