/*
 * execute.c - the synchronous execute (htpu_graph_execute_ex): the pipeline run on the
 * caller's thread (plan, inputs, execute under the graph's turn, outputs: plan.c and
 * attempts.c), a no-wait call's bound, and a call with a deadline on a graph without an abort
 * signal run as a submitted call (call.c) so the caller still gets its timeout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "batch_multiple.h"
#include "exec_internal.h"
#include "loader/loader.h"

/* The pipeline: plan, convert inputs, execute under the graph's lock, convert outputs. */
static int exec_run(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
               uint32_t n_out, const htpu_exec_options *opts, htpu_exec_stats *stats,
               htpu_decline *declined, exec_ctl *ctl, uint64_t t_start) {
  exec_call x;
  exec_call_init(&x, g, inputs, n_in, outputs, n_out, opts, declined);
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
  if (!rc) rc = exec_plan(&x);
  if (!rc && opts && opts->profile_level) rc = exec_begin_profile(&x);
  if (!rc) rc = exec_convert_inputs(&x);
  if (!rc) rc = exec_voted(&x);
  if (!rc) rc = exec_convert_outputs(&x);
  if (x.prof.handle) {
    /* A read that fails after a good call leaves the call's answer (0) and says why in the
     * last error (htpu_exec_options.profile). */
    htpu_profile *p = NULL;
    (void)exec_finish_profile(&x, rc, t_start, &p);
    *opts->profile = p;
  }
  exec_finish_call(&x, stats, t_start);
  return rc;
}

int htpu_graph_execute(htpu_graph *h, const htpu_io *inputs, uint32_t num_inputs,
                       const htpu_io *outputs, uint32_t num_outputs, htpu_exec_stats *stats) {
  return htpu_graph_execute_ex(h, inputs, num_inputs, outputs, num_outputs, NULL, stats);
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
  int rc = exec_run(g, inputs, num_inputs, outputs, num_outputs, opts, stats, &declined, &ctl, t_start);
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
