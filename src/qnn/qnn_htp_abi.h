/*
 * qnn_htp_abi.h - the HTP extensions of the QNN ABI the project uses: the device
 * infrastructure with its performance (power vote) functions, memory registration of shared
 * buffers, and HTP device custom configs. Own names, written from published layout facts
 * (docs/abi.md), checked by `make check-abi` like qnn_abi.h.
 */
#ifndef HTPU_QNN_HTP_ABI_H
#define HTPU_QNN_HTP_ABI_H

#include <stdbool.h>

#include "qnn_abi.h"

/* ---- capability keys (propertyHasCapability: QNN_SUCCESS = supported) ---------------------- */

#define QNN_PROPERTY_MEM_SUPPORT_ION 1102u
#define QNN_PROPERTY_MEM_SUPPORT_CUSTOM 1103u
#define QNN_PROPERTY_MEM_SUPPORT_DMA_BUF 1104u
#define QNN_PROPERTY_DEVICE_SUPPORT_INFRASTRUCTURE 1502u

/* ---- context custom properties (contextGetProperty, HTP/QnnHtpContext.h) ------------------ */

#define QNN_HTP_CONTEXT_GET_PROP_BUFFER_START_ALIGNMENT 1u
#define QNN_HTP_CONTEXT_GET_PROP_MAX_SPILLFILL_BUFFER_SIZE 2u /* the largest of the context's graphs */
#define QNN_HTP_CONTEXT_GET_PROP_WEIGHTS_BUFFER_SIZE 3u       /* the persistent weights buffer */

typedef struct qnn_htp_context_custom_property {
  uint32_t option;
  union {
    uint64_t buffer_start_alignment;
    uint64_t spill_fill_buffer_size;
    uint64_t weights_buffer_size;
  } u;
} qnn_htp_context_custom_property_t;

/* ---- memory registration ------------------------------------------------------------------ */

#define QNN_MEM_ERROR_INVALID_ARGUMENT 8000u
#define QNN_MEM_ERROR_INVALID_HANDLE 8001u
#define QNN_MEM_ERROR_ALREADY_REGISTERED 8002u
#define QNN_MEM_ERROR_MAPPING 8003u
#define QNN_MEM_ERROR_INVALID_SHAPE 8004u
#define QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE 8005u

#define QNN_MEM_TYPE_ION 1u
#define QNN_MEM_TYPE_CUSTOM 2u
#define QNN_MEM_TYPE_DMA_BUF 3u

typedef struct qnn_mem_shape {
  uint32_t num_dim;
  uint32_t *dim_size;
  const char *shape_config; /* NULL for ordinary layouts */
} qnn_mem_shape_t;

typedef struct qnn_mem_descriptor {
  qnn_mem_shape_t mem_shape;
  uint32_t data_type;
  uint32_t mem_type;
  union {
    struct {
      int32_t fd;
    } ion_info;
    void *custom_info; /* HTP: qnn_htp_mem_descriptor_t* */
    struct {
      int32_t fd;
      void *data;
    } dma_buf_info;
  } u;
} qnn_mem_descriptor_t;

/* The HTP custom descriptor: many tensors may share one FastRPC allocation at offsets; `size`
 * is the size of the whole allocation behind the fd, not of the tensor. */
#define QNN_HTP_MEM_QURT 0u
#define QNN_HTP_MEM_SHARED_BUFFER 1u

typedef struct qnn_htp_shared_buffer_config {
  int32_t fd;
  uint64_t offset;
} qnn_htp_shared_buffer_config_t;

typedef struct qnn_htp_mem_descriptor {
  uint32_t type;
  uint64_t size;
  union {
    uint32_t qurt_address;
    qnn_htp_shared_buffer_config_t shared_buffer_config;
  } u;
} qnn_htp_mem_descriptor_t;


/* ---- HTP device config ---------------------------------------------------------------------- */

#define QNN_HTP_DEVICE_CONFIG_OPTION_SOC 0u
#define QNN_HTP_DEVICE_CONFIG_OPTION_ARCH 1u
#define QNN_HTP_DEVICE_CONFIG_OPTION_SIGNEDPD 2u
#define QNN_HTP_DEVICE_ARCH_V68 68u

typedef struct qnn_htp_device_custom_config {
  uint32_t option;
  union {
    uint32_t soc_model;
    struct {
      uint32_t device_id;
      uint32_t arch;
    } arch;
    struct {
      uint32_t device_id;
      bool use_signed_process_domain;
    } use_signed_process_domain;
  } u;
} qnn_htp_device_custom_config_t;

/* ---- HTP context custom config (a QNN_CONTEXT_CONFIG_OPTION_CUSTOM context config) ---------- */

/* Registers the context in a group of contexts that share one spill-fill buffer: the group's
 * first context passes a NULL first_group_handle and the buffer's size (> 0), the others the
 * first context's handle (their size is disregarded). */
#define QNN_HTP_CONTEXT_CONFIG_OPTION_REGISTER_MULTI_CONTEXTS 2u

typedef struct qnn_htp_context_group_registration {
  qnn_context_handle_t first_group_handle;
  uint64_t max_spill_fill_buffer; /* bytes */
} qnn_htp_context_group_registration_t;

typedef struct qnn_htp_context_custom_config {
  uint32_t option;
  union {
    qnn_htp_context_group_registration_t group_registration;
    uint64_t file_read_memory_budget_in_mb; /* option 3, never set here */
  } u;
} qnn_htp_context_custom_config_t;

/* ---- performance infrastructure (power votes) ------------------------------------------------ */

#define QNN_HTP_DEVICE_INFRASTRUCTURE_TYPE_PERF 0u

#define QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3 1u
#define QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY 2u
#define QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_POLLING_TIME 3u

#define QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_ADJUST_UP_DOWN 0x1u
#define QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_ADJUST_ONLY_UP 0x2u
#define QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_POWER_SAVER_MODE 0x4u
#define QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_POWER_SAVER_AGGRESSIVE_MODE 0x8u
#define QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE_MODE 0x10u
#define QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_DUTY_CYCLE_MODE 0x20u

#define DCVS_VOLTAGE_CORNER_DISABLE 0x10u
#define DCVS_VOLTAGE_VCORNER_MIN_VOLTAGE_CORNER 0x20u
#define DCVS_VOLTAGE_VCORNER_SVS2 0x30u
#define DCVS_VOLTAGE_VCORNER_SVS 0x40u
#define DCVS_VOLTAGE_VCORNER_SVS_PLUS 0x50u
#define DCVS_VOLTAGE_VCORNER_NOM 0x60u
#define DCVS_VOLTAGE_VCORNER_NOM_PLUS 0x70u
#define DCVS_VOLTAGE_VCORNER_TURBO 0x80u
#define DCVS_VOLTAGE_VCORNER_TURBO_PLUS 0x90u
#define DCVS_VOLTAGE_VCORNER_MAX_VOLTAGE_CORNER 0xA0u

#define QNN_HTP_PERF_ERROR_INVALID_INPUT 13001u
#define QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG 13002u

/* DCVS v3 (HAP_power_dcvs_v3 semantics): sixteen 32-bit fields. */
typedef struct qnn_htp_dcvs_v3 {
  uint32_t context_id; /* the power config id */
  uint32_t set_dcvs_enable;
  uint32_t dcvs_enable;
  uint32_t power_mode;
  uint32_t set_sleep_latency;
  uint32_t sleep_latency; /* microseconds */
  uint32_t set_sleep_disable;
  uint32_t sleep_disable;
  uint32_t set_bus_params;
  uint32_t bus_voltage_corner_min;
  uint32_t bus_voltage_corner_target;
  uint32_t bus_voltage_corner_max;
  uint32_t set_core_params;
  uint32_t core_voltage_corner_min;
  uint32_t core_voltage_corner_target;
  uint32_t core_voltage_corner_max;
} qnn_htp_dcvs_v3_t;

typedef struct qnn_htp_power_config {
  uint32_t option;
  union {
    qnn_htp_dcvs_v3_t dcvs_v3_config;
    uint32_t rpc_control_latency_config; /* microseconds */
    uint32_t rpc_polling_time_config;    /* microseconds; V69 and later only */
  } u;
} qnn_htp_power_config_t;

typedef struct qnn_htp_perf_infrastructure {
  qnn_error_t (*create_power_config_id)(uint32_t device_id, uint32_t core_id,
                                        uint32_t *power_config_id);
  qnn_error_t (*destroy_power_config_id)(uint32_t power_config_id);
  /* cfg: NULL-terminated array of pointers. */
  qnn_error_t (*set_power_config)(uint32_t power_config_id, const qnn_htp_power_config_t **cfg);
  qnn_unused_fn set_memory_config;
} qnn_htp_perf_infrastructure_t;

/* What deviceGetInfrastructure hands back a pointer to (backend-owned memory). */
typedef struct qnn_htp_device_infrastructure {
  uint32_t infra_type; /* QNN_HTP_DEVICE_INFRASTRUCTURE_TYPE_PERF */
  union {
    qnn_htp_perf_infrastructure_t perf_infra;
  } u;
} qnn_htp_device_infrastructure_t;


#endif
