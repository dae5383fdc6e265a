/* timing.c - a graph's window of recent call durations (timing.h). */
#include "timing.h"

#include <string.h>

void window_record(call_window *w, uint64_t ns) {
  uint64_t n = atomic_load_explicit(&w->count, memory_order_relaxed);
  atomic_store_explicit(&w->ns[n % HTPU_TIMING_WINDOW], ns, memory_order_relaxed);
  /* Release: a reader that sees the new count sees the slot written before it. */
  atomic_store_explicit(&w->count, n + 1, memory_order_release);
}

void window_read(const call_window *w, htpu_graph_timing *out) {
  memset(out, 0, sizeof *out);
  uint64_t n = atomic_load_explicit(&w->count, memory_order_acquire);
  out->samples = n;
  out->window = n < HTPU_TIMING_WINDOW ? (uint32_t)n : HTPU_TIMING_WINDOW;
  for (uint32_t i = 0; i < out->window; i++) {
    uint64_t v = atomic_load_explicit(&w->ns[i], memory_order_relaxed);
    if (v > out->max_ns) out->max_ns = v;
  }
  if (n) out->last_ns = atomic_load_explicit(&w->ns[(n - 1) % HTPU_TIMING_WINDOW],
                                             memory_order_relaxed);
}
