/*
 * persist.c - a persistent binary (QNN_CONTEXT_CONFIG_PERSISTENT_BINARY: "the context binary
 * pointer is available during createFromBinary and until QnnContext_free").
 *
 * Where the config says so, the context's model is parsed in place: its names, weights and
 * quantization parameters are read from the caller's buffer at every execute, as a backend
 * that skips its own copy does. The backend then checks the promise at every use: the
 * buffer's pages must still be mapped (msync, which answers ENOMEM for an unmapped range
 * instead of faulting) and its bytes unchanged (a hash taken at creation: of all of it at
 * graphRetrieve and contextFree, of the static data a graph reads at each of its executes).
 * A broken promise is an API violation and the call fails (1100) without reading the
 * buffer; on the board the same client would read freed or rewritten weights, or fault.
 * This file only tells (rb_persist_broken); the caller reports the violation
 * (rb_persist_check in rb_internal.h), so the check needs nothing of the registry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rb_internal.h"

/* FNV-1a over 8-byte words in 4 independent lanes (a word's lane is its index mod 4), folded
 * together with the tail: any changed byte changes its lane. Four lanes, not one chain, as this
 * runs at every execute of a persistent context: one chain's multiply latency cost a graph of
 * 7 KB of weights ~1 us a call, four lanes run side by side. */
static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n) {
  uint64_t l[4] = {h, h ^ 1, h ^ 2, h ^ 3};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; k++) {
      uint64_t w;
      memcpy(&w, p + i + 8 * k, sizeof w);
      l[k] = (l[k] ^ w) * 0x100000001b3ull;
    }
  for (int k = 0; k < 4; k++) h = (h ^ l[k]) * 0x100000001b3ull;
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

/* The static data graph g's ops read, each tensor once (in tensor order). */
static uint64_t graph_statics_hash(const ref_model *m, uint32_t g) {
  const ref_graph *rg = &m->graphs[g];
  uint64_t h = HASH_SEED;
  for (uint32_t t = 0; t < m->num_tensors; t++) {
    const ref_tensor *x = &m->tensors[t];
    if (x->kind != REF_TENSOR_STATIC) continue;
    int used = 0;
    for (uint32_t o = 0; o < rg->num_ops && !used; o++)
      for (uint32_t i = 0; i < rg->ops[o].num_inputs; i++)
        if (rg->ops[o].inputs[i] == t) used = 1;
    if (used) h = hash_bytes(h, x->data, x->nbytes);
  }
  return h;
}

int rb_persist_parse(rb_context *c, bool persistent, const void *buf, size_t len, char *err,
                     size_t errlen) {
  /* A buffer that cannot be read in place (not 8-byte aligned) is copied: the promise still
   * holds, the backend just does not need it. */
  c->persistent = persistent && (uintptr_t)buf % 8u == 0;
  int rc = c->persistent ? ref_model_parse_in_place(buf, len, &c->model, err, errlen)
                         : ref_model_parse(buf, len, &c->model, err, errlen);
  if (rc != 0) return rc;
  if (!c->persistent) {
    c->copied_bytes = len;
    return 0;
  }
  c->bin = buf;
  c->bin_len = len;
  c->bin_hash = hash_bytes(HASH_SEED, buf, len);
  c->graph_hash = calloc(c->model->num_graphs ? c->model->num_graphs : 1, sizeof(uint64_t));
  if (!c->graph_hash) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (uint32_t g = 0; g < c->model->num_graphs; g++)
    c->graph_hash[g] = graph_statics_hash(c->model, g);
  return 0;
}

/* Whether every page of [p, p + n) is mapped. */
static bool still_mapped(const void *p, size_t n) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = (uintptr_t)p & ~(page - 1), end = (uintptr_t)p + n;
  return msync((void *)start, end - start, MS_ASYNC) == 0 || errno != ENOMEM;
}

int rb_persist_broken(const rb_context *c, int graph, const char *api, char *msg, size_t len) {
  if (!c->persistent) return 0;
  if (!still_mapped(c->bin, c->bin_len)) {
    snprintf(msg, len, "%s: the persistent binary of context 0x%lx (%zu bytes at %p) is no "
             "longer mapped: PERSISTENT_BINARY promises it until contextFree", api,
             (unsigned long)c->handle, c->bin_len, (const void *)c->bin);
    return 1;
  }
  uint64_t now = graph < 0 ? hash_bytes(HASH_SEED, c->bin, c->bin_len)
                           : graph_statics_hash(c->model, (uint32_t)graph);
  uint64_t then = graph < 0 ? c->bin_hash : c->graph_hash[graph];
  if (now == then) return 0;
  /* no name from the model here: names live in the buffer that changed */
  char what[48] = "";
  if (graph >= 0) snprintf(what, sizeof what, " (the weights of graph %d)", graph);
  snprintf(msg, len, "%s: the persistent binary of context 0x%lx changed after "
           "createFromBinary%s: PERSISTENT_BINARY promises it unchanged until contextFree",
           api, (unsigned long)c->handle, what);
  return 1;
}
