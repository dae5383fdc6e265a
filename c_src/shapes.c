/*
 * shapes.c - dynamic output dimensions in the answers of executes (shapes.h).
 */
#include "shapes.h"

#include <string.h>

#include "atoms.h"
#include "terms.h"

int nif_shapes_dynamic_output(const nif_graph *g) {
  for (uint32_t i = 0; i < g->num_outputs; i++)
    if (g->tensors[g->num_inputs + i].info.dynamic_dims) return (int)i;
  return -1;
}

uint32_t *nif_shapes_alloc(const nif_graph *g, int *oom) {
  *oom = 0;
  if (nif_shapes_dynamic_output(g) < 0) return NULL;
  size_t n = (size_t)g->num_outputs * HTPU_MAX_RANK * sizeof(uint32_t);
  uint32_t *dims = enif_alloc(n);
  if (!dims) *oom = 1;
  else memset(dims, 0, n);
  return dims;
}

int nif_shapes_rows_ok(ErlNifEnv *env, const nif_graph *g, unsigned rows, ERL_NIF_TERM *ret) {
  int i = rows > 1 ? nif_shapes_dynamic_output(g) : -1;
  if (i < 0) return 1;
  *ret = nif_make_error_msg(env, HTPU_EINVAL,
                            "output '%s' has dynamic dimensions: its rows of one execute "
                            "cannot be told from the next's, so the graph takes no batch of %u; "
                            "predict one input at a time",
                            g->tensors[g->num_inputs + (unsigned)i].info.name, rows);
  return 0;
}

int nif_shapes_apply(ErlNifEnv *env, const nif_graph *g, const uint32_t *dims,
                     const htpu_io *outputs, ErlNifBinary *outs, ERL_NIF_TERM *stats) {
  if (!dims) return 0;
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (uint32_t i = g->num_outputs; i-- > 0;) {
    const htpu_tensor_info *t = &g->tensors[g->num_inputs + i].info;
    const uint32_t *d = dims + (size_t)i * HTPU_MAX_RANK;
    ERL_NIF_TERM shape[HTPU_MAX_RANK];
    size_t n = 1;
    for (uint32_t k = 0; k < t->rank && k < HTPU_MAX_RANK; k++) {
      shape[k] = enif_make_uint(env, d[k]);
      n *= d[k];
    }
    size_t bytes = n * htpu_dtype_size(outputs[i].dtype);
    /* produced elements fill the binary from its start: the rest is not an answer */
    if (bytes < outs[i].size && !enif_realloc_binary(&outs[i], bytes)) return -1;
    list = enif_make_list_cell(env, enif_make_tuple_from_array(env, shape, t->rank), list);
  }
  ERL_NIF_TERM out;
  if (!enif_make_map_put(env, *stats, ATOMS.output_shapes, list, &out)) return -1;
  *stats = out;
  return 0;
}
