/*
 * plan.c - a call's plan and its conversions (exec_internal.h): the counts and each buffer
 * checked against the graph's tensor infos, how each reaches QNN (as it is, or f32 converted
 * in a slot of the call's scratch block), the no-wait look before any work, f32 inputs
 * quantized before the call waits for its turn and outputs dequantized after it let go, and
 * what the call took given back at its end.
 *
 * Buffers already in the tensor's type are handed to QNN as they are: no copy in, and QNN
 * writes outputs in place. The conversions run outside the graph's turn, in the call's own
 * block (scratch.h: FastRPC memory when available, so the conversion is the only pass over
 * the data), so they overlap another call's execute on the same graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "batch_multiple.h"
#include "exec_internal.h"
#include "loader/loader.h"

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

void exec_call_init(exec_call *x, graph_obj *g, const htpu_io *inputs, uint32_t n_in,
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

const htpu_tensor_info *exec_call_tensor(const exec_call *x, uint32_t i) {
  return i < x->n_in ? &x->gi->inputs[i] : &x->gi->outputs[i - x->n_in];
}

static const htpu_io *exec_call_io(const exec_call *x, uint32_t i) {
  return i < x->n_in ? &x->inputs[i] : &x->outputs[i - x->n_in];
}

/* Declines a no-wait call (HTPU_EBUSY, *declined = why), with a message naming the graph. */
int exec_decline(const exec_call *x, htpu_decline why) {
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
htpu_decline exec_short_check(const exec_call *x) {
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
int exec_plan(exec_call *x) {
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
    if (!x->s->signal) return exec_decline(x, HTPU_DECLINE_UNBOUNDED); /* the short path needs a bound */
    if (x->vote != HTPU_PERF_DEFAULT && (unsigned)x->vote < HTPU_PERF_PROFILE_COUNT)
      return exec_decline(x, HTPU_DECLINE_PERF);
    if (atomic_load(&x->s->contenders) != 0) return exec_decline(x, HTPU_DECLINE_BUSY);
    htpu_decline why = exec_short_check(x);
    if (why) return exec_decline(x, why);
  }
  size_t each = sizeof *x->tensors + sizeof *x->bufs + sizeof *x->modes;
  x->tensors = calloc(n ? n : 1, each);
  if (!x->tensors) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  x->bufs = (void **)(x->tensors + n);
  x->modes = (io_mode *)(x->bufs + n);
  size_t scratch_size = 0;
  int converts = 0;
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *t = exec_call_tensor(x, i);
    int rc = plan_io(gi->name, i < n_in ? "input" : "output", t, exec_call_io(x, i), x->rows,
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
    return x->scratch ? 0 : exec_decline(x, HTPU_DECLINE_RESOURCE);
  }
  x->scratch = scratch_take(&x->s->scratch, x->rt, scratch_size);
  return x->scratch ? 0 : htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)",
                                         scratch_size);
}

/* Stage 2: the descriptors (from the templates made at introspection: the only copy), each
 * tensor's buffer, and the f32 inputs quantized into their slots. */
int exec_convert_inputs(exec_call *x) {
  const graph_templates *tm = &x->c->info->templates[x->g->index];
  size_t at = 0;
  for (uint32_t i = 0; i < x->n_in + x->n_out; i++) {
    int is_in = i < x->n_in;
    const htpu_tensor_info *t = exec_call_tensor(x, i);
    const htpu_io *io = exec_call_io(x, i);
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

/* Stage 4: the shapes the outputs came out in (shape.h), and outputs the caller asked for as
 * f32 dequantized out of their slots, as many elements as were produced. */
int exec_convert_outputs(exec_call *x) {
  int rc = x->shape.n_out ? shape_read(&x->shape, x->gi) : 0;
  if (rc) return rc;
  for (uint32_t i = x->n_in; i < x->n_in + x->n_out; i++) {
    if (x->modes[i] != IO_CONVERT) continue;
    uint64_t d0 = htpu_now_ns();
    uint32_t bad = 0;
    htpu_tensor_info produced;
    const htpu_tensor_info *t = shape_output_info(&x->shape, i - x->n_in,
                                                  exec_call_tensor(x, i), &produced);
    rc = batch_dequantize_rows(t, x->bufs[i], x->outputs[i - x->n_in].data, x->rows, &bad);
    x->dequant_ns += htpu_now_ns() - d0;
    if (rc && x->rows > 1) x->failed_chunk = bad + 1;
    if (rc) return rc;
  }
  shape_report(&x->shape, x->gi, x->rows, x->opts ? x->opts->output_dims : NULL);
  return 0;
}

void exec_finish_call(exec_call *x, htpu_exec_stats *stats, uint64_t t_start) {
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
int exec_begin_profile(exec_call *x) {
  int rc = profile_call_begin(x->rt, x->opts->profile_level, x->opts->profile_max_events,
                              &x->prof);
  if (rc) htpu_append_error(" (graph '%s')", x->gi->name);
  return rc;
}

/* The call's events, read once its execute ended: into *out (NULL when it failed, or when the
 * read failed: then dropped, the call's answer unchanged). Returns the read's result. */
int exec_finish_profile(exec_call *x, int rc, uint64_t t_start, htpu_profile **out) {
  return profile_call_finish_execute(x->rt, &x->prof, rc, x->gi->name, out, t_start, x->quant_ns,
                                     x->exec_ns, x->dequant_ns);
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
