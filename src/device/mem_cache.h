/*
 * mem_cache.h - the QNN memory handles one context registered for tensors in FastRPC memory.
 *
 * A registration is an HTP shared-buffer descriptor (fd, offset, *total* size of the
 * allocation), keyed by data pointer and tensor layout; the context deregisters them before it
 * is freed, as QNN requires.
 */
#ifndef HTPU_MEM_CACHE_H
#define HTPU_MEM_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "loader/loader.h"
#include "shared_regions.h"

typedef struct mem_entry {
  const void *ptr;
  uint32_t data_type, rank, dims[HTPU_MAX_RANK];
  int fd;
  qnn_mem_handle_t handle;
} mem_entry;

typedef struct mem_cache {
  pthread_mutex_t lock;
  mem_entry *entries;
  size_t num, cap;
} mem_cache;

void mem_cache_init(mem_cache *c);
void mem_cache_destroy(mem_cache *c);

/* The registered handle for this tensor at ptr, registering it on first use. NULL when ptr is
 * not in a shared region or registration failed (the caller then passes the buffer as a plain
 * client buffer). Called with the execute gate held shared. */
qnn_mem_handle_t mem_cache_bind(mem_cache *c, shared_registry *r, const qnn_backend_lib *b,
                                qnn_context_handle_t ctx, const htpu_tensor_info *t,
                                const void *ptr);

/* mem_cache_bind for a caller that must not block: the same answer (0, *out = the handle, or
 * NULL for memory outside any shared region or whose registration failed before) when it is
 * already known, without registering; -1 when the tensor would have to be registered (a DSP
 * round trip) or another call holds the cache (it may be registering). The registry's own
 * lock is taken (held only for list updates and lookups). Called with the gate held shared. */
int mem_cache_lookup(mem_cache *c, shared_registry *r, const htpu_tensor_info *t,
                     const void *ptr, qnn_mem_handle_t *out);

/* Deregisters the entries of one fd (fd < 0: all). Called with the gate held exclusively or
 * from the context's teardown. */
void mem_cache_release(mem_cache *c, const qnn_backend_lib *b, int fd);

#endif
