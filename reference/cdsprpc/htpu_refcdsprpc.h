/*
 * htpu_refcdsprpc.h - libhtpu_refcdsprpc.so, a stand-in for libcdsprpc.so's shared-memory
 * allocator (rpcmem_*) with the semantics of upstream Linux fastrpc, backed by memfd so every
 * allocation has a real fd the reference backend can map.
 *
 * The rpcmem_* functions are the ABI clients dlsym; the htpu_refcdsprpc_* ones exist only
 * here (the backend's FastRPC-session hook and the tests' view). All are thread-safe.
 */
#ifndef HTPU_REFCDSPRPC_H
#define HTPU_REFCDSPRPC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HTPU_RPCMEM_HEAP_ID_SYSTEM 25
#define HTPU_RPCMEM_DEFAULT_FLAGS 1u

/* NULL until rpcmem is initialised (rpcmem_init, or the first FastRPC session: the reference
 * backend's deviceCreate/contextCreateFromBinary), for size <= 0, or when the environment has
 * HTPU_REF_RPCMEM_FAIL=1. heapid and flags are ignored, as upstream does. */
void *rpcmem_alloc(int heapid, uint32_t flags, int size);
void *rpcmem_alloc2(int heapid, uint32_t flags, size_t size);
/* Unmaps and closes the allocation starting at po; other pointers are ignored (stderr line). */
void rpcmem_free(void *po);
/* The fd of the allocation that STARTS at po; -1 for any other pointer (also one inside an
 * allocation), as upstream. */
int rpcmem_to_fd(void *po);
/* (Re)initialises the bookkeeping. Called a second time, it forgets the allocations made so
 * far, as upstream's list re-initialisation does: rpcmem_to_fd then returns -1 for them and
 * rpcmem_free ignores them ("orphaned"; released when the library is unloaded). */
void rpcmem_init(void);
/* Back to "not initialised": rpcmem_alloc returns NULL; existing allocations stay usable and
 * freeable. */
void rpcmem_deinit(void);

/* The FastRPC session opening (fastrpc_init_once): initialises rpcmem unless it already is. */
typedef void (*htpu_refcdsprpc_session_open_fn)(void);
void htpu_refcdsprpc_session_open(void);

typedef struct htpu_refcdsprpc_stats {
  uint32_t initialized;
  uint32_t live;            /* allocations tracked (freeable) */
  uint32_t orphaned;        /* allocations forgotten by a second rpcmem_init */
  uint64_t live_bytes;      /* of the tracked allocations */
  uint64_t total_allocs;    /* successful allocations */
  uint64_t failed_allocs;   /* NULL returns */
  uint64_t sessions;        /* htpu_refcdsprpc_session_open calls */
} htpu_refcdsprpc_stats;

typedef void (*htpu_refcdsprpc_get_stats_fn)(htpu_refcdsprpc_stats *out);
void htpu_refcdsprpc_get_stats(htpu_refcdsprpc_stats *out);

/* What the library's exit-time destructor does, now (tests): reports the live allocations on
 * stderr and leaves them mapped, as other threads of an exiting process may still use them. */
typedef void (*htpu_refcdsprpc_unload_fn)(void);
void htpu_refcdsprpc_unload(void);

#ifdef __cplusplus
}
#endif
#endif /* HTPU_REFCDSPRPC_H */
