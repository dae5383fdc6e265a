/*
 * shared_regions.h - a runtime's FastRPC memory: whether it has any, why not, and the list of
 * live regions (the public shared buffers and the core's conversion scratch) that registration
 * looks tensors up in.
 */
#ifndef HTPU_SHARED_REGIONS_H
#define HTPU_SHARED_REGIONS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fastrpc_lib.h"
#include "loader/loader.h"

#define SHARED_NOTE_MAX 512 /* bytes of a note, its NUL included */

typedef struct shared_region {
  void *base;
  size_t size;
  int fd;
} shared_region;

typedef struct shared_registry {
  pthread_mutex_t lock;
  fastrpc_lib rpc;
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
                          const char *fastrpc_path);
void shared_registry_destroy(shared_registry *r);

/* The registry's note, "" while none is published. Lock-free; stable once non-empty. */
const char *shared_registry_note(shared_registry *r);

/* Sets the note unless one is set already (takes r's lock). */
void shared_registry_set_note(shared_registry *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The live region that holds [p, p + len), if any (1 = found). */
int shared_registry_find(shared_registry *r, const void *p, size_t len, shared_region *out);

/* FastRPC memory for the core's own use (and the public shared buffers): `size` bytes
 * recorded in r, so registration finds tensors inside it. NULL when r has no FastRPC memory
 * or the allocation fails: `why` then says why (and r's note, if it has none yet); the caller
 * uses ordinary memory. */
void *shared_region_alloc(shared_registry *r, size_t size, int *fd, char *why, size_t whylen);

/* Takes the region at p off the list: no registration finds it after this. */
void shared_region_remove(shared_registry *r, const void *p);

/* Gives memory from shared_region_alloc back to FastRPC, after shared_region_remove and after
 * every registration inside it is gone (runtime_free_region does all three). */
void shared_region_free(shared_registry *r, void *p);

#endif
