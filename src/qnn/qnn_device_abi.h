/*
 * qnn_device_abi.h - QNN device platform-info declarations (the chain a binary info V2/V3 and
 * deviceGetPlatformInfo point to), including the HTP on-chip extension that carries the DSP
 * arch, SoC model and VTCM size. Own names; checked by `make check-abi` like qnn_abi.h.
 */
#ifndef HTPU_QNN_DEVICE_ABI_H
#define HTPU_QNN_DEVICE_ABI_H

#include "qnn_abi.h"

#define QNN_DEVICE_PLATFORM_INFO_VERSION_1 1u
#define QNN_DEVICE_HARDWARE_DEVICE_INFO_VERSION_1 1u
#define QNN_DEVICE_CORE_INFO_VERSION_1 1u
#define QNN_HTP_DEVICE_TYPE_ON_CHIP 0u

typedef struct qnn_htp_on_chip_device_info {
  size_t vtcm_size; /* documented as MB; bytes or MB unverified on a board (docs/abi.md) */
  uint32_t soc_model;
  uint8_t signed_pd_support;
  uint8_t dlbc_support;
  uint32_t arch; /* 68 = v68 */
} qnn_htp_on_chip_device_info_t;

typedef struct qnn_htp_device_info_extension {
  uint32_t dev_type; /* QNN_HTP_DEVICE_TYPE_ON_CHIP */
  union {
    qnn_htp_on_chip_device_info_t on_chip_device;
  } u;
} qnn_htp_device_info_extension_t;

typedef struct qnn_device_core_info_v1 {
  uint32_t core_id;
  uint32_t core_type;
  void *core_info_extension;
} qnn_device_core_info_v1_t;

typedef struct qnn_device_core_info {
  uint32_t version;
  union {
    qnn_device_core_info_v1_t v1;
  } u;
} qnn_device_core_info_t;

typedef struct qnn_device_hardware_device_info_v1 {
  uint32_t device_id;
  uint32_t device_type;
  uint32_t num_cores;
  qnn_device_core_info_t *cores;
  void *device_info_extension; /* HTP: qnn_htp_device_info_extension_t* */
} qnn_device_hardware_device_info_v1_t;

typedef struct qnn_device_hardware_device_info {
  uint32_t version;
  union {
    qnn_device_hardware_device_info_v1_t v1;
  } u;
} qnn_device_hardware_device_info_t;

typedef struct qnn_device_platform_info_v1 {
  uint32_t num_hw_devices;
  qnn_device_hardware_device_info_t *hw_devices;
} qnn_device_platform_info_v1_t;

typedef struct qnn_device_platform_info {
  uint32_t version;
  union {
    qnn_device_platform_info_v1_t v1;
  } u;
} qnn_device_platform_info_t;

/* HTP graph blob info, pointed to by graph info V3's graph_blob_info. */
typedef struct qnn_htp_graph_blob_info_v1 {
  uint64_t spill_fill_buffer_size;
  uint32_t vtcm_size; /* documented as MB, but bytes in real binaries (docs/abi.md) */
  uint32_t optimization_level;
  uint8_t htp_dlbc;
  uint64_t num_hvx_threads;
} qnn_htp_graph_blob_info_v1_t;

typedef struct qnn_htp_graph_blob_info {
  uint32_t version;
  union {
    qnn_htp_graph_blob_info_v1_t v1;
  } u;
} qnn_htp_graph_blob_info_t;

#define QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V1 1u
#define QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V2 2u

/* Version 2 is not a member of the union above: it is a struct of its own that starts with the
 * same version word, so graphBlobInfo points either at a qnn_htp_graph_blob_info_t (version 1)
 * or at this (version 2). Sizes in bytes; no spill-fill or VTCM field (docs/abi.md). */
typedef struct qnn_htp_graph_blob_info_v2 {
  uint32_t version;
  uint64_t native_k_channel_size;
  uint64_t native_v_channel_size;
  uint32_t is_safe_share_io; /* inputs and outputs may share a buffer */
  uint64_t io_tensor_size;
  uint64_t op_data_size;
  uint64_t const_size;
  uint64_t ddr_tensor_size;
  uint64_t shared_weights_size;
} qnn_htp_graph_blob_info_v2_t;

#endif
