/*
 * qnn_versions.h - which parts of the QNN ABI a provider of a given API version has.
 *
 * The loader never reads a function-table slot that the provider's version does not have, and
 * strides arrays returned by the system library by the struct sizes *that* library was built
 * with. The facts behind each number are in docs/abi.md.
 */
#ifndef HTPU_QNN_VERSIONS_H
#define HTPU_QNN_VERSIONS_H

#include "qnn/qnn_abi.h"

/* Core API 2.18 (QAIRT 2.25) is the oldest table layout verified to be a prefix of 2.32's;
 * 2.7's differs mid-table. */
#define QNN_CORE_API_MAJOR 2u
#define QNN_CORE_API_FLOOR_MINOR 18u
#define QNN_SYSTEM_API_MAJOR 1u
#define QNN_SYSTEM_API_FLOOR_MINOR 1u

/* Number of interface-table slots a core API version is known to have (0 = unsupported). */
static inline uint32_t qnn_core_table_slots(qnn_version_t v) {
  if (v.major != QNN_CORE_API_MAJOR || v.minor < QNN_CORE_API_FLOOR_MINOR) return 0;
  return v.minor >= 32 ? 71u : 62u;
}

/* Number of system-table slots a System API version is known to have (0 = unsupported). */
static inline uint32_t qnn_system_table_slots(qnn_version_t v) {
  if (v.major != QNN_SYSTEM_API_MAJOR || v.minor < QNN_SYSTEM_API_FLOOR_MINOR) return 0;
  return v.minor >= 7 ? 16u : 4u;
}

/* Stride of the graph-info array the system library returns. */
static inline uint32_t qnn_graph_info_stride(qnn_version_t system_api) {
  return system_api.minor >= 7 ? QNN_GRAPH_INFO_STRIDE_V3 : QNN_GRAPH_INFO_STRIDE_V2;
}

/* Highest graph-info version a system library of this API version can report. */
static inline uint32_t qnn_graph_info_max_version(qnn_version_t system_api) {
  return qnn_graph_info_stride(system_api) == QNN_GRAPH_INFO_STRIDE_V3 ? 3u : 2u;
}

#endif
