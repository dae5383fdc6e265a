/*
 * timing.h - a graph's recent call durations (htpu_graph_timing), written by its executes
 * under the graph's execute lock and read lock-free by anyone.
 */
#ifndef HTPU_TIMING_H
#define HTPU_TIMING_H

#include <stdatomic.h>
#include <stdint.h>

#include "hexagon_tpu.h"

typedef struct call_window {
  _Atomic uint64_t ns[HTPU_TIMING_WINDOW]; /* a ring; slot count % HTPU_TIMING_WINDOW is next */
  _Atomic uint64_t count;                  /* calls recorded */
} call_window;

/* Records one call. One writer at a time: the caller holds the graph's execute lock. */
void window_record(call_window *w, uint64_t ns);

/* Reads the window. Exact under the graph's execute lock; without it a concurrent record may
 * be half seen (its duration counted, or not, one call early): fine for a report. */
void window_read(const call_window *w, htpu_graph_timing *out);

#endif
