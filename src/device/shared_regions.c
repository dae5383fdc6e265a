/* shared_regions.c - a runtime's FastRPC memory and its list of live regions
 * (shared_regions.h). */
#include "shared_regions.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_htp_abi.h"
#include "base/base.h"

/* Sets the note unless one is set already. Caller holds r->lock (or is shared_registry_init,
 * before anyone else can see r). */
static void set_note_locked(shared_registry *r, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void set_note_locked(shared_registry *r, const char *fmt, va_list ap) {
  if (atomic_load_explicit(&r->note_set, memory_order_relaxed)) return;
  vsnprintf(r->note, sizeof r->note, fmt, ap);
  atomic_store_explicit(&r->note_set, 1, memory_order_release);
}

static void set_first_note(shared_registry *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_first_note(shared_registry *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_note_locked(r, fmt, ap);
  va_end(ap);
}

void shared_registry_set_note(shared_registry *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&r->lock);
  set_note_locked(r, fmt, ap);
  pthread_mutex_unlock(&r->lock);
  va_end(ap);
}

const char *shared_registry_note(shared_registry *r) {
  return atomic_load_explicit(&r->note_set, memory_order_acquire) ? r->note : "";
}

void shared_registry_init(shared_registry *r, const qnn_backend_lib *b, int has_device,
                          const char *fastrpc_path) {
  memset(r, 0, sizeof *r);
  atomic_init(&r->note_set, 0);
  pthread_mutex_init(&r->lock, NULL);
  if (!has_device) {
    set_first_note(r, "no QNN device: shared buffers need one");
    return;
  }
  if (!b->mem_register || !b->mem_de_register) {
    set_first_note(r, "the backend's API version has no memRegister");
    return;
  }
  if (b->property_has_capability &&
      b->property_has_capability(QNN_PROPERTY_MEM_SUPPORT_CUSTOM) != QNN_SUCCESS) {
    set_first_note(r,
                   "the backend does not support custom (HTP shared-buffer) memory registration");
    return;
  }
  char why[SHARED_NOTE_MAX];
  if (fastrpc_lib_open(&r->rpc, fastrpc_path, why, sizeof why) != 0) {
    set_first_note(r, "%s", why);
    return;
  }
  r->available = 1;
}

void shared_registry_destroy(shared_registry *r) {
  fastrpc_lib_close(&r->rpc);
  free(r->regions);
  pthread_mutex_destroy(&r->lock);
  memset(r, 0, sizeof *r);
}

int shared_registry_find(shared_registry *r, const void *p, size_t len, shared_region *out) {
  int found = 0;
  uintptr_t a = (uintptr_t)p;
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->num_regions && !found; i++) {
    uintptr_t base = (uintptr_t)r->regions[i].base;
    if (a >= base && a - base <= r->regions[i].size && len <= r->regions[i].size - (a - base)) {
      *out = r->regions[i];
      found = 1;
    }
  }
  pthread_mutex_unlock(&r->lock);
  return found;
}

static int region_add(shared_registry *r, shared_region reg) {
  pthread_mutex_lock(&r->lock);
  int rc = vec_reserve(&r->regions, &r->cap_regions, r->num_regions, sizeof *r->regions, 8);
  if (rc == 0) r->regions[r->num_regions++] = reg;
  pthread_mutex_unlock(&r->lock);
  return rc;
}

void shared_region_remove(shared_registry *r, const void *base) {
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->num_regions; i++) {
    if (r->regions[i].base == base) {
      r->regions[i] = r->regions[--r->num_regions];
      break;
    }
  }
  pthread_mutex_unlock(&r->lock);
}

void *shared_region_alloc(shared_registry *r, size_t size, int *fd, char *why, size_t whylen) {
  *fd = -1;
  if (!r->available) {
    /* Published at runtime open (every reason for !available sets one), never changed after. */
    snprintf(why, whylen, "%s", shared_registry_note(r));
    return NULL;
  }
  if (size == 0 || size > (size_t)INT_MAX) {
    snprintf(why, whylen, "%zu bytes do not fit rpcmem_alloc's int size", size);
    return NULL;
  }
  void *p = r->rpc.rpc_alloc(RPCMEM_HEAP_ID_SYSTEM, RPCMEM_DEFAULT_FLAGS, (int)size);
  int f = p ? r->rpc.rpc_to_fd(p) : -1;
  if (!p) {
    snprintf(why, whylen, "rpcmem_alloc of %zu bytes failed; using ordinary memory", size);
  } else if (f < 0) {
    snprintf(why, whylen,
             "rpcmem_to_fd found no fd for a %zu-byte rpcmem buffer; using ordinary memory",
             size);
  } else if (region_add(r, (shared_region){p, size, f}) != 0) {
    snprintf(why, whylen, "out of memory recording a %zu-byte rpcmem buffer; using ordinary memory",
             size);
  } else {
    *fd = f;
    return p;
  }
  if (p) r->rpc.rpc_free(p);
  shared_registry_set_note(r, "%s", why);
  return NULL;
}

void shared_region_free(shared_registry *r, void *p) { r->rpc.rpc_free(p); }
