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

/* A hash of 8-byte words in 4 lanes (a word's lane is its index mod 4), each step
 * l = rotl(l ^ w, 27) * P: for a fixed l it is a bijection of w and for a fixed w one of l,
 * so a change inside one word always changes its lane, and the rotation carries a change of
 * a top bit (a float's sign) down where the multiply spreads it, so two such changes do not
 * cancel as they do in a plain FNV or sum chain. The lanes are folded through a 64-bit
 * finalizer (MurmurHash3's fmix64, a bijection), then the tail bytes (FNV-1a, a bijection
 * per byte) and the length. It runs at every execute of a persistent context: one multiply
 * per word over four independent lanes. It tells a changed buffer from the one hashed at
 * creation; it is no defence against a crafted one. */
static uint64_t word_at(const unsigned char *p) {
  uint64_t w;
  memcpy(&w, p, sizeof w);
  return w;
}

static uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  return k ^ (k >> 33);
}

#define LANE_P 0x9e3779b185ebca87ull
static uint64_t lane_step(uint64_t l, uint64_t w) {
  l ^= w;
  return ((l << 27) | (l >> 37)) * LANE_P;
}

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n) {
  uint64_t l0 = h, l1 = h ^ 1, l2 = h ^ 2, l3 = h ^ 3;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    l0 = lane_step(l0, word_at(p + i));
    l1 = lane_step(l1, word_at(p + i + 8));
    l2 = lane_step(l2, word_at(p + i + 16));
    l3 = lane_step(l3, word_at(p + i + 24));
  }
  const uint64_t lanes[4] = {l0, l1, l2, l3};
  for (int k = 0; k < 4; k++) h = fmix64(h ^ fmix64(lanes[k]));
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return fmix64(h ^ n);
}

#define HASH_SEED 0xcbf29ce484222325ull

/* Whether graph g's ops read static tensor t. */
static bool graph_reads(const ref_model *m, uint32_t g, uint32_t t) {
  const ref_graph *rg = &m->graphs[g];
  for (uint32_t o = 0; o < rg->num_ops; o++)
    for (uint32_t i = 0; i < rg->ops[o].num_inputs; i++)
      if (rg->ops[o].inputs[i] == t) return true;
  return false;
}

/* c->statics: per graph, the static tensors its ops read (in tensor order), found once
 * here so that an execute's check hashes their bytes and nothing else. One allocation with
 * c->graph_hash (freed with it): the hashes, then graph g's list at statics_at[g] of
 * statics_at[g + 1]. */
static int index_statics(rb_context *c) {
  const ref_model *m = c->model;
  uint32_t ng = m->num_graphs, total = 0;
  for (uint32_t g = 0; g < ng; g++)
    for (uint32_t t = 0; t < m->num_tensors; t++)
      total += m->tensors[t].kind == REF_TENSOR_STATIC && graph_reads(m, g, t);
  size_t bytes = ng * sizeof(uint64_t) + (ng + 1 + (size_t)total) * sizeof(uint32_t);
  c->graph_hash = calloc(1, bytes);
  if (!c->graph_hash) return -1;
  c->statics_at = (uint32_t *)(c->graph_hash + ng);
  c->statics = c->statics_at + ng + 1;
  uint32_t k = 0;
  for (uint32_t g = 0; g < ng; g++) {
    c->statics_at[g] = k;
    for (uint32_t t = 0; t < m->num_tensors; t++)
      if (m->tensors[t].kind == REF_TENSOR_STATIC && graph_reads(m, g, t)) c->statics[k++] = t;
  }
  c->statics_at[ng] = k;
  return 0;
}

/* The static data graph g's ops read, each tensor once (in tensor order). */
static uint64_t graph_statics_hash(const rb_context *c, uint32_t g) {
  uint64_t h = HASH_SEED;
  for (uint32_t k = c->statics_at[g]; k < c->statics_at[g + 1]; k++) {
    const ref_tensor *x = &c->model->tensors[c->statics[k]];
    h = hash_bytes(h, x->data, x->nbytes);
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
  if (index_statics(c) != 0) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (uint32_t g = 0; g < c->model->num_graphs; g++) c->graph_hash[g] = graph_statics_hash(c, g);
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
                           : graph_statics_hash(c, (uint32_t)graph);
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
