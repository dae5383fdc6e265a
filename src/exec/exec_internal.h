/*
 * exec_internal.h - what the files of exec/ share and nothing outside may use: one call's state
 * (exec_call) and the steps of its pipeline, by file:
 *   plan.c      the plan: counts, sizes, policies, the conversions and the call's end
 *   attempts.c  the execute: the graph's turn, the gate, graphExecute and its retries
 *   staged.c    a submitted call's pipeline in stages (prepare, run, notified, finish)
 *   execute.c   the synchronous public entry (htpu_graph_execute_ex) over the others
 */
#ifndef HTPU_EXEC_INTERNAL_H
#define HTPU_EXEC_INTERNAL_H

#include "exec.h"
#include "internal.h"
#include "profile/profile.h"
#include "shape/shape.h"

typedef enum io_mode { IO_DIRECT, IO_CONVERT } io_mode;

/* How a call meets a lock, the gate or a resource it cannot have at once: it waits (an
 * ordinary call) or declines (a no-wait call, HTPU_EBUSY). One value, handed to every step that
 * could wait, instead of a branch in each. */
typedef enum exec_policy { POLICY_WAIT, POLICY_TRY } exec_policy;

/* One call, from its plan to its outputs: what it was given, the policy it runs under, and
 * what it took on the way (released by exec_finish_call). The per-call parameters live here, so a
 * new one is one field, set in one place (exec_call_init). */
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
  gate_reader gate_node; /* its place among the executes in the gate (gate.h) */
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

/* Where a call was when it was stopped, for its message (NULL: running, or about to). */
#define AT_GATE "while it waited for the execute gate (a context load, free or DSP recovery in " \
                "this process held it); it never ran"
#define AT_RECOVERY "while the DSP restarted and its model was being recovered (the next call " \
                    "goes on with the recovery)"

/* Positive answers of the execute steps (errors are negative): the DSP restarted (1007) and
 * the runtime allows a recovery; the call's execute must run with graphExecute (its async
 * hand-over was refused); the call is in QNN's async queue (its notification comes). */
#define EXEC_RESTARTED 1
#define EXEC_SYNC 2
#define EXEC_PENDING 3

/* ---- plan.c ---- */
void exec_call_init(exec_call *x, graph_obj *g, const htpu_io *inputs, uint32_t n_in,
                    const htpu_io *outputs, uint32_t n_out, const htpu_exec_options *opts,
                    htpu_decline *declined);
/* Tensor i of the call: its inputs, then its outputs. */
const htpu_tensor_info *exec_call_tensor(const exec_call *x, uint32_t i);
/* Declines a no-wait call (HTPU_EBUSY, *declined = why), with a message naming the graph. */
int exec_decline(const exec_call *x, htpu_decline why);
/* The short-call check of a no-wait call (htpu_exec_options.short_ns). */
htpu_decline exec_short_check(const exec_call *x);
/* Stage 1: counts, the no-wait look, each buffer's way to QNN, the call's scratch block. */
int exec_plan(exec_call *x);
/* Stage 2: the descriptors and buffers; f32 inputs quantized into their slots. */
int exec_convert_inputs(exec_call *x);
/* Stage 4: outputs asked for as f32, dequantized out of their slots. */
int exec_convert_outputs(exec_call *x);
/* What the call took goes back; its figures into the counters and *stats (NULL: none). */
void exec_finish_call(exec_call *x, htpu_exec_stats *stats, uint64_t t_start);
/* A profiled call's QNN profile handle, and its events read once it ended. */
int exec_begin_profile(exec_call *x);
int exec_finish_profile(exec_call *x, int rc, uint64_t t_start, htpu_profile **out);
/* The values of the deadline and priority options; a submit's counts and buffers. */
int exec_check_options(const htpu_exec_options *o);
int exec_check_io(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
                  uint32_t n_out, uint32_t rows); /* rows: batch_multiple (0, 1: none) */

/* ---- attempts.c ---- */
/* Each descriptor pointed at its buffer (by registered handle where it can); -1 when a
 * no-wait call would have to register one first. Under the gate. */
int exec_bind_buffers(exec_call *x);
/* The graph's turn (turn.h): TURN_TAKEN, TURN_BUSY (no-wait) or an error. */
int exec_lock_graph(exec_call *x);
void exec_unlock_graph(exec_call *x);
/* The execute gate, shared: 1 entered, 0 not (no-wait: it would wait; else stopped). */
int exec_enter_gate(exec_call *x);
void exec_leave_gate(exec_call *x);
/* The error of a call stopped by its deadline, cancel, close or short-call bound, running or
 * (where: AT_GATE, AT_RECOVERY) waiting. */
int exec_stopped_at(exec_call *x, const char *where);
int exec_stopped(exec_call *x);
/* What an execute's QNN answer means for the call: 0, an error, or EXEC_RESTARTED. */
int exec_answer(exec_call *x, qnn_error_t e);
/* The context recovered after a restart met at `generation`, bounded by the call. */
int exec_recover(exec_call *x, uint64_t generation);
/* After a restart, with `attempt` recoveries made already: recovered (0), or its error. */
int exec_recover_for_retry(exec_call *x, uint32_t attempt, uint64_t generation);
/* graphExecute with its recoveries, `first` of them used already. */
int exec_attempts(exec_call *x, uint32_t first);
/* Stage 3 with the call's perf vote: the execute under the graph's turn. */
int exec_voted(exec_call *x);

/* ---- staged.c: a submitted call's pipeline (call.c, call_life.c) ----
 * Its conversions never run while it holds the graph's turn: prepare (plan, inputs converted;
 * at submit, before it queues), run (its turn granted: graphExecute or the async hand-over,
 * then the turn goes to the next call), notified (async), finish (outputs converted, stats;
 * frees the stage) or discard (it never ran). The buffers and options given to prepare must
 * live until finish or discard. */
typedef struct exec_staged exec_staged;
int exec_stage_prepare(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
                       uint32_t n_out, const htpu_exec_options *opts, exec_ctl *ctl,
                       uint64_t t_start, exec_staged **out);
int exec_stage_execute(exec_staged *st);
/* A worker with the call's turn: where the graph takes graphExecuteAsync, hands the call to
 * QNN's queue and lets go of the turn (EXEC_PENDING: notify(param, status) comes on a backend
 * thread, which calls exec_stage_notified); else as exec_stage_execute. */
int exec_stage_run(exec_staged *st, qnn_notify_fn_t notify, void *param);
/* In the notification: the call lets go of what it held while queued. Its rc, or
 * EXEC_RESTARTED: queue it again (turn_requeue), its next run recovers the context first. */
int exec_stage_notified(exec_staged *st, qnn_error_t e);
/* rc: the execute's. Returns the call's. A profiled call's events are read here (before its
 * done): *profile gets them (NULL when the call failed or the read did), *profile_rc the
 * read's result (its message the last error; the call's rc does not change). */
int exec_stage_finish(exec_staged *st, int rc, htpu_exec_stats *stats, htpu_profile **profile,
                      int *profile_rc);
void exec_stage_discard(exec_staged *st);
/* Whether the call reached graphExecute (or QNN's queue) in its run. */
int exec_stage_ran(const exec_staged *st);

#endif
