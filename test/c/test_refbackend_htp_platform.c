/* test_refbackend_htp_platform.c - the reference backend's HTP platform info and device configs
 * (HTPU_REF_DEVICE, custom configs).
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "htp_rig.h"
#include "test.h"

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
