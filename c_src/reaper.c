/*
 * reaper.c - closes handles that garbage collection dropped, off the schedulers.
 *
 * Resource destructors run on whatever scheduler did the GC, and htpu_*_close may block (a
 * QNN free crosses to the DSP and waits for the runtime's in-flight executes), so destructors
 * only queue the handle here. One thread, one FIFO: the core's refcounts make the close order
 * irrelevant for correctness (a child keeps its parent alive).
 *
 * Lifetime: the NIF library can be loaded more than once at a time (upgrade loads the new
 * module while the old one is still there; with the same .so path both share this file's
 * statics), so the thread is reference counted by load/upgrade and unload and joined by the
 * last unload, after it drained the queue.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <erl_nif.h>

#include "reaper.h"

typedef struct reap_item {
  struct reap_item *next;
  nif_kind kind;
  void *handle;
} reap_item;

/* lifecycle_lock serializes start/stop; a static initializer because load has nothing to
 * create it with before the first call. */
static pthread_mutex_t lifecycle_lock = PTHREAD_MUTEX_INITIALIZER;
static int users;

static ErlNifMutex *q_lock;
static ErlNifCond *q_cond;
static ErlNifTid tid;
static reap_item *head, *tail;
static int running, stopping;
static _Atomic uint64_t n_queued, n_closed, n_inline;

/* Halt (nif_reaper_halt): `halted` makes the thread leave without draining and makes pushes
 * drop their handle (the process is exiting: closing now would call into QNN while its
 * exit-time destructors run). exit_lock/exit_cond/exited let the halt wait, bounded, for the
 * thread to be out of QNN. Static initializers: they must outlive any start/stop. */
static atomic_int halted;
static pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t exit_cond = PTHREAD_COND_INITIALIZER;
static int exited;

/* nif_reaper_wait_idle: the thread signals idle_cond after each close. n_queued counts an item
 * before the thread can see it, so n_closed never passes n_queued and equality means every item
 * queued so far is closed. */
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;

void nif_core_close(nif_kind kind, void *handle) {
  switch (kind) {
    case NIF_KIND_RUNTIME: {
      htpu_runtime *h = handle;
      htpu_runtime_close(&h);
      break;
    }
    case NIF_KIND_CONTEXT: {
      htpu_context *h = handle;
      htpu_context_close(&h);
      break;
    }
    case NIF_KIND_GRAPH: {
      htpu_graph *h = handle;
      htpu_graph_close(&h);
      break;
    }
    case NIF_KIND_SHARED: {
      htpu_shared *h = handle;
      htpu_shared_free(&h); /* deregisters (waiting for in-flight executes), then frees */
      break;
    }
    case NIF_KIND_VIEW: /* owns no core handle */
    case NIF_KINDS:
      break;
  }
}

static void *reaper_main(void *arg) {
  (void)arg;
  enif_mutex_lock(q_lock);
  for (;;) {
    while (!head && !stopping) enif_cond_wait(q_cond, q_lock);
    if (!head || atomic_load(&halted)) break; /* stopping and drained, or halting */
    reap_item *it = head;
    head = it->next;
    if (!head) tail = NULL;
    /* The close runs unlocked so destructors can keep queueing behind a slow free. */
    enif_mutex_unlock(q_lock);
    nif_core_close(it->kind, it->handle);
    enif_free(it);
    pthread_mutex_lock(&idle_lock);
    atomic_fetch_add(&n_closed, 1);
    pthread_cond_broadcast(&idle_cond);
    pthread_mutex_unlock(&idle_lock);
    enif_mutex_lock(q_lock);
  }
  enif_mutex_unlock(q_lock);
  pthread_mutex_lock(&exit_lock);
  exited = 1;
  pthread_cond_broadcast(&exit_cond);
  pthread_mutex_unlock(&exit_lock);
  return NULL;
}

int nif_reaper_start(void) {
  int rc = 0;
  pthread_mutex_lock(&lifecycle_lock);
  if (users++ == 0) {
    q_lock = enif_mutex_create("htpu_reaper_queue");
    q_cond = enif_cond_create("htpu_reaper_cond");
    ErlNifThreadOpts *opts = enif_thread_opts_create("htpu_reaper_opts");
    stopping = 0;
    pthread_mutex_lock(&exit_lock);
    exited = 0;
    pthread_mutex_unlock(&exit_lock);
    if (!q_lock || !q_cond || !opts ||
        enif_thread_create("htpu_reaper", &tid, reaper_main, NULL, opts) != 0) {
      if (q_cond) enif_cond_destroy(q_cond);
      if (q_lock) enif_mutex_destroy(q_lock);
      q_cond = NULL;
      q_lock = NULL;
      users = 0;
      rc = -1;
    } else {
      running = 1;
    }
    if (opts) enif_thread_opts_destroy(opts);
  }
  pthread_mutex_unlock(&lifecycle_lock);
  return rc;
}

void nif_reaper_stop(void) {
  pthread_mutex_lock(&lifecycle_lock);
  if (users > 0 && --users == 0 && running) {
    enif_mutex_lock(q_lock);
    stopping = 1;
    enif_cond_signal(q_cond);
    enif_mutex_unlock(q_lock);
    enif_thread_join(tid, NULL);
    /* From here on destructors (resources can outlive the module's unload) close inline. */
    enif_mutex_lock(q_lock);
    running = 0;
    enif_mutex_unlock(q_lock);
    enif_cond_destroy(q_cond);
    enif_mutex_destroy(q_lock);
    q_cond = NULL;
    q_lock = NULL;
  }
  pthread_mutex_unlock(&lifecycle_lock);
}

void nif_reaper_push(nif_kind kind, void *handle) {
  if (!handle) return;
  if (atomic_load(&halted)) return; /* the VM is halting: leave it to the process exit */
  reap_item *it = enif_alloc(sizeof *it);
  /* lifecycle_lock keeps q_lock alive while we use it. Start/stop hold it only in load and
   * unload, so a scheduler waits on it only while a module is being loaded or purged. */
  pthread_mutex_lock(&lifecycle_lock);
  int queued = 0;
  if (it && running) {
    it->next = NULL;
    it->kind = kind;
    it->handle = handle;
    enif_mutex_lock(q_lock);
    if (tail)
      tail->next = it;
    else
      head = it;
    tail = it;
    atomic_fetch_add(&n_queued, 1); /* before the thread can close it: see idle_lock */
    enif_cond_signal(q_cond);
    enif_mutex_unlock(q_lock);
    queued = 1;
  }
  pthread_mutex_unlock(&lifecycle_lock);
  if (!queued) {
    if (it) enif_free(it);
    atomic_fetch_add(&n_inline, 1);
    nif_core_close(kind, handle);
  }
}

void nif_reaper_counts(uint64_t *queued, uint64_t *closed, uint64_t *inline_closed) {
  *queued = atomic_load(&n_queued);
  *closed = atomic_load(&n_closed);
  *inline_closed = atomic_load(&n_inline);
}

/* Runs from the VM's on-halt callback (OTP 26+), on the thread that performs the halt, before
 * the process exits and QNN's exit-time destructors run. Pending handles are abandoned (as are
 * all handles still open at halt; the FastRPC driver tears the DSP session down with the
 * process), and the thread gets HALT_WAIT_MS to finish the close it is in. Bounded on purpose:
 * a close stuck on a wedged DSP must not hang the halt; then the exit proceeds as before this
 * callback existed. Never joins (unload may be joining concurrently); never blocks on
 * lifecycle_lock beyond the same bound. */
#define HALT_WAIT_MS 5000
int nif_reaper_halt(nif_halt_info *info) {
  *info = (nif_halt_info){0};
  if (atomic_exchange(&halted, 1)) return 0; /* once, however many module instances call it */
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += HALT_WAIT_MS / 1000;
  if (pthread_mutex_timedlock(&lifecycle_lock, &deadline) != 0) return 1;
  int was_running = running;
  if (was_running) {
    enif_mutex_lock(q_lock);
    stopping = 1;
    while (head) { /* abandoned: see above */
      reap_item *it = head;
      head = it->next;
      enif_free(it);
      info->abandoned++;
    }
    tail = NULL;
    enif_cond_signal(q_cond);
    enif_mutex_unlock(q_lock);
  }
  pthread_mutex_unlock(&lifecycle_lock);
  info->was_running = was_running;
  if (!was_running) return 1;
  pthread_mutex_lock(&exit_lock);
  int rc = 0;
  while (!exited && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&exit_cond, &exit_lock, &deadline);
  info->stopped = exited;
  pthread_mutex_unlock(&exit_lock);
  return 1;
}

int nif_reaper_wait_idle(unsigned timeout_ms) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&idle_lock);
  int rc = 0;
  while (atomic_load(&n_closed) != atomic_load(&n_queued) && !atomic_load(&halted) &&
         rc != ETIMEDOUT)
    rc = pthread_cond_timedwait(&idle_cond, &idle_lock, &deadline);
  int idle = atomic_load(&n_closed) == atomic_load(&n_queued);
  pthread_mutex_unlock(&idle_lock);
  return idle;
}
