/*
 * qnn_system_abi.h - what the system library reads out of a context binary: the binary
 * info (V1 to V3), the graph info (V1 to V3) and the strides of their arrays.
 * Part of the QNN ABI subset (qnn_abi.h, its door, says how it was written and checked).
 */
#ifndef HTPU_QNN_SYSTEM_ABI_H
#define HTPU_QNN_SYSTEM_ABI_H

#include "qnn_tensor_abi.h"
#include "qnn_types_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

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
#endif /* HTPU_QNN_SYSTEM_ABI_H */
