/* create_list.c - several QNN contexts from their binaries in one call
 * (contextCreateFromBinaryListAsync, create.h): each item's configs as a load of it alone
 * would pass them, its profile handle, and a notification per context that hands back its
 * handle and result from the backend's threads.
 *
 * The call may return before the contexts are done (QnnContext.h: they are created "in the
 * background"), so this waits for every context's CONTEXT_INIT notification: nothing of the
 * list is left running when the caller lets go of the execute gate. A call that fails may
 * have started none of them (the header does not say); then it waits only a short while
 * (LIST_STRAY_WAIT_NS) for notifications, and one that comes later finds the list abandoned
 * (its state is freed by the last notification, never under it) and leaves the caller's items
 * alone. What that leaves undone (docs/board.md, "Several models in one call"): a context
 * such a late notification hands over is never freed here (only the backend's teardown at
 * backendFree can release it), and the timeout signal is freed at the end of the wait although
 * the header keeps it in use until the deserialization ends (a backend still using it may
 * refuse the free; it is then left to backendFree). Waiting without bound would hang a load
 * on a backend that refused the list at once, and a late context could only be freed from the
 * backend's notify thread with the runtime kept alive and the execute gate taken; the
 * reference backend never notifies after a failed call. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "create.h"
#include "internal.h"

/* How long a failed call's stray notifications are waited for. */
#define LIST_STRAY_WAIT_NS 1000000000ull /* 1 s */

typedef struct list_state list_state;

/* What a notification's param points to. */
typedef struct list_slot {
  list_state *st;
  size_t index;
  int notified;
} list_slot;

struct list_state {
  pthread_mutex_t lock;
  pthread_cond_t cv; /* CLOCK_MONOTONIC */
  size_t pending;    /* contexts not yet notified */
  int abandoned;     /* the caller has gone: notifications only count down */
  create_item *items;
  list_slot slots[];
};

static void state_free(list_state *st) {
  pthread_mutex_destroy(&st->lock);
  pthread_cond_destroy(&st->cv);
  free(st);
}

static void on_notify(qnn_context_handle_t ctx, qnn_graph_handle_t graph, const char *name,
                      uint32_t type, void *param, qnn_error_t status) {
  (void)graph;
  (void)name;
  list_slot *s = param;
  /* A graph's notification says it is ready; the context's says the context is done. */
  if (type != QNN_CONTEXT_NOTIFY_TYPE_CONTEXT_INIT || !s) return;
  list_state *st = s->st;
  pthread_mutex_lock(&st->lock);
  int last = 0;
  if (!s->notified) {
    s->notified = 1;
    if (!st->abandoned) {
      create_item *it = &st->items[s->index];
      it->qnn = status == QNN_SUCCESS ? ctx : NULL;
      it->status = status;
      it->notified_ns = htpu_now_ns();
    }
    last = --st->pending == 0 && st->abandoned;
    pthread_cond_broadcast(&st->cv);
  }
  pthread_mutex_unlock(&st->lock);
  if (last) state_free(st); /* the caller left before this one came */
}

static list_state *state_new(create_item *items, size_t n) {
  list_state *st = calloc(1, sizeof *st + n * sizeof(list_slot));
  if (!st) return NULL;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&st->cv, &attr);
  pthread_condattr_destroy(&attr);
  pthread_mutex_init(&st->lock, NULL);
  st->pending = n;
  st->items = items;
  for (size_t i = 0; i < n; i++) st->slots[i] = (list_slot){st, i, 0};
  return st;
}

/* Waits for the notifications: all of them after a call that took the list, a short while
 * after one that failed. Then frees the state, or leaves it to the last stray notification. */
static void state_finish(list_state *st, qnn_error_t call) {
  uint64_t until = call == QNN_SUCCESS ? 0 : htpu_now_ns() + LIST_STRAY_WAIT_NS;
  pthread_mutex_lock(&st->lock);
  while (st->pending && (!until || htpu_now_ns() < until)) {
    if (!until) {
      pthread_cond_wait(&st->cv, &st->lock);
      continue;
    }
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    pthread_cond_timedwait(&st->cv, &st->lock, &ts);
  }
  int keep = st->pending > 0;
  st->abandoned = 1;
  pthread_mutex_unlock(&st->lock);
  if (!keep) state_free(st);
}

qnn_error_t create_list(runtime_obj *rt, create_item *items, size_t n, uint64_t deadline_ns) {
  list_state *st = state_new(items, n);
  create_configs *cfgs = calloc(n, sizeof *cfgs);
  qnn_context_params_t *params = calloc(n, sizeof *params);
  const qnn_context_params_t **plist = calloc(n + 1, sizeof *plist);
  qnn_error_t e = QNN_COMMON_ERROR_MEM_ALLOC;
  for (size_t i = 0; i < n; i++) items[i].qnn = NULL, items[i].notified_ns = 0;
  if (st && cfgs && params && plist) {
    for (size_t i = 0; i < n; i++) {
      context_obj *c = items[i].c;
      params[i].version = QNN_CONTEXT_PARAMS_VERSION_1;
      params[i].u.v1 = (qnn_context_params_v1_t){
          .config = create_configs_for(c, items[i].use_group, &cfgs[i]),
          .binary_buffer = c->bin.data,
          .binary_buffer_size = (qnn_context_binary_size_t)c->bin.len,
          .profile = items[i].profile,
          .notify_func = on_notify,
          .notify_param = &st->slots[i],
      };
      plist[i] = &params[i];
    }
    qnn_signal_handle_t sig =
        deadline_ns && rt->load_signals ? create_timeout_signal(rt, deadline_ns) : NULL;
    e = rt->backend_lib.context_create_from_binary_list_async(rt->backend, rt->device, plist,
                                                             NULL, sig);
    state_finish(st, e);
    st = NULL;
    if (sig) rt->backend_lib.signal_free(sig);
  }
  if (st) state_free(st);
  /* An item never notified carries the call's code. */
  for (size_t i = 0; i < n; i++)
    if (!items[i].notified_ns)
      items[i].status = e != QNN_SUCCESS ? e : QNN_COMMON_ERROR_GENERAL;
  free(cfgs);
  free(params);
  free(plist);
  return e;
}
