/*
 * memory.c - what a reference model's graph costs in memory, by the same measures HTP reports
 * (graph blob info V1/V2, context custom properties), from the model itself: the reference
 * system library and backend report these, so the core's memory figures are tested against
 * values a test can compute by hand (docs/reference-format.md, "Memory figures").
 */
#include <stdlib.h>
#include <string.h>

#include "refmodel.h"
#include "refmodel_priv.h"

/* Does graph g use tensor t (index) as an op input? */
static int graph_uses(const ref_graph *g, uint32_t t) {
  for (uint32_t o = 0; o < g->num_ops; o++)
    for (uint32_t i = 0; i < g->ops[o].num_inputs; i++)
      if (g->ops[o].inputs[i] == t) return 1;
  return 0;
}

/* The largest sum of intermediates alive at once: each from the op that makes it to the last
 * op that reads it, both included (the buffer a graph spills its activations to, as the
 * reference keeps every intermediate in ordinary memory). */
uint64_t ref_graph_spill_fill_bytes(const ref_model *m, uint32_t gi) {
  const ref_graph *g = &m->graphs[gi];
  uint64_t peak = 0;
  for (uint32_t at = 0; at < g->num_ops; at++) {
    uint64_t live = 0;
    for (uint32_t p = 0; p <= at; p++) {
      for (uint32_t k = 0; k < g->ops[p].num_outputs; k++) {
        uint32_t t = g->ops[p].outputs[k];
        if (m->tensors[t].kind != REF_TENSOR_NATIVE) continue;
        int read_later = p == at;
        for (uint32_t q = at; q < g->num_ops && !read_later; q++)
          for (uint32_t i = 0; i < g->ops[q].num_inputs; i++)
            if (g->ops[q].inputs[i] == t) read_later = 1;
        if (read_later) live += m->tensors[t].nbytes;
      }
    }
    if (live > peak) peak = live;
  }
  return peak;
}

void ref_graph_memory_of(const ref_model *m, uint32_t gi, ref_graph_memory *out) {
  memset(out, 0, sizeof *out);
  const ref_graph *g = &m->graphs[gi];
  for (uint32_t i = 0; i < g->num_inputs; i++) out->io_bytes += m->tensors[g->inputs[i]].nbytes;
  for (uint32_t i = 0; i < g->num_outputs; i++) out->io_bytes += m->tensors[g->outputs[i]].nbytes;
  out->op_data_bytes = (uint64_t)g->num_ops * REFF_OP_SIZE;
  for (uint32_t t = 0; t < m->num_tensors; t++) {
    const ref_tensor *x = &m->tensors[t];
    if (!graph_uses(g, t)) continue;
    if (x->kind == REF_TENSOR_NATIVE) out->ddr_bytes += x->nbytes;
    if (x->kind != REF_TENSOR_STATIC) continue;
    int shared = 0;
    for (uint32_t o = 0; o < m->num_graphs && !shared; o++)
      shared = o != gi && graph_uses(&m->graphs[o], t);
    *(shared ? &out->shared_weights_bytes : &out->const_bytes) += x->nbytes;
  }
  out->spill_fill_bytes = ref_graph_spill_fill_bytes(m, gi);
}

uint64_t ref_model_weights_bytes(const ref_model *m) {
  uint64_t n = 0;
  for (uint32_t t = 0; t < m->num_tensors; t++)
    if (m->tensors[t].kind == REF_TENSOR_STATIC) n += m->tensors[t].nbytes;
  return n;
}
