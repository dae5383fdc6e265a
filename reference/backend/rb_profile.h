/*
 * rb_profile.h - the reference backend's profile API (QnnProfile) and the events it records.
 *
 * What is recorded mirrors what the HTP backend emits (docs/profiling.md), from the reference's
 * own measured times: an execute event with the HTP sub-events (host RPC, HTP RPC, accelerator
 * time with and without waits, yield count), at the detailed level the accelerator cycles with
 * a NODE sub-event per op (its name, its measured time), at HTP's linting level the critical
 * path with per-op wait and overlap; for a context load an init event with the HTP load
 * sub-events. Cycles are nanoseconds at the reference's nominal 1 GHz clock; timestamps are
 * CLOCK_MONOTONIC microseconds.
 *
 * Rules enforced (QnnProfile.h, QnnGraph.h, QnnContext.h): a handle is used by one call at a
 * time (a second execute gets QNN_GRAPH_ERROR_PROFILE_IN_USE, profileFree and profileSetConfig
 * QNN_PROFILE_ERROR_HANDLE_IN_USE); a handle reused is reset by the next call, and event ids of
 * the previous call stop resolving; unknown levels and config options are invalid arguments; a
 * config whose capability is off is unsupported.
 */
#ifndef HTPU_RB_PROFILE_H
#define HTPU_RB_PROFILE_H

#include "qnn/qnn_profile_abi.h"
#include "rb_internal.h"

/* rb_prof_call, one call recording into a profile handle: rb_internal.h. */

/* Takes the profile handle for one call of backend b: 0 (pc->p NULL when handle is NULL), or
 * the error the call must return (bad_handle for an unknown handle, in_use for one another
 * call holds). Sets pc->t_enter. */
qnn_error_t rb_profile_begin(rb_backend *b, qnn_profile_handle_t handle, uint32_t num_ops,
                             qnn_error_t bad_handle, qnn_error_t in_use, rb_prof_call *pc);
/* One row group of an execute ran, from group_t0, its op times in op_t0/op_t1: adds them to
 * the per-op sums. */
void rb_profile_row_group(rb_prof_call *pc, uint64_t group_t0);
/* Records what an execute of graph `g` of model m measured (nothing when rc failed), then
 * releases the handle. The run's figures cover every row group of a batch multiple. */
void rb_profile_end_execute(rb_prof_call *pc, const ref_model *m, uint32_t g, qnn_error_t rc);
/* Records a context load (t_run0..t_run1: reading the binary), then releases the handle. */
void rb_profile_end_load(rb_prof_call *pc, qnn_error_t rc);
/* Releases the handle of a call that records nothing. */
void rb_profile_abandon(rb_prof_call *pc);

/* Frees b's live profile handles, counting each as a leak (backendFree; registry lock held). */
void rb_profile_release_all(rb_backend *b);

qnn_error_t rb_profile_create(qnn_backend_handle_t, uint32_t, qnn_profile_handle_t *);
qnn_error_t rb_profile_set_config(qnn_profile_handle_t, const struct qnn_profile_config **);
qnn_error_t rb_profile_get_events(qnn_profile_handle_t, const uint64_t **, uint32_t *);
qnn_error_t rb_profile_get_sub_events(uint64_t, const uint64_t **, uint32_t *);
qnn_error_t rb_profile_get_event_data(uint64_t, struct qnn_profile_event_data *);
qnn_error_t rb_profile_get_extended_event_data(uint64_t,
                                               struct qnn_profile_extended_event_data *);
qnn_error_t rb_profile_free(qnn_profile_handle_t);

#endif
