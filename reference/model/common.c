/* common.c - data-type and op-name tables, lookups and small helpers of the reference model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qnn/qnn_abi.h"
#include "refmodel_priv.h"

int refm_err(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

void refm_err_prefix(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  char prefix[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  size_t plen = strlen(prefix), elen = strnlen(err, errlen - 1);
  if (plen >= errlen - 1) plen = errlen - 1;
  /* shift the message right (it may get cut at the end) and put the prefix in front */
  size_t keep = elen;
  if (plen + keep > errlen - 1) keep = errlen - 1 - plen;
  memmove(err + plen, err, keep);
  memcpy(err, prefix, plen);
  err[plen + keep] = '\0';
}

typedef struct dtype_row {
  uint32_t qnn;
  htpu_dtype storage;
  int fixed;
  const char *name;
} dtype_row;

static const dtype_row k_dtypes[] = {
    {QNN_DATATYPE_FLOAT_32, HTPU_F32, 0, "f32"},
    {QNN_DATATYPE_FLOAT_16, HTPU_F16, 0, "f16"},
    {QNN_DATATYPE_UINT_8, HTPU_U8, 0, "u8"},
    {QNN_DATATYPE_INT_8, HTPU_I8, 0, "i8"},
    {QNN_DATATYPE_UINT_16, HTPU_U16, 0, "u16"},
    {QNN_DATATYPE_INT_16, HTPU_I16, 0, "i16"},
    {QNN_DATATYPE_UINT_32, HTPU_U32, 0, "u32"},
    {QNN_DATATYPE_INT_32, HTPU_I32, 0, "i32"},
    {QNN_DATATYPE_UFIXED_POINT_8, HTPU_U8, 1, "ufixed8"},
    {QNN_DATATYPE_SFIXED_POINT_8, HTPU_I8, 1, "sfixed8"},
    {QNN_DATATYPE_UFIXED_POINT_16, HTPU_U16, 1, "ufixed16"},
    {QNN_DATATYPE_SFIXED_POINT_16, HTPU_I16, 1, "sfixed16"},
    {QNN_DATATYPE_UFIXED_POINT_32, HTPU_U32, 1, "ufixed32"},
    {QNN_DATATYPE_SFIXED_POINT_32, HTPU_I32, 1, "sfixed32"},
};

static const dtype_row *dtype_find(uint32_t qnn) {
  for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
    if (k_dtypes[i].qnn == qnn) return &k_dtypes[i];
  return NULL;
}

htpu_dtype refm_storage_dtype(uint32_t qnn_data_type) {
  const dtype_row *r = dtype_find(qnn_data_type);
  return r ? r->storage : HTPU_DTYPE_INVALID;
}

int refm_dtype_is_fixed(uint32_t qnn_data_type) {
  const dtype_row *r = dtype_find(qnn_data_type);
  return r ? r->fixed : 0;
}

const char *refm_dtype_name(uint32_t qnn_data_type) {
  const dtype_row *r = dtype_find(qnn_data_type);
  return r ? r->name : "unknown";
}

size_t ref_dtype_size(uint32_t data_type) {
  switch (refm_storage_dtype(data_type)) {
  case HTPU_F32:
  case HTPU_U32:
  case HTPU_I32:
    return 4;
  case HTPU_F16:
  case HTPU_U16:
  case HTPU_I16:
    return 2;
  case HTPU_U8:
  case HTPU_I8:
    return 1;
  default:
    return 0;
  }
}

static const char *const k_op_names[] = {
    [REF_OP_ADD] = "ElementWiseAdd",
    [REF_OP_MUL] = "ElementWiseMultiply",
    [REF_OP_FULLY_CONNECTED] = "FullyConnected",
    [REF_OP_CONV2D] = "Conv2d",
    [REF_OP_RELU] = "Relu",
    [REF_OP_RESHAPE] = "Reshape",
    [REF_OP_SOFTMAX] = "Softmax",
    [REF_OP_NON_ZERO] = "NonZero",
    [REF_OP_SIGMOID] = "Sigmoid",
    [REF_OP_CONCAT] = "Concat",
    [REF_OP_POOL_MAX_2D] = "PoolMax2d",
    [REF_OP_RESIZE_NEAREST] = "ResizeNearestNeighbor",
    [REF_OP_TRANSPOSE] = "Transpose",
};
#define NUM_OP_NAMES (sizeof k_op_names / sizeof k_op_names[0])

const char *refm_op_name(uint32_t op_type) {
  return op_type < NUM_OP_NAMES ? k_op_names[op_type] : NULL;
}

uint32_t refm_op_from_name(const char *name) {
  for (uint32_t i = 1; i < NUM_OP_NAMES; i++)
    if (k_op_names[i] && strcasecmp(k_op_names[i], name) == 0) return i;
  return 0;
}

int refm_elements(uint32_t rank, const uint32_t *dims, uint64_t *out) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) {
    if (dims[i] != 0 && n > UINT64_MAX / dims[i]) return -1;
    n *= dims[i];
  }
  *out = n;
  return 0;
}

size_t ref_tensor_elements(const ref_tensor *t) {
  uint64_t n;
  if (t->rank > REF_MAX_RANK || refm_elements(t->rank, t->dims, &n) != 0 || n > SIZE_MAX) return 0;
  return (size_t)n;
}

int refm_qparams_init(const ref_tensor *t, refm_qparams *q) {
  memset(q, 0, sizeof *q);
  q->p.channels = 1;
  q->p.inner = 1;
  if (t->quant == REF_QUANT_SCALE_OFFSET) {
    q->scale = t->scale;
    q->zero_point = -t->offset;
    q->p.scales = &q->scale;
    q->p.zero_points = &q->zero_point;
  } else if (t->quant == REF_QUANT_AXIS_SCALE_OFFSET) {
    q->zero_points = malloc((t->num_axis ? t->num_axis : 1) * sizeof(int32_t));
    if (!q->zero_points) return -1;
    /* offsets were range-checked against the storage type, so negation cannot overflow */
    for (uint32_t i = 0; i < t->num_axis; i++) q->zero_points[i] = -t->offsets[i];
    size_t inner = 1;
    for (uint32_t d = (uint32_t)t->axis + 1; d < t->rank; d++) inner *= t->dims[d];
    q->p.scales = t->scales;
    q->p.zero_points = q->zero_points;
    q->p.channels = t->num_axis;
    q->p.inner = inner;
  }
  return 0;
}

void refm_qparams_free(refm_qparams *q) {
  free(q->zero_points);
  q->zero_points = NULL;
}

int ref_model_has_magic(const void *buf, size_t len) {
  return buf && len >= REFF_MAGIC_LEN && memcmp(buf, REFF_MAGIC, REFF_MAGIC_LEN) == 0;
}

int ref_model_find_graph(const ref_model *m, const char *name) {
  if (!m || !name) return -1;
  for (uint32_t i = 0; i < m->num_graphs; i++)
    if (strcmp(m->graphs[i].name, name) == 0) return (int)i;
  return -1;
}

int ref_model_find_tensor(const ref_model *m, uint32_t id) {
  if (!m || id == 0) return -1;
  for (uint32_t i = 0; i < m->num_tensors; i++)
    if (m->tensors[i].id == id) return (int)i;
  return -1;
}
