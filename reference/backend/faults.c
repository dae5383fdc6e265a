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

static atomic_uint_fast64_t g_total_executes, g_violations, g_leaked, g_faults, g_ssr_events;
static atomic_uint_fast64_t g_aborted, g_timed_out, g_batch_executes, g_async_notified;
static atomic_uint_fast64_t g_graphs_deserialized, g_list_async_calls;
static atomic_int g_in_flight;
static atomic_bool g_control_ops; /* g_control has graphOp rules or latency */
/* Calls of each faultable API made by this thread (htpu_ref_thread_calls). */
static _Thread_local uint64_t t_calls[FR_API_COUNT];

void rb_count_leak(void) { atomic_fetch_add(&g_leaked, 1); }

bool rb_fault_set_has(const fr_set *s, uint32_t api) {
  if (s->latency_us[api]) return true;
  for (uint32_t i = 0; i < s->num_rules; i++)
    if (s->rules[i].api == api) return true;
  return false;
}

bool rb_op_faults_armed(const rb_backend *b) {
  return atomic_load(&g_control_ops) || b->op_faults;
}
void rb_count_execute(void) { atomic_fetch_add(&g_total_executes, 1); }
void rb_count_batch_multiple(void) { atomic_fetch_add(&g_batch_executes, 1); }
void rb_count_async_notified(void) { atomic_fetch_add(&g_async_notified, 1); }
void rb_count_graphs_deserialized(uint32_t n) { atomic_fetch_add(&g_graphs_deserialized, n); }
void rb_count_list_async(void) { atomic_fetch_add(&g_list_async_calls, 1); }
void rb_count_stop(rb_stop why) {
  if (why == RB_STOP_ABORT) atomic_fetch_add(&g_aborted, 1);
  if (why == RB_STOP_TIMEOUT) atomic_fetch_add(&g_timed_out, 1);
}
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
  if (fr_parse_latency(getenv("HTPU_REF_LATENCY"), s, err, errlen) != 0) return -1;
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

unsigned rb_ssr(rb_backend *b) {
  unsigned n = 0;
  pthread_mutex_lock(&g_rb.lock);
  for (rb_context *c = g_rb.contexts; c; c = c->next) {
    if (b && c->backend != b) continue;
    if (!atomic_exchange(&c->stale, true)) n++;
  }
  pthread_mutex_unlock(&g_rb.lock);
  atomic_fetch_add(&g_ssr_events, 1);
  return n;
}

uint32_t rb_fault(rb_backend *b, uint32_t api, rb_log *log) {
  rb_stop ignored;
  return rb_fault_watched(b, api, log, NULL, &ignored);
}

uint32_t rb_fault_watched(rb_backend *b, uint32_t api, rb_log *log, const rb_watch *w,
                          rb_stop *stopped) {
  uint32_t code, lat, flags = 0;
  *stopped = RB_STOP_NONE;
  if (api < FR_API_COUNT) t_calls[api]++;
  rb_session_event(b, api);
  if (b && atomic_load(&b->fatal)) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: the DSP subsystem did not recover from an earlier "
            "failure; free and recreate the backend", fr_api_name(api));
    return QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL;
  }
  /* deviceCreate counts in the process-wide set (as it was at the latest backendCreate), not
   * in the backend's: a loader that retries start-up creates a new backend each time, and
   * "deviceCreate:1:1003:2" must mean the first two deviceCreate calls of the process. */
  bool process_wide = !b || api == FR_DEVICE_CREATE;
  pthread_mutex_lock(&g_fault_lock);
  fr_set *own = process_wide ? &g_env : &b->faults;
  if (!b) env_refresh_locked();
  if (!b && g_env_bad) {
    pthread_mutex_unlock(&g_fault_lock);
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: HTPU_REF_FAULTS/HTPU_REF_LATENCY has a syntax error",
            fr_api_name(api));
    return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  }
  /* Both sets count every call, so each one's "nth" means calls since it was armed. */
  const fr_rule *r1 = fr_next_rule(&g_control, api), *r2 = fr_next_rule(own, api);
  uint32_t lat1 = fr_latency(&g_control, api), lat2 = fr_latency(own, api);
  lat = lat1 > lat2 ? lat1 : lat2;
  const fr_rule *r = r1 ? r1 : r2;
  code = r ? r->code : 0;
  if (r) flags = r->flags;
  pthread_mutex_unlock(&g_fault_lock);
  /* a watched call's latency is interruptible, as a real call waiting on the DSP is */
  if (lat && w && w->sig)
    *stopped = rb_watch_sleep(w, lat);
  else if (lat)
    usleep(lat);
  if (*stopped != RB_STOP_NONE) return 0;
  if (code) {
    /* 1011 models an unrecovered subsystem restart: the backend stays unusable. */
    if (b && code == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL) atomic_store(&b->fatal, true);
    atomic_fetch_add(&g_faults, 1);
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: injected fault, returning %u%s", fr_api_name(api),
            code, flags & FR_FLAG_SSR ? " (DSP subsystem restart)" : "");
    if (flags & FR_FLAG_SSR) {
      unsigned n = rb_ssr(b);
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "%s: DSP subsystem restart: %u context(s) lost; free "
              "them and create new ones", fr_api_name(api), n);
    }
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
  memcpy(s.latency_from, g_control.latency_from, sizeof(s.latency_from));
  g_control = s;
  atomic_store(&g_control_ops, rb_fault_set_has(&g_control, FR_GRAPH_OP));
  pthread_mutex_unlock(&g_fault_lock);
  if (rc != 0) fprintf(stderr, "htpu_ref_arm: %s\n", err);
  return rc;
}

RB_EXPORT int htpu_ref_set_latency(const char *api, unsigned usec) {
  int a = api ? fr_api_lookup(api, strlen(api)) : -1;
  if (a < 0) return -1;
  pthread_mutex_lock(&g_fault_lock);
  g_control.latency_us[a] = usec;
  atomic_store(&g_control_ops, rb_fault_set_has(&g_control, FR_GRAPH_OP));
  pthread_mutex_unlock(&g_fault_lock);
  return 0;
}

RB_EXPORT uint64_t htpu_ref_thread_calls(const char *api) {
  int a = api ? fr_api_lookup(api, strlen(api)) : -1;
  return a < 0 ? UINT64_MAX : t_calls[a];
}

RB_EXPORT void htpu_ref_disarm(void) {
  pthread_mutex_lock(&g_fault_lock);
  memset(&g_control, 0, sizeof(g_control));
  atomic_store(&g_control_ops, false);
  memset(&g_env, 0, sizeof(g_env));
  free(g_env_faults);
  free(g_env_latency);
  g_env_faults = g_env_latency = NULL;
  g_env_parsed = g_env_bad = false;
  pthread_mutex_unlock(&g_fault_lock);
  rb_graph_latency_clear();
  rb_caps_reset();
}

RB_EXPORT void htpu_ref_get_stats(htpu_ref_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&g_rb.lock);
  for (rb_log *l = g_rb.logs; l; l = l->next) out->live_logs++;
  for (rb_backend *b = g_rb.backends; b; b = b->next) out->live_backends++;
  for (rb_device *d = g_rb.devices; d; d = d->next) out->live_devices++;
  for (rb_context *c = g_rb.contexts; c; c = c->next) {
    out->live_contexts++;
    out->stale_contexts += atomic_load(&c->stale);
  }
  for (rb_mem *m = g_rb.mems; m; m = m->next) out->live_mem_handles++;
  out->live_signals = rb_signal_live_count();
  pthread_mutex_lock(&g_sched.lock);
  for (rb_context *c = g_rb.contexts; c; c = c->next)
    for (uint32_t i = 0; i < c->num_graphs; i++) out->async_pending += c->graphs[i].async_pending;
  pthread_mutex_unlock(&g_sched.lock);
  for (rb_backend *b = g_rb.backends; b; b = b->next)
    for (rb_pinfo *p = b->pinfos; p; p = p->next) out->live_platform_infos++;
  out->live_power_config_ids = rb_power_live_count();
  out->spill_fill_bytes = rb_sf_group_bytes(); /* each group's buffer once, */
  for (rb_context *c = g_rb.contexts; c; c = c->next) {
    if (!c->group) out->spill_fill_bytes += c->spill_fill; /* each other context's own */
    out->binary_copy_bytes += c->copied_bytes;
  }
  pthread_mutex_unlock(&g_rb.lock);
  out->executes_in_flight = (uint32_t)atomic_load(&g_in_flight);
  out->total_executes = atomic_load(&g_total_executes);
  out->violations = atomic_load(&g_violations);
  out->leaked_handles = atomic_load(&g_leaked);
  out->faults_injected = atomic_load(&g_faults);
  out->ssr_events = atomic_load(&g_ssr_events);
  out->aborted_calls = atomic_load(&g_aborted);
  out->timed_out_calls = atomic_load(&g_timed_out);
  out->batch_multiple_executes = atomic_load(&g_batch_executes);
  out->async_notified = atomic_load(&g_async_notified);
  out->graphs_deserialized = atomic_load(&g_graphs_deserialized);
  out->list_async_calls = atomic_load(&g_list_async_calls);
}

RB_EXPORT uint32_t htpu_ref_trigger_ssr(void) {
  unsigned n = rb_ssr(NULL);
  pthread_mutex_lock(&g_rb.lock);
  for (rb_backend *b = g_rb.backends; b; b = b->next)
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "DSP subsystem restart (htpu_ref_trigger_ssr): "
            "%u context(s) lost", n);
  pthread_mutex_unlock(&g_rb.lock);
  return n;
}

RB_EXPORT void htpu_ref_reset_stats(void) {
  atomic_store(&g_total_executes, 0);
  atomic_store(&g_violations, 0);
  atomic_store(&g_leaked, 0);
  atomic_store(&g_faults, 0);
  atomic_store(&g_ssr_events, 0);
  atomic_store(&g_aborted, 0);
  atomic_store(&g_timed_out, 0);
  atomic_store(&g_batch_executes, 0);
  atomic_store(&g_async_notified, 0);
  atomic_store(&g_graphs_deserialized, 0);
  atomic_store(&g_list_async_calls, 0);
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
