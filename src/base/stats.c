/* stats.c - counters, readable at any time from any thread. */
#include "stats.h"

#include <time.h>

#include "hexagon_tpu.h"

htpu_counters htpu_g_counters;

uint64_t htpu_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define LOAD(field) atomic_load_explicit(&htpu_g_counters.field, memory_order_relaxed)

void htpu_stats_get(htpu_stats *out) {
  if (!out) return;
  out->live_runtimes = LOAD(live_runtimes);
  out->live_contexts = LOAD(live_contexts);
  out->live_graphs = LOAD(live_graphs);
  out->executes = LOAD(executes);
  out->execute_errors = LOAD(execute_errors);
  out->execute_ns_total = LOAD(execute_ns_total);
  out->execute_ns_last = LOAD(execute_ns_last);
  out->loads = LOAD(loads);
  out->load_ns_total = LOAD(load_ns_total);
  out->quantize_ns_total = LOAD(quantize_ns_total);
  out->dequantize_ns_total = LOAD(dequantize_ns_total);
  out->recoveries = LOAD(recoveries);
  out->recovery_failures = LOAD(recovery_failures);
  out->live_shared_buffers = LOAD(live_shared_buffers);
  out->mem_registrations = LOAD(mem_registrations);
  out->startup_retries = LOAD(startup_retries);
  out->executes_in_flight = LOAD(executes_in_flight);
  out->executes_waiting = LOAD(executes_waiting);
  out->executes_cancelled = LOAD(executes_cancelled);
  out->executes_declined = LOAD(executes_declined);
  out->live_calls = LOAD(live_calls);
  out->executes_timed_out = LOAD(executes_timed_out);
  out->timer_wakeups = LOAD(timer_wakeups);
  out->worker_threads = LOAD(worker_threads);
  out->gate_writers = LOAD(gate_writers);
  out->frees_deferred = LOAD(frees_deferred);
  out->live_profiles = LOAD(live_profiles);
  out->profiled_calls = LOAD(profiled_calls);
  out->profiles_dropped = LOAD(profiles_dropped);
  out->batch_multiple_executes = LOAD(batch_multiple_executes);
  out->batch_multiple_refusals = LOAD(batch_multiple_refusals);
  out->binary_bytes_copied = LOAD(binary_bytes_copied);
  out->binary_bytes_mapped = LOAD(binary_bytes_mapped);
  out->list_loads = LOAD(list_loads);
  out->npu_lock_waits = LOAD(npu_lock_waits);
  out->npu_lock_waiting = LOAD(npu_lock_waiting);
  out->npu_lock_wait_ns_total = LOAD(npu_lock_wait_ns_total);
  out->npu_lock_timeouts = LOAD(npu_lock_timeouts);
}
