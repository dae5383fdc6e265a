/*
 * execute.c - one graph execution.
 *
 * Per call: check the caller's buffers against the graph's tensor infos, quantize f32 inputs
 * that the graph wants in another type into a block of the graph's scratch pool (scratch.h:
 * FastRPC memory when available, so the conversion is the only pass over the data), build
 * fresh QNN tensor descriptors (never shared between calls, so concurrent executes of
 * different graphs cannot see each other's pointers), run graphExecute holding the graph's
 * lock and then the process-wide execute gate (shared), then dequantize outputs the caller
 * asked for as f32. Buffers already in the tensor's type are handed to QNN as they are: no
 * copy in, and QNN writes outputs in place. The conversions run outside the graph's lock, in
 * the call's own block, so they overlap another call's execute on the same graph.
 *
 * Each call that reached graphExecute records its own work (input conversion plus the time
 * it held the graph) in the graph's window (timing.h) before letting go of the graph. A
 * no-wait call (for the BEAM's normal schedulers) trylocks the graph and the gate, votes no
 * profile, leaves recoveries to ordinary calls, converts only in an idle scratch block and
 * passes only already-registered handles: where it would wait or cross to the DSP for
 * anything but graphExecute it declines instead.
 *
 * The lock, the window and the scratch pool are the QNN graph's (graph_state), not the
 * handle's: executes through every handle of one graph are serialized as one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_multiple.h"
#include "internal.h"
#include "profile.h"
#include "timer.h"
#include "qnn_log.h"
#include "shape/shape.h"
#include "stats.h"

typedef enum io_mode { IO_DIRECT, IO_CONVERT } io_mode;

static void format_shape(const htpu_tensor_info *t, char *buf, size_t len) {
  size_t used = 0;
  int w = snprintf(buf, len, "%s [", htpu_dtype_name(t->dtype));
  used = w > 0 ? (size_t)w : 0;
  for (uint32_t d = 0; d < t->rank && used + 1 < len; d++) {
    w = snprintf(buf + used, len - used, "%s%u", d ? "," : "", t->dims[d]);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (used + 2 <= len) snprintf(buf + used, len - used, "]");
}

/* Decides how one buffer reaches QNN; sets the error naming the tensor when it cannot. */
static int plan_io(const char *graph, const char *role, const htpu_tensor_info *t,
                   const htpu_io *io, uint32_t rows, io_mode *mode) {
  char shape[160];
  if (!io->data)
    return htpu_set_error(HTPU_EINVAL, 0, "graph '%s' %s '%s': data pointer is NULL", graph, role,
                          t->name);
  if (io->dtype == t->dtype) {
    *mode = IO_DIRECT;
  } else if (io->dtype == HTPU_F32) {
    *mode = IO_CONVERT;
  } else {
    format_shape(t, shape, sizeof shape);
    return htpu_set_error(HTPU_EMISMATCH, 0,
                          "graph '%s' %s '%s': expected %s data (or f32 to convert), given %s",
                          graph, role, t->name, htpu_dtype_name(t->dtype),
                          htpu_dtype_name(io->dtype));
  }
  size_t want = t->num_elements * htpu_dtype_size(io->dtype);
  if (rows > 1) {
    if (io->size != want * rows) {
      format_shape(t, shape, sizeof shape);
      return htpu_set_error(HTPU_EMISMATCH, 0,
                            "graph '%s' %s '%s': batch_multiple %u expects %u x %zu bytes = %zu "
                            "(%u row groups of %zu %s elements for %s), given %zu",
                            graph, role, t->name, rows, rows, want, want * rows, rows,
                            t->num_elements, htpu_dtype_name(io->dtype), shape, io->size);
    }
  } else if (io->size != want) {
    format_shape(t, shape, sizeof shape);
    return htpu_set_error(HTPU_EMISMATCH, 0,
                          "graph '%s' %s '%s': expected %zu bytes (%zu %s elements for %s), "
                          "given %zu",
                          graph, role, t->name, want, t->num_elements, htpu_dtype_name(io->dtype),
                          shape, io->size);
  }
  if (t->byte_size > UINT32_MAX)
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "graph '%s' %s '%s': %zu bytes exceed QNN's 32-bit buffer size", graph,
                          role, t->name, t->byte_size);
  return 0;
}

/* How a call meets a lock, the gate or a resource it cannot have at once: it waits (an
 * ordinary call) or declines (a no-wait call, HTPU_EBUSY). One value, handed to every step that
 * could wait, instead of a branch in each. */
typedef enum exec_policy { POLICY_WAIT, POLICY_TRY } exec_policy;

/* One call, from its plan to its outputs: what it was given, the policy it runs under, and
 * what it took on the way (released by release_call). The per-call parameters live here, so a
 * new one is one field, set in one place (call_init). */
typedef struct exec_call {
  graph_obj *g;
  graph_state *s; /* the graph's, whatever handle the call came through */
  context_obj *c;
  runtime_obj *rt;
  const htpu_graph_info *gi;
  const htpu_io *inputs, *outputs;
  uint32_t n_in, n_out;
  const htpu_exec_options *opts; /* NULL: the defaults */
  exec_policy policy;
  htpu_perf_profile vote;
  htpu_decline *declined;
  /* n each, in one allocation: inputs then outputs */
  qnn_tensor_t *tensors; /* copied once from the templates; bound again per attempt */
  void **bufs;           /* where each tensor's bytes are: the caller's buffer or a slot */
  io_mode *modes;
  scratch_block *scratch;
  uint64_t quant_ns, dequant_ns, exec_ns;
  uint64_t exec_start_ns; /* the last graphExecute's (or graphExecuteAsync's) */
  int ran; /* reached graphExecute */
  uint64_t mark; /* the QNN log position of the last attempt */
  profile_call prof; /* the call's profile handle, if it asked for one (profile.h) */
  exec_ctl *ctl;     /* its place in the graph's waiting list, deadline and abort (turn.h) */
  /* batch multiple (batch_multiple.h): k row groups per buffer (1: none) */
  uint32_t rows;
  uint32_t row;             /* the row group a chunked execute runs */
  int batched;              /* this attempt passes all rows in one execute */
  uint32_t **dims;          /* rows > 1: the call's dims per tensor, then the templates' */
  unsigned char *rows_block; /* rows > 1: the conversion block, k rows of each tensor */
  uint32_t executes, failed_chunk;
  /* executeAsync: when it was handed to QNN's queue, the generation then, and the DSP
   * restarts it met there (bounded by recovery_retries, as graphExecute's attempts are);
   * recover_due: one was notified, its next turn recovers the context first */
  uint64_t enqueued_ns, generation;
  uint32_t restarts;
  int recover_due;
  shape_call shape; /* one row group: each output's dims for this call (shape.h) */
} exec_call;

static void call_init(exec_call *x, graph_obj *g, const htpu_io *inputs, uint32_t n_in,
                      const htpu_io *outputs, uint32_t n_out, const htpu_exec_options *opts,
                      htpu_decline *declined) {
  memset(x, 0, sizeof *x);
  x->g = g;
  x->s = g->state;
  x->c = g->ctx;
  x->rt = g->ctx->rt;
  x->gi = &g->ctx->info->pub.graphs[g->index];
  x->inputs = inputs;
  x->outputs = outputs;
  x->n_in = n_in;
  x->n_out = n_out;
  x->opts = opts;
  x->policy = opts && opts->no_wait ? POLICY_TRY : POLICY_WAIT;
  x->vote = opts ? opts->perf_profile : HTPU_PERF_DEFAULT;
  x->declined = declined;
  x->rows = opts && opts->batch_multiple > 1 ? opts->batch_multiple : 1;
}

static const htpu_tensor_info *call_tensor(const exec_call *x, uint32_t i) {
  return i < x->n_in ? &x->gi->inputs[i] : &x->gi->outputs[i - x->n_in];
}

static const htpu_io *call_io(const exec_call *x, uint32_t i) {
  return i < x->n_in ? &x->inputs[i] : &x->outputs[i - x->n_in];
}

/* Points each descriptor at its buffer: by registered handle when the buffer lies in a shared
 * (FastRPC) allocation (the caller's, or a scratch block's), else as a client buffer. Runs
 * under the gate, as handles can change (so again for each attempt). A no-wait call only looks
 * handles up: -1 when one would have to be registered first (memRegister crosses to the DSP). */
static int bind_buffers(exec_call *x) {
  context_obj *c = x->c;
  runtime_obj *rt = x->rt;
  for (uint32_t i = 0; i < x->n_in + x->n_out; i++) {
    const htpu_tensor_info *info = call_tensor(x, i);
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
static int lock_graph(exec_call *x) { return turn_acquire(x->ctl, x->policy == POLICY_TRY); }

static void unlock_graph(exec_call *x) { turn_release(x->ctl); }

/* The execute gate, shared: 1 entered, 0 not (POLICY_TRY only). */
static int enter_gate(exec_policy policy) {
  if (policy == POLICY_TRY) return gate_try_enter_shared(&htpu_exec_gate);
  gate_enter_shared(&htpu_exec_gate);
  return 1;
}

/* Declines a no-wait call (HTPU_EBUSY, *declined = why), with a message naming the graph. */
static int decline(const exec_call *x, htpu_decline why) {
  static const char *const reasons[] = {
      [HTPU_DECLINE_UNKNOWN] = "fewer than the timing window's calls are recorded (duration "
                               "unknown)",
      [HTPU_DECLINE_LONG] = "a recent call took longer than the short-call limit",
      [HTPU_DECLINE_BUSY] = "another execute holds the graph, waits for it or is in QNN's "
                            "queue for it",
      [HTPU_DECLINE_GATE] = "a context load, free or recovery holds the execute gate",
      [HTPU_DECLINE_PERF] = "a per-call performance vote may cross to the DSP",
      [HTPU_DECLINE_RECOVERY] = "the DSP restarted and the recovery may block",
      [HTPU_DECLINE_RESOURCE] = "a FastRPC buffer would have to be allocated or registered "
                                "first (a DSP round trip)",
      [HTPU_DECLINE_STALLED] = "it was stopped at its short-call bound (the DSP stalled); no-wait "
                               "calls of this runtime are declined for a while",
      [HTPU_DECLINE_UNBOUNDED] = "this backend has no execute signals, so the call could not be "
                                 "bounded",
  };
  *x->declined = why;
  STAT_ADD(executes_declined, 1);
  return htpu_set_error(HTPU_EBUSY, 0,
                        "graph '%s': a no-wait call did not %s: %s; make it again without no_wait",
                        x->gi->name,
                        why == HTPU_DECLINE_STALLED ? "end in time" : "run, as it would have waited",
                        reasons[why]);
}

/* The short-call check of a no-wait call (htpu_exec_options.short_ns). */
static htpu_decline short_check(const exec_call *x) {
  if (x->policy != POLICY_TRY) return HTPU_DECLINE_NONE;
  /* The short path needs a bound: the graph's abort signal. */
  if (!x->s->signal) return HTPU_DECLINE_UNBOUNDED;
  /* A stall seen by any graph of the runtime (HTPU_DECLINE_STALLED) demotes them all. */
  if (htpu_now_ns() < atomic_load(&x->rt->short_demoted_until)) return HTPU_DECLINE_LONG;
  if (!x->opts->short_ns) return HTPU_DECLINE_NONE;
  htpu_graph_timing t;
  window_read(&x->s->timing, &t);
  if (t.window < HTPU_TIMING_WINDOW) return HTPU_DECLINE_UNKNOWN;
  return t.max_ns > x->opts->short_ns ? HTPU_DECLINE_LONG : HTPU_DECLINE_NONE;
}

/* Stage 1, the plan: counts, then (no-wait) the cheap look before any work, then how each
 * buffer reaches QNN and the scratch block the conversions need. */
static int plan_call(exec_call *x) {
  const htpu_graph_info *gi = x->gi;
  uint32_t n_in = x->n_in, n_out = x->n_out, n = n_in + n_out;
  if (n_in != gi->num_inputs || n_out != gi->num_outputs)
    return htpu_set_error(HTPU_EMISMATCH, 0,
                          "graph '%s' has %u inputs and %u outputs; given %u and %u", gi->name,
                          gi->num_inputs, gi->num_outputs, n_in, n_out);
  if ((n_in && !x->inputs) || (n_out && !x->outputs))
    return htpu_set_error(HTPU_EINVAL, 0, "graph '%s': inputs/outputs array is NULL", gi->name);
  if (x->rows > 1) {
    int rc = batch_check_call(gi, x->rows, x->policy == POLICY_TRY);
    if (!rc) rc = shape_check_rows(gi, x->rows);
    if (rc) return rc;
  }
  if (x->policy == POLICY_TRY) {
    /* Before converting anything: a graph known to be long, or held or awaited by another
     * call (the trylock under it would fail), is declined for nothing, so a contended call
     * does not convert its inputs here and again in the call made without no_wait. The
     * trylock stays the decision; this is only the cheap look before the work. */
    if (!x->s->signal) return decline(x, HTPU_DECLINE_UNBOUNDED); /* the short path needs a bound */
    if (x->vote != HTPU_PERF_DEFAULT && (unsigned)x->vote < HTPU_PERF_PROFILE_COUNT)
      return decline(x, HTPU_DECLINE_PERF);
    if (atomic_load(&x->s->contenders) != 0) return decline(x, HTPU_DECLINE_BUSY);
    htpu_decline why = short_check(x);
    if (why) return decline(x, why);
  }
  size_t each = sizeof *x->tensors + sizeof *x->bufs + sizeof *x->modes;
  x->tensors = calloc(n ? n : 1, each);
  if (!x->tensors) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  x->bufs = (void **)(x->tensors + n);
  x->modes = (io_mode *)(x->bufs + n);
  size_t scratch_size = 0;
  int converts = 0;
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *t = call_tensor(x, i);
    int rc = plan_io(gi->name, i < n_in ? "input" : "output", t, call_io(x, i), x->rows,
                     &x->modes[i]);
    if (rc) return rc;
    converts |= x->modes[i] == IO_CONVERT;
    scratch_size += scratch_slot_size(t);
  }
  if (!converts) return 0;
  if (x->rows > 1) { /* the pool's blocks hold one row group */
    x->rows_block = batch_block_alloc(scratch_size * x->rows);
    return x->rows_block ? 0 : htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%u x %zu bytes)",
                                              x->rows, scratch_size);
  }
  if (x->policy == POLICY_TRY) {
    /* A new block is FastRPC memory (rpcmem_alloc, an ioctl) whose slots must then be
     * registered: that is for the call made again without no_wait. */
    x->scratch = scratch_take_idle(&x->s->scratch);
    return x->scratch ? 0 : decline(x, HTPU_DECLINE_RESOURCE);
  }
  x->scratch = scratch_take(&x->s->scratch, x->rt, scratch_size);
  return x->scratch ? 0 : htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)",
                                         scratch_size);
}

/* Stage 2: the descriptors (from the templates made at introspection: the only copy), each
 * tensor's buffer, and the f32 inputs quantized into their slots. */
static int convert_inputs(exec_call *x) {
  const graph_templates *tm = &x->c->info->templates[x->g->index];
  size_t at = 0;
  for (uint32_t i = 0; i < x->n_in + x->n_out; i++) {
    int is_in = i < x->n_in;
    const htpu_tensor_info *t = call_tensor(x, i);
    const htpu_io *io = call_io(x, i);
    x->tensors[i] = is_in ? tm->inputs[i] : tm->outputs[i - x->n_in];
    x->bufs[i] = io->data;
    size_t slot = at; /* every non-f32 tensor has its slot, converted this time or not */
    at += scratch_slot_size(t) * x->rows;
    if (x->modes[i] != IO_CONVERT) continue;
    x->bufs[i] = (x->rows_block ? x->rows_block : x->scratch->data) + slot;
    if (!is_in) continue;
    uint64_t q0 = htpu_now_ns();
    uint32_t bad = 0;
    int rc = batch_quantize_rows(t, io->data, x->bufs[i], x->rows, &bad);
    x->quant_ns += htpu_now_ns() - q0;
    if (rc) {
      if (x->rows > 1) x->failed_chunk = bad + 1;
      htpu_append_error(" (graph '%s')", x->gi->name);
      return rc;
    }
  }
  if (x->rows > 1 && !(x->dims = batch_dims_make(x->tensors, x->n_in + x->n_out, x->rows)))
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  /* one row group: the outputs' dims arrays are the call's, for the backend to write */
  return x->rows > 1 ? 0 : shape_begin(&x->shape, x->gi, x->tensors + x->n_in);
}

/* A running call stopped through the graph's abort signal (or just before graphExecute), by
 * the reason it was stopped for. */
static int stopped_error(exec_call *x) {
  const char *name = x->gi->name;
  switch (ctl_why(x->ctl)) {
  case REASON_STALL:
    atomic_store(&x->rt->short_demoted_until, htpu_now_ns() + HTPU_STALL_DEMOTION_NS);
    return decline(x, HTPU_DECLINE_STALLED);
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

static int execute_answer(exec_call *x, qnn_error_t e);

/* One graphExecute under the gate (shared): 0, an error, or EXEC_RESTARTED (*generation: the
 * context's generation it ran at). */
static int execute_once(exec_call *x, uint64_t *generation) {
  context_obj *c = x->c;
  const char *name = x->gi->name;
  x->mark = qnn_log_mark();
  if (!enter_gate(x->policy)) return decline(x, HTPU_DECLINE_GATE);
  if (c->dead) {
    gate_leave_shared(&htpu_exec_gate);
    return htpu_set_error(HTPU_EDEVICE_RESET, 0,
                          "graph '%s': the DSP restarted and this model could not be recovered; "
                          "close it and load it again",
                          name);
  }
  *generation = c->generation;
  if (bind_buffers(x) != 0) {
    gate_leave_shared(&htpu_exec_gate);
    return decline(x, HTPU_DECLINE_RESOURCE);
  }
  if (ctl_why(x->ctl) != REASON_NONE) { /* stopped before it reached QNN */
    gate_leave_shared(&htpu_exec_gate);
    return stopped_error(x);
  }
  STAT_ADD(executes_in_flight, 1);
  x->ran = 1;
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
  gate_leave_shared(&htpu_exec_gate);
  return execute_answer(x, e);
}

/* What an execute's QNN answer means for the call: 0, an error, or EXEC_RESTARTED. */
static int execute_answer(exec_call *x, qnn_error_t e) {
  context_obj *c = x->c;
  const char *name = x->gi->name;
  uint32_t code = QNN_ERROR_CODE(e);
  if (e == QNN_SUCCESS) return 0;
  if ((code == QNN_GRAPH_ERROR_ABORTED || code == QNN_GRAPH_ERROR_TIMED_OUT) &&
      ctl_why(x->ctl) != REASON_NONE)
    return stopped_error(x);
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

/* After a DSP restart met at `generation`, with `attempt` recoveries made for the call
 * already: the context recovered (0: try again), or the restart's error once the runtime's
 * recovery_retries are used. */
static int recover_for_retry(exec_call *x, uint32_t attempt, uint64_t generation) {
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
  return context_recover(x->c, generation);
}

/* graphExecute, and after a DSP restart (1007) the recovery and retry the runtime allows,
 * `first` of them used already (a submitted call's on the graphExecuteAsync path). */
static int execute_attempts(exec_call *x, uint32_t first) {
  for (uint32_t attempt = first;; attempt++) {
    uint64_t generation = 0;
    int rc = execute_once(x, &generation);
    if (rc != EXEC_RESTARTED) return rc;
    /* The context is stale and stays so until recovered: the call made again on a thread
     * that may block fails the same way and recovers. */
    if (x->policy == POLICY_TRY) return decline(x, HTPU_DECLINE_RECOVERY);
    rc = recover_for_retry(x, attempt, generation);
    if (rc) return rc;
  }
}

/* A call of k row groups (batch_multiple.h): one execute with the multiple where the graph may
 * take it, else (also when it refuses it now, remembered) one execute per row group. */
static int execute_rows(exec_call *x) {
  if (x->rows == 1) return execute_attempts(x, 0);
  if (batch_try_one_execute(x->rt, x->s, x->rows)) {
    x->batched = 1;
    int rc = execute_attempts(x, 0);
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
    int rc = execute_attempts(x, 0);
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
  int taken = lock_graph(x);
  if (taken == TURN_BUSY) return decline(x, HTPU_DECLINE_BUSY);
  if (taken != TURN_TAKEN) return taken;
  /* Again under the lock, where every call before this one has recorded its duration: a
   * call that overran demotes the graph for every no-wait call after it. */
  htpu_decline why = short_check(x);
  if (why) {
    unlock_graph(x);
    return decline(x, why);
  }
  uint64_t t_locked = htpu_now_ns();
  /* Asked once, when the call is about to start: a caller that went away while queued does
   * not get its turn on the DSP. */
  const htpu_exec_options *o = x->opts;
  if (o && o->cancelled && o->cancelled(o->cancel_arg)) {
    unlock_graph(x);
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
  unlock_graph(x);
  return rc;
}

/* Stage 3 with the call's perf vote around it. */
static int execute_voted(exec_call *x) {
  if ((unsigned)x->vote >= HTPU_PERF_PROFILE_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0, "perf_profile %d is out of range", (int)x->vote);
  /* A failed vote does not fail the inference: it runs at whatever clock is voted. */
  (void)perf_call_enter(&x->rt->perf, x->vote);
  htpu_clear_error();
  int rc = execute_locked(x);
  perf_call_leave(&x->rt->perf, x->vote);
  return rc;
}

/* Stage 4: the shapes the outputs came out in (shape.h), and outputs the caller asked for as
 * f32 dequantized out of their slots, as many elements as were produced. */
static int convert_outputs(exec_call *x) {
  int rc = x->shape.n_out ? shape_read(&x->shape, x->gi) : 0;
  if (rc) return rc;
  for (uint32_t i = x->n_in; i < x->n_in + x->n_out; i++) {
    if (x->modes[i] != IO_CONVERT) continue;
    uint64_t d0 = htpu_now_ns();
    uint32_t bad = 0;
    htpu_tensor_info produced;
    const htpu_tensor_info *t = shape_output_info(&x->shape, i - x->n_in, call_tensor(x, i),
                                                  &produced);
    rc = batch_dequantize_rows(t, x->bufs[i], x->outputs[i - x->n_in].data, x->rows, &bad);
    x->dequant_ns += htpu_now_ns() - d0;
    if (rc && x->rows > 1) x->failed_chunk = bad + 1;
    if (rc) return rc;
  }
  shape_report(&x->shape, x->gi, x->rows, x->opts ? x->opts->output_dims : NULL);
  return 0;
}

static void finish_call(exec_call *x, htpu_exec_stats *stats, uint64_t t_start) {
  if (x->scratch) scratch_give(&x->s->scratch, x->scratch);
  free(x->tensors); /* with bufs and modes */
  free(x->rows_block);
  free(x->dims);
  shape_end(&x->shape);
  if (x->exec_ns) {
    STAT_ADD(execute_ns_total, x->exec_ns);
    STAT_SET(execute_ns_last, x->exec_ns);
  }
  STAT_ADD(quantize_ns_total, x->quant_ns);
  STAT_ADD(dequantize_ns_total, x->dequant_ns);
  if (stats) {
    stats->execute_ns = x->exec_ns;
    stats->quantize_ns = x->quant_ns;
    stats->dequantize_ns = x->dequant_ns;
    stats->total_ns = htpu_now_ns() - t_start;
    stats->executes = x->executes;
    stats->failed_chunk = x->failed_chunk;
    stats->execute_start_ns = x->exec_start_ns;
  }
}

/* A profiled call (htpu_exec_options.profile_level): its own QNN profile handle, read back
 * and freed when the call ends (profile.h). */
static int begin_profile(exec_call *x) {
  int rc = profile_call_begin(x->rt, x->opts->profile_level, x->opts->profile_max_events,
                              &x->prof);
  if (rc) htpu_append_error(" (graph '%s')", x->gi->name);
  return rc;
}

/* The call's events, read once its execute ended: into *out (NULL when it failed, or when the
 * read failed: then dropped, the call's answer unchanged). Returns the read's result. */
static int finish_profile(exec_call *x, int rc, uint64_t t_start, htpu_profile **out) {
  return profile_call_finish_execute(x->rt, &x->prof, rc, x->gi->name, out, t_start, x->quant_ns,
                                     x->exec_ns, x->dequant_ns);
}

/* The pipeline: plan, convert inputs, execute under the graph's lock, convert outputs. */
static int run(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
               uint32_t n_out, const htpu_exec_options *opts, htpu_exec_stats *stats,
               htpu_decline *declined, exec_ctl *ctl, uint64_t t_start) {
  exec_call x;
  call_init(&x, g, inputs, n_in, outputs, n_out, opts, declined);
  x.ctl = ctl;
  int rc = 0;
  if (opts && opts->profile_level) {
    if (!opts->profile)
      rc = htpu_set_error(HTPU_EINVAL, 0,
                          "graph '%s': profile_level is set but profile (where to store the "
                          "events) is NULL",
                          x.gi->name);
    else
      *opts->profile = NULL;
  }
  if (!rc) rc = plan_call(&x);
  if (!rc && opts && opts->profile_level) rc = begin_profile(&x);
  if (!rc) rc = convert_inputs(&x);
  if (!rc) rc = execute_voted(&x);
  if (!rc) rc = convert_outputs(&x);
  if (x.prof.handle) {
    /* A read that fails after a good call leaves the call's answer (0) and says why in the
     * last error (htpu_exec_options.profile). */
    htpu_profile *p = NULL;
    (void)finish_profile(&x, rc, t_start, &p);
    *opts->profile = p;
  }
  finish_call(&x, stats, t_start);
  return rc;
}

int htpu_graph_execute(htpu_graph *h, const htpu_io *inputs, uint32_t num_inputs,
                       const htpu_io *outputs, uint32_t num_outputs, htpu_exec_stats *stats) {
  return htpu_graph_execute_ex(h, inputs, num_inputs, outputs, num_outputs, NULL, stats);
}

/* The values of the deadline and priority options (the rest is checked by the plan). */
int exec_check_options(const htpu_exec_options *o) {
  if (!o) return 0;
  if (o->timeout_ns > HTPU_MAX_TIMEOUT_NS)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "timeout_ns %llu is above the limit of %llu ns (24 h); expected 0 (the "
                          "default) up to the limit",
                          (unsigned long long)o->timeout_ns,
                          (unsigned long long)HTPU_MAX_TIMEOUT_NS);
  if ((unsigned)o->priority >= HTPU_PRIORITY_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "priority %d is out of range; expected 0 (default), 1 (low), 2 (normal), "
                          "3 (normal_high) or 4 (high)",
                          o->priority);
  return 0;
}

/* What a submit checks at once: the counts and every buffer against its tensor. */
int exec_check_io(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
                  uint32_t n_out, uint32_t rows) {
  const htpu_graph_info *gi = &g->ctx->info->pub.graphs[g->index];
  if (n_in != gi->num_inputs || n_out != gi->num_outputs)
    return htpu_set_error(HTPU_EMISMATCH, 0,
                          "graph '%s' has %u inputs and %u outputs; given %u and %u", gi->name,
                          gi->num_inputs, gi->num_outputs, n_in, n_out);
  if ((n_in && !inputs) || (n_out && !outputs))
    return htpu_set_error(HTPU_EINVAL, 0, "graph '%s': inputs/outputs array is NULL", gi->name);
  for (uint32_t i = 0; i < n_in + n_out; i++) {
    io_mode mode;
    int rc = plan_io(gi->name, i < n_in ? "input" : "output",
                     i < n_in ? &gi->inputs[i] : &gi->outputs[i - n_in],
                     i < n_in ? &inputs[i] : &outputs[i - n_in], rows > 1 ? rows : 1, &mode);
    if (rc) return rc;
  }
  return 0;
}

/* Synchronous with a deadline on a graph without an abort signal: run as a submitted call in
 * copy mode and waited for, so the caller gets its timeout (the execute runs on in the
 * background). A profile rides on the call and is taken from it. A submitted call takes no
 * `cancelled`: the wait asks it every CANCEL_POLL_NS instead (from this thread, without the
 * graph's lock) and cancels the call when it says so, waiting or running (the NIF's dirty
 * calls all carry one, their caller-gone check); one that never ran is counted in
 * executes_cancelled, as on the synchronous path. */
#define CANCEL_POLL_NS 10000000ull /* 10 ms */
static int run_as_submitted(htpu_graph *h, const htpu_io *inputs, uint32_t n_in,
                            const htpu_io *outputs, uint32_t n_out,
                            const htpu_exec_options *opts, htpu_exec_stats *stats) {
  htpu_call *call = NULL;
  htpu_exec_options o;
  if (opts)
    o = *opts;
  else
    memset(&o, 0, sizeof o); /* bounded by its context's exec_timeout_ns */
  o.profile = NULL; /* a submitted call's is taken with htpu_call_take_profile */
  o.cancelled = NULL;
  o.cancel_arg = NULL;
  if (o.profile_level && !opts->profile)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "profile_level is set but profile (where to store the events) is NULL");
  if (o.profile_level) *opts->profile = NULL;
  int rc = htpu_graph_submit(h, inputs, n_in, outputs, n_out, &o, NULL, NULL, &call);
  if (rc) return rc;
  int asked = 0; /* the caller-gone check said so: the call was cancelled for it */
  if (opts && opts->cancelled) {
    /* HTPU_ETIMEDOUT is also an ended call's rc: ended is what htpu_call_result says */
    while (htpu_call_wait(call, CANCEL_POLL_NS) == HTPU_ETIMEDOUT &&
           htpu_call_result(call, NULL, NULL, 0) == HTPU_EBUSY)
      if (!asked && opts->cancelled(opts->cancel_arg)) {
        asked = 1;
        htpu_call_cancel(call);
      }
  }
  htpu_call_wait(call, UINT64_MAX);
  char msg[HTPU_ERROR_MAX];
  htpu_exec_stats st = {0};
  rc = htpu_call_result(call, &st, msg, sizeof msg);
  if (stats) *stats = st;
  /* counted as the synchronous path counts a caller-gone skip: a call that never ran */
  if (rc == HTPU_ECANCELLED && asked && !st.executes) STAT_ADD(executes_cancelled, 1);
  if (rc) {
    htpu_call_release(&call);
    return htpu_set_error(rc, 0, "%s", msg);
  }
  /* A profile that could not be read leaves its message as the last error (rc stays 0). */
  if (o.profile_level) (void)htpu_call_take_profile(call, opts->profile);
  htpu_call_release(&call);
  return 0;
}

/* The no-wait call's bound where the graph has a signal: short_ns x 4, at most 1 ms unless
 * the call gave its own timeout (then at most that). Without short_ns the same cap: every
 * no-wait call is bounded, as its caller is a thread that must stay responsive whatever the
 * DSP does, whether or not it asked for the duration check. */
#define NO_WAIT_MAX_BOUND_NS 1000000u
static void no_wait_bound(exec_ctl *ctl, const htpu_exec_options *o, uint64_t t_start) {
  if (!ctl->s->signal) return;
  uint64_t cap = o->timeout_ns ? o->timeout_ns : NO_WAIT_MAX_BOUND_NS;
  uint64_t b = !o->short_ns                   ? cap
               : o->short_ns > UINT64_MAX / 4 ? UINT64_MAX
                                              : o->short_ns * 4;
  if (b > cap) b = cap;
  ctl->timeout_ns = b;
  ctl->deadline_ns = t_start + b;
  ctl->stall_bound = 1;
}

/* A submitted call's pipeline in stages (call.c): the same steps as run(), but the call's
 * inputs are converted at its submit and its outputs after it let go of the graph, on
 * whichever thread, so neither conversion runs while the call holds the graph's turn. */
struct exec_staged {
  exec_call x;
  htpu_decline declined; /* never set: submitted calls are not no-wait calls */
  uint64_t t_start;
};

int exec_stage_prepare(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
                       uint32_t n_out, const htpu_exec_options *opts, exec_ctl *ctl,
                       uint64_t t_start, exec_staged **out) {
  *out = NULL;
  exec_staged *st = malloc(sizeof *st);
  if (!st) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  call_init(&st->x, g, inputs, n_in, outputs, n_out, opts, &st->declined);
  st->declined = HTPU_DECLINE_NONE;
  st->t_start = t_start;
  st->x.ctl = ctl;
  int rc = 0;
  if ((unsigned)st->x.vote >= HTPU_PERF_PROFILE_COUNT)
    rc = htpu_set_error(HTPU_EINVAL, 0, "perf_profile %d is out of range", (int)st->x.vote);
  if (!rc) rc = plan_call(&st->x);
  if (!rc && opts && opts->profile_level) rc = begin_profile(&st->x);
  if (!rc) rc = convert_inputs(&st->x);
  if (rc) {
    profile_call_end(st->x.rt, &st->x.prof, 0, "", &(htpu_profile *){NULL});
    finish_call(&st->x, NULL, t_start);
    free(st);
    return rc;
  }
  *out = st;
  return 0;
}

int exec_stage_execute(exec_staged *st) { return execute_voted(&st->x); }

/* ---- executeAsync ----------------------------------------------------------------------------
 * Where the runtime has it (htpu_runtime_info.execute_async), a submitted call of one row group
 * is handed to QNN's queue for the graph and lets go of its turn at once: the next call is
 * handed over while this one runs, and QNN runs them in FIFO order (QnnGraph.h: one queue,
 * shared with graphExecute). Until its notification the call holds the gate (shared: no load,
 * free or recovery meanwhile), its perf vote and its buffers. At most HTPU_ASYNC_DEPTH calls
 * of a graph are in QNN's queue; the others wait in the graph's own list, where priorities,
 * deadlines and cancels act. graphExecuteAsync always gets a NULL signal (309, which would allow
 * one, is never asked), so calls on this path are in copy mode (call.c): a deadline or cancel
 * ends them on the host while QNN's execute runs on into the call's copies.
 * Anything else (k row groups) runs synchronously on the worker, and a graph whose
 * graphExecuteAsync refuses (1000, 6004) gets graphExecute from then on. */


/* Under the turn: hands the call to QNN's queue. 0 (the notification will come), or what the
 * call's execute answered at once: an error, EXEC_RESTARTED, or EXEC_SYNC (run it with
 * graphExecute). */
#define EXEC_SYNC 2
static int enqueue_once(exec_call *x, qnn_notify_fn_t notify, void *param) {
  context_obj *c = x->c;
  graph_state *s = x->s;
  x->mark = qnn_log_mark();
  gate_enter_shared(&htpu_exec_gate);
  if (c->dead) {
    gate_leave_shared(&htpu_exec_gate);
    return htpu_set_error(HTPU_EDEVICE_RESET, 0,
                          "graph '%s': the DSP restarted and this model could not be recovered; "
                          "close it and load it again",
                          x->gi->name);
  }
  x->generation = c->generation;
  bind_buffers(x); /* a waiting call registers what it needs: never declines */
  if (ctl_why(x->ctl) != REASON_NONE) {
    gate_leave_shared(&htpu_exec_gate);
    return stopped_error(x);
  }
  STAT_ADD(executes_in_flight, 1);
  pthread_mutex_lock(&s->q_lock);
  s->async_in_flight++;
  x->ctl->enqueued = 1;
  pthread_mutex_unlock(&s->q_lock);
  x->enqueued_ns = x->exec_start_ns = x->prof.exec_start_ns = htpu_now_ns();
  qnn_error_t e = x->rt->backend_lib.graph_execute_async(s->qnn, x->tensors, x->n_in,
                                                         x->tensors + x->n_in, x->n_out,
                                                         x->prof.handle, NULL, notify, param);
  if (e == QNN_SUCCESS) return 0; /* x is the notification's from here */
  /* Refused at the call: never notified. */
  pthread_mutex_lock(&s->q_lock);
  s->async_in_flight--;
  x->ctl->enqueued = 0;
  pthread_mutex_unlock(&s->q_lock);
  STAT_SUB(executes_in_flight, 1);
  gate_leave_shared(&htpu_exec_gate);
  /* Not supported (UNSUPPORTED_FEATURE is 1000): remembered, graphExecute from now on. A full
   * queue (which the header also says blocks instead): this call waits in graphExecute. */
  if (QNN_ERROR_CODE(e) == QNN_COMMON_ERROR_NOT_SUPPORTED) {
    pthread_mutex_lock(&s->q_lock);
    s->async = 0;
    pthread_mutex_unlock(&s->q_lock);
    return EXEC_SYNC;
  }
  if (QNN_ERROR_CODE(e) == QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL) return EXEC_SYNC;
  x->ran = 1;
  x->executes++;
  return execute_answer(x, e);
}

int exec_stage_run(exec_staged *st, qnn_notify_fn_t notify, void *param) {
  exec_call *x = &st->x;
  graph_state *s = x->s;
  pthread_mutex_lock(&s->q_lock);
  int async = s->async && x->rows == 1;
  pthread_mutex_unlock(&s->q_lock);
  if (!async) return execute_voted(x);
  (void)perf_call_enter(&x->rt->perf, x->vote);
  htpu_clear_error();
  int rc = lock_graph(x); /* granted before it reached the worker */
  if (rc == TURN_TAKEN && x->recover_due) {
    /* A DSP restart notified for its last hand-over: the context is stale until recovered
     * (a no-op where another call recovered it since). */
    x->recover_due = 0;
    x->restarts++;
    rc = context_recover(x->c, x->generation);
    if (rc) unlock_graph(x);
  }
  if (rc != TURN_TAKEN) {
    perf_call_leave(&x->rt->perf, x->vote);
    return rc;
  }
  /* Room in QNN's queue (a stop ends the wait: the timer wakes it). */
  pthread_mutex_lock(&s->q_lock);
  while (s->async_in_flight >= HTPU_ASYNC_DEPTH && ctl_why(x->ctl) == REASON_NONE)
    pthread_cond_wait(&s->async_cv, &s->q_lock);
  pthread_mutex_unlock(&s->q_lock);
  rc = enqueue_once(x, notify, param);
  if (rc == 0) {
    /* Still a contender until notified: a no-wait call's first look sees the graph busy. */
    atomic_fetch_add(&s->contenders, 1);
    unlock_graph(x); /* the ctl is the call's: alive until its notification is handled */
    return EXEC_PENDING;
  }
  /* Not queued: the call runs here with graphExecute, a restart recovered first. */
  uint64_t t_locked = htpu_now_ns();
  if (rc == EXEC_RESTARTED) { /* refused at the call: a restart like graphExecute's */
    rc = recover_for_retry(x, x->restarts, x->generation);
    if (!rc) rc = execute_attempts(x, ++x->restarts);
  } else if (rc == EXEC_SYNC) {
    htpu_clear_error();
    rc = execute_attempts(x, x->restarts);
  }
  if (x->ran && !x->prof.handle) /* a profiled call stays out of the window (execute_locked) */
    window_record(&s->timing, x->quant_ns + (htpu_now_ns() - t_locked));
  unlock_graph(x);
  perf_call_leave(&x->rt->perf, x->vote);
  return rc;
}

int exec_stage_notified(exec_staged *st, qnn_error_t e) {
  exec_call *x = &st->x;
  graph_state *s = x->s;
  x->exec_ns = htpu_now_ns() - x->enqueued_ns; /* its time in QNN's queue included */
  x->ran = 1;
  x->executes++;
  if (!x->prof.handle) window_record(&s->timing, x->quant_ns + x->exec_ns);
  STAT_SUB(executes_in_flight, 1);
  gate_leave_shared(&htpu_exec_gate);
  perf_call_leave(&x->rt->perf, x->vote);
  pthread_mutex_lock(&s->q_lock);
  s->async_in_flight--;
  x->ctl->enqueued = 0;
  pthread_cond_signal(&s->async_cv);
  pthread_mutex_unlock(&s->q_lock);
  atomic_fetch_sub(&s->contenders, 1);
  int rc = execute_answer(x, e);
  if (rc != EXEC_RESTARTED) return rc;
  if (x->restarts < x->rt->recovery_retries) {
    x->recover_due = 1;
    return EXEC_RESTARTED; /* queued again: its next turn recovers the context and runs it */
  }
  const uint32_t code = QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  STAT_ADD(recovery_failures, 1);
  return htpu_set_error(HTPU_EDEVICE_RESET, code,
                        "executing graph '%s': the DSP restarted again after %u recover%s: QNN "
                        "error %u (%s)",
                        x->gi->name, x->restarts, x->restarts == 1 ? "y" : "ies", code,
                        htpu_qnn_error_name(code));
}

int exec_stage_finish(exec_staged *st, int rc, htpu_exec_stats *stats, htpu_profile **profile,
                      int *profile_rc) {
  *profile = NULL;
  *profile_rc = 0;
  if (!rc) rc = convert_outputs(&st->x);
  if (st->x.prof.handle) {
    /* Read here, on the worker, before the call's done runs; a failed read is the profile's
     * (*profile_rc, its message the last error), never the call's. */
    *profile_rc = finish_profile(&st->x, rc, st->t_start, profile);
  }
  finish_call(&st->x, stats, st->t_start);
  free(st);
  int ran = rc != HTPU_ECANCELLED && rc != HTPU_ETIMEDOUT;
  if (ran) STAT_ADD(executes, 1);
  if (rc && ran) STAT_ADD(execute_errors, 1);
  return rc;
}

void exec_stage_discard(exec_staged *st) {
  if (!st) return;
  profile_call_end(st->x.rt, &st->x.prof, 0, "", &(htpu_profile *){NULL});
  finish_call(&st->x, NULL, st->t_start);
  free(st);
}

int htpu_graph_execute_ex(htpu_graph *h, const htpu_io *inputs, uint32_t num_inputs,
                          const htpu_io *outputs, uint32_t num_outputs,
                          const htpu_exec_options *opts, htpu_exec_stats *stats) {
  htpu_clear_error();
  if (stats) memset(stats, 0, sizeof *stats);
  int bad = exec_check_options(opts);
  if (bad) {
    STAT_ADD(execute_errors, 1);
    return bad;
  }
  /* A no-wait call pins the graph: its release is then never the last (htpu_graph_close waits
   * for the pin), so the graph's destroy, which frees FastRPC memory under the exclusive gate
   * and may free the context, never runs on its thread. */
  int no_wait = opts && opts->no_wait;
  graph_obj *g = (graph_obj *)(no_wait ? obj_acquire_pinned(h, OBJ_GRAPH)
                                       : obj_acquire(h, OBJ_GRAPH));
  if (!g) {
    STAT_ADD(execute_errors, 1);
    return htpu_set_error(HTPU_ECLOSED, 0, "executing: the graph is closed");
  }
  uint64_t t_start = htpu_now_ns();
  /* Without signals only a call run on copies can end at its deadline: one that names a timeout,
   * its own or its model's (the context's exec_timeout_ns, e.g. htpu --timeout or load_model's
   * :timeout). The runtime's default (60 s, a bound for hung DSP calls) is not worth a copy of
   * every call's buffers. */
  uint64_t timeout_ns = opts && opts->timeout_ns ? opts->timeout_ns : g->ctx->exec_timeout_ns;
  if (!no_wait && timeout_ns && !g->state->signal) {
    obj_release(&g->base);
    return run_as_submitted(h, inputs, num_inputs, outputs, num_outputs, opts, stats);
  }
  exec_ctl ctl;
  ctl_init(&ctl, g, opts ? opts->priority : 0, opts ? opts->timeout_ns : 0, t_start);
  if (no_wait) no_wait_bound(&ctl, opts, t_start);
  ctl_arm(&ctl);
  htpu_decline declined = HTPU_DECLINE_NONE;
  int rc = run(g, inputs, num_inputs, outputs, num_outputs, opts, stats, &declined, &ctl, t_start);
  ctl_destroy(&ctl);
  if (stats) stats->declined = declined;
  /* A cancelled, timed-out-while-waiting or declined call did not run: it is counted in
   * executes_cancelled, executes_timed_out or executes_declined only. */
  int ran = rc != HTPU_ECANCELLED && rc != HTPU_ETIMEDOUT && !declined;
  if (ran) STAT_ADD(executes, 1);
  if (rc && ran) {
    STAT_ADD(execute_errors, 1);
    obj_keep_error(&g->base);
  }
  /* Released after the gate: dropping the last reference may free the context, which takes
   * the gate exclusively. */
  if (no_wait)
    obj_release_pinned(&g->base);
  else
    obj_release(&g->base);
  return rc;
}
