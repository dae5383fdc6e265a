/*
 * rpcmem.c - FastRPC shared memory for the reference stack (htpu_refcdsprpc.h).
 *
 * Upstream Linux fastrpc allocates from /dev/dma_heap/system, maps the dma-buf and keeps a
 * list of {buffer, fd, size}; here each allocation is a memfd (memfd_create + ftruncate +
 * mmap MAP_SHARED) so it has a real fd that the reference backend's memRegister can map, and
 * writes through either mapping are seen by the other. The memfd's size is exactly the size
 * asked for, so "the total size of the allocation behind the fd" is that size.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "htpu_refcdsprpc.h"

#define RPC_EXPORT __attribute__((visibility("default")))

typedef struct rpc_buf {
  struct rpc_buf *next;
  void *base;
  int fd;
  size_t size;
} rpc_buf;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_init;
static rpc_buf *g_live;     /* tracked allocations */
static rpc_buf *g_orphans;  /* forgotten by a re-initialisation */
static uint64_t g_total, g_failed, g_sessions;

static bool fail_forced(void) {
  const char *e = getenv("HTPU_REF_RPCMEM_FAIL");
  return e && strcmp(e, "1") == 0;
}

static void *alloc_raw(size_t size) {
  if (size == 0 || size > (size_t)1 << 40 || fail_forced()) return NULL;
  pthread_mutex_lock(&g_lock);
  bool init = g_init;
  pthread_mutex_unlock(&g_lock);
  if (!init) return NULL; /* upstream: no allocation before rpcmem is initialised */
  rpc_buf *b = calloc(1, sizeof(*b));
  if (!b) return NULL;
  b->fd = memfd_create("htpu_rpcmem", MFD_CLOEXEC);
  if (b->fd < 0 || ftruncate(b->fd, (off_t)size) != 0) {
    if (b->fd >= 0) close(b->fd);
    free(b);
    return NULL;
  }
  b->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
  if (b->base == MAP_FAILED) {
    close(b->fd);
    free(b);
    return NULL;
  }
  b->size = size;
  pthread_mutex_lock(&g_lock);
  b->next = g_live;
  g_live = b;
  g_total++;
  pthread_mutex_unlock(&g_lock);
  return b->base;
}

static void *alloc_counted(size_t size) {
  void *p = alloc_raw(size);
  if (!p) {
    pthread_mutex_lock(&g_lock);
    g_failed++;
    pthread_mutex_unlock(&g_lock);
  }
  return p;
}

RPC_EXPORT void *rpcmem_alloc(int heapid, uint32_t flags, int size) {
  (void)heapid;
  (void)flags;
  return size > 0 ? alloc_counted((size_t)size) : alloc_counted(0);
}

RPC_EXPORT void *rpcmem_alloc2(int heapid, uint32_t flags, size_t size) {
  (void)heapid;
  (void)flags;
  return alloc_counted(size);
}

static void release(rpc_buf *b) {
  munmap(b->base, b->size);
  close(b->fd);
  free(b);
}

RPC_EXPORT void rpcmem_free(void *po) {
  if (!po) return;
  rpc_buf *found = NULL;
  pthread_mutex_lock(&g_lock);
  for (rpc_buf **pp = &g_live; *pp; pp = &(*pp)->next)
    if ((*pp)->base == po) {
      found = *pp;
      *pp = found->next;
      break;
    }
  pthread_mutex_unlock(&g_lock);
  if (found)
    release(found);
  else
    fprintf(stderr, "htpu_refcdsprpc: rpcmem_free(%p): not an allocation rpcmem knows "
            "(ignored)\n", po);
}

RPC_EXPORT int rpcmem_to_fd(void *po) {
  int fd = -1;
  pthread_mutex_lock(&g_lock);
  for (rpc_buf *b = g_live; b; b = b->next)
    if (b->base == po) {
      fd = b->fd;
      break;
    }
  pthread_mutex_unlock(&g_lock);
  return fd;
}

RPC_EXPORT void rpcmem_init(void) {
  pthread_mutex_lock(&g_lock);
  /* A second init re-creates the list: what it held is forgotten (still mapped). */
  while (g_live) {
    rpc_buf *b = g_live;
    g_live = b->next;
    b->next = g_orphans;
    g_orphans = b;
  }
  g_init = true;
  pthread_mutex_unlock(&g_lock);
}

RPC_EXPORT void rpcmem_deinit(void) {
  pthread_mutex_lock(&g_lock);
  g_init = false;
  pthread_mutex_unlock(&g_lock);
}

RPC_EXPORT void htpu_refcdsprpc_session_open(void) {
  pthread_mutex_lock(&g_lock);
  g_init = true;
  g_sessions++;
  pthread_mutex_unlock(&g_lock);
}

RPC_EXPORT void htpu_refcdsprpc_get_stats(htpu_refcdsprpc_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&g_lock);
  out->initialized = g_init;
  for (rpc_buf *b = g_live; b; b = b->next) {
    out->live++;
    out->live_bytes += b->size;
  }
  for (rpc_buf *b = g_orphans; b; b = b->next) out->orphaned++;
  out->total_allocs = g_total;
  out->failed_allocs = g_failed;
  out->sessions = g_sessions;
  pthread_mutex_unlock(&g_lock);
}

/* What the exit-time destructor does (exported for tests): reports the allocations nobody
 * freed (each an rpcmem_alloc without rpcmem_free) and leaves them mapped. A process that
 * exits (the BEAM at halt) runs destructors while its other threads go on: one may still be
 * writing an input into such a buffer, or a graphExecute reading it, and unmapping it under
 * them would crash the process in its last moment. Orphans are released, uncounted: a second
 * rpcmem_init forgot them, as FastRPC does, and their owners can no longer free them (a test
 * makes one on purpose; a client must not call rpcmem_init twice). */
RPC_EXPORT void htpu_refcdsprpc_unload(void) {
  unsigned live = 0;
  pthread_mutex_lock(&g_lock);
  for (rpc_buf *b = g_live; b; b = b->next) live++;
  while (g_orphans) {
    rpc_buf *b = g_orphans;
    g_orphans = b->next;
    release(b);
  }
  pthread_mutex_unlock(&g_lock);
  if (live) fprintf(stderr, "htpu_refcdsprpc: %u allocation(s) still alive at unload\n", live);
}

__attribute__((destructor)) static void rpcmem_unload(void) { htpu_refcdsprpc_unload(); }
