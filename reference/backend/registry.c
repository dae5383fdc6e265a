/* registry.c - the live objects of the reference backend, looked up by handle value. */
#include <stdio.h>
#include <stdlib.h>
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

#define RB_UNLINK(type, list, obj)                                \
  for (type **pp = &g_rb.list; *pp; pp = &(*pp)->next)            \
    if (*pp == (obj)) {                                           \
      *pp = (obj)->next;                                          \
      break;                                                      \
    }

void rb_context_destroy(rb_context *c) {
  RB_UNLINK(rb_context, contexts, c);
  rb_mem_drop_context(c);
  for (uint32_t i = 0; i < c->num_graphs; i++) rb_queue_stop_worker(&c->graphs[i]);
  rb_sf_detach(c);
  free(c->graphs);
  free(c->graph_hash);
  ref_model_free(c->model);
  free(c);
}

void rb_device_destroy(rb_device *d) {
  RB_UNLINK(rb_device, devices, d);
  if (d->log) d->log->users--;
  rb_pinfo_free(d->info);
  free(d);
}

/* A caller that never freed its handles would otherwise leave them to LeakSanitizer with no
 * useful stack once the library is gone; say so and release them. Unless a graphExecute is
 * still running: a process that exits (the BEAM at halt) runs this destructor while its other
 * threads go on, and freeing the context under that call made it read freed memory (a
 * segmentation fault at the end of a test run). Executes register under g_rb.lock, so none
 * starts while this holds it, and one that starts after finds no handle. Then the handles are
 * left to the process exit. */
RB_EXPORT void htpu_ref_unload_handles(void) {
  unsigned n = 0;
  pthread_mutex_lock(&g_rb.lock);
  int running = rb_exec_in_flight();
  for (rb_backend *b = g_rb.backends; b && running == 0; b = b->next)
    if (atomic_load(&b->busy)) running = 1; /* a call still between its last steps */
  if (running > 0) {
    pthread_mutex_unlock(&g_rb.lock);
    fprintf(stderr, "htpu_refbackend: %d graphExecute call(s) still running at unload: QNN "
            "handles left alive\n", running);
    return;
  }
  while (g_rb.contexts) rb_context_destroy(g_rb.contexts), n++;
  while (g_rb.devices) rb_device_destroy(g_rb.devices), n++;
  while (g_rb.backends) {
    rb_backend *b = g_rb.backends;
    g_rb.backends = b->next;
    while (b->powers) {
      rb_power *p = b->powers;
      b->powers = p->next;
      free(p);
    }
    while (b->pinfos) {
      rb_pinfo *p = b->pinfos;
      b->pinfos = p->next;
      rb_pinfo_free(p);
    }
    free(b);
    n++;
  }
  while (g_rb.logs) {
    rb_log *l = g_rb.logs;
    g_rb.logs = l->next;
    free(l);
    n++;
  }
  while (g_rb.signals) {
    rb_signal *s = g_rb.signals;
    g_rb.signals = s->next;
    free(s);
    n++;
  }
  pthread_mutex_unlock(&g_rb.lock);
  if (n) fprintf(stderr, "htpu_refbackend: %u QNN handle(s) still alive at unload\n", n);
}

__attribute__((destructor)) static void rb_registry_unload(void) { htpu_ref_unload_handles(); }

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
