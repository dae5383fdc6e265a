/*
 * qnn_profile_abi.h - the profiling part of the QNN ABI the project uses: profile levels, event
 * types and units, the event data a backend hands back (plain and extended), profile configs,
 * the HTP backend's own event ids and level, the capability keys that say what a backend
 * offers, and the system library's profile serialization (QnnSystemProfile, System API 1.5 on).
 * Own names, written from published layout facts (docs/abi.md, docs/profiling.md), checked by
 * `make check-abi` like qnn_abi.h.
 *
 * How the calls fit together (QnnProfile.h): profileCreate(backend, level) gives a handle; a
 * call that takes a profile handle (contextCreateFromBinary, graphExecute, ...) resets it and
 * fills it with that call's events; profileGetEvents lists the top-level event ids,
 * profileGetSubEvents the ids nested in one event, profileGetEventData /
 * profileGetExtendedEventData read one event. Every pointer handed back belongs to the profile
 * and lives until profileFree (or the next call that resets the handle). A handle is used by
 * one call at a time.
 */
#ifndef HTPU_QNN_PROFILE_ABI_H
#define HTPU_QNN_PROFILE_ABI_H

#include "qnn_abi.h"

/* ---- capability keys (propertyHasCapability: QNN_SUCCESS = supported) ---------------------- */

#define QNN_PROPERTY_GROUP_PROFILE 1401u /* the profile API at all (an optional API group) */
#define QNN_PROPERTY_PROFILE_SUPPORT_CUSTOM_CONFIG 1402u
#define QNN_PROPERTY_PROFILE_SUPPORT_MAX_EVENTS_CONFIG 1403u
#define QNN_PROPERTY_PROFILE_SUPPORTS_EXTENDED_EVENT 1404u
#define QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG 1405u
/* A profile handle bound to a graph once (graph config), filled by every execute. */
#define QNN_PROPERTY_GRAPH_SUPPORT_CONTINUOUS_PROFILING 310u
/* Profiling switched on and off per graph (graph config). */
#define QNN_PROPERTY_GRAPH_SUPPORT_PROFILING_STATE 315u

/* ---- levels, event types, units ------------------------------------------------------------ */

#define QNN_PROFILE_LEVEL_BASIC 1u
#define QNN_PROFILE_LEVEL_DETAILED 2u
#define QNN_PROFILE_LEVEL_BACKEND 1000u /* backend-specific levels start here */
/* HTP: per op, the main thread's time and the background ops running beside it. */
#define QNN_HTP_PROFILE_LEVEL_LINTING 7001u

#define QNN_PROFILE_EVENTTYPE_INIT 100u     /* context creation, from a binary too */
#define QNN_PROFILE_EVENTTYPE_FINALIZE 300u
#define QNN_PROFILE_EVENTTYPE_EXECUTE 400u  /* one graphExecute */
#define QNN_PROFILE_EVENTTYPE_NODE 404u     /* one op (detailed level): identifier = its name */
#define QNN_PROFILE_EVENTTYPE_EXECUTE_QUEUE_WAIT 405u
#define QNN_PROFILE_EVENTTYPE_EXECUTE_PREPROCESS 406u
#define QNN_PROFILE_EVENTTYPE_EXECUTE_DEVICE 407u
#define QNN_PROFILE_EVENTTYPE_EXECUTE_POSTPROCESS 408u
#define QNN_PROFILE_EVENTTYPE_DEINIT 500u
#define QNN_PROFILE_EVENTTYPE_TRACE 600u
#define QNN_PROFILE_EVENTTYPE_BACKEND 1000u /* backend-specific types start here */

/* Without a unit, a value is microseconds. */
#define QNN_PROFILE_EVENTUNIT_MICROSEC 1u
#define QNN_PROFILE_EVENTUNIT_BYTES 2u
#define QNN_PROFILE_EVENTUNIT_CYCLES 3u
#define QNN_PROFILE_EVENTUNIT_COUNT 4u
#define QNN_PROFILE_EVENTUNIT_OBJECT 5u
#define QNN_PROFILE_EVENTUNIT_NONE 6u
#define QNN_PROFILE_EVENTUNIT_BACKEND 1000u

/* ---- HTP event types (backend-specific) ------------------------------------------------------ */

/* contextCreateFromBinary: host side of the RPC, DSP side of it, the accelerator's own work;
 * microseconds. */
#define QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HOST_RPC_TIME_MICROSEC 1002u
#define QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HTP_RPC_TIME_MICROSEC 1003u
#define QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_ACCEL_TIME_MICROSEC 1004u
/* graphExecute, sub-events of the execute event. 3003 (cycles) is a detailed-level event;
 * 3003 and 3004/3012 carry a NODE sub-event per op at the detailed level. */
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HOST_RPC_TIME_MICROSEC 3001u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HTP_RPC_TIME_MICROSEC 3002u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE 3003u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC 3004u /* waits included */
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_MISC_ACCEL_TIME_MICROSEC 3005u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_INSTANCE_RELEASE_TIME 3006u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_INSTANCE_WAIT_TIME 3007u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_INSTANCE_RESTORE_TIME 3008u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_COUNT 3009u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_VTCM_ACQUIRE_TIME 3010u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_RESOURCE_POWER_UP_TIME 3011u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_EXCL_WAIT_TIME_MICROSEC 3012u
/* contextFree deinitializing its graphs. */
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_DEINIT_HOST_RPC_TIME_MICROSEC 4001u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_DEINIT_HTP_RPC_TIME_MICROSEC 4002u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_DEINIT_ACCEL_TIME_MICROSEC 4003u
/* Linting level, per op: wait since the previous op of the main thread, background work
 * overlapping it, overlap during the wait, the resources it used, background op ids. */
#define QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT 5001u
#define QNN_HTP_PROFILE_EVENTTYPE_NODE_OVERLAP 5002u
#define QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT_OVERLAP 5003u
#define QNN_HTP_PROFILE_EVENTTYPE_NODE_RESOURCEMASK 5004u
#define QNN_HTP_PROFILE_EVENTTYPE_NODE_CRITICAL_BG_OP_ID 5005u
#define QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT_BG_OP_ID 5006u
/* Linting level: the critical path in cycles, a NODE sub-event per op. */
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_CRITICAL_ACCEL_TIME_CYCLE 6001u
#define QNN_HTP_PROFILE_EVENTTYPE_GRAPH_NUMBER_OF_HVX_THREADS 8001u

/* ---- errors ---------------------------------------------------------------------------------- */

#define QNN_PROFILE_ERROR_INVALID_HANDLE 12000u
#define QNN_PROFILE_ERROR_HANDLE_IN_USE 12001u     /* freed or reconfigured while a call uses it */
#define QNN_PROFILE_ERROR_INCOMPATIBLE_EVENT 12002u /* read it with the extended call */
#define QNN_CONTEXT_ERROR_SET_PROFILE 5009u
#define QNN_GRAPH_ERROR_SET_PROFILE 6006u
#define QNN_GRAPH_ERROR_PROFILE_IN_USE 6032u        /* a second call passed a handle in use */

/* ---- event data ------------------------------------------------------------------------------ */

typedef uint64_t qnn_profile_event_id_t;

typedef struct qnn_profile_event_data {
  uint32_t type;
  uint32_t unit;
  uint64_t value;
  const char *identifier; /* the op's name for a NODE event; may be NULL */
} qnn_profile_event_data_t;

/* A typed scalar (Qnn_Scalar_t): data_type says which member holds the value. */
typedef struct qnn_scalar {
  uint32_t data_type; /* QNN_DATATYPE_* */
  union {
    float float_value;
    double double_value;
    uint64_t uint64_value;
    int64_t int64_value;
    uint32_t uint32_value;
    int32_t int32_value;
    const char *string_value;
  } u;
} qnn_scalar_t;

typedef struct qnn_opaque_object {
  void *data;
  uint64_t len;
} qnn_opaque_object_t;

typedef struct qnn_profile_backend_opaque_object {
  qnn_opaque_object_t opaque_object;
  const char *file_name;
} qnn_profile_backend_opaque_object_t;

typedef struct qnn_profile_extended_event_data_v1 {
  uint32_t type;
  uint32_t unit;
  union {
    qnn_scalar_t value; /* unit OBJECT: backend_opaque_object instead */
    qnn_profile_backend_opaque_object_t backend_opaque_object;
  } u;
  uint64_t timestamp;
  const char *identifier;
} qnn_profile_extended_event_data_v1_t;

#define QNN_PROFILE_DATA_VERSION_1 1u

typedef struct qnn_profile_extended_event_data {
  uint32_t version;
  union {
    qnn_profile_extended_event_data_v1_t v1;
  } u;
} qnn_profile_extended_event_data_t;

/* ---- configs (profileSetConfig: a NULL-terminated array of pointers) ------------------------- */

#define QNN_PROFILE_CONFIG_OPTION_CUSTOM 0u
#define QNN_PROFILE_CONFIG_OPTION_MAX_EVENTS 1u
#define QNN_PROFILE_CONFIG_OPTION_ENABLE_OPTRACE 2u

typedef struct qnn_profile_config {
  uint32_t option;
  union {
    void *custom_config;
    uint64_t num_max_events;
    uint8_t enable_optrace;
  } u;
} qnn_profile_config_t;

/* ---- system library: profile serialization (QnnSystemProfile) ---------------------------------
 * Slots 13..15 of the system table: present from System API 1.5 (qnn_versions.h). The library
 * writes events, in Qualcomm's own format, to a target that qnn-profile-viewer reads. */

#define QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_FILE 1u
#define QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_MAX_NUM_MESSAGES 0u
#define QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_SERIALIZATION_HEADER 1u
#define QNN_SYSTEM_PROFILE_VISIBILITY_PUBLIC 0u
#define QNN_SYSTEM_PROFILE_METHOD_TYPE_NONE 0u
#define QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_EXECUTE 1u
#define QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_CREATE_FROM_BINARY 4u
#define QNN_SYSTEM_PROFILE_EVENT_DATA 0u
#define QNN_SYSTEM_PROFILE_EXTENDED_EVENT_DATA 1u
#define QNN_SYSTEM_PROFILE_DATA_VERSION_1 1u

typedef void *qnn_system_profile_target_handle_t;

typedef struct qnn_system_profile_target_file {
  const char *file_name;
  const char *file_directory;
} qnn_system_profile_target_file_t;

typedef struct qnn_system_profile_target {
  uint32_t type; /* QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_* */
  union {
    qnn_system_profile_target_file_t file;
  } u;
} qnn_system_profile_target_t;

typedef struct qnn_system_profile_file_header {
  const char *app_name;
  const char *app_version;
  const char *backend_version;
} qnn_system_profile_file_header_t;

typedef struct qnn_system_profile_target_config {
  uint32_t type; /* QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_* */
  union {
    uint32_t max_num_messages;
    qnn_system_profile_file_header_t serialization_header;
  } u;
} qnn_system_profile_target_config_t;

typedef struct qnn_system_profile_header_v1 {
  uint64_t start_time;
  uint64_t stop_time;
  uint64_t start_mem;
  uint64_t stop_mem;
  uint32_t method_type; /* QNN_SYSTEM_PROFILE_METHOD_TYPE_* */
  uint32_t visibility;
  const char *graph_name;
} qnn_system_profile_header_v1_t;

typedef struct qnn_system_profile_event_v1 {
  uint32_t type; /* QNN_SYSTEM_PROFILE_EVENT_DATA or _EXTENDED_EVENT_DATA */
  union {
    qnn_profile_event_data_t event_data;
    qnn_profile_extended_event_data_t extended_event_data;
  } u;
  struct qnn_system_profile_event_v1 *sub_events;
  uint32_t num_sub_events;
} qnn_system_profile_event_v1_t;

typedef struct qnn_system_profile_data_v1 {
  qnn_system_profile_header_v1_t header;
  qnn_system_profile_event_v1_t *events;
  uint32_t num_events;
} qnn_system_profile_data_v1_t;

typedef struct qnn_system_profile_data {
  uint32_t version; /* QNN_SYSTEM_PROFILE_DATA_VERSION_1 */
  union {
    qnn_system_profile_data_v1_t v1;
  } u;
} qnn_system_profile_data_t;

#endif
