/* object.c - the handle registry and reference counting. */
#include "object.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hexagon_tpu.h"
#include "vec.h"

/* A slot's generation counts 1..UINT32_MAX; 0 marks a retired slot. A slot whose generation is
 * used up is retired instead of wrapping: were it to start again at 1, a handle closed 2^32
 * registrations earlier would resolve to whatever object the slot holds next. The free list
 * reuses the most recently freed slot first, so one busy slot reaches that point after ~4e9
 * open/close cycles (minutes of htpu_shared_alloc/free); retiring costs one slot per 4e9. */
typedef struct slot {
  htpu_object *obj;
  uint32_t gen;
  uint32_t next_free; /* index + 1 of the next free slot, 0 = none */
} slot;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *slots;
static uint32_t num_slots, first_free; /* first_free: index + 1, 0 = none */

/* Handle value: generation in the high half, slot index + 1 in the low half; never NULL.
 * Needs 64-bit pointers, as on every target the project builds for. */
_Static_assert(sizeof(void *) == 8, "handles pack a 32-bit generation and index into a pointer");
static void *encode(uint32_t index, uint32_t gen) {
  return (void *)(uintptr_t)(((uint64_t)gen << 32) | (uint64_t)(index + 1));
}

static slot *decode_locked(const void *handle, obj_kind kind) {
  uint64_t v = (uint64_t)(uintptr_t)handle;
  uint32_t index1 = (uint32_t)(v & 0xFFFFFFFFu), gen = (uint32_t)(v >> 32);
  if (index1 == 0 || index1 > num_slots) return NULL;
  slot *s = &slots[index1 - 1];
  if (!s->obj || s->gen != gen || s->obj->kind != kind) return NULL;
  return s;
}

void obj_init(htpu_object *o, obj_kind kind, void (*destroy)(htpu_object *)) {
  o->kind = kind;
  atomic_init(&o->refs, 1);
  atomic_init(&o->pins, 0);
  o->destroy = destroy;
  pthread_mutex_init(&o->error_lock, NULL);
  o->error[0] = '\0';
}

void *obj_register(htpu_object *o) {
  pthread_mutex_lock(&reg_lock);
  if (!first_free) {
    /* Every slot is taken (or retired): the array is full. Indexes stay 32-bit. */
    size_t cap = num_slots;
    if (vec_reserve(&slots, &cap, num_slots, sizeof *slots, 64) != 0 || cap >= UINT32_MAX) {
      pthread_mutex_unlock(&reg_lock);
      return NULL;
    }
    for (uint32_t i = num_slots; i < cap; i++) {
      slots[i].obj = NULL;
      slots[i].gen = 1;
      slots[i].next_free = (i + 1 < cap) ? i + 2 : 0;
    }
    first_free = num_slots + 1;
    num_slots = (uint32_t)cap;
  }
  uint32_t index = first_free - 1;
  slot *s = &slots[index];
  first_free = s->next_free;
  s->obj = o;
  void *h = encode(index, s->gen);
  pthread_mutex_unlock(&reg_lock);
  return h;
}

htpu_object *obj_acquire(const void *handle, obj_kind kind) {
  if (!handle) return NULL;
  pthread_mutex_lock(&reg_lock);
  slot *s = decode_locked(handle, kind);
  htpu_object *o = s ? s->obj : NULL;
  if (o) atomic_fetch_add(&o->refs, 1);
  pthread_mutex_unlock(&reg_lock);
  return o;
}

htpu_object *obj_acquire_pinned(const void *handle, obj_kind kind) {
  if (!handle) return NULL;
  pthread_mutex_lock(&reg_lock);
  slot *s = decode_locked(handle, kind);
  htpu_object *o = s ? s->obj : NULL;
  if (o) {
    atomic_fetch_add(&o->refs, 1);
    atomic_fetch_add(&o->pins, 1);
  }
  pthread_mutex_unlock(&reg_lock);
  return o;
}

void obj_release_pinned(htpu_object *o) {
  if (!o) return;
  /* The reference first: the handle's reference is held until the pin goes (obj_unpin_wait),
   * so this is never the last one and o is still alive for the unpin. */
  obj_release(o);
  atomic_fetch_sub(&o->pins, 1);
}

void obj_unpin_wait(htpu_object *o) {
  /* The pin was taken under reg_lock before obj_unregister took it (or not at all): a pin that
   * matters is visible here. */
  for (unsigned spins = 0; atomic_load(&o->pins) != 0; spins++) {
    if (spins < 64) {
      continue;
    } else if (spins < 1024) {
      sched_yield();
    } else {
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    }
  }
}

htpu_object *obj_unregister(const void *handle, obj_kind kind) {
  if (!handle) return NULL;
  pthread_mutex_lock(&reg_lock);
  slot *s = decode_locked(handle, kind);
  htpu_object *o = NULL;
  if (s) {
    o = s->obj;
    s->obj = NULL;
    if (s->gen == UINT32_MAX) {
      s->gen = 0; /* retired, never on the free list again */
    } else {
      s->gen++; /* a stale copy of the handle never matches again */
      s->next_free = first_free;
      first_free = (uint32_t)(s - slots) + 1;
    }
  }
  pthread_mutex_unlock(&reg_lock);
  return o;
}

void obj_test_set_slot_generation(const void *closed_handle, uint32_t gen) {
  uint64_t v = (uint64_t)(uintptr_t)closed_handle;
  uint32_t index1 = (uint32_t)(v & 0xFFFFFFFFu);
  pthread_mutex_lock(&reg_lock);
  if (index1 && index1 <= num_slots && !slots[index1 - 1].obj && slots[index1 - 1].gen && gen)
    slots[index1 - 1].gen = gen;
  pthread_mutex_unlock(&reg_lock);
}

size_t obj_test_live_handles(obj_kind kind, void **out, size_t max) {
  size_t n = 0;
  pthread_mutex_lock(&reg_lock);
  for (uint32_t i = 0; i < num_slots; i++)
    if (slots[i].obj && slots[i].obj->kind == kind && n < max) out[n++] = encode(i, slots[i].gen);
  pthread_mutex_unlock(&reg_lock);
  return n;
}

void obj_retain(htpu_object *o) { atomic_fetch_add(&o->refs, 1); }

int obj_retain_live(htpu_object *o) {
  unsigned n = atomic_load(&o->refs);
  while (n != 0)
    if (atomic_compare_exchange_weak(&o->refs, &n, n + 1)) return 1;
  return 0;
}

void obj_release(htpu_object *o) {
  if (!o) return;
  if (atomic_fetch_sub(&o->refs, 1) == 1) {
    pthread_mutex_destroy(&o->error_lock);
    o->destroy(o);
  }
}

void obj_keep_error(htpu_object *o) {
  pthread_mutex_lock(&o->error_lock);
  htpu_copy_message(htpu_last_error(), o->error, sizeof o->error);
  pthread_mutex_unlock(&o->error_lock);
}

size_t obj_copy_error(htpu_object *o, char *buf, size_t len) {
  pthread_mutex_lock(&o->error_lock);
  size_t n = htpu_copy_message(o->error, buf, len);
  pthread_mutex_unlock(&o->error_lock);
  return n;
}
