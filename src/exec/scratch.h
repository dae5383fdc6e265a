/*
 * scratch.h - per-graph pool of conversion buffers for execute: f32 inputs are quantized into
 * a block and outputs dequantized out of it.
 *
 * A block holds every non-f32 tensor of the graph, inputs then outputs, each in a slot of
 * scratch_slot_size bytes: a tensor always lands at the same address of a block, so its
 * memRegister handle is reused.
 * A graph's blocks are FastRPC shared memory when the runtime has it, one per call in flight
 * up to a bound (scratch.c: 8 blocks, 64 MiB): the conversion then writes straight into
 * memory the DSP reads, and the execute passes the tensor by handle, so FastRPC copies
 * nothing (no pass over the data besides the conversion itself). Each call takes its own
 * block, so the conversion of one call still overlaps the execute of another on the same graph
 * (it runs before the graph's lock).
 */
#ifndef HTPU_SCRATCH_H
#define HTPU_SCRATCH_H

#include <pthread.h>
#include <stddef.h>

#include "hexagon_tpu.h"

struct runtime_obj;

typedef struct scratch_block {
  struct scratch_block *next;
  unsigned char *data;
  int fd; /* >= 0: FastRPC memory (shared_region_alloc, the pool's free_region) */
} scratch_block;

/* Frees a FastRPC block after deregistering it from every context of the runtime (the
 * runtime's runtime_free_region, handed over at init: the pool is below the runtime). */
typedef void (*scratch_free_region_fn)(struct runtime_obj *rt, void *p, int fd);

typedef struct scratch_pool {
  pthread_mutex_t lock;
  scratch_free_region_fn free_region;
  scratch_block *idle_shared, *idle_plain; /* idle FastRPC blocks are taken first */
  size_t num_idle_plain;
  size_t num_shared; /* FastRPC blocks in existence, idle or in use */
} scratch_pool;

void scratch_pool_init(scratch_pool *p, scratch_free_region_fn free_region);

/* Frees every block (all are idle: a call in progress holds a reference on the graph),
 * deregistering FastRPC ones from the runtime's contexts (takes the execute gate
 * exclusively). */
void scratch_pool_destroy(scratch_pool *p, struct runtime_obj *rt);

/* The room a tensor takes in a block: 0 for f32 tensors (never converted), else its bytes
 * rounded up to 64. */
size_t scratch_slot_size(const htpu_tensor_info *t);

/* A block of `size` bytes (the same for every call of a graph) for one call: an idle one, else
 * a new one (FastRPC while the graph's FastRPC blocks are within the bound and the runtime has
 * it, else ordinary memory). NULL: out of memory. */
scratch_block *scratch_take(scratch_pool *p, struct runtime_obj *rt, size_t size);

/* An idle block only, or NULL: never allocates (a FastRPC allocation is an ioctl into the
 * driver, and its slots would still have to be registered), for no-wait calls. */
scratch_block *scratch_take_idle(scratch_pool *p);

/* Gives a block back for the next call. */
void scratch_give(scratch_pool *p, scratch_block *b);

#endif
