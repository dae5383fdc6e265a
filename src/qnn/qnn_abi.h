/*
 * qnn_abi.h - the subset of the Qualcomm QNN C ABI that hexagon_tpu uses.
 *
 * Written by this project from published layout facts (docs/abi.md), not copied from any
 * Qualcomm header: names are our own (qnn_ prefix, snake_case) so that `make check-abi` can
 * include the SDK headers in the same translation unit and compare every size, offset, enum
 * value and function-table index against them.
 *
 * Conventions that hold for the whole ABI (LP64: x86-64 and aarch64):
 *  - every enum is a 4-byte unsigned integer; we use uint32_t/int32_t fields, never C enums;
 *  - a QNN error handle is a uint64_t whose low 16 bits are the error code;
 *  - all handles are opaque pointers;
 *  - the log callback's last parameter is a real va_list (a struct on aarch64).
 *
 * Function-table entries this project never calls are declared as qnn_unused_fn: they keep
 * their slot (and name, for the conformance check) but cannot be called by accident.
 */
#ifndef HTPU_QNN_ABI_H
#define HTPU_QNN_ABI_H

#include <stdarg.h>
#include <stddef.h>
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
#define QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_WITH_SIGNALS 211u /* slot 55 */
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

/* ---- quantization ------------------------------------------------------------------------- */

#define QNN_DEFINITION_IMPL_GENERATED 0
#define QNN_DEFINITION_DEFINED 1
#define QNN_DEFINITION_UNDEFINED 0x7FFFFFFF

#define QNN_QUANTIZATION_ENCODING_SCALE_OFFSET 0
#define QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET 1
#define QNN_QUANTIZATION_ENCODING_BW_SCALE_OFFSET 2
#define QNN_QUANTIZATION_ENCODING_BW_AXIS_SCALE_OFFSET 3
/* The highest encoding the newest measured headers (QAIRT 2.43) declare; 4..11 are block,
 * vector and mapped encodings the project never reads. */
#define QNN_QUANTIZATION_ENCODING_BW_FLOAT_BLOCK 11
#define QNN_QUANTIZATION_ENCODING_UNDEFINED 0x7FFFFFFF

/* float = (q + offset) * scale; offset is the negated zero point. */
typedef struct qnn_scale_offset {
  float scale;
  int32_t offset;
} qnn_scale_offset_t;

typedef struct qnn_axis_scale_offset {
  int32_t axis;
  uint32_t num_scale_offsets;
  qnn_scale_offset_t *scale_offset;
} qnn_axis_scale_offset_t;

typedef struct qnn_bw_scale_offset {
  uint32_t bitwidth;
  float scale;
  int32_t offset;
} qnn_bw_scale_offset_t;

typedef struct qnn_bw_axis_scale_offset {
  uint32_t bitwidth;
  int32_t axis;
  uint32_t num_elements;
  float *scales;
  int32_t *offsets;
} qnn_bw_axis_scale_offset_t;

typedef struct qnn_quantize_params {
  int32_t encoding_definition;
  int32_t quantization_encoding;
  union {
    qnn_scale_offset_t scale_offset_encoding;
    qnn_axis_scale_offset_t axis_scale_offset_encoding;
    qnn_bw_scale_offset_t bw_scale_offset_encoding;
    qnn_bw_axis_scale_offset_t bw_axis_scale_offset_encoding;
    void *other_encoding; /* block/vector/mapped encodings: pointers we never follow */
  } u;
} qnn_quantize_params_t;

/* ---- tensors ------------------------------------------------------------------------------ */

#define QNN_TENSOR_VERSION_1 1u
#define QNN_TENSOR_VERSION_2 2u

#define QNN_TENSOR_TYPE_APP_WRITE 0u
#define QNN_TENSOR_TYPE_APP_READ 1u
#define QNN_TENSOR_TYPE_APP_READWRITE 2u
#define QNN_TENSOR_TYPE_NATIVE 3u
#define QNN_TENSOR_TYPE_STATIC 4u
#define QNN_TENSOR_TYPE_NULL 5u
/* The highest tensor type the newest measured headers (QAIRT 2.43) declare. */
#define QNN_TENSOR_TYPE_OPTIONAL_APP_READWRITE 13u
#define QNN_TENSOR_TYPE_UNDEFINED 0x7FFFFFFFu

/* Qnn_TensorDataFormat_t. Only DENSE is laid out as its dims say; SPARSE "may only be
 * QNN_TENSOR_TYPE_NATIVE" (QnnTypes.h); the others are compressed or packed layouts. */
#define QNN_TENSOR_DATA_FORMAT_DENSE 0u
#define QNN_TENSOR_DATA_FORMAT_SPARSE 1u
#define QNN_TENSOR_DATA_FORMAT_CODEBOOK 2u
#define QNN_TENSOR_DATA_FORMAT_MX 3u
#define QNN_TENSOR_DATA_FORMAT_UBWC_RGBA8888 4u
#define QNN_TENSOR_DATA_FORMAT_UBWC_NV12 5u
#define QNN_TENSOR_DATA_FORMAT_UBWC_NV12_Y 6u
#define QNN_TENSOR_DATA_FORMAT_UBWC_NV12_UV 7u
#define QNN_TENSOR_DATA_FORMAT_HMX_WEIGHT_LAYOUT 8u
#define QNN_TENSOR_DATA_FORMAT_UBWC_NV124R 9u
#define QNN_TENSOR_DATA_FORMAT_UBWC_NV124R_Y 10u
#define QNN_TENSOR_DATA_FORMAT_UBWC_NV124R_UV 11u

#define QNN_TENSORMEMTYPE_RAW 0u
#define QNN_TENSORMEMTYPE_MEMHANDLE 1u

typedef struct qnn_client_buffer {
  void *data;
  uint32_t data_size;
} qnn_client_buffer_t;

#define QNN_SPARSE_LAYOUT_HYBRID_COO 0
#define QNN_SPARSE_LAYOUT_UNDEFINED 0x7FFFFFFF /* the V2 initializer's value: not sparse */

typedef struct qnn_sparse_params {
  int32_t type; /* QNN_SPARSE_LAYOUT_* */
  union {
    struct {
      uint32_t num_specified_elements;
      uint32_t num_sparse_dimensions;
    } hybrid_coo;
  } u;
} qnn_sparse_params_t;

typedef struct qnn_tensor_v1 {
  uint32_t id;
  const char *name;
  uint32_t type;
  uint32_t data_format;
  uint32_t data_type;
  qnn_quantize_params_t quantize_params;
  uint32_t rank;
  uint32_t *dimensions;
  uint32_t mem_type;
  union {
    qnn_client_buffer_t client_buf;
    qnn_mem_handle_t mem_handle;
  } u;
} qnn_tensor_v1_t;

/* V2 = V1's fields at the same offsets, then dynamic dims, sparsity and isProduced. */
typedef struct qnn_tensor_v2 {
  uint32_t id;
  const char *name;
  uint32_t type;
  uint32_t data_format;
  uint32_t data_type;
  qnn_quantize_params_t quantize_params;
  uint32_t rank;
  uint32_t *dimensions;
  uint32_t mem_type;
  union {
    qnn_client_buffer_t client_buf;
    qnn_mem_handle_t mem_handle;
    void *retrieve_raw;
  } u;
  uint8_t *is_dynamic_dimensions;
  qnn_sparse_params_t sparse_params;
  uint8_t is_produced;
} qnn_tensor_v2_t;

typedef struct qnn_tensor {
  uint32_t version;
  union {
    qnn_tensor_v1_t v1;
    qnn_tensor_v2_t v2;
  } u;
} qnn_tensor_t;

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

/* The default priority of the context's graphs (createFromBinary and its WithSignal variant
 * take it; a graph's own QNN_GRAPH_CONFIG_OPTION_PRIORITY overrides it). */
#define QNN_CONTEXT_CONFIG_OPTION_PRIORITY 1u
/* The depth of every graph's graphExecuteAsync queue (executeAsync blocks when it is full). */
#define QNN_CONTEXT_CONFIG_ASYNC_EXECUTION_QUEUE_DEPTH 4u
#define QNN_CONTEXT_ASYNC_EXECUTION_QUEUE_DEPTH_TYPE_NUMERIC 0u
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

/* ---- log ---------------------------------------------------------------------------------- */

#define QNN_LOG_LEVEL_ERROR 1u
#define QNN_LOG_LEVEL_WARN 2u
#define QNN_LOG_LEVEL_INFO 3u
#define QNN_LOG_LEVEL_VERBOSE 4u
#define QNN_LOG_LEVEL_DEBUG 5u

/* May be called from any thread, also during and after a failed logCreate. */
typedef void (*qnn_log_callback_t)(const char *fmt, uint32_t level, uint64_t timestamp,
                                   va_list args);

/* ---- the backend interface: QnnInterface_getProviders ---------------------------------------
 * Slot order is the table layout of core API 2.18 (62 slots), extended by appending up to
 * 2.32 (71 slots). Never read a slot at or past qnn_core_table_slots(provider's core version).
 */
typedef struct qnn_interface_table {
  qnn_error_t (*property_has_capability)(uint32_t key);                                     /* 0 */
  qnn_error_t (*backend_create)(qnn_log_handle_t, const qnn_backend_config_t **,
                                qnn_backend_handle_t *);                                  /* 1 */
  qnn_unused_fn backend_set_config;                                                        /* 2 */
  qnn_error_t (*backend_get_api_version)(qnn_api_version_t *);                             /* 3 */
  qnn_error_t (*backend_get_build_id)(const char **);                                      /* 4 */
  qnn_unused_fn backend_register_op_package;                                               /* 5 */
  qnn_unused_fn backend_get_supported_operations;                                          /* 6 */
  qnn_unused_fn backend_validate_op_config;                                                /* 7 */
  qnn_error_t (*backend_free)(qnn_backend_handle_t);                                       /* 8 */
  qnn_unused_fn context_create;                                                            /* 9 */
  qnn_unused_fn context_set_config;                                                        /* 10 */
  qnn_unused_fn context_get_binary_size;                                                   /* 11 */
  qnn_unused_fn context_get_binary;                                                        /* 12 */
  qnn_error_t (*context_create_from_binary)(qnn_backend_handle_t, qnn_device_handle_t,
                                            const qnn_context_config_t **, const void *,
                                            qnn_context_binary_size_t, qnn_context_handle_t *,
                                            qnn_profile_handle_t);                        /* 13 */
  qnn_error_t (*context_free)(qnn_context_handle_t, qnn_profile_handle_t);                 /* 14 */
  qnn_unused_fn graph_create;                                                              /* 15 */
  qnn_unused_fn graph_create_subgraph;                                                     /* 16 */
  qnn_error_t (*graph_set_config)(qnn_graph_handle_t, const qnn_graph_config_t **);         /* 17 */
  qnn_unused_fn graph_add_node;                                                            /* 18 */
  qnn_unused_fn graph_finalize;                                                            /* 19 */
  qnn_error_t (*graph_retrieve)(qnn_context_handle_t, const char *, qnn_graph_handle_t *); /* 20 */
  qnn_error_t (*graph_execute)(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                               qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                               qnn_signal_handle_t);                                      /* 21 */
  /* one FIFO per graph shared with graph_execute; returns once queued (blocks while full) */
  qnn_error_t (*graph_execute_async)(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t,
                                     qnn_tensor_t *, uint32_t, qnn_profile_handle_t,
                                     qnn_signal_handle_t, qnn_notify_fn_t,
                                     void *notify_param);                                 /* 22 */
  qnn_unused_fn tensor_create_context_tensor;                                              /* 23 */
  qnn_unused_fn tensor_create_graph_tensor;                                                /* 24 */
  qnn_error_t (*log_create)(qnn_log_callback_t, uint32_t, qnn_log_handle_t *);             /* 25 */
  qnn_error_t (*log_set_log_level)(qnn_log_handle_t, uint32_t);                            /* 26 */
  qnn_error_t (*log_free)(qnn_log_handle_t);                                               /* 27 */
  qnn_error_t (*profile_create)(qnn_backend_handle_t, uint32_t level,
                                qnn_profile_handle_t *);                                  /* 28 */
  qnn_error_t (*profile_set_config)(qnn_profile_handle_t,
                                    const struct qnn_profile_config **);                  /* 29 */
  qnn_error_t (*profile_get_events)(qnn_profile_handle_t, const uint64_t **ids,
                                    uint32_t *num);                                       /* 30 */
  qnn_error_t (*profile_get_sub_events)(uint64_t event, const uint64_t **ids,
                                        uint32_t *num);                                   /* 31 */
  qnn_error_t (*profile_get_event_data)(uint64_t event, struct qnn_profile_event_data *); /* 32 */
  qnn_error_t (*profile_get_extended_event_data)(
      uint64_t event, struct qnn_profile_extended_event_data *);                          /* 33 */
  qnn_error_t (*profile_free)(qnn_profile_handle_t);                                       /* 34 */
  qnn_error_t (*mem_register)(qnn_context_handle_t, const struct qnn_mem_descriptor *, uint32_t,
                              qnn_mem_handle_t *);                                        /* 35 */
  qnn_error_t (*mem_de_register)(const qnn_mem_handle_t *, uint32_t);                     /* 36 */
  qnn_error_t (*device_get_platform_info)(qnn_log_handle_t,
                                          const struct qnn_device_platform_info **); /* 37 */
  qnn_error_t (*device_free_platform_info)(qnn_log_handle_t,
                                           const struct qnn_device_platform_info *); /* 38 */
  /* The argument is the address of a pointer the backend sets to its own memory. */
  qnn_error_t (*device_get_infrastructure)(void *const *infrastructure);                   /* 39 */
  qnn_error_t (*device_create)(qnn_log_handle_t, const qnn_device_config_t **,
                               qnn_device_handle_t *);                                    /* 40 */
  qnn_unused_fn device_set_config;                                                         /* 41 */
  qnn_error_t (*device_get_info)(qnn_device_handle_t,
                                 const struct qnn_device_platform_info **);               /* 42 */
  qnn_error_t (*device_free)(qnn_device_handle_t);                                         /* 43 */
  qnn_error_t (*signal_create)(qnn_backend_handle_t, const struct qnn_signal_config **,
                               qnn_signal_handle_t *);                                    /* 44 */
  qnn_error_t (*signal_set_config)(qnn_signal_handle_t,
                                   const struct qnn_signal_config **);                    /* 45 */
  qnn_error_t (*signal_trigger)(qnn_signal_handle_t);                                      /* 46 */
  qnn_error_t (*signal_free)(qnn_signal_handle_t);                                         /* 47 */
  qnn_error_t (*error_get_message)(qnn_error_t, const char **);                            /* 48 */
  qnn_unused_fn error_get_verbose_message;                                                 /* 49 */
  qnn_unused_fn error_free_verbose_message;                                                /* 50 */
  qnn_unused_fn graph_prepare_execution_environment;                                       /* 51 */
  qnn_unused_fn graph_release_execution_environment;                                       /* 52 */
  qnn_unused_fn graph_get_property;                                                        /* 53 */
  qnn_error_t (*context_validate_binary)(qnn_backend_handle_t, qnn_device_handle_t,
                                         const qnn_context_config_t **, const void *,
                                         qnn_context_binary_size_t);                      /* 54 */
  qnn_error_t (*context_create_from_binary_with_signal)(
      qnn_backend_handle_t, qnn_device_handle_t, const qnn_context_config_t **, const void *,
      qnn_context_binary_size_t, qnn_context_handle_t *, qnn_profile_handle_t,
      qnn_signal_handle_t);                                                               /* 55 */
  qnn_unused_fn context_create_from_binary_list_async;                                     /* 56 */
  qnn_unused_fn tensor_update_graph_tensors;                                               /* 57 */
  qnn_unused_fn tensor_update_context_tensors;                                             /* 58 */
  qnn_unused_fn context_get_binary_section_size;                                           /* 59 */
  qnn_unused_fn context_get_binary_section;                                                /* 60 */
  qnn_unused_fn context_apply_binary_section;                                              /* 61 */
  /* ---- appended after core API 2.18 ---- */
  qnn_unused_fn backend_get_property;                                                      /* 62 */
  /* a NULL-terminated array of properties the client allocated and set the options of */
  qnn_error_t (*context_get_property)(qnn_context_handle_t,
                                      struct qnn_context_property **);                    /* 63 */
  qnn_unused_fn context_get_incremental_binary;                                            /* 64 */
  qnn_unused_fn context_release_incremental_binary;                                        /* 65 */
  qnn_unused_fn context_finalize;                                                          /* 66 */
  qnn_unused_fn global_config_set;                                                         /* 67 */
  qnn_unused_fn context_create_from_binary_with_callback;                                  /* 68 */
  qnn_unused_fn context_get_binary_section_update;                                         /* 69 */
  qnn_unused_fn context_free_binary_section_update;                                        /* 70 */
} qnn_interface_table_t;

#define QNN_INTERFACE_SLOT(field) \
  ((uint32_t)(offsetof(qnn_interface_table_t, field) / sizeof(void (*)(void))))

typedef struct qnn_interface {
  uint32_t backend_id;
  const char *provider_name;
  qnn_api_version_t api_version;
  qnn_interface_table_t table; /* the provider may have fewer slots: see QNN_INTERFACE_SLOT */
} qnn_interface_t;

typedef qnn_error_t (*qnn_interface_get_providers_fn)(const qnn_interface_t ***provider_list,
                                                      uint32_t *num_providers);
#define QNN_INTERFACE_GET_PROVIDERS_SYMBOL "QnnInterface_getProviders"

/* ---- the system interface: QnnSystemInterface_getProviders ----------------------------------
 * Append-only: System API 1.1 has the first 4 slots, 1.7 all 16.
 */
typedef struct qnn_system_interface_table {
  qnn_error_t (*system_context_create)(qnn_system_context_handle_t *);                    /* 0 */
  qnn_error_t (*system_context_get_binary_info)(qnn_system_context_handle_t, void *, uint64_t,
                                                const void **binary_info,
                                                qnn_context_binary_size_t *);             /* 1 */
  qnn_error_t (*system_context_get_metadata)(qnn_system_context_handle_t, const void *,
                                             uint64_t, const void **binary_info);         /* 2 */
  qnn_error_t (*system_context_free)(qnn_system_context_handle_t);                         /* 3 */
  qnn_unused_fn system_tensor_get_memory_footprint;                                        /* 4 */
  qnn_unused_fn system_log_create;                                                         /* 5 */
  qnn_unused_fn system_log_set_log_level;                                                  /* 6 */
  qnn_unused_fn system_log_free;                                                           /* 7 */
  qnn_unused_fn system_dlc_create_from_file;                                               /* 8 */
  qnn_unused_fn system_dlc_create_from_binary;                                             /* 9 */
  qnn_unused_fn system_dlc_compose_graphs;                                                 /* 10 */
  qnn_unused_fn system_dlc_get_op_mappings;                                                /* 11 */
  qnn_unused_fn system_dlc_free;                                                           /* 12 */
  /* the target is passed by value */
  qnn_error_t (*system_profile_create_serialization_target)(
      struct qnn_system_profile_target, struct qnn_system_profile_target_config *,
      uint32_t num_configs, void **target);                                               /* 13 */
  qnn_error_t (*system_profile_serialize_event_data)(
      void *target, const struct qnn_system_profile_data **, uint32_t num);               /* 14 */
  qnn_error_t (*system_profile_free_serialization_target)(void *target);                  /* 15 */
} qnn_system_interface_table_t;

#define QNN_SYSTEM_INTERFACE_SLOT(field) \
  ((uint32_t)(offsetof(qnn_system_interface_table_t, field) / sizeof(void (*)(void))))

typedef struct qnn_system_interface {
  uint32_t backend_id;
  const char *provider_name;
  qnn_version_t system_api_version;
  qnn_system_interface_table_t table;
} qnn_system_interface_t;

typedef qnn_error_t (*qnn_system_interface_get_providers_fn)(
    const qnn_system_interface_t ***provider_list, uint32_t *num_providers);
#define QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL "QnnSystemInterface_getProviders"

/* ---- system context: binary info ------------------------------------------------------------
 * V3 is NOT a prefix-extension of V1/V2 (the hardware-info blob fields were removed), so the
 * member is always chosen by `version`.
 */
#define QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_1 1u
#define QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_2 2u
#define QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_3 3u

typedef struct qnn_system_context_graph_info qnn_system_context_graph_info_t;

typedef struct qnn_binary_info_v1 {
  uint32_t backend_id;
  const char *build_id;
  qnn_version_t core_api_version;
  qnn_version_t backend_api_version;
  const char *soc_version;
  qnn_version_t hw_info_blob_version;
  qnn_version_t context_blob_version;
  uint32_t hw_info_blob_size;
  void *hw_info_blob;
  uint64_t context_blob_size;
  uint32_t num_context_tensors;
  qnn_tensor_t *context_tensors;
  uint32_t num_graphs;
  qnn_system_context_graph_info_t *graphs;
} qnn_binary_info_v1_t;

typedef struct qnn_binary_info_v2 {
  uint32_t backend_id;
  const char *build_id;
  qnn_version_t core_api_version;
  qnn_version_t backend_api_version;
  const char *soc_version;
  qnn_version_t hw_info_blob_version;
  qnn_version_t context_blob_version;
  uint32_t hw_info_blob_size;
  void *hw_info_blob;
  uint64_t context_blob_size;
  uint32_t num_context_tensors;
  qnn_tensor_t *context_tensors;
  uint32_t num_graphs;
  qnn_system_context_graph_info_t *graphs;
  void *platform_info; /* qnn_device_platform_info_t* */
} qnn_binary_info_v2_t;

typedef struct qnn_binary_info_v3 {
  uint32_t backend_id;
  const char *build_id;
  qnn_version_t core_api_version;
  qnn_version_t backend_api_version;
  const char *soc_version;
  qnn_version_t context_blob_version;
  uint64_t context_blob_size;
  uint32_t num_context_tensors;
  qnn_tensor_t *context_tensors;
  uint32_t num_graphs;
  qnn_system_context_graph_info_t *graphs;
  void *platform_info;
  uint32_t context_metadata_size;
  void *context_metadata;
  uint32_t soc_model;
} qnn_binary_info_v3_t;

typedef struct qnn_system_context_binary_info {
  uint32_t version;
  union {
    qnn_binary_info_v1_t v1;
    qnn_binary_info_v2_t v2;
    qnn_binary_info_v3_t v3;
  } u;
} qnn_system_context_binary_info_t;

/* ---- system context: graph info ------------------------------------------------------------
 * V1, V2 and V3 share a prefix. The array stride is the *system library's* struct size, which
 * grew when V2 (64 bytes) and V3 (88 bytes) were added: see qnn_versions.h.
 */
#define QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_1 1u
#define QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_2 2u
#define QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3 3u

typedef struct qnn_graph_info_v1 {
  const char *graph_name;
  uint32_t num_graph_inputs;
  qnn_tensor_t *graph_inputs;
  uint32_t num_graph_outputs;
  qnn_tensor_t *graph_outputs;
} qnn_graph_info_v1_t;

typedef struct qnn_graph_info_v2 {
  const char *graph_name;
  uint32_t num_graph_inputs;
  qnn_tensor_t *graph_inputs;
  uint32_t num_graph_outputs;
  qnn_tensor_t *graph_outputs;
  uint32_t num_updateable_tensors;
  qnn_tensor_t *updateable_tensors;
} qnn_graph_info_v2_t;

typedef struct qnn_graph_info_v3 {
  const char *graph_name;
  uint32_t num_graph_inputs;
  qnn_tensor_t *graph_inputs;
  uint32_t num_graph_outputs;
  qnn_tensor_t *graph_outputs;
  uint32_t num_updateable_tensors;
  qnn_tensor_t *updateable_tensors;
  uint32_t graph_blob_info_size;
  void *graph_blob_info;
  uint32_t start_op_index;
  uint32_t end_op_index;
} qnn_graph_info_v3_t;

struct qnn_system_context_graph_info {
  uint32_t version;
  union {
    qnn_graph_info_v1_t v1;
    qnn_graph_info_v2_t v2;
    qnn_graph_info_v3_t v3;
  } u;
};

/* Strides of the three generations of the graph-info array element. */
#define QNN_GRAPH_INFO_STRIDE_V1_ONLY 48u
#define QNN_GRAPH_INFO_STRIDE_V2 64u
#define QNN_GRAPH_INFO_STRIDE_V3 88u
/* Tensor arrays: 144 bytes since Qnn_Tensor_t gained V2 (every version at our floor). */
#define QNN_TENSOR_STRIDE 144u
/* A tensor holding only V1 (120 bytes): what QAIRT 2.13's system library lays out, although it
 * reports System API 1.1 like 2.25's (docs/abi.md). Never read by the core: such a library is
 * refused; the reference system library can lay tensors out this way to test that. */
#define QNN_TENSOR_STRIDE_V1_ONLY 120u

#ifdef __cplusplus
}
#endif
#endif /* HTPU_QNN_ABI_H */
