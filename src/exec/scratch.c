/* scratch.c - the per-graph pool of conversion buffers (scratch.h). */
#include "scratch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* FastRPC blocks per graph: one per call in flight on the graph (converting, executing, queued
 * behind the graph's lock with its converted block, or dequantizing). A call in an ordinary
 * block has FastRPC copy its tensors inside graphExecute, under the graph's lock, so with N
 * callers every queued call would add that copy to the serial part; hence one each, up to
 * SCRATCH_SHARED_MAX blocks and SCRATCH_SHARED_BYTES of them (the first two always, whatever
 * their size). Beyond that, calls use ordinary blocks. Idle FastRPC blocks stay with the graph
 * until it is closed. */
#define SCRATCH_SHARED_MAX 8
#define SCRATCH_SHARED_MIN 2
#define SCRATCH_SHARED_BYTES ((size_t)64 << 20)
/* Idle ordinary blocks kept for reuse; beyond that a block given back is freed. */
#define SCRATCH_KEEP 2
#define SCRATCH_ALIGN 64u

void scratch_pool_init(scratch_pool *p, scratch_free_region_fn free_region) {
  pthread_mutex_init(&p->lock, NULL);
  p->free_region = free_region;
  p->idle_shared = p->idle_plain = NULL;
  p->num_idle_plain = p->num_shared = 0;
}

static void block_free(scratch_pool *p, scratch_block *b, struct runtime_obj *rt) {
  if (b->fd >= 0)
    p->free_region(rt, b->data, b->fd);
  else
    free(b->data);
  free(b);
}

void scratch_pool_destroy(scratch_pool *p, struct runtime_obj *rt) {
  scratch_block *lists[2] = {p->idle_shared, p->idle_plain};
  for (int k = 0; k < 2; k++) {
    for (scratch_block *b = lists[k], *next; b; b = next) {
      next = b->next;
      block_free(p, b, rt);
    }
  }
  p->idle_shared = p->idle_plain = NULL;
  pthread_mutex_destroy(&p->lock);
}

static size_t align_up(size_t n) { return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN; }

size_t scratch_slot_size(const htpu_tensor_info *t) {
  return t->dtype == HTPU_F32 ? 0 : align_up(t->byte_size ? t->byte_size : 1);
}

scratch_block *scratch_take(scratch_pool *p, struct runtime_obj *rt, size_t size) {
  pthread_mutex_lock(&p->lock);
  scratch_block *b = p->idle_shared ? p->idle_shared : p->idle_plain;
  if (b == p->idle_shared && b) {
    p->idle_shared = b->next;
  } else if (b) {
    p->idle_plain = b->next;
    p->num_idle_plain--;
  }
  int room = p->num_shared < SCRATCH_SHARED_MIN ||
             (p->num_shared < SCRATCH_SHARED_MAX &&
              align_up(size) <= SCRATCH_SHARED_BYTES / (p->num_shared + 1));
  int want_shared = !b && room && rt->shared.available;
  if (want_shared) p->num_shared++; /* reserved here, allocated below outside the lock */
  pthread_mutex_unlock(&p->lock);
  if (b) return b;
  b = calloc(1, sizeof *b);
  if (b) {
    b->fd = -1;
    if (want_shared) {
      char why[SHARED_NOTE_MAX]; /* the registry's note keeps the first reason */
      b->data = shared_region_alloc(&rt->shared, align_up(size), &b->fd, why, sizeof why);
    }
    if (!b->data) {
      /* zeroed, as FastRPC memory is: outputs a backend did not write dequantize to defined
       * values, never to whatever the heap held */
      b->data = aligned_alloc(SCRATCH_ALIGN, align_up(size));
      if (b->data) memset(b->data, 0, align_up(size));
    }
    if (!b->data) {
      free(b);
      b = NULL;
    }
  }
  if (want_shared && (!b || b->fd < 0)) { /* not FastRPC memory after all */
    pthread_mutex_lock(&p->lock);
    p->num_shared--;
    pthread_mutex_unlock(&p->lock);
  }
  return b;
}

scratch_block *scratch_take_idle(scratch_pool *p) {
  pthread_mutex_lock(&p->lock);
  scratch_block *b = p->idle_shared ? p->idle_shared : p->idle_plain;
  if (b && b == p->idle_shared) {
    p->idle_shared = b->next;
  } else if (b) {
    p->idle_plain = b->next;
    p->num_idle_plain--;
  }
  pthread_mutex_unlock(&p->lock);
  return b;
}

void scratch_give(scratch_pool *p, scratch_block *b) {
  pthread_mutex_lock(&p->lock);
  int keep = b->fd >= 0 || p->num_idle_plain < SCRATCH_KEEP;
  if (b->fd >= 0) {
    b->next = p->idle_shared;
    p->idle_shared = b;
  } else if (keep) {
    b->next = p->idle_plain;
    p->idle_plain = b;
    p->num_idle_plain++;
  }
  pthread_mutex_unlock(&p->lock);
  if (!keep) {
    free(b->data);
    free(b);
  }
}
