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

/* The parts, by API area; each includes what it uses, and `make check-abi` compares them all.
 * Include this header, not a part. */
#include "qnn_types_abi.h"     /* scalars, handles, versions, error codes, keys, data types */
#include "qnn_tensor_abi.h"    /* tensors and their quantization */
#include "qnn_config_abi.h"    /* configs, notifications, the log callback */
#include "qnn_interface_abi.h" /* the backend's and the system library's function tables */
#include "qnn_system_abi.h"    /* a context binary's info and its graphs' */

#endif /* HTPU_QNN_ABI_H */
