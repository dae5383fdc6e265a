/* recover.c - a context recreated after a DSP restart (QNN 1007) met by an execute or a graph
 * open: the stale QNN context freed, a new one made from the retained binary, its open graphs
 * retrieved again; bounded by the call it runs for (internal.h, context_recover). */
#include <stdlib.h>

#include "base/base.h"
#include "device/device.h"
#include "exec.h"
#include "internal.h"
#include "model/model.h"
#include "loader/loader.h"
#include "qnn/qnn_signal_abi.h"

/* A recovery, for the call it runs for: what stops it (that call's deadline, cancel or close). */
typedef struct recovery {
  context_obj *c;
  exec_ctl *ctl; /* the call's (NULL: a graph open, unbounded) */
  const atomic_int *stop;
  uint64_t deadline_ns;
  int stopped; /* a try or the backoff was cut short by the call's bound */
} recovery;

static int recover_locked(recovery *r, uint64_t seen_generation);

/* createFromBinary of the recovery's context (use_group: in its spill-fill group), stopped with
 * its call: an abort signal the call's stop triggers (turn.c) where the backend takes load
 * signals; else bounded by the deadline alone (a timeout signal where it can; a backend without
 * load signals runs it to its end). */
static qnn_error_t recreate_stoppable(recovery *r, qnn_context_handle_t *q, int use_group,
                                      int *stopped) {
  context_obj *c = r->c;
  runtime_obj *rt = c->rt;
  const qnn_backend_lib *b = &rt->backend_lib;
  *stopped = 0;
  if (!r->ctl || !rt->load_signals)
    return create_bounded(c, q, r->deadline_ns, NULL, use_group, stopped);
  qnn_signal_config_t abort_cfg = {.option = QNN_SIGNAL_CONFIG_OPTION_ABORT};
  const qnn_signal_config_t *cfgs[] = {&abort_cfg, NULL};
  qnn_signal_handle_t sig = NULL;
  if (b->signal_create(rt->backend, cfgs, &sig) != QNN_SUCCESS || !sig)
    return create_bounded(c, q, r->deadline_ns, NULL, use_group, stopped);
  qnn_error_t e = QNN_CONTEXT_ERROR_ABORTED;
  if (ctl_set_load_signal(r->ctl, sig))
    e = create_from_binary_signalled(c, q, NULL, sig, use_group);
  ctl_set_load_signal(r->ctl, NULL); /* under q_lock: no trigger reaches it after this */
  b->signal_free(sig);
  uint32_t code = QNN_ERROR_CODE(e);
  *stopped = code == QNN_CONTEXT_ERROR_ABORTED || code == QNN_CONTEXT_ERROR_TIMED_OUT;
  return e;
}

/* A new QNN context for r's context, back in its spill-fill group: the group's first context
 * names a new group; another joins the first's QNN handle, and when that fails for a handle
 * lost in the same restart (1007, 5002), the first context is recovered here (its own calls
 * would do it later) and joined again. A first context that cannot be recovered leaves this
 * one on a buffer of its own (sf_joined 0). */
static qnn_error_t recreate_grouped(recovery *r, qnn_context_handle_t *q, int *stopped) {
  context_obj *c = r->c, *a = c->sf_anchor;
  qnn_error_t e = recreate_stoppable(r, q, a != NULL, stopped);
  uint32_t code = QNN_ERROR_CODE(e);
  if (e == QNN_SUCCESS || *stopped || !a || a == c ||
      (code != QNN_COMMON_ERROR_SYSTEM_COMMUNICATION && code != QNN_CONTEXT_ERROR_INVALID_HANDLE)) {
    if (e == QNN_SUCCESS) atomic_store(&c->sf_joined, a != NULL);
    return e;
  }
  recovery ra = {a, r->ctl, r->stop, r->deadline_ns, 0};
  int joined = recover_locked(&ra, a->generation) == 0;
  if (ra.stopped) { /* the call's bound ran out in the first context's recovery */
    *stopped = 1;
    return QNN_CONTEXT_ERROR_TIMED_OUT;
  }
  e = recreate_stoppable(r, q, joined, stopped);
  if (e == QNN_SUCCESS) atomic_store(&c->sf_joined, joined);
  return e;
}

/* One try (retry_try_fn on a recovery): a new QNN context from the retained binary, and every
 * open graph's handle in it. On failure frees what it made, sets the error and *code (the QNN
 * code, 0 if none). */
static int recreate(void *arg, uint32_t attempt, uint32_t *code) {
  (void)attempt;
  recovery *r = arg;
  context_obj *c = r->c;
  runtime_obj *rt = c->rt;
  const qnn_backend_lib *b = &rt->backend_lib;
  uint64_t mark = qnn_log_mark();
  qnn_context_handle_t q = NULL;
  int stopped = 0;
  qnn_error_t e = recreate_grouped(r, &q, &stopped);
  if (stopped) { /* the call's deadline, cancel or close: not worth a retry, nor the model's death */
    r->stopped = 1;
    *code = 0;
    return htpu_set_error(HTPU_ETIMEDOUT, 0, "recreating the context was stopped");
  }
  if (e != QNN_SUCCESS || !q) {
    *code = QNN_ERROR_CODE(e);
    htpu_set_error(HTPU_EDEVICE_RESET, *code,
                   "the DSP restarted and recreating the context failed: QNN error %u (%s)",
                   *code, htpu_qnn_error_name(*code));
    qnn_log_append_since(mark);
    return HTPU_EDEVICE_RESET;
  }
  int rc = 0;
  pthread_mutex_lock(&c->graphs_lock);
  for (size_t i = 0; !rc && i < c->num_graphs; i++) {
    graph_state *g = c->graphs[i];
    const char *name = c->info->pub.graphs[g->index].name;
    qnn_graph_handle_t h = NULL;
    e = b->graph_retrieve(q, name, &h);
    if (e != QNN_SUCCESS || !h) {
      *code = QNN_ERROR_CODE(e);
      rc = htpu_set_error(HTPU_EDEVICE_RESET, *code,
                          "the DSP restarted and retrieving graph '%s' again failed: QNN error "
                          "%u (%s)",
                          name, *code, htpu_qnn_error_name(*code));
      qnn_log_append_since(mark);
    } else {
      g->qnn = h; /* a later failure: replaced by the next try, or c ends dead */
    }
  }
  pthread_mutex_unlock(&c->graphs_lock);
  if (rc) {
    (void)b->context_free(q, NULL);
    return rc;
  }
  c->qnn = q;
  return 0;
}

/* The backoff between tries (retry_policy.sleep): ends early at the call's bound. */
static int recovery_sleep(void *arg, uint64_t ms) {
  recovery *r = arg;
  uint64_t until = htpu_now_ns() + ms * 1000000u;
  if (r->deadline_ns && r->deadline_ns < until) until = r->deadline_ns;
  int slept = gate_sleep(&htpu_exec_gate, r->stop, until);
  if (!slept || until == r->deadline_ns) r->stopped = 1;
  return !r->stopped;
}

/* Under the gate, exclusively. */
static int recover_locked(recovery *r, uint64_t seen_generation) {
  context_obj *c = r->c;
  if (c->generation != seen_generation) return 0; /* another call already recovered it */
  if (c->dead)
    return htpu_set_error(HTPU_EDEVICE_RESET, 0,
                          "the DSP restarted and this model could not be recovered earlier");
  runtime_obj *rt = c->rt;
  const qnn_backend_lib *b = &rt->backend_lib;
  /* The stale context: its registrations and handles died with the DSP process. */
  mem_cache_release(&c->mem, b, -1);
  if (c->qnn) (void)b->context_free(c->qnn, NULL);
  c->qnn = NULL;
  /* A restart during the recovery is the DSP still coming back: worth the start-up backoff.
   * A configuration error is not, and neither is a DSP that stays away past the retries. */
  retry_policy p = {rt->recovery_retries, rt->retry_delay_ms, NULL, recovery_sleep, r};
  atomic_store(&c->stale, 1); /* until a try succeeds */
  int rc = retry_run(&p, recreate, r);
  if (rc && r->stopped) return RECOVER_STOPPED; /* stale: the next call goes on with it */
  if (rc) {
    c->dead = 1;
    STAT_ADD(recovery_failures, 1);
    return rc;
  }
  atomic_store(&c->stale, 0);
  c->generation++;
  STAT_ADD(recoveries, 1);
  perf_recast(&rt->perf);
  return 0;
}

int context_recover(context_obj *c, uint64_t seen_generation, exec_ctl *ctl,
                    uint64_t deadline_ns) {
  const atomic_int *stop = ctl ? &ctl->reason : NULL;
  /* Held through the backoff too: in between, the context has no QNN handle and its graphs'
   * handles are stale, so nothing may execute or open a graph on it; and the restart that
   * made it stale made every context of the process stale, so others would only fail. The
   * call it runs for bounds it (its deadline, cancel or close: gate.h), so a close or a timed
   * call never waits out the backoff. */
  recovery r = {c, ctl, stop, deadline_ns, 0};
  /* a recreate is a creation: the NPU lock first, as for a load (src/board/) */
  npu_lock_hold hold;
  int rc = npu_lock_enter(&c->rt->npu_lock, deadline_ns, stop,
                          "recreating a context after a DSP restart", &hold);
  if (rc) return rc == HTPU_ECANCELLED ? RECOVER_STOPPED : rc;
  if (!gate_enter_exclusive(&htpu_exec_gate, stop, deadline_ns)) {
    npu_lock_leave(&hold);
    return RECOVER_STOPPED;
  }
  rc = recover_locked(&r, seen_generation);
  gate_leave_exclusive(&htpu_exec_gate);
  npu_lock_leave(&hold);
  return rc;
}
