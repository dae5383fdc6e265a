/*
 * spill_fill.c - a reference graph's spill-fill buffer: the memory its activations need at
 * once, as HTP reports it in the graph blob info (spillFillBufferSize). The reference system
 * library reports it and the reference backend accounts it per context (or per group of
 * contexts sharing one buffer), so a test can work the figure out by hand from the model.
 */
#include "refmodel.h"

/* Whether op `from` or a later one of g reads tensor t. */
static int read_from(const ref_graph *g, uint32_t from, uint32_t t) {
  for (uint32_t q = from; q < g->num_ops; q++)
    for (uint32_t i = 0; i < g->ops[q].num_inputs; i++)
      if (g->ops[q].inputs[i] == t) return 1;
  return 0;
}

uint64_t ref_graph_spill_fill_bytes(const ref_model *m, uint32_t gi) {
  const ref_graph *g = &m->graphs[gi];
  uint64_t peak = 0;
  /* At op `at`: every intermediate made by it or before, still read by it or after. */
  for (uint32_t at = 0; at < g->num_ops; at++) {
    uint64_t live = 0;
    for (uint32_t p = 0; p <= at; p++) {
      for (uint32_t k = 0; k < g->ops[p].num_outputs; k++) {
        uint32_t t = g->ops[p].outputs[k];
        if (m->tensors[t].kind != REF_TENSOR_NATIVE) continue;
        if (p == at || read_from(g, at, t)) live += m->tensors[t].nbytes;
      }
    }
    if (live > peak) peak = live;
  }
  return peak;
}
