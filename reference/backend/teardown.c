/* teardown.c - freeing what the registry holds: a context with its mem handles, its graphs'
 * async threads and its spill-fill group, a device with its platform info, and at unload every
 * handle the caller left alive. Above the object files it frees (rb_internal.h's layers), so the
 * registry itself stays at the bottom. */
#include <stdio.h>
#include <stdlib.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

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
