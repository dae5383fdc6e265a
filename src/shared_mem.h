/*
 * shared_mem.h - FastRPC shared buffers and their registration with contexts.
 *
 * The runtime loads the FastRPC library (rpcmem_*) after its device exists (before that,
 * rpcmem_alloc returns NULL on upstream Linux fastrpc) and keeps the live shared regions.
 * Each context caches the QNN memory handles it registered (HTP shared-buffer descriptor:
 * fd, offset, *total* size of the allocation), keyed by data pointer and tensor layout, and
 * deregisters them before it is freed, as QNN requires.
 */
#ifndef HTPU_SHARED_MEM_H
#define HTPU_SHARED_MEM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "loader.h"

#define SHARED_NOTE_MAX 512 /* bytes of a note, its NUL included */

typedef struct shared_region {
  void *base;
  size_t size;
  int fd;
} shared_region;

typedef struct shared_registry {
  pthread_mutex_t lock;
  void *dl;
  void *(*rpc_alloc)(int heap_id, uint32_t flags, int size);
  void (*rpc_free)(void *p);
  int (*rpc_to_fd)(void *p);
  int available;  /* FastRPC memory can be allocated and registered */
  /* Why not, when !available; or the first fallback or failed registration since. Written at
   * most once after init (under lock, while note_set is 0), then published by note_set, so
   * readers without the lock use shared_registry_note. */
  char note[SHARED_NOTE_MAX];
  _Atomic int note_set;
  shared_region *regions;
  size_t num_regions, cap_regions;
} shared_registry;

/* Loads the FastRPC library and decides whether registration can work with this backend.
 * Never fails: when something is missing, available = 0 and note says what. */
void shared_registry_init(shared_registry *r, const qnn_backend_lib *b, int has_device,
                          const char *fastrpc_lib);
void shared_registry_destroy(shared_registry *r);

/* The registry's note, "" while none is published. Lock-free; stable once non-empty. */
const char *shared_registry_note(shared_registry *r);

/* The live region that holds [p, p + len), if any (1 = found). */
int shared_registry_find(shared_registry *r, const void *p, size_t len, shared_region *out);

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

/* FastRPC memory for the core's own use (and the public shared buffers): `size` bytes
 * recorded in r, so mem_cache_bind registers tensors inside it. NULL when r has no FastRPC
 * memory or the allocation fails: `why` then says why (and r's note, if it has none yet);
 * the caller uses ordinary memory. */
void *shared_region_alloc(shared_registry *r, size_t size, int *fd, char *why, size_t whylen);

/* Frees memory from shared_region_alloc, first deregistering it from every context of rt.
 * Takes the execute gate exclusively (no execute may be using a handle meanwhile): the caller
 * holds no gate. */
struct runtime_obj;
void shared_region_free(struct runtime_obj *rt, void *p, int fd);

/* Deregisters the entries of one fd (fd < 0: all). Called with the gate held exclusively or
 * from the context's teardown. */
void mem_cache_release(mem_cache *c, const qnn_backend_lib *b, int fd);

#endif
