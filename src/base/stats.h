/* stats.h - the process-wide counters behind htpu_stats_get(). */
#ifndef HTPU_STATS_H
#define HTPU_STATS_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct htpu_counters {
  atomic_uint_fast64_t live_runtimes, live_contexts, live_graphs;
  atomic_uint_fast64_t executes, execute_errors, execute_ns_total, execute_ns_last;
  atomic_uint_fast64_t loads, load_ns_total, quantize_ns_total, dequantize_ns_total;
  atomic_uint_fast64_t recoveries, recovery_failures;
  atomic_uint_fast64_t live_shared_buffers, mem_registrations, startup_retries;
  atomic_uint_fast64_t executes_in_flight, executes_waiting, executes_cancelled;
  atomic_uint_fast64_t executes_declined;
  atomic_uint_fast64_t batch_multiple_executes, batch_multiple_refusals;
  atomic_uint_fast64_t live_calls, executes_timed_out, timer_wakeups, worker_threads;
  atomic_uint_fast64_t gate_writers, frees_deferred;
  atomic_uint_fast64_t live_profiles, profiled_calls, profiles_dropped;
  atomic_uint_fast64_t binary_bytes_copied, binary_bytes_mapped, list_loads;
  atomic_uint_fast64_t npu_lock_waits, npu_lock_waiting, npu_lock_wait_ns_total;
  atomic_uint_fast64_t npu_lock_timeouts; /* the cross-process NPU lock (board/npu_lock.c) */
} htpu_counters;

extern htpu_counters htpu_g_counters;

#define STAT_ADD(field, n) atomic_fetch_add_explicit(&htpu_g_counters.field, (n), memory_order_relaxed)
#define STAT_SUB(field, n) atomic_fetch_sub_explicit(&htpu_g_counters.field, (n), memory_order_relaxed)
#define STAT_SET(field, n) atomic_store_explicit(&htpu_g_counters.field, (n), memory_order_relaxed)

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t htpu_now_ns(void);

#endif
