/* faults.c - fault injection, latency, the rule-violation record and the test-control API. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

/* One lock for every rule set: faults are rare and the critical sections tiny. */
static pthread_mutex_t g_fault_lock = PTHREAD_MUTEX_INITIALIZER;
static fr_set g_control;           /* htpu_ref_arm / htpu_ref_set_latency */
static fr_set g_env;               /* HTPU_REF_FAULTS for calls made before a backend exists */
static char *g_env_faults, *g_env_latency; /* the env values g_env was parsed from */
static bool g_env_parsed, g_env_bad;

static pthread_mutex_t g_violation_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_last_violation[512];

static atomic_uint_fast64_t g_total_executes, g_violations, g_leaked, g_faults;
static atomic_int g_in_flight;

void rb_count_leak(void) { atomic_fetch_add(&g_leaked, 1); }
void rb_count_execute(void) { atomic_fetch_add(&g_total_executes, 1); }
void rb_exec_in_flight_add(int delta) { atomic_fetch_add(&g_in_flight, delta); }
int rb_exec_in_flight(void) { return atomic_load(&g_in_flight); }

void rb_violation(rb_log *log, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  atomic_fetch_add(&g_violations, 1);
  pthread_mutex_lock(&g_violation_lock);
  snprintf(g_last_violation, sizeof(g_last_violation), "%s", msg);
  pthread_mutex_unlock(&g_violation_lock);
  rb_logf(log, QNN_LOG_LEVEL_ERROR, "API rule violation: %s", msg);
}

int rb_faults_from_env(fr_set *s, char *err, size_t errlen) {
  memset(s, 0, sizeof(*s));
  if (fr_parse_rules(getenv("HTPU_REF_FAULTS"), s->rules, &s->num_rules, err, errlen) != 0)
    return -1;
  if (fr_parse_latency(getenv("HTPU_REF_LATENCY"), s->latency_us, err, errlen) != 0) return -1;
  return 0;
}

static bool same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* The process-wide env set follows the environment: a changed value re-arms it. */
static void env_refresh_locked(void) {
  const char *f = getenv("HTPU_REF_FAULTS"), *l = getenv("HTPU_REF_LATENCY");
  if (g_env_parsed && same_str(f, g_env_faults) && same_str(l, g_env_latency)) return;
  free(g_env_faults);
  free(g_env_latency);
  g_env_faults = dup_or_null(f);
  g_env_latency = dup_or_null(l);
  g_env_parsed = true;
  char err[256];
  g_env_bad = rb_faults_from_env(&g_env, err, sizeof(err)) != 0;
  if (g_env_bad) fprintf(stderr, "htpu_refbackend: HTPU_REF_FAULTS/HTPU_REF_LATENCY: %s\n", err);
}

uint32_t rb_fault(rb_backend *b, uint32_t api, rb_log *log) {
  uint32_t code, lat;
  if (b && atomic_load(&b->fatal)) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: the DSP subsystem did not recover from an earlier "
            "failure; free and recreate the backend", fr_api_name(api));
    return QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL;
  }
  pthread_mutex_lock(&g_fault_lock);
  fr_set *own = b ? &b->faults : &g_env;
  if (!b) env_refresh_locked();
  if (!b && g_env_bad) {
    pthread_mutex_unlock(&g_fault_lock);
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: HTPU_REF_FAULTS/HTPU_REF_LATENCY has a syntax error",
            fr_api_name(api));
    return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  }
  lat = g_control.latency_us[api] > own->latency_us[api] ? g_control.latency_us[api]
                                                         : own->latency_us[api];
  /* Both sets count every call, so each one's "nth" means calls since it was armed. */
  uint32_t c1 = fr_next(&g_control, api), c2 = fr_next(own, api);
  code = c1 ? c1 : c2;
  pthread_mutex_unlock(&g_fault_lock);
  if (lat) usleep(lat);
  if (code) {
    /* 1011 models an unrecovered subsystem restart: the backend stays unusable. */
    if (b && code == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL) atomic_store(&b->fatal, true);
    atomic_fetch_add(&g_faults, 1);
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: injected fault, returning %u", fr_api_name(api),
            code);
  }
  return code;
}

/* ---- the control API ------------------------------------------------------------------- */

RB_EXPORT int htpu_ref_arm(const char *rules) {
  fr_set s;
  char err[256];
  memset(&s, 0, sizeof(s));
  int rc = fr_parse_rules(rules, s.rules, &s.num_rules, err, sizeof(err));
  pthread_mutex_lock(&g_fault_lock);
  memcpy(s.latency_us, g_control.latency_us, sizeof(s.latency_us));
  g_control = s;
  pthread_mutex_unlock(&g_fault_lock);
  if (rc != 0) fprintf(stderr, "htpu_ref_arm: %s\n", err);
  return rc;
}

RB_EXPORT int htpu_ref_set_latency(const char *api, unsigned usec) {
  int a = api ? fr_api_lookup(api, strlen(api)) : -1;
  if (a < 0) return -1;
  pthread_mutex_lock(&g_fault_lock);
  g_control.latency_us[a] = usec;
  pthread_mutex_unlock(&g_fault_lock);
  return 0;
}

RB_EXPORT void htpu_ref_disarm(void) {
  pthread_mutex_lock(&g_fault_lock);
  memset(&g_control, 0, sizeof(g_control));
  memset(&g_env, 0, sizeof(g_env));
  free(g_env_faults);
  free(g_env_latency);
  g_env_faults = g_env_latency = NULL;
  g_env_parsed = g_env_bad = false;
  pthread_mutex_unlock(&g_fault_lock);
}

RB_EXPORT void htpu_ref_get_stats(htpu_ref_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&g_rb.lock);
  for (rb_log *l = g_rb.logs; l; l = l->next) out->live_logs++;
  for (rb_backend *b = g_rb.backends; b; b = b->next) out->live_backends++;
  for (rb_device *d = g_rb.devices; d; d = d->next) out->live_devices++;
  for (rb_context *c = g_rb.contexts; c; c = c->next) out->live_contexts++;
  pthread_mutex_unlock(&g_rb.lock);
  out->executes_in_flight = (uint32_t)atomic_load(&g_in_flight);
  out->total_executes = atomic_load(&g_total_executes);
  out->violations = atomic_load(&g_violations);
  out->leaked_handles = atomic_load(&g_leaked);
  out->faults_injected = atomic_load(&g_faults);
}

RB_EXPORT void htpu_ref_reset_stats(void) {
  atomic_store(&g_total_executes, 0);
  atomic_store(&g_violations, 0);
  atomic_store(&g_leaked, 0);
  atomic_store(&g_faults, 0);
  pthread_mutex_lock(&g_violation_lock);
  g_last_violation[0] = '\0';
  pthread_mutex_unlock(&g_violation_lock);
}

RB_EXPORT const char *htpu_ref_last_violation(void) {
  static _Thread_local char copy[sizeof(g_last_violation)];
  pthread_mutex_lock(&g_violation_lock);
  memcpy(copy, g_last_violation, sizeof(copy));
  pthread_mutex_unlock(&g_violation_lock);
  return copy;
}

__attribute__((destructor)) static void rb_faults_unload(void) {
  free(g_env_faults);
  free(g_env_latency);
  g_env_faults = g_env_latency = NULL;
}
