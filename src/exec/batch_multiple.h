/*
 * batch_multiple.h - executes of k graph-sized row groups at once (htpu_exec_options
 * .batch_multiple).
 *
 * QnnGraph.h lets every input and output of an execute carry a batch dimension that is the same
 * integer multiple k of the graph's (docs/abi.md, "Batch multiple"); the batch dimension is
 * dims[0]. Where the backend announces capability 312 and the graph has not refused before, a
 * call of k row groups is ONE graphExecute with dims[0] x k in dimension arrays of its own (the
 * templates made at introspection are shared by every call and never written), client buffers
 * k times the size and conversions over the k rows. A graph that refuses (QNN 1000, or 6004 on
 * its first multiple) is remembered in its graph_state, and its calls run as k executes, one per
 * row group, under one turn of the graph's lock. execute.c calls these; the policy lives here.
 */
#ifndef HTPU_BATCH_MULTIPLE_H
#define HTPU_BATCH_MULTIPLE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* graph_state.batch_state */
enum { BATCH_UNTRIED = 0, BATCH_ACCEPTED = 1, BATCH_REFUSED = 2 };

/* Capability 312 of rt's backend: 1 announced, 0 not. Asked once, at runtime open. */
int batch_runtime_announces(const runtime_obj *rt);

/* The checks a call of k > 1 row groups needs besides the sizes (plan_io): not no_wait (its
 * scratch is allocated per call, and the chunked fallback may run k executes), a batch
 * dimension on every tensor, and k buffers within QNN's 32-bit sizes. 0 or an error (set). */
int batch_check_call(const htpu_graph_info *gi, uint32_t k, int no_wait);

/* Whether the call of k row groups on s goes as one execute (1) or chunked (0). */
int batch_try_one_execute(const runtime_obj *rt, graph_state *s, uint32_t k);

/* The QNN code of a failed execute with a multiple: 1 when it means "this graph refuses
 * batch multiples" (1000, 6004), which the graph then remembers. */
int batch_is_refusal(uint32_t qnn_code);
void batch_remember(graph_state *s, int accepted);

/* Dimension arrays of one call, in one allocation (free()): [i] for each of the n tensors a copy
 * of its template dims with dims[0] x k (the single execute), [n + i] the template's own (the
 * chunked executes). NULL: out of memory. */
uint32_t **batch_dims_make(const qnn_tensor_t *tensors, uint32_t n, uint32_t k);

/* A zeroed, 64-byte aligned conversion block of `size` bytes (k rows of every converted
 * tensor: a batch call does not use the graph's pool of one-row blocks). free(). */
unsigned char *batch_block_alloc(size_t size);

/* k rows of a tensor converted one row at a time with the graph's own tensor info (so each row
 * is converted exactly as a call of that row alone). Errors name the row group (*bad_row). */
int batch_quantize_rows(const htpu_tensor_info *t, const float *src, void *dst, uint32_t k,
                        uint32_t *bad_row);
int batch_dequantize_rows(const htpu_tensor_info *t, const void *src, float *dst, uint32_t k,
                          uint32_t *bad_row);

#endif
