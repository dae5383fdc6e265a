/* perf.c - the profile table and the vote in effect. */
#include "perf.h"

#include <string.h>

#include "base/base.h"
#include "loader/loader.h"

/* What each profile votes (DCVS v3). Values follow the settings the public QNN clients use
 * (docs/board.md has the table and its sources). Higher performance comes first in the
 * enum, so "highest" below means the smallest non-DEFAULT value. */
typedef struct profile_setting {
  const char *name;
  uint32_t dcvs_enable;
  uint32_t power_mode;
  uint32_t sleep_latency_us;
  uint32_t corner; /* bus and core min = target = max */
  uint32_t rpc_control_latency_us; /* always voted: a setting persists until changed, so a
                                      lower profile must undo a higher one's */
  uint32_t rpc_polling_us;         /* 0 = off; voted on V69+ only */
} profile_setting;

static const profile_setting settings[HTPU_PERF_PROFILE_COUNT] = {
    [HTPU_PERF_DEFAULT] = {"default", 0, 0, 0, 0, 0, 0},
    [HTPU_PERF_BURST] = {"burst", 0, QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE, 40,
                         DCVS_VOLTAGE_VCORNER_MAX_VOLTAGE_CORNER, 100, 9999},
    [HTPU_PERF_SUSTAINED_HIGH_PERFORMANCE] = {"sustained_high_performance", 0,
                                              QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE,
                                              100, DCVS_VOLTAGE_VCORNER_TURBO, 100, 9999},
    [HTPU_PERF_HIGH_PERFORMANCE] = {"high_performance", 0,
                                    QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE, 100,
                                    DCVS_VOLTAGE_VCORNER_TURBO, 100, 9999},
    [HTPU_PERF_BALANCED] = {"balanced", 1, QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE,
                            1000, DCVS_VOLTAGE_VCORNER_NOM_PLUS, 1000, 0},
    [HTPU_PERF_LOW_BALANCED] = {"low_balanced", 1,
                                QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE, 1000,
                                DCVS_VOLTAGE_VCORNER_NOM, 1000, 0},
    [HTPU_PERF_HIGH_POWER_SAVER] = {"high_power_saver", 1,
                                    QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE, 1000,
                                    DCVS_VOLTAGE_VCORNER_SVS_PLUS, 1000, 0},
    [HTPU_PERF_POWER_SAVER] = {"power_saver", 1,
                               QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE, 1000,
                               DCVS_VOLTAGE_VCORNER_SVS, 1000, 0},
    [HTPU_PERF_LOW_POWER_SAVER] = {"low_power_saver", 1,
                                   QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE, 1000,
                                   DCVS_VOLTAGE_VCORNER_SVS2, 1000, 0},
    [HTPU_PERF_EXTREME_POWER_SAVER] = {"extreme_power_saver", 1,
                                       QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_POWER_SAVER_MODE, 1000,
                                       DCVS_VOLTAGE_CORNER_DISABLE, 1000, 0},
};

const char *htpu_perf_profile_name(htpu_perf_profile p) {
  return ((unsigned)p < HTPU_PERF_PROFILE_COUNT) ? settings[p].name : NULL;
}

int htpu_perf_profile_from_name(const char *name, htpu_perf_profile *out) {
  for (unsigned i = 0; name && i < HTPU_PERF_PROFILE_COUNT; i++) {
    if (strcmp(name, settings[i].name) == 0) {
      if (out) *out = (htpu_perf_profile)i;
      return 0;
    }
  }
  return htpu_set_error(HTPU_EINVAL, 0,
                        "unknown performance profile '%s'; expected one of burst, "
                        "sustained_high_performance, high_performance, balanced, low_balanced, "
                        "high_power_saver, power_saver, low_power_saver, extreme_power_saver, "
                        "default",
                        name ? name : "(null)");
}

void perf_init(perf_state *p, const qnn_htp_perf_infrastructure_t *infra, uint32_t device_arch) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
  p->infra = infra;
  p->device_arch = device_arch;
}

static int set_one(perf_state *p, const qnn_htp_power_config_t *cfg, const char *what) {
  const qnn_htp_power_config_t *list[2] = {cfg, NULL};
  uint64_t mark = qnn_log_mark();
  qnn_error_t e = p->infra->set_power_config(p->power_id, list);
  if (e == QNN_SUCCESS) return 0;
  uint32_t code = QNN_ERROR_CODE(e);
  htpu_set_error(HTPU_EQNN, code, "setting the %s power config failed: QNN error %u (%s)", what,
                 code, htpu_qnn_error_name(code));
  qnn_log_append_since(mark);
  return HTPU_EQNN;
}

/* Votes `profile`, creating or destroying the power config id as needed. Lock held. */
static int apply_locked(perf_state *p, htpu_perf_profile profile) {
  if (profile == p->applied) return 0;
  if (!p->infra)
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "performance profile '%s': this backend has no HTP perf "
                          "infrastructure",
                          settings[profile].name);
  if (profile == HTPU_PERF_DEFAULT) {
    if (p->power_id) p->infra->destroy_power_config_id(p->power_id);
    p->power_id = 0;
    p->applied = HTPU_PERF_DEFAULT;
    return 0;
  }
  if (!p->power_id) {
    uint32_t id = 0;
    qnn_error_t e = p->infra->create_power_config_id(0, 0, &id);
    if (e != QNN_SUCCESS || id == 0) {
      uint32_t code = QNN_ERROR_CODE(e);
      return htpu_set_error(HTPU_EQNN, code,
                            "creating a power config id failed: QNN error %u (%s)", code,
                            htpu_qnn_error_name(code));
    }
    p->power_id = id;
  }
  const profile_setting *s = &settings[profile];
  qnn_htp_power_config_t dcvs;
  memset(&dcvs, 0, sizeof dcvs);
  dcvs.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3;
  qnn_htp_dcvs_v3_t *d = &dcvs.u.dcvs_v3_config;
  d->context_id = p->power_id;
  d->set_dcvs_enable = 1;
  d->dcvs_enable = s->dcvs_enable;
  d->power_mode = s->power_mode;
  d->set_sleep_latency = 1;
  d->sleep_latency = s->sleep_latency_us;
  d->set_sleep_disable = 1;
  d->sleep_disable = 0;
  d->set_bus_params = 1;
  d->bus_voltage_corner_min = d->bus_voltage_corner_target = d->bus_voltage_corner_max = s->corner;
  d->set_core_params = 1;
  d->core_voltage_corner_min = d->core_voltage_corner_target = d->core_voltage_corner_max =
      s->corner;
  int rc = set_one(p, &dcvs, "DCVS");
  if (rc) return rc;
  p->applied = profile;
  /* The RPC settings are optional: sent one per call so a rejected one cannot take the DCVS
   * vote down with it, and a rejection is recorded, not returned. */
  {
    qnn_htp_power_config_t lat = {.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY};
    lat.u.rpc_control_latency_config = s->rpc_control_latency_us;
    (void)set_one(p, &lat, "RPC control latency");
  }
  /* Polling is documented for V69 and later only; QCS6490 is V68. Where it exists it is
   * always voted (0 = off), so a lower profile turns a higher one's polling off. */
  if (p->device_arch >= 69) {
    qnn_htp_power_config_t poll = {.option = QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_POLLING_TIME};
    poll.u.rpc_polling_time_config = s->rpc_polling_us;
    (void)set_one(p, &poll, "RPC polling");
  }
  htpu_clear_error();
  return 0;
}

static htpu_perf_profile effective_locked(const perf_state *p) {
  for (unsigned i = 1; i < HTPU_PERF_PROFILE_COUNT; i++)
    if (p->call_votes[i] || p->base == (htpu_perf_profile)i) return (htpu_perf_profile)i;
  return HTPU_PERF_DEFAULT;
}

int perf_set_base(perf_state *p, htpu_perf_profile profile) {
  if ((unsigned)profile >= HTPU_PERF_PROFILE_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0, "performance profile %d is out of range", (int)profile);
  pthread_mutex_lock(&p->lock);
  htpu_perf_profile old = p->base;
  p->base = profile;
  int rc = apply_locked(p, effective_locked(p));
  if (rc) p->base = old;
  atomic_store(&p->base_published, (int)p->base);
  pthread_mutex_unlock(&p->lock);
  return rc;
}

int perf_call_enter(perf_state *p, htpu_perf_profile profile) {
  if (profile == HTPU_PERF_DEFAULT || (unsigned)profile >= HTPU_PERF_PROFILE_COUNT) return 0;
  pthread_mutex_lock(&p->lock);
  p->call_votes[profile]++;
  int rc = apply_locked(p, effective_locked(p));
  pthread_mutex_unlock(&p->lock);
  return rc;
}

void perf_call_leave(perf_state *p, htpu_perf_profile profile) {
  if (profile == HTPU_PERF_DEFAULT || (unsigned)profile >= HTPU_PERF_PROFILE_COUNT) return;
  pthread_mutex_lock(&p->lock);
  if (p->call_votes[profile]) p->call_votes[profile]--;
  (void)apply_locked(p, effective_locked(p));
  pthread_mutex_unlock(&p->lock);
}

void perf_recast(perf_state *p) {
  pthread_mutex_lock(&p->lock);
  if (p->infra && p->power_id) {
    (void)p->infra->destroy_power_config_id(p->power_id); /* may fail: it died with the DSP */
    p->power_id = 0;
    p->applied = HTPU_PERF_DEFAULT;
    (void)apply_locked(p, effective_locked(p));
  }
  pthread_mutex_unlock(&p->lock);
}

void perf_release(perf_state *p) {
  pthread_mutex_lock(&p->lock);
  if (p->infra && p->power_id) p->infra->destroy_power_config_id(p->power_id);
  p->power_id = 0;
  p->applied = HTPU_PERF_DEFAULT;
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_destroy(&p->lock);
}
