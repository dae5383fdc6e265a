/*
 * memory.h - what a model costs in memory (src/model/): the HTP graph blob info of each graph
 * (versions 1 and 2), the load estimate from them, and the context's custom properties after a
 * load (htpu_context_get_memory, in memory.c).
 */
#ifndef HTPU_MODEL_MEMORY_H
#define HTPU_MODEL_MEMORY_H

#include <stdint.h>

#include "hexagon_tpu.h"

/* Reads the blob graph info V3 points to (`blob`, `size` bytes as the library reported) into
 * *out, each version through its own declaration and only when `size` covers it; *vtcm gets
 * version 1's VTCM (normalized to bytes: device/vtcm.h), untouched otherwise. A blob of another
 * version, or too short, leaves *out zeroed (blob_info_version 0). */
void memory_read_blob(const void *blob, uint32_t size, htpu_graph_memory *out, uint64_t *vtcm);

/* The spill-fill buffer a context of these graphs needs: the largest figure their blob info
 * reports (one buffer serves a context's graphs in turn), over the graphs marked in graph_on
 * (NULL: every graph); 0 when none reports one (version 2 carries none, nor do binaries before
 * QAIRT 2.28). The one reading of it: the load estimate, a load's own need, and so the size of
 * the spill-fill group a load starts (spill_group.c). */
uint64_t memory_spill_fill_bytes(const htpu_graph_memory *g, uint32_t n, const uint8_t *graph_on);

/* The load estimate (htpu_model_info.load_estimate_bytes) from the graphs' figures and the
 * binary's size. */
uint64_t memory_load_estimate(const htpu_graph_memory *g, uint32_t n, uint64_t binary_bytes);

#endif
