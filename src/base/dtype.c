/* dtype.c - size and short name of the public element types. */
#include <stddef.h>

#include "hexagon_tpu.h"

size_t htpu_dtype_size(htpu_dtype t) {
  switch (t) {
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
    case HTPU_BOOL8:
      return 1;
    case HTPU_U64:
    case HTPU_I64:
      return 8;
    case HTPU_DTYPE_INVALID:
      break;
  }
  /* also reached for values outside the enum (a caller's uninitialized field) */
  return 0;
}

const char *htpu_dtype_name(htpu_dtype t) {
  switch (t) {
    case HTPU_F32:
      return "f32";
    case HTPU_F16:
      return "f16";
    case HTPU_U8:
      return "u8";
    case HTPU_I8:
      return "i8";
    case HTPU_U16:
      return "u16";
    case HTPU_I16:
      return "i16";
    case HTPU_U32:
      return "u32";
    case HTPU_I32:
      return "i32";
    case HTPU_U64:
      return "u64";
    case HTPU_I64:
      return "i64";
    case HTPU_BOOL8:
      return "bool8";
    case HTPU_DTYPE_INVALID:
      break;
  }
  return "invalid";
}
