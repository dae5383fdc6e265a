/* faults.c - fault injection and latency (HTPU_REF_FAULTS, HTPU_REF_LATENCY and the control
 * API's htpu_ref_arm / htpu_ref_set_latency / htpu_ref_disarm), DSP subsystem restarts, and the
 * calls each thread made. An injected latency waits in sched.c, so that a call's signal ends it
 * early; what it counts is counters.c's. */
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

static atomic_bool g_control_ops; /* g_control has graphOp rules or latency */
/* Calls of each faultable API made by this thread (htpu_ref_thread_calls). */
static _Thread_local uint64_t t_calls[FR_API_COUNT];

bool rb_fault_set_has(const fr_set *s, uint32_t api) {
  if (s->latency_us[api]) return true;
  for (uint32_t i = 0; i < s->num_rules; i++)
    if (s->rules[i].api == api) return true;
  return false;
}

bool rb_op_faults_armed(const rb_backend *b) {
  return atomic_load(&g_control_ops) || b->op_faults;
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
  rb_count_ssr();
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
    rb_count_fault();
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

RB_EXPORT uint32_t htpu_ref_trigger_ssr(void) {
  unsigned n = rb_ssr(NULL);
  pthread_mutex_lock(&g_rb.lock);
  for (rb_backend *b = g_rb.backends; b; b = b->next)
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "DSP subsystem restart (htpu_ref_trigger_ssr): "
            "%u context(s) lost", n);
  pthread_mutex_unlock(&g_rb.lock);
  return n;
}

__attribute__((destructor)) static void rb_faults_unload(void) {
  free(g_env_faults);
  free(g_env_latency);
  g_env_faults = g_env_latency = NULL;
}
