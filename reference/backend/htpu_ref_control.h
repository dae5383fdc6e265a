/*
 * htpu_ref_control.h - the test-control API of the reference backend (libhtpu_refbackend.so).
 *
 * Tests dlopen the same library path the code under test loads (so both see one copy of the
 * library's state) and dlsym these names. None of this exists in a real QNN backend; the core
 * must never depend on it. All functions are thread-safe.
 */
#ifndef HTPU_REF_CONTROL_H
#define HTPU_REF_CONTROL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct htpu_ref_stats {
  uint32_t live_logs;
  uint32_t live_backends;
  uint32_t live_devices;
  uint32_t live_contexts;
  uint32_t executes_in_flight; /* graphExecute calls between handle check and return */
  uint64_t total_executes;     /* graphExecute calls that ran the graph successfully */
  uint64_t violations;         /* API-rule violations (see htpu_ref_last_violation) */
  uint64_t leaked_handles;     /* devices/contexts still alive at backendFree (freed there) */
  uint64_t faults_injected;    /* calls failed by a fault rule */
} htpu_ref_stats;

/* Replaces the global rule set with `rules` ("api:nth:code[:count],..."; nth "*" = every call)
 * and restarts its call counters. NULL or "" clears it. Returns 0, or -1 on a syntax error
 * (the previous rules are then cleared too). Global rules apply in addition to the per-backend
 * rules read from HTPU_REF_FAULTS at backendCreate. */
typedef int (*htpu_ref_arm_fn)(const char *rules);
int htpu_ref_arm(const char *rules);

/* Sleeps usec microseconds at the start of every call of `api` (QNN name, as in rules);
 * 0 removes it. Returns 0, or -1 for an unknown api. */
typedef int (*htpu_ref_set_latency_fn)(const char *api, unsigned usec);
int htpu_ref_set_latency(const char *api, unsigned usec);

/* Clears the global rules and latencies, and forgets the process-wide rules read from
 * HTPU_REF_FAULTS/HTPU_REF_LATENCY for getProviders/logCreate/backendCreate (they are read
 * again, with fresh counters, on the next such call). Rules already attached to live backends
 * stay with them. */
typedef void (*htpu_ref_disarm_fn)(void);
void htpu_ref_disarm(void);

typedef void (*htpu_ref_get_stats_fn)(htpu_ref_stats *out);
void htpu_ref_get_stats(htpu_ref_stats *out);

/* Resets the cumulative counters (executes, violations, leaks, faults) and the last violation;
 * live counts are unaffected. */
typedef void (*htpu_ref_reset_stats_fn)(void);
void htpu_ref_reset_stats(void);

/* Message of the most recent violation ("" if none). The string is a per-thread copy, valid
 * until the next call from the same thread. */
typedef const char *(*htpu_ref_last_violation_fn)(void);
const char *htpu_ref_last_violation(void);

#ifdef __cplusplus
}
#endif
#endif /* HTPU_REF_CONTROL_H */
