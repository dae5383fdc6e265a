/* registry.c - the live objects of the reference backend, looked up by handle value: the bottom
 * layer (rb_internal.h), calling no other file. Freeing them is teardown.c's. */
#include <string.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

/* Handles start well above any page a loader could dereference by accident. */
rb_registry g_rb = {PTHREAD_MUTEX_INITIALIZER, 0x1000, 1, NULL, NULL, NULL, NULL, NULL, NULL};

uintptr_t rb_new_handle(void) { return g_rb.next_handle++; }

#define RB_FIND(type, list)                                  \
  for (type *o = g_rb.list; o; o = o->next)                  \
    if (h && o->handle == (uintptr_t)h) return o;            \
  return NULL

rb_log *rb_find_log(const void *h) { RB_FIND(rb_log, logs); }
rb_backend *rb_find_backend(const void *h) { RB_FIND(rb_backend, backends); }
rb_device *rb_find_device(const void *h) { RB_FIND(rb_device, devices); }
rb_context *rb_find_context(const void *h) { RB_FIND(rb_context, contexts); }
rb_signal *rb_find_signal(const void *h) { RB_FIND(rb_signal, signals); }

rb_graph *rb_find_graph(const void *h) {
  if (!h) return NULL;
  for (rb_context *c = g_rb.contexts; c; c = c->next)
    for (uint32_t i = 0; i < c->num_graphs; i++)
      if (c->graphs[i].handle == (uintptr_t)h) return &c->graphs[i];
  return NULL;
}

/* A call that takes no backend handle (deviceCreate, platform info, perf infrastructure)
 * belongs to the backend that shares its logger, else to the newest backend: on the board there
 * is one backend per process. */
rb_backend *rb_owner_for(rb_log *l) {
  for (rb_backend *b = g_rb.backends; b; b = b->next)
    if (l && b->log == l) return b;
  return g_rb.backends; /* list head = newest */
}

RB_EXPORT int htpu_ref_get_context_state(uint64_t handle, htpu_ref_context_state *out) {
  if (!out) return -1;
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&g_rb.lock);
  rb_context *c = rb_find_context((const void *)(uintptr_t)handle);
  if (c) {
    out->persistent = c->persistent;
    out->graphs_deserialized = c->num_enabled;
    out->num_graphs = c->num_graphs;
    out->priority = c->priority;
    out->binary_copy_bytes = c->copied_bytes;
    out->spill_fill_bytes = c->spill_fill;
    out->group_id = c->group ? c->group->id : 0;
    out->group_bytes = c->group ? c->group->bytes : 0;
    out->group_members = c->group ? c->group->members : 0;
    out->memory_limit_mb = c->memory_limit_mb;
    out->stale = atomic_load(&c->stale);
  }
  pthread_mutex_unlock(&g_rb.lock);
  return c ? 0 : -1;
}
