/*
 * perf.c - the HTP perf infrastructure (deviceGetInfrastructure): power config ids and
 * setPowerConfig with DCVS v3 / RPC settings, recorded per id for the control API.
 *
 * The infrastructure functions take no backend handle, so a power config id is all a caller
 * has: ids come from one process-wide counter (QnnHtpPerfInfrastructure.h: a non-zero id per
 * power client "in the same process"), are never reused, and are found by id alone, whichever
 * backend made them. An id belongs to the newest backend at createPowerConfigId (its log,
 * fault rules and backendFree leak check); a destroyed id is unknown from then on.
 */
#include <stdlib.h>
#include <string.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

#define RB_PERF_ERROR_INVALID_HANDLE_PTR 13000u
#define ANY_ID 0xFFFFFFFFu
#define MAX_RPC_POLLING_US 9999u
#define HISTORY 64u

static qnn_error_t create_power_config_id(uint32_t device_id, uint32_t core_id, uint32_t *out);
static qnn_error_t destroy_power_config_id(uint32_t id);
static qnn_error_t set_power_config(uint32_t id, const qnn_htp_power_config_t **cfg);

static const qnn_htp_device_infrastructure_t g_infra = {
    QNN_HTP_DEVICE_INFRASTRUCTURE_TYPE_PERF,
    {{create_power_config_id, destroy_power_config_id, set_power_config,
      (qnn_unused_fn)rb_not_supported}}};

/* Destroyed ids, newest first (registry lock). */
static htpu_ref_power_state g_history[HISTORY];
static uint32_t g_history_len;
static uint32_t g_last_power_id; /* the last id createPowerConfigId handed out (registry lock) */

qnn_error_t rb_device_get_infrastructure(void *const *infra) {
  if (!infra) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  /* The QNN parameter is a pointer to a (const) pointer the backend sets to its own memory. */
  *(const void **)(uintptr_t)infra = &g_infra;
  return QNN_SUCCESS;
}

/* The live power config id `id` (ids are unique in the process) and its backend. */
static rb_power *find_power(uint32_t id, rb_backend **owner) {
  if (id == 0) return NULL; /* never handed out: 0 is QNN's "NULL power client" */
  for (rb_backend *b = g_rb.backends; b; b = b->next)
    for (rb_power *p = b->powers; p; p = p->next)
      if (p->id == id) {
        if (owner) *owner = b;
        return p;
      }
  return NULL;
}

/* The next id of the process-wide counter: never 0, never one still live (after 2^32 ids the
 * counter wraps; only then can a long-destroyed id come back). Registry lock held. */
static uint32_t next_power_id(void) {
  uint32_t id;
  do {
    id = g_rb.next_power_id++;
  } while (id == 0 || find_power(id, NULL));
  return id;
}

uint32_t rb_power_live_count(void) {
  uint32_t n = 0;
  for (rb_backend *b = g_rb.backends; b; b = b->next)
    for (rb_power *p = b->powers; p; p = p->next) n++;
  return n;
}

static void to_state(const rb_power *p, htpu_ref_power_state *s) {
  memset(s, 0, sizeof(*s));
  const qnn_htp_dcvs_v3_t *d = &p->dcvs;
  s->power_config_id = p->id;
  s->device_id = p->device_id;
  s->core_id = p->core_id;
  s->set_calls = p->set_calls;
  s->rejected_calls = p->rejected_calls;
  s->has_dcvs_v3 = p->has_dcvs;
  s->set_dcvs_enable = d->set_dcvs_enable;
  s->dcvs_enable = d->dcvs_enable;
  s->power_mode = d->power_mode;
  s->set_sleep_latency = d->set_sleep_latency;
  s->sleep_latency_us = d->sleep_latency;
  s->set_sleep_disable = d->set_sleep_disable;
  s->sleep_disable = d->sleep_disable;
  s->set_bus_params = d->set_bus_params;
  s->bus_corner_min = d->bus_voltage_corner_min;
  s->bus_corner_target = d->bus_voltage_corner_target;
  s->bus_corner_max = d->bus_voltage_corner_max;
  s->set_core_params = d->set_core_params;
  s->core_corner_min = d->core_voltage_corner_min;
  s->core_corner_target = d->core_voltage_corner_target;
  s->core_corner_max = d->core_voltage_corner_max;
  s->has_rpc_control_latency = p->has_rpc_latency;
  s->rpc_control_latency_us = p->rpc_latency_us;
  s->has_rpc_polling_time = p->has_rpc_polling;
  s->rpc_polling_time_us = p->rpc_polling_us;
}

/* Remembers p's final state and frees it (already unlinked). */
static void retire(rb_power *p) {
  memmove(&g_history[1], &g_history[0], (HISTORY - 1) * sizeof(g_history[0]));
  to_state(p, &g_history[0]);
  g_history[0].destroyed = 1;
  if (g_history_len < HISTORY) g_history_len++;
  free(p);
}

void rb_power_release_all(rb_backend *b) {
  while (b->powers) {
    rb_power *p = b->powers;
    b->powers = p->next;
    rb_violation(b->log, "backendFree: power config id %u was not destroyed with "
                 "destroyPowerConfigId (its vote stays in force; releasing it now)", p->id);
    rb_count_leak();
    retire(p);
  }
}

static qnn_error_t create_power_config_id(uint32_t device_id, uint32_t core_id, uint32_t *out) {
  pthread_mutex_lock(&g_rb.lock);
  rb_backend *b = rb_owner_for(NULL);
  if (!b) {
    rb_violation(NULL, "createPowerConfigId with no live backend");
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_HTP_PERF_ERROR_INVALID_INPUT;
  }
  atomic_fetch_add(&b->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);

  qnn_error_t rc = rb_fault(b, FR_CREATE_POWER_CONFIG_ID, b->log);
  if (rc == QNN_SUCCESS && !out) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "createPowerConfigId: the id out-pointer is NULL");
    rc = RB_PERF_ERROR_INVALID_HANDLE_PTR;
  } else if (rc == QNN_SUCCESS && ((device_id != 0 && device_id != ANY_ID) ||
                                   (core_id != 0 && core_id != ANY_ID))) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "createPowerConfigId: device %u core %u does not "
            "exist (one HTP device 0 with one core 0; 0xFFFFFFFF = default)", device_id, core_id);
    rc = QNN_HTP_PERF_ERROR_INVALID_INPUT;
  }
  rb_power *p = rc == QNN_SUCCESS ? calloc(1, sizeof(*p)) : NULL;
  if (rc == QNN_SUCCESS && !p) rc = QNN_COMMON_ERROR_MEM_ALLOC;

  pthread_mutex_lock(&g_rb.lock);
  atomic_fetch_sub(&b->busy, 1);
  if (rc == QNN_SUCCESS) {
    p->id = next_power_id();
    g_last_power_id = p->id;
    p->device_id = device_id;
    p->core_id = core_id;
    p->next = b->powers;
    b->powers = p;
    *out = p->id;
    rb_logf(b->log, QNN_LOG_LEVEL_VERBOSE, "createPowerConfigId: id %u", p->id);
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

static qnn_error_t destroy_power_config_id(uint32_t id) {
  pthread_mutex_lock(&g_rb.lock);
  rb_backend *b = NULL;
  rb_power *p = find_power(id, &b);
  if (!p) {
    rb_backend *any = rb_owner_for(NULL);
    rb_logf(any ? any->log : NULL, QNN_LOG_LEVEL_ERROR, "destroyPowerConfigId: unknown power "
            "config id %u", id);
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_HTP_PERF_ERROR_INVALID_INPUT;
  }
  for (rb_power **pp = &b->powers; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  rb_logf(b->log, QNN_LOG_LEVEL_VERBOSE, "destroyPowerConfigId: id %u", id);
  retire(p);
  pthread_mutex_unlock(&g_rb.lock);
  return QNN_SUCCESS;
}

/* ---- setPowerConfig ---------------------------------------------------------------------- */

static bool power_mode_ok(uint32_t m) {
  switch (m) {
    case QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_ADJUST_UP_DOWN:
    case QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_ADJUST_ONLY_UP:
    case QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_POWER_SAVER_MODE:
    case QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_POWER_SAVER_AGGRESSIVE_MODE:
    case QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE:
    case QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_DUTY_CYCLE_MODE:
      return true;
    default:
      return false;
  }
}

/* DISABLE 0x10, MIN 0x20 ... TURBO_PLUS 0x90 in steps of 0x10, TURBO_L2..L5 0x92..0x95,
 * MAX 0xA0. */
static bool corner_ok(uint32_t c) {
  return (c >= 0x10 && c <= 0xA0 && c % 0x10 == 0) || (c >= 0x92 && c <= 0x95);
}

#define REJECT(...)                                                  \
  do {                                                               \
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "setPowerConfig: " __VA_ARGS__); \
    return QNN_HTP_PERF_ERROR_INVALID_INPUT;                         \
  } while (0)

static qnn_error_t check_corners(rb_log *log, uint32_t i, const char *what, uint32_t set,
                                 const uint32_t c[3]) {
  static const char *const names[3] = {"min", "target", "max"};
  for (int k = 0; k < 3; k++)
    if (!(corner_ok(c[k]) || (!set && c[k] == 0)))
      REJECT("config %u: DCVS_V3 %s voltage corner %s 0x%x is not a defined corner%s", i, what,
             names[k], c[k], set ? "" : " (or 0 with its set flag 0)");
  return QNN_SUCCESS;
}

static qnn_error_t check_dcvs(rb_log *log, uint32_t i, uint32_t id, const qnn_htp_dcvs_v3_t *d) {
  if (d->context_id != id)
    REJECT("config %u: DCVS_V3 contextId %u is not the power config id %u", i, d->context_id,
           id);
  if (!(power_mode_ok(d->power_mode) || (!d->set_dcvs_enable && d->power_mode == 0)))
    REJECT("config %u: DCVS_V3 powerMode 0x%x is not a defined power mode", i, d->power_mode);
  if (d->set_sleep_latency && (d->sleep_latency < 10 || d->sleep_latency > 65535))
    REJECT("config %u: DCVS_V3 sleepLatency %u us is outside 10..65535", i, d->sleep_latency);
  uint32_t bus[3] = {d->bus_voltage_corner_min, d->bus_voltage_corner_target,
                     d->bus_voltage_corner_max};
  uint32_t core[3] = {d->core_voltage_corner_min, d->core_voltage_corner_target,
                      d->core_voltage_corner_max};
  qnn_error_t rc = check_corners(log, i, "bus", d->set_bus_params, bus);
  if (rc == QNN_SUCCESS) rc = check_corners(log, i, "core", d->set_core_params, core);
  return rc;
}

static qnn_error_t check_config(rb_backend *b, uint32_t i, uint32_t id,
                                const qnn_htp_power_config_t *c) {
  rb_log *log = b->log;
  switch (c->option) {
    case QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3:
      return check_dcvs(log, i, id, &c->u.dcvs_v3_config);
    case QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY:
      return QNN_SUCCESS;
    case QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_POLLING_TIME:
      if (b->hw.arch < 69) {
        rb_logf(log, QNN_LOG_LEVEL_ERROR, "setPowerConfig: config %u: RPC_POLLING_TIME is only "
                "supported on v69 and later; this device is v%u", i, b->hw.arch);
        return QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG;
      }
      if (c->u.rpc_polling_time_config > MAX_RPC_POLLING_US)
        REJECT("config %u: RPC_POLLING_TIME %u us is above the maximum %u", i,
               c->u.rpc_polling_time_config, MAX_RPC_POLLING_US);
      return QNN_SUCCESS;
    default:
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "setPowerConfig: config %u: option %u is not supported "
              "by this backend", i, c->option);
      return QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG;
  }
}
#undef REJECT

static void apply_dcvs(rb_power *p, const qnn_htp_dcvs_v3_t *d) {
  qnn_htp_dcvs_v3_t *m = &p->dcvs;
  m->context_id = d->context_id;
  if (d->set_dcvs_enable) {
    m->set_dcvs_enable = 1;
    m->dcvs_enable = d->dcvs_enable;
    m->power_mode = d->power_mode;
  }
  if (d->set_sleep_latency) {
    m->set_sleep_latency = 1;
    m->sleep_latency = d->sleep_latency;
  }
  if (d->set_sleep_disable) {
    m->set_sleep_disable = 1;
    m->sleep_disable = d->sleep_disable;
  }
  if (d->set_bus_params) {
    m->set_bus_params = 1;
    m->bus_voltage_corner_min = d->bus_voltage_corner_min;
    m->bus_voltage_corner_target = d->bus_voltage_corner_target;
    m->bus_voltage_corner_max = d->bus_voltage_corner_max;
  }
  if (d->set_core_params) {
    m->set_core_params = 1;
    m->core_voltage_corner_min = d->core_voltage_corner_min;
    m->core_voltage_corner_target = d->core_voltage_corner_target;
    m->core_voltage_corner_max = d->core_voltage_corner_max;
  }
  p->has_dcvs = true;
}

static qnn_error_t set_power_config(uint32_t id, const qnn_htp_power_config_t **cfg) {
  pthread_mutex_lock(&g_rb.lock);
  rb_backend *b = NULL;
  rb_power *p = find_power(id, &b);
  if (!p) {
    rb_backend *any = rb_owner_for(NULL);
    rb_logf(any ? any->log : NULL, QNN_LOG_LEVEL_ERROR, "setPowerConfig: unknown power config "
            "id %u (create it with createPowerConfigId)", id);
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_HTP_PERF_ERROR_INVALID_INPUT;
  }
  atomic_fetch_add(&b->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);
  qnn_error_t rc = rb_fault(b, FR_SET_POWER_CONFIG, b->log);

  pthread_mutex_lock(&g_rb.lock);
  atomic_fetch_sub(&b->busy, 1);
  if (find_power(id, NULL) != p) { /* destroyed while the fault latency ran */
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_HTP_PERF_ERROR_INVALID_INPUT;
  }
  /* A NULL array is allowed and means "no config options" (QnnHtpPerfInfrastructure.h): a
   * successful call that changes nothing. All or nothing otherwise: every config is checked
   * before any is applied. */
  for (uint32_t i = 0; rc == QNN_SUCCESS && cfg && cfg[i]; i++)
    rc = check_config(b, i, id, cfg[i]);
  if (rc == QNN_SUCCESS) {
    for (uint32_t i = 0; cfg && cfg[i]; i++) {
      const qnn_htp_power_config_t *c = cfg[i];
      if (c->option == QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3) {
        apply_dcvs(p, &c->u.dcvs_v3_config);
      } else if (c->option == QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY) {
        p->has_rpc_latency = true;
        p->rpc_latency_us = c->u.rpc_control_latency_config;
      } else {
        p->has_rpc_polling = true;
        p->rpc_polling_us = c->u.rpc_polling_time_config;
      }
    }
    p->set_calls++;
  } else {
    p->rejected_calls++;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

/* ---- control API ---------------------------------------------------------------------------- */

RB_EXPORT int htpu_ref_get_power_state(uint32_t id, htpu_ref_power_state *out) {
  int rc = -1;
  pthread_mutex_lock(&g_rb.lock);
  rb_power *p = find_power(id, NULL);
  if (p) {
    if (out) to_state(p, out);
    rc = 0;
  } else {
    for (uint32_t i = 0; i < g_history_len; i++)
      if (g_history[i].power_config_id == id) {
        if (out) *out = g_history[i];
        rc = 1;
        break;
      }
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

RB_EXPORT uint32_t htpu_ref_last_power_config_id(void) {
  pthread_mutex_lock(&g_rb.lock);
  uint32_t id = g_last_power_id;
  pthread_mutex_unlock(&g_rb.lock);
  return id;
}

RB_EXPORT uint32_t htpu_ref_live_power_config_ids(void) {
  pthread_mutex_lock(&g_rb.lock);
  uint32_t n = rb_power_live_count();
  pthread_mutex_unlock(&g_rb.lock);
  return n;
}

RB_EXPORT void htpu_ref_forget_power_history(void) {
  pthread_mutex_lock(&g_rb.lock);
  g_history_len = 0;
  memset(g_history, 0, sizeof(g_history));
  pthread_mutex_unlock(&g_rb.lock);
}
