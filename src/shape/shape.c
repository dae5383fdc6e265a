/*
 * shape.c - per-call output dims: given to the backend, read back, checked (shape.h).
 */
#include "shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int shape_check_rows(const htpu_graph_info *gi, uint32_t rows) {
  if (rows <= 1) return 0;
  for (uint32_t i = 0; i < gi->num_outputs; i++)
    if (gi->outputs[i].dynamic_dims)
      return htpu_set_error(HTPU_EINVAL, 0,
                            "graph '%s' output '%s' has dynamic dimensions: a batch_multiple of "
                            "%u cannot be taken (where one row group's results end is known "
                            "only per execute); execute the row groups one by one",
                            gi->name, gi->outputs[i].name, rows);
  return 0;
}

int shape_begin(shape_call *sc, const htpu_graph_info *gi, qnn_tensor_t *outputs) {
  memset(sc, 0, offsetof(shape_call, inline_dims));
  uint32_t n = gi->num_outputs;
  if (n <= SHAPE_INLINE_OUTPUTS) {
    sc->dims = sc->inline_dims;
    sc->elems = sc->inline_elems;
  } else {
    sc->heap = calloc(n, sizeof *sc->dims + sizeof *sc->elems);
    if (!sc->heap) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    sc->dims = sc->heap;
    sc->elems = (size_t *)(void *)(sc->dims + n);
  }
  sc->n_out = n;
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *t = &gi->outputs[i];
    memcpy(sc->dims[i], t->dims, t->rank * sizeof t->dims[0]);
    sc->elems[i] = t->num_elements;
    /* V2 shares V1's fields at the same offsets */
    outputs[i].u.v1.dimensions = t->rank ? sc->dims[i] : NULL;
  }
  return 0;
}

static void dims_text(char *buf, size_t len, uint32_t rank, const uint32_t *dims) {
  size_t at = (size_t)snprintf(buf, len, "[");
  for (uint32_t d = 0; d < rank && at < len; d++)
    at += (size_t)snprintf(buf + at, len - at, "%s%u", d ? "," : "", dims[d]);
  if (at < len) snprintf(buf + at, len - at, "]");
}

int shape_read(shape_call *sc, const htpu_graph_info *gi) {
  for (uint32_t i = 0; i < sc->n_out; i++) {
    const htpu_tensor_info *t = &gi->outputs[i];
    size_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) {
      if (sc->dims[i][d] > t->dims[d]) {
        char got[128], max[128];
        dims_text(got, sizeof got, t->rank, sc->dims[i]);
        dims_text(max, sizeof max, t->rank, t->dims);
        return htpu_set_error(HTPU_EQNN, 0,
                              "graph '%s' output '%s': the backend wrote dims %s, beyond the "
                              "graph's %s (an output's dims may only shrink: QnnGraph.h)",
                              gi->name, t->name, got, max);
      }
      n *= sc->dims[i][d]; /* no overflow: at most the declared count */
    }
    sc->elems[i] = n;
  }
  sc->read = 1;
  return 0;
}

const htpu_tensor_info *shape_output_info(const shape_call *sc, uint32_t i,
                                          const htpu_tensor_info *declared,
                                          htpu_tensor_info *buf) {
  if (!sc->read || i >= sc->n_out || sc->elems[i] == declared->num_elements) return declared;
  *buf = *declared;
  memcpy(buf->dims, sc->dims[i], declared->rank * sizeof buf->dims[0]);
  buf->num_elements = sc->elems[i];
  buf->byte_size = sc->elems[i] * htpu_dtype_size(declared->dtype);
  return buf;
}

void shape_report(const shape_call *sc, const htpu_graph_info *gi, uint32_t rows, uint32_t *out) {
  if (!out) return;
  for (uint32_t i = 0; i < gi->num_outputs; i++) {
    const htpu_tensor_info *t = &gi->outputs[i];
    uint32_t *row = out + (size_t)i * HTPU_MAX_RANK;
    memset(row, 0, HTPU_MAX_RANK * sizeof *row);
    memcpy(row, sc->read ? sc->dims[i] : t->dims, t->rank * sizeof *row);
    if (rows > 1 && t->rank) row[0] *= rows;
  }
}

void shape_end(shape_call *sc) {
  free(sc->heap);
  sc->heap = NULL;
  sc->n_out = 0;
}
