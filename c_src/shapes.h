/*
 * shapes.h - outputs with dynamic dimensions (htpu_tensor_info.dynamic_dims) in Elixir's
 * answers: an execute of a graph with such outputs passes htpu_exec_options.output_dims, then
 * each output binary is cut to the elements the execute produced and the stats map gets
 * :output_shapes (a shape tuple per output), from which HexagonTpu.Graph builds Nx tensors of the
 * shape the backend wrote. Graphs without them pay one loop over their outputs per call.
 * Layer: below execute.c and submit.c, above resources (handles.h) and terms (terms.h).
 */
#ifndef HTPU_NIF_SHAPES_H
#define HTPU_NIF_SHAPES_H

#include <erl_nif.h>

#include "handles.h"

/* An output of g with a dynamic dimension, or -1. */
int nif_shapes_dynamic_output(const nif_graph *g);

/* The output_dims array an execute of g passes (g's outputs x HTPU_MAX_RANK, enif_alloc'ed;
 * enif_free it), or NULL when g has no dynamic output (*oom set when the allocation failed). */
uint32_t *nif_shapes_alloc(const nif_graph *g, int *oom);

/* A call of `rows` > 1 row groups (predict_batch, a batch multiple) on a graph with dynamic
 * outputs: 0 and *ret an {:error, {:invalid_argument, ...}} naming the output; 1 otherwise. */
int nif_shapes_rows_ok(ErlNifEnv *env, const nif_graph *g, unsigned rows, ERL_NIF_TERM *ret);

/* After a successful execute that passed dims (NULL: nothing to do): each output binary of
 * the requested types (outputs[i].dtype) cut to the elements produced, and *stats given
 * :output_shapes. 0, or -1 when a binary cannot be cut (out of memory). */
int nif_shapes_apply(ErlNifEnv *env, const nif_graph *g, const uint32_t *dims,
                     const htpu_io *outputs, ErlNifBinary *outs, ERL_NIF_TERM *stats);

#endif
