/*
 * qnn_tensor_abi.h - tensors (V1 and V2) and their quantization parameters.
 * Part of the QNN ABI subset (qnn_abi.h, its door, says how it was written and checked).
 */
#ifndef HTPU_QNN_TENSOR_ABI_H
#define HTPU_QNN_TENSOR_ABI_H

#include "qnn_types_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif /* HTPU_QNN_TENSOR_ABI_H */
