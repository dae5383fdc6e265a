/*
 * qnn_types_abi.h - what every other part uses: scalars and handles, versions,
 * backend ids, error codes, capability keys and data types.
 * Part of the QNN ABI subset (qnn_abi.h, its door, says how it was written and checked).
 */
#ifndef HTPU_QNN_TYPES_ABI_H
#define HTPU_QNN_TYPES_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scalars and handles ------------------------------------------------------------------ */

typedef uint64_t qnn_error_t;
#define QNN_ERROR_CODE(e) ((uint32_t)((e)&0xFFFFu))

typedef void *qnn_log_handle_t;
typedef void *qnn_backend_handle_t;
typedef void *qnn_device_handle_t;
typedef void *qnn_context_handle_t;
typedef void *qnn_graph_handle_t;
typedef void *qnn_profile_handle_t;
typedef void *qnn_signal_handle_t;
typedef void *qnn_mem_handle_t;
typedef void *qnn_system_context_handle_t;
typedef uint64_t qnn_context_binary_size_t;

typedef void (*qnn_unused_fn)(void);

/* Declared in qnn_htp_abi.h, qnn_device_abi.h and qnn_signal_abi.h; only pointers to them
 * appear here. */
struct qnn_mem_descriptor;
struct qnn_device_platform_info;
struct qnn_signal_config;
/* Declared in qnn_profile_abi.h. */
struct qnn_profile_config;
struct qnn_profile_event_data;
struct qnn_profile_extended_event_data;
struct qnn_system_profile_target;
struct qnn_system_profile_target_config;
struct qnn_system_profile_data;

typedef struct qnn_version {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
} qnn_version_t;

typedef struct qnn_api_version {
  qnn_version_t core_api_version;
  qnn_version_t backend_api_version;
} qnn_api_version_t;

/* ---- backend ids -------------------------------------------------------------------------- */

#define QNN_BACKEND_ID_NULL 0u
#define QNN_BACKEND_ID_REFERENCE 1u
#define QNN_BACKEND_ID_SAVER 2u
#define QNN_BACKEND_ID_CPU 3u
#define QNN_BACKEND_ID_GPU 4u
#define QNN_BACKEND_ID_DSP 5u
#define QNN_BACKEND_ID_HTP 6u

/* ---- error codes (low 16 bits of qnn_error_t) ----------------------------------------------- */

#define QNN_SUCCESS 0u
#define QNN_COMMON_ERROR_NOT_SUPPORTED 1000u
#define QNN_COMMON_ERROR_MEM_ALLOC 1002u
#define QNN_COMMON_ERROR_SYSTEM 1003u
#define QNN_COMMON_ERROR_INVALID_ARGUMENT 1004u
#define QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED 1005u
#define QNN_COMMON_ERROR_PLATFORM_NOT_SUPPORTED 1006u
#define QNN_COMMON_ERROR_SYSTEM_COMMUNICATION 1007u
#define QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES 1008u
#define QNN_COMMON_ERROR_LOADING_BINARIES 1009u
#define QNN_COMMON_ERROR_RESOURCE_UNAVAILABLE 1010u
#define QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL 1011u
#define QNN_COMMON_ERROR_GENERAL 1100u

#define QNN_BACKEND_ERROR_CANNOT_INITIALIZE 4000u
#define QNN_BACKEND_ERROR_INVALID_ARGUMENT 4004u
#define QNN_BACKEND_ERROR_INVALID_HANDLE 4011u

#define QNN_CONTEXT_ERROR_INVALID_ARGUMENT 5000u
#define QNN_CONTEXT_ERROR_CTX_DOES_NOT_EXIST 5001u
#define QNN_CONTEXT_ERROR_INVALID_HANDLE 5002u
#define QNN_CONTEXT_ERROR_BINARY_VERSION 5004u
#define QNN_CONTEXT_ERROR_CREATE_FROM_BINARY 5005u
#define QNN_CONTEXT_ERROR_BINARY_CONFIGURATION 5008u
#define QNN_CONTEXT_ERROR_INVALID_CONFIG 5010u
/* contextCreateFromBinaryWithSignal ended by its signal: an abort trigger, or its timeout. A
 * signal already in use by another call has no context code: QNN_SIGNAL_ERROR_SIGNAL_IN_USE. */
#define QNN_CONTEXT_ERROR_ABORTED 5012u
#define QNN_CONTEXT_ERROR_TIMED_OUT 5013u
#define QNN_CONTEXT_ERROR_UNSUPPORTED_FEATURE 1000u /* = QNN_COMMON_ERROR_NOT_SUPPORTED */

/* contextGetProperty's element: the option is the client's, the rest the backend's. A custom
 * property points to a backend-defined struct (HTP: qnn_htp_context_custom_property_t). */
#define QNN_CONTEXT_PROPERTY_OPTION_CUSTOM 0u
typedef struct qnn_context_property {
  uint32_t option;
  union {
    void *custom_property;
  } u;
} qnn_context_property_t;

#define QNN_GRAPH_ERROR_INVALID_ARGUMENT 6000u
#define QNN_GRAPH_ERROR_INVALID_HANDLE 6001u
#define QNN_GRAPH_ERROR_GRAPH_DOES_NOT_EXIST 6002u
#define QNN_GRAPH_ERROR_INVALID_NAME 6003u
#define QNN_GRAPH_ERROR_INVALID_TENSOR 6004u
/* graphSetConfig: a valid option that cannot change on a finalized (e.g. retrieved) graph */
#define QNN_GRAPH_ERROR_GRAPH_FINALIZED 6024u
/* graphExecuteAsync could not queue (the header also says a full queue blocks the caller) */
#define QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL 6025u
/* the signal passed to graphExecute/graphExecuteAsync is in use by another call */
#define QNN_GRAPH_ERROR_SIGNAL_IN_USE 6030u
/* ended early: the call's abort signal was triggered / its timeout signal expired */
#define QNN_GRAPH_ERROR_ABORTED 6031u
#define QNN_GRAPH_ERROR_TIMED_OUT 6033u

#define QNN_LOG_ERROR_INVALID_ARGUMENT 11003u
#define QNN_LOG_ERROR_INVALID_HANDLE 11004u

#define QNN_DEVICE_ERROR_INVALID_HANDLE 14000u
#define QNN_DEVICE_ERROR_INVALID_CONFIG 14001u
#define QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE 14002u
#define QNN_DEVICE_ERROR_ASSOCIATED_TO_CONTEXT 14003u

#define QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE 30000u
#define QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT 30001u
#define QNN_SYSTEM_CONTEXT_ERROR_OPERATION_FAILED 30002u
#define QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY 30010u

/* ---- properties ---------------------------------------------------------------------------
 * propertyHasCapability(key): 0 = supported, QNN_COMMON_ERROR_NOT_SUPPORTED = not supported,
 * QNN_PROPERTY_ERROR_UNKNOWN_KEY = the backend does not know the key; anything but 0 is "no".
 * Keys are group + n (group = 1 + 100 * g): graph keys are 301 + n, so 302 is graph setConfig
 * and 303 the (deprecated) "all graph signals" key, not the other way round (docs/abi.md).
 */
#define QNN_PROPERTY_ERROR_UNKNOWN_KEY 2000u

#define QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION 205u
#define QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_ENABLE_GRAPHS 206u       /* ENABLE_GRAPHS config */
#define QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_MEMORY_LIMIT_HINT 207u   /* MEMORY_LIMIT_HINT */
#define QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY 208u   /* PERSISTENT_BINARY */
#define QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_WITH_SIGNALS 211u /* slot 55 */
#define QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC 212u  /* slot 56 */
/* contextGetProperty (slot 63) with backend custom properties; every HTP release observed
 * answers 1000 (2.31 to 2.46) or 2000 (2.25), docs/abi.md */
#define QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY 215u
#define QNN_PROPERTY_GRAPH_SUPPORT_CONFIG 302u                /* graphSetConfig (slot 17) */
#define QNN_PROPERTY_GRAPH_SUPPORT_SIGNALS 303u               /* = 307 and 308 and 309; deprecated */
#define QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION 304u       /* graphExecuteAsync (slot 22) */
#define QNN_PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL 306u      /* QNN_GRAPH_CONFIG_OPTION_PRIORITY */
#define QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_SIGNAL 308u        /* a signal on graphExecute */
#define QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_ASYNC_SIGNAL 309u  /* a signal on graphExecuteAsync */
#define QNN_PROPERTY_GRAPH_SUPPORT_BATCH_MULTIPLE 312u        /* k x the batch dim at execute */
#define QNN_PROPERTY_GROUP_SIGNAL 1201u                       /* the QnnSignal API at all */
#define QNN_PROPERTY_SIGNAL_SUPPORT_ABORT 1202u
#define QNN_PROPERTY_SIGNAL_SUPPORT_TIMEOUT 1203u
#define QNN_PROPERTY_GROUP_DEVICE 1501u

/* ---- data types --------------------------------------------------------------------------- */

#define QNN_DATATYPE_INT_8 0x0008u
#define QNN_DATATYPE_INT_16 0x0016u
#define QNN_DATATYPE_INT_32 0x0032u
#define QNN_DATATYPE_INT_64 0x0064u
#define QNN_DATATYPE_UINT_8 0x0108u
#define QNN_DATATYPE_UINT_16 0x0116u
#define QNN_DATATYPE_UINT_32 0x0132u
#define QNN_DATATYPE_UINT_64 0x0164u
#define QNN_DATATYPE_FLOAT_16 0x0216u
#define QNN_DATATYPE_BFLOAT_16 0x0226u
#define QNN_DATATYPE_FLOAT_32 0x0232u
#define QNN_DATATYPE_FLOAT_64 0x0264u
#define QNN_DATATYPE_SFIXED_POINT_4 0x0304u
#define QNN_DATATYPE_SFIXED_POINT_8 0x0308u
#define QNN_DATATYPE_SFIXED_POINT_16 0x0316u
#define QNN_DATATYPE_SFIXED_POINT_32 0x0332u
#define QNN_DATATYPE_UFIXED_POINT_4 0x0404u
#define QNN_DATATYPE_UFIXED_POINT_8 0x0408u
#define QNN_DATATYPE_UFIXED_POINT_16 0x0416u
#define QNN_DATATYPE_UFIXED_POINT_32 0x0432u
#define QNN_DATATYPE_BOOL_8 0x0508u
#define QNN_DATATYPE_STRING 0x0608u
#define QNN_DATATYPE_UNDEFINED 0x7FFFFFFFu

#ifdef __cplusplus
}
#endif
#endif /* HTPU_QNN_TYPES_ABI_H */
