/* counters.c - what the backend counts for the control API (htpu_ref_get_stats,
 * htpu_ref_reset_stats): executes, faults, stops, leaks, rule violations and the last one's
 * words, uses whose outcome the API leaves unknown, and the executes in flight. Process-wide atomics, with no call into any other file but
 * the log: every layer above counts here (rb_internal.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

static pthread_mutex_t g_violation_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_last_violation[512];

static atomic_uint_fast64_t g_total_executes, g_violations, g_leaked, g_faults, g_ssr_events;
static atomic_uint_fast64_t g_aborted, g_timed_out, g_batch_executes, g_async_notified;
static atomic_uint_fast64_t g_graphs_deserialized, g_list_async_calls, g_unknown;
static atomic_int g_in_flight;

void rb_count_leak(void) { atomic_fetch_add(&g_leaked, 1); }
void rb_count_execute(void) { atomic_fetch_add(&g_total_executes, 1); }
void rb_count_batch_multiple(void) { atomic_fetch_add(&g_batch_executes, 1); }
void rb_count_async_notified(void) { atomic_fetch_add(&g_async_notified, 1); }
void rb_count_graphs_deserialized(uint32_t n) { atomic_fetch_add(&g_graphs_deserialized, n); }
void rb_count_list_async(void) { atomic_fetch_add(&g_list_async_calls, 1); }
void rb_count_fault(void) { atomic_fetch_add(&g_faults, 1); }
void rb_count_ssr(void) { atomic_fetch_add(&g_ssr_events, 1); }
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

void rb_unknown_behaviour(rb_log *log, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  atomic_fetch_add(&g_unknown, 1);
  rb_logf(log, QNN_LOG_LEVEL_WARN, "behaviour the API leaves unknown: %s", msg);
}

void rb_counters_read(htpu_ref_stats *out) {
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
  out->unknown_behaviours = atomic_load(&g_unknown);
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
  atomic_store(&g_unknown, 0);
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
