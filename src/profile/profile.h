/*
 * profile.h - one profiled call: a QNN profile handle made for it, passed to the backend, read
 * back into an htpu_profile and freed before the call returns (profile.c, profile_read.c).
 *
 * A handle per call, not per graph: the HTP libraries refuse the graph-bound (continuous)
 * kind and the max-events config (docs/profiling.md), a handle serves one call at a time, and
 * freeing it right after the read bounds memory whatever the call rate. Calls that do not ask
 * for a profile touch none of this.
 */
#ifndef HTPU_PROFILE_H
#define HTPU_PROFILE_H

#include "internal.h"
#include "qnn/qnn_profile_abi.h"

typedef struct profile_call {
  qnn_profile_handle_t handle; /* NULL: the call is not profiled */
  htpu_profile_level level;
  uint32_t max_events;
  int extended;      /* read timestamps (capability 1404) */
  uint64_t exec_start_ns;
} profile_call;

/* Makes the handle for a call asking for `level` (OFF: nothing, 0). Returns 0 or an error
 * naming the capability or value (HTPU_EINVAL, HTPU_EUNSUPPORTED, HTPU_EQNN). */
int profile_call_begin(runtime_obj *rt, int level, uint32_t max_events, profile_call *pc);

/* Reads the handle (when `read`) into a new htpu_profile at *out and frees the handle whatever
 * happens. Returns 0 or the read's error (set). */
int profile_call_end(runtime_obj *rt, profile_call *pc, int read, const char *graph,
                     htpu_profile **out);

/* For an execute: when rc is 0 reads the events into a new htpu_profile at *out (with the host
 * figures), else reads nothing; frees the handle either way. Returns the read's result: 0, or
 * its error (set, and counted in htpu_stats.profiles_dropped) with *out NULL. A failed read
 * never changes the call's own answer: the outputs were computed, only the sample is lost. */
int profile_call_finish_execute(runtime_obj *rt, profile_call *pc, int rc, const char *graph,
                                htpu_profile **out, uint64_t start_ns, uint64_t quantize_ns,
                                uint64_t execute_ns, uint64_t dequantize_ns);

/* profile_read.c: the events of a handle as a new htpu_profile at *out. Returns 0 or an error
 * (set). */
int profile_read(const qnn_backend_lib *b, qnn_profile_handle_t h, htpu_profile_level level,
                 uint32_t max_events, int extended, const char *graph, htpu_profile **out);

/* The profile slot of b, or NULL when the provider's version has no such slot. */
#define PROFILE_SLOT(b, field) \
  (QNN_INTERFACE_SLOT(field) < (b)->slots ? (b)->provider->table.field : NULL)

#endif
