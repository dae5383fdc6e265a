/*
 * attempts.c - a call's execute (exec_internal.h): its graph's turn, then the process-wide
 * execute gate (shared), graphExecute with fresh descriptors (never shared between calls, so
 * concurrent executes of different graphs cannot see each other's pointers), and after a DSP
 * restart (1007) the recovery and retry the runtime allows. k row groups (batch_multiple.h) go
 * as one execute where the graph takes them, else one per row group.
 *
 * Each call that reached graphExecute records its own work (input conversion plus the time
 * it held the graph) in the graph's window (timing.h) before letting go of the graph. A
 * no-wait call (for the BEAM's normal schedulers) tries the turn and the gate, leaves
 * recoveries to ordinary calls and passes only already-registered handles: where it would
 * wait or cross to the DSP for anything but graphExecute it declines instead.
 *
 * The turn, the window and the scratch pool are the QNN graph's (graph_state), not the
 * handle's: executes through every handle of one graph are serialized as one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "batch_multiple.h"
#include "exec_internal.h"
#include "loader/loader.h"

/* Points each descriptor at its buffer: by registered handle when the buffer lies in a shared
 * (FastRPC) allocation (the caller's, or a scratch block's), else as a client buffer. Runs
 * under the gate, as handles can change (so again for each attempt). A no-wait call only looks
 * handles up: -1 when one would have to be registered first (memRegister crosses to the DSP). */
int exec_bind_buffers(exec_call *x) {
  context_obj *c = x->c;
  runtime_obj *rt = x->rt;
  for (uint32_t i = 0; i < x->n_in + x->n_out; i++) {
    const htpu_tensor_info *info = exec_call_tensor(x, i);
    qnn_tensor_v1_t *t = &x->tensors[i].u.v1;
    t->mem_type = QNN_TENSORMEMTYPE_RAW;
    /* a chunked batch_multiple execute: its row group of the buffer */
    t->u.client_buf.data = x->bufs[i] ? (char *)x->bufs[i] + (size_t)x->row * info->byte_size
                                      : NULL;
    t->u.client_buf.data_size = (uint32_t)info->byte_size;
    if (x->dims) t->dimensions = x->dims[x->batched ? i : x->n_in + x->n_out + i];
    qnn_mem_handle_t h = NULL;
    if (x->batched) { /* k rows: client buffers (a registration describes one row group) */
      t->u.client_buf.data_size = (uint32_t)(info->byte_size * x->rows);
      continue;
    }
    if (!t->u.client_buf.data)
      continue;
    else if (x->policy == POLICY_WAIT)
      h = mem_cache_bind(&c->mem, &rt->shared, &rt->backend_lib, c->qnn, info,
                         t->u.client_buf.data);
    else if (mem_cache_lookup(&c->mem, &rt->shared, info, t->u.client_buf.data, &h) != 0)
      return -1;
    if (h) {
      t->mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
      t->u.mem_handle = h;
    }
  }
  return 0;
}

/* Waits for this graph's turn in its waiting list (turn.h), or (POLICY_TRY) only tries:
 * TURN_TAKEN, TURN_BUSY, or an error (queue full, deadline or cancel while waiting). Not under
 * the gate: a queue on one busy graph must hold up neither a context load or free (which waits
 * for the gate's readers) nor, through the gate's writer preference, the executes of other
 * graphs behind that load. */
int exec_lock_graph(exec_call *x) { return turn_acquire(x->ctl, x->policy == POLICY_TRY); }

void exec_unlock_graph(exec_call *x) { turn_release(x->ctl); }

/* The execute gate, shared: 1 entered, 0 not (POLICY_TRY: it would wait; else the call was
 * stopped while it waited: its deadline, a cancel or a close, which poke the gate). */
int exec_enter_gate(exec_call *x) {
  /* how long the graph's calls take: the gate counts an execute stuck past twice that */
  htpu_graph_timing t;
  window_read(&x->s->timing, &t);
  uint64_t usual = t.window ? t.max_ns : atomic_load(&x->s->last_exec_ns);
  /* Contexts sharing a spill-fill buffer run one at a time: their group's lane, which a
   * context's own graphs share (as without a group). */
  gate_lane *lane = x->c->sf_anchor ? &x->c->sf_anchor->sf_lane : NULL;
  if (x->policy == POLICY_TRY)
    return gate_try_enter_shared(&htpu_exec_gate, &x->gate_node, usual, lane, x->c);
  return gate_enter_shared(&htpu_exec_gate, &x->gate_node, usual, &x->ctl->reason, 0, lane,
                           x->c);
}

void exec_leave_gate(exec_call *x) { gate_leave_shared(&htpu_exec_gate, &x->gate_node); }


/* A running call stopped through the graph's abort signal (or just before graphExecute, or at
 * a wait `where` says), by the reason it was stopped for. */
int exec_stopped_at(exec_call *x, const char *where) {
  const char *name = x->gi->name;
  if (where) {
    ctl_reason why = ctl_why(x->ctl);
    if (why == REASON_STALL) return exec_decline(x, HTPU_DECLINE_GATE);
    if (why == REASON_CANCEL || why == REASON_CLOSE)
      return htpu_set_error(HTPU_ECANCELLED, 0, "graph '%s': the call was cancelled %s%s", name,
                            where,
                            why == REASON_CLOSE
                                ? ": its graph handle, context or runtime was closed"
                                : "");
    if (!x->ctl->call) STAT_ADD(executes_timed_out, 1); /* a submitted call's: when it completes */
    return htpu_set_error(HTPU_ETIMEDOUT, 0, "graph '%s': the call passed its %llu ms deadline "
                          "(timeout) %s; the graph stays usable",
                          name, (unsigned long long)(x->ctl->timeout_ns / 1000000u), where);
  }
  switch (ctl_why(x->ctl)) {
  case REASON_STALL:
    atomic_store(&x->rt->short_demoted_until, htpu_now_ns() + HTPU_STALL_DEMOTION_NS);
    return exec_decline(x, HTPU_DECLINE_STALLED);
  case REASON_CANCEL:
    return htpu_set_error(HTPU_ECANCELLED, 0, "graph '%s': the call was cancelled while it ran "
                          "(aborted); the graph stays usable", name);
  case REASON_CLOSE:
    return htpu_set_error(HTPU_ECANCELLED, 0,
                          "graph '%s': the call was cancelled while it ran (aborted): its graph "
                          "handle, context or runtime was closed",
                          name);
  default:
    if (!x->ctl->call) STAT_ADD(executes_timed_out, 1); /* a submitted call's: when it completes */
    return htpu_set_error(HTPU_ETIMEDOUT, 0,
                          "graph '%s': the call passed its %llu ms deadline (timeout); the graph "
                          "stays usable",
                          name, (unsigned long long)(x->ctl->timeout_ns / 1000000u));
  }
}

int exec_stopped(exec_call *x) { return exec_stopped_at(x, NULL); }

/* One graphExecute under the gate (shared): 0, an error, or EXEC_RESTARTED (*generation: the
 * context's generation it ran at). */
static int execute_once(exec_call *x, uint64_t *generation) {
  context_obj *c = x->c;
  const char *name = x->gi->name;
  x->mark = qnn_log_mark();
  if (!exec_enter_gate(x))
    return x->policy == POLICY_TRY ? exec_decline(x, HTPU_DECLINE_GATE) : exec_stopped_at(x, AT_GATE);
  if (c->dead) {
    exec_leave_gate(x);
    return htpu_set_error(HTPU_EDEVICE_RESET, 0,
                          "graph '%s': the DSP restarted and this model could not be recovered; "
                          "close it and load it again",
                          name);
  }
  *generation = c->generation;
  if (atomic_load(&c->stale)) { /* a recovery was left unfinished: this call goes on with it */
    exec_leave_gate(x);
    return EXEC_RESTARTED;
  }
  if (exec_bind_buffers(x) != 0) {
    exec_leave_gate(x);
    return exec_decline(x, HTPU_DECLINE_RESOURCE);
  }
  if (ctl_why(x->ctl) != REASON_NONE) { /* stopped before it reached QNN */
    exec_leave_gate(x);
    return exec_stopped(x);
  }
  STAT_ADD(executes_in_flight, 1);
  x->ran = 1;
  atomic_store(&x->ctl->reached_qnn, 1);
  x->executes++;
  /* chunked: the profile holds the first row group's execute */
  qnn_profile_handle_t prof = x->row == 0 ? x->prof.handle : NULL;
  uint64_t e0 = htpu_now_ns();
  atomic_store_explicit(&x->s->exec_started_ns, e0, memory_order_relaxed);
  x->exec_start_ns = e0;
  if (x->row == 0) x->prof.exec_start_ns = e0;
  qnn_error_t e = x->rt->backend_lib.graph_execute(x->s->qnn, x->tensors, x->n_in,
                                                   x->tensors + x->n_in, x->n_out, prof,
                                                   x->s->signal);
  x->exec_ns = htpu_now_ns() - e0;
  atomic_store_explicit(&x->s->last_exec_ns, x->exec_ns, memory_order_relaxed);
  STAT_SUB(executes_in_flight, 1);
  exec_leave_gate(x);
  return exec_answer(x, e);
}

/* What an execute's QNN answer means for the call: 0, an error, or EXEC_RESTARTED. */
int exec_answer(exec_call *x, qnn_error_t e) {
  context_obj *c = x->c;
  const char *name = x->gi->name;
  uint32_t code = QNN_ERROR_CODE(e);
  if (e == QNN_SUCCESS) return 0;
  if ((code == QNN_GRAPH_ERROR_ABORTED || code == QNN_GRAPH_ERROR_TIMED_OUT) &&
      ctl_why(x->ctl) != REASON_NONE)
    return exec_stopped(x);
  if (code == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL) {
    c->dead = 1;
    STAT_ADD(recovery_failures, 1);
    htpu_set_error(HTPU_EDEVICE_RESET, code,
                   "executing graph '%s': the DSP restarted and did not recover: QNN error %u "
                   "(%s); close the model and its runtime and open them again",
                   name, code, htpu_qnn_error_name(code));
    qnn_log_append_since(x->mark);
    return HTPU_EDEVICE_RESET;
  }
  if (code != QNN_COMMON_ERROR_SYSTEM_COMMUNICATION || x->rt->recovery_retries == 0)
    return qnn_fail(e, x->mark, "executing graph '%s' failed", name);
  return EXEC_RESTARTED;
}

/* The context recovered after a DSP restart met at `generation` (0), or an error: the call
 * bounded by its deadline, cancel and close while it waits for the gate and between tries. */
int exec_recover(exec_call *x, uint64_t generation) {
  int rc = context_recover(x->c, generation, x->ctl, x->ctl->deadline_ns);
  return rc == RECOVER_STOPPED ? exec_stopped_at(x, AT_RECOVERY) : rc;
}

/* After a DSP restart met at `generation`, with `attempt` recoveries made for the call
 * already: the context recovered (0: try again), or the restart's error once the runtime's
 * recovery_retries are used. */
int exec_recover_for_retry(exec_call *x, uint32_t attempt, uint64_t generation) {
  const uint32_t code = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  if (attempt >= x->rt->recovery_retries) {
    htpu_set_error(HTPU_EDEVICE_RESET, code,
                   "executing graph '%s': the DSP restarted again after %u recover%s: QNN "
                   "error %u (%s)",
                   x->gi->name, attempt, attempt == 1 ? "y" : "ies", code,
                   htpu_qnn_error_name(code));
    qnn_log_append_since(x->mark);
    STAT_ADD(recovery_failures, 1);
    return HTPU_EDEVICE_RESET;
  }
  /* A subsystem restart: recreate the context from its binary, then try again. */
  return exec_recover(x, generation);
}

/* graphExecute, and after a DSP restart (1007) the recovery and retry the runtime allows,
 * `first` of them used already (a submitted call's on the graphExecuteAsync path). */
int exec_attempts(exec_call *x, uint32_t first) {
  for (uint32_t attempt = first;; attempt++) {
    uint64_t generation = 0;
    int rc = execute_once(x, &generation);
    if (rc != EXEC_RESTARTED) return rc;
    /* The context is stale and stays so until recovered: the call made again on a thread
     * that may block fails the same way and recovers. */
    if (x->policy == POLICY_TRY) return exec_decline(x, HTPU_DECLINE_RECOVERY);
    rc = exec_recover_for_retry(x, attempt, generation);
    if (rc) return rc;
  }
}

/* A call of k row groups (batch_multiple.h): one execute with the multiple where the graph may
 * take it, else (also when it refuses it now, remembered) one execute per row group. */
static int execute_rows(exec_call *x) {
  if (x->rows == 1) return exec_attempts(x, 0);
  if (batch_try_one_execute(x->rt, x->s, x->rows)) {
    x->batched = 1;
    int rc = exec_attempts(x, 0);
    x->batched = 0;
    if (rc != HTPU_EQNN || !batch_is_refusal(htpu_last_qnn_code())) {
      if (!rc) batch_remember(x->s, 1);
      if (rc) htpu_append_error(" (one execute of all %u row groups: batch_multiple)", x->rows);
      return rc;
    }
    batch_remember(x->s, 0);
    htpu_clear_error();
  }
  uint64_t exec_ns = x->exec_ns;
  for (x->row = 0; x->row < x->rows; x->row++) {
    int rc = exec_attempts(x, 0);
    exec_ns += x->exec_ns;
    if (rc) {
      x->failed_chunk = x->row + 1;
      htpu_append_error(" (chunk %u of %u: batch_multiple run as one execute per chunk, the %u "
                        "before it completed)",
                        x->row, x->rows, x->row);
      x->exec_ns = exec_ns;
      return rc;
    }
  }
  x->exec_ns = exec_ns;
  return 0;
}

/* Stage 3: the execute, holding the graph's lock from its turn to its end (recovery included).
 * Lock order: the graph's execute lock, then the gate (shared); a recovery takes the gate
 * exclusively with the graph lock still held, which is safe because nothing that holds the
 * gate ever waits for a graph lock. */
static int execute_locked(exec_call *x) {
  graph_state *s = x->s;
  int taken = exec_lock_graph(x);
  if (taken == TURN_BUSY) return exec_decline(x, HTPU_DECLINE_BUSY);
  if (taken != TURN_TAKEN) return taken;
  /* Again under the lock, where every call before this one has recorded its duration: a
   * call that overran demotes the graph for every no-wait call after it. */
  htpu_decline why = exec_short_check(x);
  if (why) {
    exec_unlock_graph(x);
    return exec_decline(x, why);
  }
  uint64_t t_locked = htpu_now_ns();
  /* Asked once, when the call is about to start: a caller that went away while queued does
   * not get its turn on the DSP. */
  const htpu_exec_options *o = x->opts;
  if (o && o->cancelled && o->cancelled(o->cancel_arg)) {
    exec_unlock_graph(x);
    STAT_ADD(executes_cancelled, 1);
    return htpu_set_error(HTPU_ECANCELLED, 0,
                          "graph '%s': the call was cancelled before it ran (its caller is gone)",
                          x->gi->name);
  }
  int rc = execute_rows(x);
  /* Recorded before the unlock, so the next call to take the graph sees it; a call of k row
   * groups as what one row group took, the prediction for a call of one. */
  /* A profiled call is not: the profiler's own work (per-op events, their read-back) would
   * make one sampled call in N look long and move the next HTPU_TIMING_WINDOW calls off the
   * short path (profile_every would cost far more than the profiles). */
  if (x->ran && !x->prof.handle)
    window_record(&s->timing, (x->quant_ns + (htpu_now_ns() - t_locked)) / x->rows);
  exec_unlock_graph(x);
  return rc;
}

/* Stage 3 with the call's perf vote around it. */
int exec_voted(exec_call *x) {
  if ((unsigned)x->vote >= HTPU_PERF_PROFILE_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0, "perf_profile %d is out of range", (int)x->vote);
  /* A failed vote does not fail the inference: it runs at whatever clock is voted. */
  (void)perf_call_enter(&x->rt->perf, x->vote);
  htpu_clear_error();
  int rc = execute_locked(x);
  perf_call_leave(&x->rt->perf, x->vote);
  return rc;
}
