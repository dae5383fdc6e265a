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

/* The object behind a live handle of this kind, with a new reference; NULL when the handle is
 * closed, stale, NULL or of another kind. */
htpu_object *obj_acquire(const void *handle, obj_kind kind);

/* Unregisters the handle and returns the object with the handle's reference (now the
 * caller's to release), or NULL when the handle is not live. */
htpu_object *obj_unregister(const void *handle, obj_kind kind);

void obj_retain(htpu_object *o);
void obj_release(htpu_object *o);

/* Copies the calling thread's last error into the object (for *_last_error). */
void obj_keep_error(htpu_object *o);
size_t obj_copy_error(htpu_object *o, char *buf, size_t len);

#endif
