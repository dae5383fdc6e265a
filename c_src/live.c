/*
 * live.c - every runtime, context, graph and shared IO buffer this library has open, so that
 * what is left can be closed when the VM stops (HexagonTpu.close_all/0).
 *
 * Garbage collection closes what a program drops, but the VM collects nothing when it exits:
 * whatever is still referenced then would reach the process exit open, with the QNN libraries'
 * exit-time destructors running on live handles. These lists let close_all close it first.
 *
 * One list per kind, of nodes embedded in the objects (no allocation, so adding cannot fail).
 * A node is linked once its object is fully set up and unlinked first thing in the object's
 * destructor, both under `lock`; so while close_all holds the lock, every linked object is
 * still allocated. close_all only swaps handles out and queues them, exactly as close/1 and
 * the destructors do, so it is as safe against concurrent calls as close/1 is: nothing under
 * the lock waits on the DSP.
 */
#include <pthread.h>
#include <stddef.h>

#include "nif.h"

/* Lock order: this lock, then a runtime link's lock or the reaper's locks (close_all); no path
 * takes them the other way round (destructors unlink before anything else). A pthread mutex
 * with a static initializer: the lists outlive any single load/unload of the library. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static nif_live *heads[NIF_LIVE_KINDS];

#define CONTAINER(node, type) ((type *)(void *)((char *)(node) - offsetof(type, live)))

void nif_live_init(nif_live *n) {
  n->next = NULL;
  n->pprev = NULL;
}

void nif_live_add(nif_live *n, nif_live_kind kind) {
  pthread_mutex_lock(&lock);
  n->next = heads[kind];
  if (n->next) n->next->pprev = &n->next;
  heads[kind] = n;
  n->pprev = &heads[kind];
  pthread_mutex_unlock(&lock);
}

void nif_live_remove(nif_live *n) {
  pthread_mutex_lock(&lock);
  if (n->pprev) { /* never linked (a failed open) is fine */
    *n->pprev = n->next;
    if (n->next) n->next->pprev = n->pprev;
    n->next = NULL;
    n->pprev = NULL;
  }
  pthread_mutex_unlock(&lock);
}

/* Takes the object's handle as its close/1 would and hands the close to the reaper: the close
 * may wait on the DSP, and destructors on normal schedulers wait for `lock` meanwhile. (The
 * reaper closes inline only where it has no thread or no memory for the queue entry.)
 * Returns 1 if there was a handle to close. */
static int close_one(nif_live *n, nif_live_kind kind) {
  switch (kind) {
    case NIF_LIVE_SHARED: {
      /* The "open" reference only: views and calls in progress keep the memory until they
       * end, as after close/1. */
      nif_shared *sh = CONTAINER(n, nif_shared);
      if (atomic_exchange(&sh->closed, 1)) return 0;
      nif_shared_unref(sh, 0);
      return 1;
    }
    case NIF_LIVE_GRAPH: {
      nif_graph *g = CONTAINER(n, nif_graph);
      htpu_graph *h = atomic_exchange(&g->handle, NULL);
      if (h) nif_link_user_left(g->link);
      nif_reaper_push(REAP_GRAPH, h);
      return h != NULL;
    }
    case NIF_LIVE_CONTEXT: {
      nif_context *c = CONTAINER(n, nif_context);
      htpu_context *h = atomic_exchange(&c->handle, NULL);
      if (h) nif_link_user_left(c->link);
      nif_reaper_push(REAP_CONTEXT, h);
      return h != NULL;
    }
    case NIF_LIVE_RUNTIME: {
      /* Under the link's lock, as in close/1: an info/1 copying the runtime's strings ends
       * first. */
      nif_rt_link *l = CONTAINER(n, nif_rt_link);
      enif_mutex_lock(l->lock);
      htpu_runtime *h = atomic_exchange(&l->handle, NULL);
      enif_mutex_unlock(l->lock);
      nif_reaper_push(REAP_RUNTIME, h);
      return h != NULL;
    }
    case NIF_LIVE_KINDS:
      break;
  }
  return 0;
}

uint64_t nif_live_close_all(void) {
  uint64_t closed = 0;
  pthread_mutex_lock(&lock);
  /* Children first (the kinds are declared in that order). The core's references make any
   * order correct; this one lets each close free its object at once. */
  for (int k = 0; k < NIF_LIVE_KINDS; k++)
    for (nif_live *n = heads[k]; n; n = n->next) closed += (uint64_t)close_one(n, k);
  pthread_mutex_unlock(&lock);
  return closed;
}
