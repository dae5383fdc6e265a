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
 * destructor, both under `lock`; so while nif_live_each holds the lock, every linked object is
 * still allocated. close_all (resources.c) only swaps handles out and queues them, exactly as
 * close/1 and the destructors do, so it is as safe against concurrent calls as close/1 is:
 * nothing under the lock waits on the DSP.
 */
#include <pthread.h>
#include <stddef.h>

#include "live.h"

/* Lock order: this lock, then a runtime link's lock or the reaper's locks (close_all); no path
 * takes them the other way round (destructors unlink before anything else). A pthread mutex
 * with a static initializer: the lists outlive any single load/unload of the library. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static nif_live *heads[NIF_KINDS];

void nif_live_init(nif_live *n) {
  n->next = NULL;
  n->pprev = NULL;
}

void nif_live_add(nif_live *n, nif_kind kind) {
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

void nif_live_each(void (*fn)(nif_live *n, nif_kind kind, void *arg), void *arg) {
  pthread_mutex_lock(&lock);
  for (int k = 0; k < NIF_KINDS; k++)
    for (nif_live *n = heads[k]; n; n = n->next) fn(n, (nif_kind)k, arg);
  pthread_mutex_unlock(&lock);
}
