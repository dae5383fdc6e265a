/*
 * qnn_config_abi.h - what the backend, device, context and graph calls take: their
 * configs, graphExecuteAsync's and contextCreateFromBinaryListAsync's notifications, the log
 * callback.
 * Part of the QNN ABI subset (qnn_abi.h, its door, says how it was written and checked).
 */
#ifndef HTPU_QNN_CONFIG_ABI_H
#define HTPU_QNN_CONFIG_ABI_H

#include <stdarg.h>

#include "qnn_types_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configs (NULL-terminated arrays of pointers; NULL = defaults) -------------------------- */

typedef struct qnn_backend_config {
  uint32_t option;
  union {
    void *custom_config;
    const char *platform_option;
    uint64_t pad_;
  } u;
} qnn_backend_config_t;

#define QNN_DEVICE_CONFIG_OPTION_CUSTOM 0u
typedef struct qnn_device_config {
  uint32_t option;
  union {
    void *custom_config;
    void *hardware_info;
  } u;
} qnn_device_config_t;

/* Priorities (Qnn_Priority_t). LOW is always available; the others "may be restricted" (2.25:
 * NORMAL_HIGH and HIGH silently treated as NORMAL then). Any other value is invalid. */
#define QNN_PRIORITY_LOW 0u
#define QNN_PRIORITY_NORMAL 100u
#define QNN_PRIORITY_DEFAULT 100u
#define QNN_PRIORITY_NORMAL_HIGH 150u
#define QNN_PRIORITY_HIGH 200u
#define QNN_PRIORITY_UNDEFINED 0x7FFFFFFFu

/* A backend's own config (HTP: qnn_htp_context_custom_config_t, qnn_htp_abi.h). */
#define QNN_CONTEXT_CONFIG_OPTION_CUSTOM 0u
/* The default priority of the context's graphs (createFromBinary and its WithSignal variant
 * take it; a graph's own QNN_GRAPH_CONFIG_OPTION_PRIORITY overrides it). */
#define QNN_CONTEXT_CONFIG_OPTION_PRIORITY 1u
/* The depth of every graph's graphExecuteAsync queue (executeAsync blocks when it is full). */
#define QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH 4u
#define QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_NUMERIC 0u
/* A NULL-terminated list of the graph names to deserialize (all by default); a name the binary
 * does not hold is an error. */
#define QNN_CONTEXT_CONFIG_ENABLE_GRAPHS 5u
/* The context's peak memory, as a hint, in MB. */
#define QNN_CONTEXT_CONFIG_MEMORY_LIMIT_HINT 6u
/* The binary's buffer stays valid (and unchanged) from createFromBinary until contextFree: the
 * backend may keep pointers into it instead of a copy. */
#define QNN_CONTEXT_CONFIG_PERSISTENT_BINARY 7u
typedef struct qnn_context_async_queue_depth {
  uint32_t type; /* QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_NUMERIC */
  uint32_t depth;
} qnn_context_async_queue_depth_t;

typedef struct qnn_context_config {
  uint32_t option;
  union {
    void *custom_config;
    uint32_t priority;
    qnn_context_async_queue_depth_t async_queue_depth;
    uint64_t memory_limit_hint;
    uint8_t is_persistent_binary;
    const char *const *enable_graphs;
  } u;
} qnn_context_config_t;

/* graphSetConfig's configs, declared for the ABI check and the reference backend: the core never
 * calls graphSetConfig. A graph runs at its context's priority (QNN_CONTEXT_CONFIG_OPTION_PRIORITY
 * at load, where priority control is announced: context.c); a call's own priority only orders it
 * among the host's calls waiting for that graph (turn.c). PRIORITY here would be the only way to
 * give one retrieved graph another QNN priority than its context's, and a finalized graph may
 * refuse it (6024, 1000: docs/abi.md). */
#define QNN_GRAPH_CONFIG_OPTION_CUSTOM 0u
#define QNN_GRAPH_CONFIG_OPTION_PRIORITY 3u
typedef struct qnn_graph_config {
  uint32_t option;
  union {
    void *custom_config;
    uint32_t priority;
    qnn_profile_handle_t profile_handle;
  } u;
} qnn_graph_config_t;

/* ---- graphExecuteAsync's notification -------------------------------------------------------
 * Called once per queued execute that graphExecuteAsync accepted (never for a refused call), on
 * a backend-owned thread, with the execute's result (6031/6033 for a signalled one). */
typedef struct qnn_notify_status {
  qnn_error_t error;
} qnn_notify_status_t;
typedef void (*qnn_notify_fn_t)(void *notify_param, qnn_notify_status_t status);

/* ---- contextCreateFromBinaryListAsync (slot 56) ---------------------------------------------
 * Several contexts from binaries in one call, deserialized in the background: the notify
 * function is called once per graph (GRAPH_INIT) and once per context (CONTEXT_INIT, with the
 * context's result and handle, NULL when it failed), on backend threads; a context may be used
 * once its notification came. `config` applies to that context; the call's listConfig applies
 * to all and overrides them. A signal given is in use until the last context is done. */
#define QNN_CONTEXT_NOTIFY_TYPE_GRAPH_INIT 0u
#define QNN_CONTEXT_NOTIFY_TYPE_CONTEXT_INIT 1u
typedef void (*qnn_context_notify_fn_t)(qnn_context_handle_t context, qnn_graph_handle_t graph,
                                        const char *graph_name, uint32_t notify_type,
                                        void *notify_param, qnn_error_t status);

#define QNN_CONTEXT_PARAMS_VERSION_1 1u
typedef struct qnn_context_params_v1 {
  const qnn_context_config_t **config; /* NULL: none */
  const void *binary_buffer;
  qnn_context_binary_size_t binary_buffer_size;
  qnn_profile_handle_t profile;        /* NULL: none; the context's init events */
  qnn_context_notify_fn_t notify_func; /* never NULL */
  void *notify_param;
} qnn_context_params_v1_t;

typedef struct qnn_context_params {
  uint32_t version; /* QNN_CONTEXT_PARAMS_VERSION_1 (version 2 adds data-provider callbacks) */
  union {
    qnn_context_params_v1_t v1;
    void *v2;
  } u;
} qnn_context_params_t;

/* ---- log ---------------------------------------------------------------------------------- */

#define QNN_LOG_LEVEL_ERROR 1u
#define QNN_LOG_LEVEL_WARN 2u
#define QNN_LOG_LEVEL_INFO 3u
#define QNN_LOG_LEVEL_VERBOSE 4u
#define QNN_LOG_LEVEL_DEBUG 5u

/* May be called from any thread, also during and after a failed logCreate. */
typedef void (*qnn_log_callback_t)(const char *fmt, uint32_t level, uint64_t timestamp,
                                   va_list args);

#ifdef __cplusplus
}
#endif
#endif /* HTPU_QNN_CONFIG_ABI_H */
