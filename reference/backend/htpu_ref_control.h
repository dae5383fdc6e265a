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
  /* HTP device features */
  uint32_t live_mem_handles;      /* memRegister handles not yet deregistered */
  uint32_t live_power_config_ids; /* createPowerConfigId ids not yet destroyed */
  uint32_t live_platform_infos;   /* deviceGetPlatformInfo answers not yet freed */
  uint32_t stale_contexts;        /* live contexts lost in a DSP subsystem restart */
  uint64_t ssr_events;            /* subsystem restarts (ssr rules, htpu_ref_trigger_ssr) */
  /* signals, async executes, batch multiples */
  uint32_t live_signals;            /* signalCreate handles not yet freed */
  uint32_t async_pending;           /* graphExecuteAsync calls accepted, not yet notified */
  uint64_t aborted_calls;           /* calls ended by an abort signal (6031/5012) */
  uint64_t timed_out_calls;         /* calls ended by a timeout signal (6033/5013) */
  uint64_t batch_multiple_executes; /* successful executes with a batch multiple > 1 */
  uint64_t async_notified;          /* notify functions called (every accepted async call) */
  /* loading: what contexts hold and how they came */
  uint64_t graphs_deserialized; /* graphs deserialized by context creations (ENABLE_GRAPHS
                                   lets a context deserialize fewer than its binary holds) */
  uint64_t spill_fill_bytes;    /* spill-fill memory held now: each group's buffer once, each
                                   context outside a group its own */
  uint64_t binary_copy_bytes;   /* copies of context binaries held now (none for a context
                                   created with PERSISTENT_BINARY: it points into the caller's) */
  uint64_t list_async_calls;    /* contextCreateFromBinaryListAsync calls accepted */
  /* uses no rule of the API's headers forbids but whose outcome they leave unknown (each with
   * a WARN line; docs/reference-backend.md): a caller should make none */
  uint64_t unknown_behaviours;
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

/* Sleeps usec microseconds in every graphExecute of the graph called `graph` (in any context),
 * after the call's other latencies; interruptible by the call's signal as those are. 0 removes
 * it; htpu_ref_disarm clears all. At most 8 graphs at once. Returns 0, or -1 (a NULL, empty or
 * over-long name, or a full table). */
typedef int (*htpu_ref_set_graph_latency_fn)(const char *graph, unsigned usec);
int htpu_ref_set_graph_latency(const char *graph, unsigned usec);

/* What the library's exit-time destructor does, now (tests): releases every handle the
 * callers left alive and says how many on stderr. */
typedef void (*htpu_ref_unload_handles_fn)(void);
void htpu_ref_unload_handles(void);

/* How many calls of `api` (QNN name, as in rules) the calling thread has made, since it
 * started: which thread made a slow call (memRegister, contextFree, ...), for tests of code
 * that must not make it on some thread. UINT64_MAX for an unknown api. */
typedef uint64_t (*htpu_ref_thread_calls_fn)(const char *api);
uint64_t htpu_ref_thread_calls(const char *api);

/* Clears the global rules and latencies, and forgets the process-wide rules read from
 * HTPU_REF_FAULTS/HTPU_REF_LATENCY for getProviders/logCreate/backendCreate (they are read
 * again, with fresh counters, on the next such call). Rules already attached to live backends
 * stay with them. Capabilities set with htpu_ref_set_capability return to HTPU_REF_CAPS's or
 * the defaults. */
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

/* A DSP subsystem restart now: every live context of every backend becomes stale (graphExecute,
 * graphRetrieve and memRegister on it return 1007, its mem handles are dead, contextFree
 * succeeds); contexts created afterwards work. Returns the number of contexts made stale. */
typedef uint32_t (*htpu_ref_trigger_ssr_fn)(void);
uint32_t htpu_ref_trigger_ssr(void);

/* What the perf infrastructure last applied through one power config id. DCVS fields are the
 * merged DCVS v3 state: each group (dcvs enable + power mode, sleep latency, sleep disable,
 * bus corners, core corners) holds the values of the last config whose set_* flag was 1 for
 * it, and its set_* field says whether any config ever set it. */
typedef struct htpu_ref_power_state {
  uint32_t power_config_id;
  uint32_t device_id, core_id;  /* as passed to createPowerConfigId */
  uint32_t destroyed;           /* 1: destroyPowerConfigId was called (state as it was then) */
  uint32_t set_calls;           /* setPowerConfig calls that succeeded */
  uint32_t rejected_calls;      /* setPowerConfig calls that failed (nothing applied) */
  uint32_t has_dcvs_v3;         /* a DCVS_V3 config was applied */
  uint32_t set_dcvs_enable, dcvs_enable, power_mode;
  uint32_t set_sleep_latency, sleep_latency_us;
  uint32_t set_sleep_disable, sleep_disable;
  uint32_t set_bus_params, bus_corner_min, bus_corner_target, bus_corner_max;
  uint32_t set_core_params, core_corner_min, core_corner_target, core_corner_max;
  uint32_t has_rpc_control_latency, rpc_control_latency_us;
  uint32_t has_rpc_polling_time, rpc_polling_time_us;
} htpu_ref_power_state;

/* Fills *out for power_config_id. Returns 0 for a live id, 1 for a destroyed one (its state
 * when destroyPowerConfigId or backendFree released it), -1 if the id was never seen (or its
 * state was forgotten). Ids are unique in the process, over all backends, and never reused. */
typedef int (*htpu_ref_get_power_state_fn)(uint32_t power_config_id, htpu_ref_power_state *out);
int htpu_ref_get_power_state(uint32_t power_config_id, htpu_ref_power_state *out);

/* The id the last successful createPowerConfigId returned, on any backend (0: none since the
 * library was loaded): how a test finds the id a loader votes through. */
typedef uint32_t (*htpu_ref_last_power_config_id_fn)(void);
uint32_t htpu_ref_last_power_config_id(void);

/* Number of live power config ids over all backends. */
typedef uint32_t (*htpu_ref_live_power_config_ids_fn)(void);
uint32_t htpu_ref_live_power_config_ids(void);

/* Forgets the destroyed power states remembered for htpu_ref_get_power_state. */
typedef void (*htpu_ref_forget_power_history_fn)(void);
void htpu_ref_forget_power_history(void);

/* What propertyHasCapability answers for `key` from now on (0 = supported; e.g. 1000 not
 * supported, 2000 unknown key), and with it the behaviour behind it: the calls a capability
 * announces fail with 1000 while it is not 0 (docs/reference-backend.md, "Capabilities").
 * Switchable keys: 205, 206, 207, 208, 211, 212, 302, 303, 304, 306, 308, 309, 312, 1201, 1202, 1203 (and 1102,
 * 1103, 1501, 1502), and the profile keys (docs/profiling.md): 1401 the profile API at all
 * (off: profileCreate unsupported), 1402 custom config, 1403 max-events config (on: honoured),
 * 1404 extended events (off: profileGetExtendedEventData unsupported), 1405 optrace config
 * (1402/1403/1405 off: profileSetConfig rejects that option), 310 continuous profiling, 315
 * profiling state. Takes precedence over HTPU_REF_CAPS. Returns 0, or -1 for another key. */
typedef int (*htpu_ref_set_capability_fn)(uint32_t key, uint32_t answer);
int htpu_ref_set_capability(uint32_t key, uint32_t answer);

/* Forgets every htpu_ref_set_capability (HTPU_REF_CAPS, then the defaults, apply again). */
typedef void (*htpu_ref_reset_capabilities_fn)(void);
void htpu_ref_reset_capabilities(void);

/* What the backend knows about one graph: the priorities it was given, its queue, and the
 * batch multiple of its last successful execute. */
typedef struct htpu_ref_graph_state {
  uint64_t context_handle;       /* the QNN context handle (the newest live one with the graph) */
  uint32_t context_priority;     /* QNN_PRIORITY_* of the context (NORMAL when none was given) */
  uint32_t graph_priority;       /* graphSetConfig's PRIORITY, else context_priority */
  uint32_t graph_priority_set;   /* 1: graphSetConfig set one */
  uint32_t async_queue_depth;    /* the context's async queue depth */
  uint32_t queued;               /* executes waiting in the graph's queue (both kinds) */
  uint32_t running;              /* 1: an execute of the graph runs now */
  uint32_t async_pending;        /* async executes accepted and not yet notified */
  uint32_t worker_started;       /* 1: its async worker thread exists */
  uint32_t last_batch_multiple;  /* of the last successful execute (0: none yet) */
  uint64_t executes_done;        /* successful executes of the graph (both kinds) */
} htpu_ref_graph_state;

/* Fills *out for the graph called graph_name in the newest live context that has one
 * deserialized. Returns 0, or -1 when no live context has such a graph. */
typedef int (*htpu_ref_get_graph_state_fn)(const char *graph_name, htpu_ref_graph_state *out);
int htpu_ref_get_graph_state(const char *graph_name, htpu_ref_graph_state *out);

/* What one context was created with and holds (the handle: htpu_ref_graph_state's
 * context_handle). */
typedef struct htpu_ref_context_state {
  uint32_t persistent;          /* PERSISTENT_BINARY: its model points into the caller's binary */
  uint32_t graphs_deserialized; /* of the binary's graphs (ENABLE_GRAPHS) */
  uint32_t num_graphs;          /* the binary holds */
  uint32_t priority;            /* QNN_PRIORITY_* */
  uint64_t binary_copy_bytes;   /* its own copy of the binary (0 when persistent) */
  uint64_t spill_fill_bytes;    /* its own need: the largest of its deserialized graphs' */
  uint64_t group_id;            /* 0: none; else the handle of its group's first context */
  uint64_t group_bytes;         /* the group's buffer (its first context's maxSpillFillBuffer) */
  uint32_t group_members;
  uint64_t memory_limit_mb;     /* MEMORY_LIMIT_HINT; 0: none */
  uint32_t stale;               /* lost in a DSP subsystem restart */
} htpu_ref_context_state;

/* Fills *out for the live context with this handle. Returns 0, or -1 when there is none. */
typedef int (*htpu_ref_get_context_state_fn)(uint64_t context_handle,
                                             htpu_ref_context_state *out);
int htpu_ref_get_context_state(uint64_t context_handle, htpu_ref_context_state *out);

/* Profile handles created and not yet freed, over all backends. */
typedef uint32_t (*htpu_ref_live_profiles_fn)(void);
uint32_t htpu_ref_live_profiles(void);

#ifdef __cplusplus
}
#endif
#endif /* HTPU_REF_CONTROL_H */
