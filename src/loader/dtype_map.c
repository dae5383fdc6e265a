/* dtype_map.c - QNN data type codes to element storage types. */
#include "dtype_map.h"

#include "qnn/qnn_abi.h"

htpu_dtype dtype_from_qnn(uint32_t t) {
  switch (t) {
    case QNN_DATATYPE_FLOAT_32: return HTPU_F32;
    case QNN_DATATYPE_FLOAT_16: return HTPU_F16;
    case QNN_DATATYPE_UINT_8:
    case QNN_DATATYPE_UFIXED_POINT_8: return HTPU_U8;
    case QNN_DATATYPE_INT_8:
    case QNN_DATATYPE_SFIXED_POINT_8: return HTPU_I8;
    case QNN_DATATYPE_UINT_16:
    case QNN_DATATYPE_UFIXED_POINT_16: return HTPU_U16;
    case QNN_DATATYPE_INT_16:
    case QNN_DATATYPE_SFIXED_POINT_16: return HTPU_I16;
    case QNN_DATATYPE_UINT_32:
    case QNN_DATATYPE_UFIXED_POINT_32: return HTPU_U32;
    case QNN_DATATYPE_INT_32:
    case QNN_DATATYPE_SFIXED_POINT_32: return HTPU_I32;
    case QNN_DATATYPE_UINT_64: return HTPU_U64;
    case QNN_DATATYPE_INT_64: return HTPU_I64;
    case QNN_DATATYPE_BOOL_8: return HTPU_BOOL8;
    default: return HTPU_DTYPE_INVALID;
  }
}

int dtype_is_fixed_point(uint32_t t) {
  uint32_t cls = (t >> 8) & 0xFFu;
  return cls == 0x03u || cls == 0x04u;
}
