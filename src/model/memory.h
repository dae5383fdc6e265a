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

/* The load estimate (htpu_model_info.load_estimate_bytes) from the graphs' figures and the
 * binary's size. */
uint64_t memory_load_estimate(const htpu_graph_memory *g, uint32_t n, uint64_t binary_bytes);

#endif
