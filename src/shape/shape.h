/*
 * shape.h - the door of src/shape/: the shapes an execute's outputs come out in.
 *
 * QnnGraph.h lets the backend write an output tensor's dims back after an execute: an output
 * whose isDynamicDimensions marks a dimension (htpu_tensor_info.dynamic_dims) gets the values
 * it produced, and any output's dims "can vary after graph execution", each at most what the
 * graph declared. So each execute of one row group hands every output descriptor a dims array
 * of its own (never the model's template, which other calls read at the same time) and, once the
 * execute succeeded, reads it back: what the output conversion reads and what the caller's
 * htpu_exec_options.output_dims gets. Used by src/execute.c; uses only src/errors.h.
 */
#ifndef HTPU_SHAPE_H
#define HTPU_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "qnn/qnn_abi.h"

/* Outputs whose arrays live in the call itself; more take one allocation. */
#define SHAPE_INLINE_OUTPUTS 4

typedef struct shape_call {
  uint32_t n_out;      /* 0: not begun (a call of k row groups, or one that failed early) */
  int read;            /* shape_read succeeded */
  uint32_t (*dims)[HTPU_MAX_RANK]; /* per output: its descriptor's dims for this call */
  size_t *elems;       /* per output: its element count as produced (after shape_read) */
  void *heap;          /* dims and elems beyond SHAPE_INLINE_OUTPUTS */
  uint32_t inline_dims[SHAPE_INLINE_OUTPUTS][HTPU_MAX_RANK];
  size_t inline_elems[SHAPE_INLINE_OUTPUTS];
} shape_call;

/* A call of `rows` row groups (batch multiple) on a graph whose outputs have dynamic
 * dimensions: HTPU_EINVAL naming the graph and the output (where one row group's rows would end
 * cannot be told). 0 otherwise. */
int shape_check_rows(const htpu_graph_info *gi, uint32_t rows);

/* Points each of the call's output descriptors (outputs[0..gi->num_outputs), copied from the
 * templates) at a dims array of the call's own, holding the declared dims. 0 or HTPU_ENOMEM. */
int shape_begin(shape_call *sc, const htpu_graph_info *gi, qnn_tensor_t *outputs);

/* After a successful execute: every output's dims as the backend left them, each at most the
 * declared one (0 allowed: nothing produced along it). 0, or HTPU_EQNN naming the graph, the
 * output, the dims written and the declared maximum. */
int shape_read(shape_call *sc, const htpu_graph_info *gi);

/* Output i's tensor info as produced: `declared` itself when the call produced the declared
 * shape (or the shape was not read), else *buf holding the produced dims, element count and
 * byte size. */
const htpu_tensor_info *shape_output_info(const shape_call *sc, uint32_t i,
                                          const htpu_tensor_info *declared,
                                          htpu_tensor_info *buf);

/* The caller's output_dims (gi->num_outputs rows of HTPU_MAX_RANK, zero past each rank): each
 * output's produced dims, or for a call of `rows` > 1 row groups the declared ones with
 * dims[0] x rows. */
void shape_report(const shape_call *sc, const htpu_graph_info *gi, uint32_t rows, uint32_t *out);

void shape_end(shape_call *sc);

#endif
