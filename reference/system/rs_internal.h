/*
 * rs_internal.h - state shared by the files of the reference system library.
 *
 * A system context owns everything systemContextGetBinaryInfo/GetMetaData hand out: each piece
 * is its own heap block, all freed by systemContextFree, so a caller that keeps a pointer past
 * that (or strides an array wrongly) is caught by AddressSanitizer.
 *
 * The files, bottom up (a file calls only the files below it, never one above):
 *   sys_log.c       rs_log, the diagnostics every other file writes
 *   binary_info.c   the arena of a system context and the binary info built in it
 *   sys_profile.c   QnnSystemProfile: serialization targets and the events written to them
 *   sys_context.c   the provider tables and the system-context calls, over the two above
 */
#ifndef HTPU_RS_INTERNAL_H
#define HTPU_RS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../backend/ref_faultrules.h"
#include "qnn/qnn_abi.h"
#include "refmodel.h"

#define RS_EXPORT __attribute__((visibility("default")))

/* The blocks one system context has handed out. */
typedef struct rs_block {
  struct rs_block *next;
  void *p;
  size_t size;
} rs_block;

typedef struct rs_context {
  struct rs_context *next;
  uintptr_t handle;
  rs_block *blocks;
} rs_context;

/* ---- sys_log.c ---- */
/* Diagnostics go to stderr when HTPU_REF_SYSTEM_LOG is set (the system log API is not
 * implemented). */
void rs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- arena (binary_info.c) ---- */
void *rs_alloc(rs_context *c, size_t size); /* zeroed; NULL on OOM */
void rs_free_all(rs_context *c);
size_t rs_allocated(const rs_context *c);

/* The element sizes of the arrays an answer holds: the sizes of the structs the system library
 * was built with. A graph info or tensor of fewer bytes than the struct holds only the members
 * that fit, and reports the highest version that fits. */
typedef struct rs_layout {
  uint32_t graph_stride;  /* QNN_GRAPH_INFO_STRIDE_V1_ONLY, _V2 or _V3 */
  uint32_t tensor_stride; /* QNN_TENSOR_STRIDE or QNN_TENSOR_STRIDE_V1_ONLY */
} rs_layout;

/* Builds the binary info of model m (a binary of len bytes) in that layout. Returns 0 or -1 on
 * OOM. */
int rs_build_binary_info(rs_context *c, const ref_model *m, uint64_t len, rs_layout layout,
                         const qnn_system_context_binary_info_t **out);

/* ---- sys_context.c ---- */
qnn_error_t rs_context_create(qnn_system_context_handle_t *out);
qnn_error_t rs_context_free(qnn_system_context_handle_t h);
qnn_error_t rs_get_info(qnn_system_context_handle_t h, const void *buf, uint64_t size,
                        const void **info, qnn_context_binary_size_t *info_size,
                        uint32_t stride, uint32_t api);
qnn_error_t rs_not_supported(void);

/* ---- sys_profile.c: QnnSystemProfile (System API 1.5 on) ---- */
struct qnn_system_profile_target;
qnn_error_t rs_profile_create_target(struct qnn_system_profile_target target,
                                     struct qnn_system_profile_target_config *cfg, uint32_t ncfg,
                                     void **out);
qnn_error_t rs_profile_serialize(void *h, const struct qnn_system_profile_data **data,
                                 uint32_t n);
qnn_error_t rs_profile_free_target(void *h);

RS_EXPORT qnn_error_t QnnSystemInterface_getProviders(const qnn_system_interface_t ***list,
                                                      uint32_t *num);

#endif /* HTPU_RS_INTERNAL_H */
