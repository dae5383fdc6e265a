/*
 * object.h - reference-counted objects behind the opaque handles.
 *
 * A public handle is not a pointer to memory: it encodes a registry slot and that slot's
 * generation. Every entry point turns it back into an object with obj_acquire(), which takes a
 * reference under the registry lock. So a closed, stale or forged handle is refused with
 * HTPU_ECLOSED instead of being dereferenced, and an object cannot be freed while a call on
 * another thread still uses it (close only drops the handle's reference).
 */
#ifndef HTPU_OBJECT_H
#define HTPU_OBJECT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "errors.h"

typedef enum obj_kind { OBJ_RUNTIME = 1, OBJ_CONTEXT = 2, OBJ_GRAPH = 3, OBJ_SHARED = 4 } obj_kind;

typedef struct htpu_object htpu_object;
struct htpu_object {
  obj_kind kind;
  atomic_uint refs;
  /* Callers that must never run `destroy` (no-wait calls on threads that must not block):
   * while pins > 0, the handle's reference is not dropped (obj_unpin_wait), so theirs is
   * never the last. */
  atomic_uint pins;
  void (*destroy)(htpu_object *self); /* runs when the last reference goes */
  pthread_mutex_t error_lock;
  char error[HTPU_ERROR_MAX];
};

/* Initializes the header with one reference (the caller's). */
void obj_init(htpu_object *o, obj_kind kind, void (*destroy)(htpu_object *));

/* Registers o and returns its handle value (NULL when out of memory). The registry does not
 * own a reference: the handle's reference is the one obj_init gave. */
void *obj_register(htpu_object *o);

/* Tests only: the free slot behind a closed handle will issue generation `gen` next (to drive
 * a slot to the end of its generations without 4e9 cycles). Ignored for a live or retired slot
 * and for gen 0. */
void obj_test_set_slot_generation(const void *closed_handle, uint32_t gen);

/* Tests only: up to max handles of live objects of that kind, into out; how many were put.
 * The C test runner closes what a failed test left open with them, so that one failure does
 * not fail the tests after it. */
size_t obj_test_live_handles(obj_kind kind, void **out, size_t max);

/* The object behind a live handle of this kind, with a new reference; NULL when the handle is
 * closed, stale, NULL or of another kind. */
htpu_object *obj_acquire(const void *handle, obj_kind kind);

/* Unregisters the handle and returns the object with the handle's reference (now the
 * caller's to release), or NULL when the handle is not live. */
htpu_object *obj_unregister(const void *handle, obj_kind kind);

/* obj_acquire for a caller that must not block: also pins the object, in the same step
 * under the registry lock, so a close that unregistered the handle after it finds the pin.
 * Give it back with obj_release_pinned, which never drops the last reference (the handle's
 * reference outlives every pin: obj_unpin_wait) and so never runs the destroy, whose frees
 * may cross to the DSP and wait for every in-flight execute. */
htpu_object *obj_acquire_pinned(const void *handle, obj_kind kind);
void obj_release_pinned(htpu_object *o);

/* For a close, between obj_unregister and releasing the handle's reference: waits until no
 * pinned caller holds o. New pins are impossible once the handle is unregistered, and pinned
 * callers never wait for anything but the backend call they make, so the wait is as short as
 * that call (spinning, then yielding, then sleeping in 50 us steps). */
void obj_unpin_wait(htpu_object *o);

void obj_retain(htpu_object *o);
void obj_release(htpu_object *o);
/* A reference on an object reached through a non-owning pointer: 1 taken, 0 when its last
 * reference is already gone (its destroy runs or is about to: leave it alone). */
int obj_retain_live(htpu_object *o);

/* Copies the calling thread's last error into the object (for *_last_error). */
void obj_keep_error(htpu_object *o);
size_t obj_copy_error(htpu_object *o, char *buf, size_t len);

#endif
