/*
 * ref_control.h - the reference libraries' test-control API, for every C test: the backend's
 * (reference/backend/htpu_ref_control.h) and the FastRPC stand-in's
 * (reference/cdsprpc/htpu_refcdsprpc.h).
 *
 * The libraries are loaded once from this build (HTPU_TEST_BUILD_DIR) and stay loaded for the
 * whole run, so the tests and the code under test share one copy of their state and resolved
 * functions never dangle.
 */
#ifndef HTPU_TEST_REF_CONTROL_H
#define HTPU_TEST_REF_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "../../reference/backend/htpu_ref_control.h"
#include "../../reference/cdsprpc/htpu_refcdsprpc.h"
#include "qnn/qnn_abi.h"

/* Every control function, and the QNN entry point, of libhtpu_refbackend.so and
 * libhtpu_refcdsprpc.so. */
typedef struct ref_ctl {
  qnn_interface_get_providers_fn get_providers;
  htpu_ref_arm_fn arm;
  htpu_ref_disarm_fn disarm;
  htpu_ref_set_latency_fn set_latency;
  htpu_ref_set_graph_latency_fn set_graph_latency;
  htpu_ref_get_stats_fn stats;
  htpu_ref_reset_stats_fn reset_stats;
  htpu_ref_last_violation_fn last_violation;
  htpu_ref_thread_calls_fn thread_calls;
  htpu_ref_unload_handles_fn unload_handles;
  htpu_ref_trigger_ssr_fn trigger_ssr;
  htpu_ref_get_power_state_fn power_state;
  htpu_ref_last_power_config_id_fn last_power_id;
  htpu_ref_live_power_config_ids_fn live_power_ids;
  htpu_ref_forget_power_history_fn forget_power;
  htpu_ref_set_capability_fn set_capability;
  htpu_ref_reset_capabilities_fn reset_capabilities;
  htpu_ref_get_graph_state_fn graph_state;
  htpu_ref_live_profiles_fn live_profiles;
  htpu_ref_get_context_state_fn context_state;
  void *(*rpc_alloc)(int, uint32_t, int);
  void *(*rpc_alloc2)(int, uint32_t, size_t);
  void (*rpc_free)(void *);
  int (*rpc_to_fd)(void *);
  void (*rpc_init)(void);
  void (*rpc_deinit)(void);
  htpu_refcdsprpc_get_stats_fn rpc_stats;
  htpu_refcdsprpc_unload_fn rpc_unload;
} ref_ctl;

/* The resolved functions, or NULL (message printed) when a library or a symbol is missing. */
const ref_ctl *ref_ctl_get(void);

/* A clean start for a test that drives the libraries itself: every HTPU_REF_* variable unset,
 * rules disarmed, counters reset; copies the functions into *c. Returns 0, or -1 (printed). */
int ref_ctl_open(ref_ctl *c);
/* Unsets the variables and disarms the rules again. */
void ref_ctl_close(ref_ctl *c);

/* The backend's counters now. */
htpu_ref_stats ref_ctl_stats(const ref_ctl *c);

/* The first provider getProviders hands out (as configured by HTPU_REF_PROVIDERS), or NULL. */
const qnn_interface_t *ref_first_provider(const ref_ctl *c);

/* Unsets every HTPU_REF_* variable the tests set. */
void ref_reset_env(void);

/* ---- the same, one call at a time, for tests of the core (fixture.h) ---------------------- */

/* Each answers as noted when the control API is missing. */
int fx_ref_arm(const char *rules); /* -1 */
void fx_ref_disarm(void);
unsigned long fx_ref_violations(void);    /* 0 */
const char *fx_ref_last_violation(void);  /* "" */
int fx_ref_set_latency(const char *api, unsigned usec); /* -1 */
/* Latency of the executes of one named graph alone (0 removes it). */
int fx_ref_set_graph_latency(const char *graph, unsigned usec); /* -1 */
/* A DSP subsystem restart now (every live context goes stale); returns how many went stale. */
uint32_t fx_ref_trigger_ssr(void);
/* Cumulative counts (compare before and after): graphExecute calls the backend ran to success;
 * calls failed by a fault rule. */
uint64_t fx_ref_executes(void);
uint64_t fx_ref_faults(void);
/* Calls of a QNN API (name as in fault rules) made by the calling thread so far (UINT64_MAX). */
uint64_t fx_ref_thread_calls(const char *api);
/* Successful rpcmem_alloc calls of the reference FastRPC library so far (process-wide;
 * UINT64_MAX). */
uint64_t fx_rpcmem_allocs(void);

/* Power state of a power config id as the reference backend recorded it (see
 * htpu_ref_control.h); returns 0 live, 1 destroyed, -1 unknown. */
int fx_ref_power_state(uint32_t id, htpu_ref_power_state *out);
uint32_t fx_ref_live_power_ids(void);
/* The id the last createPowerConfigId returned (ids are process-wide: never assume 1). */
uint32_t fx_ref_last_power_id(void);
uint32_t fx_ref_live_mem_handles(void);
void fx_ref_forget_power_history(void);

/* What propertyHasCapability answers for key (and the behaviour behind it) until
 * fx_ref_disarm / fx_ref_reset_capabilities: 0 supported, e.g. 1000 not. Returns 0, or -1
 * for a key the backend cannot switch (or without the control API). */
int fx_ref_set_capability(uint32_t key, uint32_t answer);
void fx_ref_reset_capabilities(void);
/* The backend's view of the graph called name in the newest live context that has one
 * (priorities, queue, batch multiple of its last execute); 0, or -1 when there is none. */
int fx_ref_graph_state(const char *name, htpu_ref_graph_state *out);
/* Cumulative: calls ended by an abort / a timeout signal; live signals. */
uint64_t fx_ref_aborted_calls(void);
uint64_t fx_ref_timed_out_calls(void);
uint32_t fx_ref_live_signals(void);
/* graphExecuteAsync calls accepted and not yet notified; notifications so far (cumulative). */
uint32_t fx_ref_async_pending(void);
uint64_t fx_ref_async_notified(void);
/* Profile handles created and not yet freed (0 without the control API). */
uint32_t fx_ref_live_profiles(void);
/* What the backend holds for the context of the newest live context with graph `name`
 * deserialized (its binary, graphs, spill-fill and group); 0, or -1 when there is none. */
int fx_ref_context_state(const char *graph, htpu_ref_context_state *out);
/* The backend's counters now (zeroed without the control API). */
htpu_ref_stats fx_ref_stats(void);

#endif
