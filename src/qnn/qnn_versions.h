/*
 * qnn_versions.h - which parts of the QNN ABI a provider of a given API version has.
 *
 * The loader never reads a function-table slot that the provider's version does not have, and
 * strides arrays returned by the system library by the struct sizes *that* library was built
 * with. The facts behind each number are in docs/abi.md.
 */
#ifndef HTPU_QNN_VERSIONS_H
#define HTPU_QNN_VERSIONS_H

#include "qnn_abi.h"

/* Core API 2.18 (QAIRT 2.25) is the oldest table layout verified to be a prefix of 2.32's;
 * 2.7's differs mid-table. */
#define QNN_CORE_API_MAJOR 2u
#define QNN_CORE_API_FLOOR_MINOR 18u
#define QNN_SYSTEM_API_MAJOR 1u
#define QNN_SYSTEM_API_FLOOR_MINOR 1u

/* Number of interface-table slots a core API version is known to have (0 = unsupported).
 * Exact where a published header was measured (2.18: 62, 2.27: 68, 2.29/2.30: 69, 2.32: 71);
 * in between, the count of the nearest older measured version, which the newer table extends
 * (docs/abi.md). 2.28 gets 69 because slot 68 is the call the 2.28 release notes add. */
static inline uint32_t qnn_core_table_slots(qnn_version_t v) {
  if (v.major != QNN_CORE_API_MAJOR || v.minor < QNN_CORE_API_FLOOR_MINOR) return 0;
  if (v.minor >= 32) return 71u;
  if (v.minor >= 28) return 69u;
  if (v.minor >= 27) return 68u;
  return 62u;
}

/* Number of system-table slots a System API version is known to have (0 = unsupported).
 * Measured: 1.1: 4, 1.4: 13, 1.5/1.6/1.7: 16; 1.2/1.3 unmeasured, so only 1.1's 4. */
static inline uint32_t qnn_system_table_slots(qnn_version_t v) {
  if (v.major != QNN_SYSTEM_API_MAJOR || v.minor < QNN_SYSTEM_API_FLOOR_MINOR) return 0;
  if (v.minor >= 5) return 16u;
  if (v.minor >= 4) return 13u;
  return 4u;
}

/* Stride of the graph-info array the system library returns: the library's own
 * sizeof(graph info), 64 while it had V1+V2 (measured at 1.1), 88 once V3 was added (measured at
 * 1.4 to 1.7). 1.2/1.3 are unmeasured; V3 arrived with core API 2.21 (QAIRT 2.28), after 1.1,
 * and is taken to be the change that ended 1.1 (docs/abi.md). */
static inline uint32_t qnn_graph_info_stride(qnn_version_t system_api) {
  return system_api.minor >= 2 ? QNN_GRAPH_INFO_STRIDE_V3 : QNN_GRAPH_INFO_STRIDE_V2;
}

/* Highest graph-info version a system library of this API version can report. */
static inline uint32_t qnn_graph_info_max_version(qnn_version_t system_api) {
  return qnn_graph_info_stride(system_api) == QNN_GRAPH_INFO_STRIDE_V3 ? 3u : 2u;
}

#endif
