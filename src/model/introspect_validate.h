/*
 * introspect_validate.h - check a system library's binary-info answer before any of it is used.
 *
 * The graph-info and tensor arrays of that answer are strided by sizes the project derives from
 * the library's System API version (qnn_versions.h). A library built with other sizes than its
 * version implies (QAIRT 2.13's libQnnSystem.so reports 1.1.0 like 2.25's but lays out 48-byte
 * graph infos and 120-byte tensors, docs/abi.md) would have graphs[1..] and tensors[1..] misread
 * from the middle of their neighbours. Every entry is checked field by field, and a pointer is
 * followed only after every plain field of its entry passed, so such an answer is refused with
 * one message naming the library instead of turning into a wrong model or a crash.
 */
#ifndef HTPU_INTROSPECT_VALIDATE_H
#define HTPU_INTROSPECT_VALIDATE_H

#include <stdint.h>

#include "qnn/qnn_abi.h"

/* Sanity bounds: far above any real model, low enough to refuse garbage before allocating. */
#define SYSINFO_MAX_GRAPHS 4096u
#define SYSINFO_MAX_GRAPH_IO 65536u
/* Longest graph/tensor name (and build id, SoC version) read, NUL included. */
#define SYSINFO_MAX_NAME 4096u

/* The parts of a systemContextGetBinaryInfo answer that are followed, and who gave it. */
typedef struct sysinfo_answer {
  const char *lib_path;               /* named in every message */
  qnn_version_t api;                  /* its System API version: decides the graph-info stride */
  const char *build_id, *soc_version; /* NULL allowed */
  uint32_t num_graphs;
  const void *graphs; /* num_graphs graph infos at qnn_graph_info_stride(api) */
} sysinfo_answer;

/* Returns 0 when every graph info and tensor of the answer is plausible:
 *   - at most SYSINFO_MAX_GRAPHS graphs, a graph array when there is any (0 graphs passes: the
 *     caller reports an empty binary itself);
 *   - graph info version 1..qnn_graph_info_max_version(api); a non-empty name of printable
 *     bytes, NUL-terminated within SYSINFO_MAX_NAME; at most SYSINFO_MAX_GRAPH_IO inputs and
 *     outputs each, with an array when there is any;
 *   - per tensor: version 1 or 2; a tensor type, data type, quantization definition and (when
 *     defined) encoding that QNN declares (up to QAIRT 2.43); rank 0..HTPU_MAX_RANK with
 *     dimensions when rank > 0; a name of printable bytes (may be empty), NUL-terminated within
 *     SYSINFO_MAX_NAME;
 *   - build id and SoC version, when present, NUL-terminated within SYSINFO_MAX_NAME.
 * Otherwise HTPU_ESYSTEM_LAYOUT with the thread's error set to "unsupported system library
 * layout: '<path>' (System API x.y.z): <the first field that failed and what was expected>".
 * Data types QNN declares but the project does not handle pass: the copy refuses them as
 * HTPU_EUNSUPPORTED, a property of the model, not of the library. */
int sysinfo_validate(const sysinfo_answer *a);

/* A graph input or output's data format, a property of the model: 0 for DENSE, the only
 * format laid out as its dims say. SPARSE is HTPU_EMODEL (QnnTypes.h: "sparse tensors may only
 * be QNN_TENSOR_TYPE_NATIVE"), any other HTPU_EUNSUPPORTED; the message starts with `where`
 * ("graph 'g' input 'x'") and names the format. */
int sysinfo_check_io_format(const char *where, uint32_t data_format);

/* A validated tensor's dynamic dimensions as a mask (bit d: isDynamicDimensions[d] nonzero);
 * 0 for a V1 tensor or a NULL array. */
uint32_t sysinfo_dynamic_mask(const qnn_tensor_t *t);

#endif
