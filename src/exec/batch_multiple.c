/* batch_multiple.c - k row groups in one execute, or k executes where the graph refuses
 * (batch_multiple.h). */
#include "batch_multiple.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int batch_runtime_announces(const runtime_obj *rt) {
  const qnn_backend_lib *b = &rt->backend_lib;
  return b->property_has_capability &&
         b->property_has_capability(QNN_PROPERTY_GRAPH_SUPPORT_BATCH_MULTIPLE) == QNN_SUCCESS;
}

static int check_tensor(const htpu_graph_info *gi, const htpu_tensor_info *t, uint32_t k) {
  if (t->rank == 0)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "graph '%s': batch_multiple %u needs a batch dimension (dims[0]) on "
                          "every tensor, and '%s' is a scalar",
                          gi->name, k, t->name);
  if (t->byte_size > UINT32_MAX / k)
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "graph '%s': batch_multiple %u makes '%s' %u x %zu bytes, beyond "
                          "QNN's 32-bit buffer size",
                          gi->name, k, t->name, k, t->byte_size);
  return 0;
}

int batch_check_call(const htpu_graph_info *gi, uint32_t k, int no_wait) {
  if (no_wait)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "graph '%s': batch_multiple %u cannot be combined with no_wait (a "
                          "batch allocates its conversion block and may run %u executes); make "
                          "the call without no_wait",
                          gi->name, k, k);
  for (uint32_t i = 0; i < gi->num_inputs; i++) {
    int rc = check_tensor(gi, &gi->inputs[i], k);
    if (rc) return rc;
  }
  for (uint32_t i = 0; i < gi->num_outputs; i++) {
    int rc = check_tensor(gi, &gi->outputs[i], k);
    if (rc) return rc;
  }
  return 0;
}

int batch_try_one_execute(const runtime_obj *rt, graph_state *s, uint32_t k) {
  return k > 1 && rt->batch_multiple && atomic_load(&s->batch_state) != BATCH_REFUSED;
}

/* QnnGraph.h gives 1000 for an unsupported "batch multiplier"; what an HTP graph whose ops
 * cannot take one answers is not observed, and 6004 ("tensor invalid") is the other candidate
 * (docs/abi.md). Our own dims and sizes are right by construction (plan_io checked them), so
 * either means the graph's refusal. */
int batch_is_refusal(uint32_t qnn_code) {
  return qnn_code == QNN_COMMON_ERROR_NOT_SUPPORTED || qnn_code == QNN_GRAPH_ERROR_INVALID_TENSOR;
}

void batch_remember(graph_state *s, int accepted) {
  if (accepted) {
    STAT_ADD(batch_multiple_executes, 1);
    int untried = BATCH_UNTRIED;
    atomic_compare_exchange_strong(&s->batch_state, &untried, BATCH_ACCEPTED);
  } else {
    STAT_ADD(batch_multiple_refusals, 1);
    atomic_store(&s->batch_state, BATCH_REFUSED);
  }
}

uint32_t **batch_dims_make(const qnn_tensor_t *tensors, uint32_t n, uint32_t k) {
  size_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += tensors[i].u.v1.rank;
  /* the 2n pointers first, then the dims (uint32_t after pointers stays aligned) */
  uint32_t **ptrs =
      calloc(1, 2 * (size_t)n * sizeof *ptrs + (total ? total : 1) * sizeof(uint32_t));
  if (!ptrs) return NULL;
  uint32_t *d = (uint32_t *)(ptrs + 2 * (size_t)n);
  for (uint32_t i = 0; i < n; i++) {
    const qnn_tensor_v1_t *t = &tensors[i].u.v1;
    ptrs[n + i] = t->dimensions; /* the template's, for the chunked executes */
    ptrs[i] = d;
    memcpy(d, t->dimensions, t->rank * sizeof *d);
    if (t->rank) d[0] *= k; /* sizes checked against UINT32_MAX by batch_check_call */
    d += t->rank;
  }
  return ptrs;
}

#define BLOCK_ALIGN 64u

unsigned char *batch_block_alloc(size_t size) {
  size_t n = (size + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
  unsigned char *p = aligned_alloc(BLOCK_ALIGN, n ? n : BLOCK_ALIGN);
  /* zeroed as the graph's own blocks are: outputs a backend did not write read as zeros */
  if (p) memset(p, 0, n ? n : BLOCK_ALIGN);
  return p;
}

int batch_quantize_rows(const htpu_tensor_info *t, const float *src, void *dst, uint32_t k,
                        uint32_t *bad_row) {
  for (uint32_t r = 0; r < k; r++) {
    int rc = htpu_quantize(t, src + (size_t)r * t->num_elements,
                           (unsigned char *)dst + (size_t)r * t->byte_size);
    if (rc) {
      if (k > 1) htpu_append_error(" (row group %u of the batch of %u)", r, k);
      *bad_row = r;
      return rc;
    }
  }
  return 0;
}

int batch_dequantize_rows(const htpu_tensor_info *t, const void *src, float *dst, uint32_t k,
                          uint32_t *bad_row) {
  for (uint32_t r = 0; r < k; r++) {
    int rc = htpu_dequantize(t, (const unsigned char *)src + (size_t)r * t->byte_size,
                             dst + (size_t)r * t->num_elements);
    if (rc) {
      if (k > 1) htpu_append_error(" (row group %u of the batch of %u)", r, k);
      *bad_row = r;
      return rc;
    }
  }
  return 0;
}

int htpu_graph_get_batch_multiple(htpu_graph *h, htpu_batch_multiple_state *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_graph_get_batch_multiple: out is NULL");
  *out = HTPU_BATCH_MULTIPLE_UNTRIED;
  /* Pinned, as htpu_graph_get_timing: read from threads that must not block. */
  graph_obj *g = (graph_obj *)obj_acquire_pinned(h, OBJ_GRAPH);
  if (!g) return htpu_set_error(HTPU_ECLOSED, 0, "reading the batch multiple: the graph is closed");
  int st = atomic_load(&g->state->batch_state);
  if (!g->ctx->rt->batch_multiple || st == BATCH_REFUSED)
    *out = HTPU_BATCH_MULTIPLE_CHUNKED;
  else if (st == BATCH_ACCEPTED)
    *out = HTPU_BATCH_MULTIPLE_ONE_EXECUTE;
  obj_release_pinned(&g->base);
  return 0;
}
