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

#include "internal.h"
#include "qnn_log.h"
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
                   const htpu_io *io, io_mode *mode) {
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
  if (io->size != want) {
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

/* Points each descriptor at its buffer: by registered handle when the buffer lies in a shared
 * (FastRPC) allocation (the caller's, or a scratch block's), else as a client buffer. Runs
 * under the gate, as handles can change. A no-wait call only looks handles up: -1 when one
 * would have to be registered first (memRegister crosses to the DSP). */
static int bind_buffers(graph_obj *g, qnn_tensor_t *tensors, uint32_t n_in, uint32_t n,
                        int no_wait) {
  context_obj *c = g->ctx;
  runtime_obj *rt = c->rt;
  const htpu_graph_info *gi = &c->info->pub.graphs[g->index];
  for (uint32_t i = 0; i < n; i++) {
    qnn_tensor_v1_t *t = &tensors[i].u.v1;
    void *data = t->u.client_buf.data;
    qnn_mem_handle_t h = NULL;
    if (data) {
      const htpu_tensor_info *info = i < n_in ? &gi->inputs[i] : &gi->outputs[i - n_in];
      if (!no_wait)
        h = mem_cache_bind(&c->mem, &rt->shared, &rt->backend_lib, c->qnn, info, data);
      else if (mem_cache_lookup(&c->mem, &rt->shared, info, data, &h) != 0)
        return -1;
    }
    if (h) {
      /* The client buffer stays recorded in the template copy for a later rebind. */
      t->mem_type = QNN_TENSORMEMTYPE_MEMHANDLE;
      t->u.mem_handle = h;
    }
  }
  return 0;
}

/* Waits for this graph's turn. Not under the gate: a queue on one busy graph must hold up
 * neither a context load or free (which waits for the gate's readers) nor, through the
 * gate's writer preference, the executes of other graphs behind that load. The caller counted
 * itself in g->contenders first. */
static void lock_graph(graph_state *g) {
  if (pthread_mutex_trylock(&g->exec_lock) != 0) {
    /* Another execute of this graph is running: queueing is worth counting (it is where
     * latency goes when one model is shared by more callers than it can serve). */
    STAT_ADD(executes_waiting, 1);
    pthread_mutex_lock(&g->exec_lock);
    STAT_SUB(executes_waiting, 1);
  }
}

static void unlock_graph(graph_state *g) {
  pthread_mutex_unlock(&g->exec_lock);
  atomic_fetch_sub(&g->contenders, 1);
}

/* Declines a no-wait call (HTPU_EBUSY, *declined = why), with a message naming the graph. */
static int decline(const char *graph, htpu_decline why, htpu_decline *declined) {
  static const char *const reasons[] = {
      [HTPU_DECLINE_UNKNOWN] = "fewer than the timing window's calls are recorded (duration "
                               "unknown)",
      [HTPU_DECLINE_LONG] = "a recent call took longer than the short-call limit",
      [HTPU_DECLINE_BUSY] = "another execute holds the graph (or waits for it)",
      [HTPU_DECLINE_GATE] = "a context load, free or recovery holds the execute gate",
      [HTPU_DECLINE_PERF] = "a per-call performance vote may cross to the DSP",
      [HTPU_DECLINE_RECOVERY] = "the DSP restarted and the recovery may block",
      [HTPU_DECLINE_RESOURCE] = "a FastRPC buffer would have to be allocated or registered "
                                "first (a DSP round trip)",
  };
  *declined = why;
  STAT_ADD(executes_declined, 1);
  return htpu_set_error(HTPU_EBUSY, 0,
                        "graph '%s': a no-wait call did not run, as it would have waited: %s; "
                        "make it again without no_wait",
                        graph, reasons[why]);
}

/* The short-call check of a no-wait call (htpu_exec_options.short_ns). */
static htpu_decline short_check(const call_window *w, uint64_t short_ns) {
  htpu_graph_timing t;
  window_read(w, &t);
  if (t.window < HTPU_TIMING_WINDOW) return HTPU_DECLINE_UNKNOWN;
  return t.max_ns > short_ns ? HTPU_DECLINE_LONG : HTPU_DECLINE_NONE;
}

/* graphExecute, and after a DSP restart (1007) the recovery and retry the runtime allows.
 * Lock order: the graph's execute lock, then the gate (shared); a recovery takes the gate
 * exclusively with the graph lock still held, which is safe because nothing that holds the
 * gate ever waits for a graph lock. */
static int execute_with_recovery(graph_obj *g, const qnn_tensor_t *prepared, uint32_t n_in,
                                 uint32_t n_out, const htpu_exec_options *opts,
                                 uint64_t quant_ns, uint64_t *exec_ns, htpu_decline *declined) {
  graph_state *s = g->state; /* the graph's, whatever handle the call came through */
  context_obj *c = g->ctx;
  runtime_obj *rt = c->rt;
  const char *name = c->info->pub.graphs[g->index].name;
  uint32_t n = n_in + n_out;
  int no_wait = opts && opts->no_wait;
  qnn_tensor_t *tensors = malloc((n ? n : 1) * sizeof *tensors);
  if (!tensors) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  atomic_fetch_add(&s->contenders, 1);
  if (!no_wait) {
    lock_graph(s);
  } else if (pthread_mutex_trylock(&s->exec_lock) != 0) {
    atomic_fetch_sub(&s->contenders, 1);
    free(tensors);
    return decline(name, HTPU_DECLINE_BUSY, declined);
  } else if (opts->short_ns) {
    /* Again under the lock, where every call before this one has recorded its duration: a
     * call that overran demotes the graph for every no-wait call after it. */
    htpu_decline why = short_check(&s->timing, opts->short_ns);
    if (why) {
      unlock_graph(s);
      free(tensors);
      return decline(name, why, declined);
    }
  }
  uint64_t t_locked = htpu_now_ns();
  int ran = 0;
  /* Asked once, when the call is about to start: a caller that went away while queued does
   * not get its turn on the DSP. */
  if (opts && opts->cancelled && opts->cancelled(opts->cancel_arg)) {
    unlock_graph(s);
    free(tensors);
    STAT_ADD(executes_cancelled, 1);
    return htpu_set_error(HTPU_ECANCELLED, 0,
                          "graph '%s': the call was cancelled before it ran (its caller is gone)",
                          name);
  }
  int rc = 0;
  for (uint32_t attempt = 0;; attempt++) {
    memcpy(tensors, prepared, n * sizeof *tensors);
    uint64_t mark = qnn_log_mark();
    if (!no_wait) {
      gate_enter_shared(&htpu_exec_gate);
    } else if (!gate_try_enter_shared(&htpu_exec_gate)) {
      rc = decline(name, HTPU_DECLINE_GATE, declined);
      break;
    }
    if (c->dead) {
      gate_leave_shared(&htpu_exec_gate);
      rc = htpu_set_error(HTPU_EDEVICE_RESET, 0,
                          "graph '%s': the DSP restarted and this model could not be recovered; "
                          "close it and load it again",
                          name);
      break;
    }
    uint64_t generation = c->generation;
    if (bind_buffers(g, tensors, n_in, n, no_wait) != 0) {
      gate_leave_shared(&htpu_exec_gate);
      rc = decline(name, HTPU_DECLINE_RESOURCE, declined);
      break;
    }
    STAT_ADD(executes_in_flight, 1);
    ran = 1;
    uint64_t e0 = htpu_now_ns();
    qnn_error_t e = rt->backend_lib.graph_execute(s->qnn, tensors, n_in, tensors + n_in, n_out,
                                                  NULL, NULL);
    *exec_ns = htpu_now_ns() - e0;
    STAT_SUB(executes_in_flight, 1);
    gate_leave_shared(&htpu_exec_gate);
    uint32_t code = QNN_ERROR_CODE(e);
    if (e == QNN_SUCCESS) {
      rc = 0;
      break;
    }
    if (code == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL) {
      c->dead = 1;
      STAT_ADD(recovery_failures, 1);
      htpu_set_error(HTPU_EDEVICE_RESET, code,
                     "executing graph '%s': the DSP restarted and did not recover: QNN error %u "
                     "(%s); close the model and its runtime and open them again",
                     name, code, htpu_qnn_error_name(code));
      qnn_log_append_since(mark);
      rc = HTPU_EDEVICE_RESET;
      break;
    }
    if (code != QNN_COMMON_ERROR_SYSTEM_COMMUNICATION || rt->recovery_retries == 0) {
      rc = qnn_fail(e, mark, "executing graph '%s' failed", name);
      break;
    }
    if (no_wait) {
      /* The context is stale and stays so until recovered: the call made again on a thread
       * that may block fails the same way and recovers. */
      rc = decline(name, HTPU_DECLINE_RECOVERY, declined);
      break;
    }
    if (attempt >= rt->recovery_retries) {
      htpu_set_error(HTPU_EDEVICE_RESET, code,
                     "executing graph '%s': the DSP restarted again after %u recover%s: QNN "
                     "error %u (%s)",
                     name, attempt, attempt == 1 ? "y" : "ies", code, htpu_qnn_error_name(code));
      qnn_log_append_since(mark);
      STAT_ADD(recovery_failures, 1);
      rc = HTPU_EDEVICE_RESET;
      break;
    }
    /* A subsystem restart: recreate the context from its binary, then try again. */
    rc = context_recover(c, generation);
    if (rc) break;
  }
  /* Recorded before the unlock, so the next call to take the graph sees it. */
  if (ran) window_record(&s->timing, quant_ns + (htpu_now_ns() - t_locked));
  unlock_graph(s);
  free(tensors);
  return rc;
}

static int run(graph_obj *g, const htpu_io *inputs, uint32_t n_in, const htpu_io *outputs,
               uint32_t n_out, const htpu_exec_options *opts, htpu_exec_stats *stats,
               htpu_decline *declined) {
  uint64_t t_start = htpu_now_ns();
  graph_state *s = g->state;
  context_obj *c = g->ctx;
  runtime_obj *rt = c->rt;
  const htpu_graph_info *gi = &c->info->pub.graphs[g->index];
  const graph_templates *tm = &c->info->templates[g->index];

  if (n_in != gi->num_inputs || n_out != gi->num_outputs)
    return htpu_set_error(HTPU_EMISMATCH, 0,
                          "graph '%s' has %u inputs and %u outputs; given %u and %u", gi->name,
                          gi->num_inputs, gi->num_outputs, n_in, n_out);
  if ((n_in && !inputs) || (n_out && !outputs))
    return htpu_set_error(HTPU_EINVAL, 0, "graph '%s': inputs/outputs array is NULL", gi->name);
  htpu_perf_profile vote = opts ? opts->perf_profile : HTPU_PERF_DEFAULT;
  if (opts && opts->no_wait) {
    /* Before converting anything: a graph known to be long, or held or awaited by another
     * call (the trylock under it would fail), is declined for nothing, so a contended call
     * does not convert its inputs here and again in the call made without no_wait. The
     * trylock stays the decision; this is only the cheap look before the work. */
    if (vote != HTPU_PERF_DEFAULT && (unsigned)vote < HTPU_PERF_PROFILE_COUNT)
      return decline(gi->name, HTPU_DECLINE_PERF, declined);
    if (atomic_load(&s->contenders) != 0) return decline(gi->name, HTPU_DECLINE_BUSY, declined);
    htpu_decline why = opts->short_ns ? short_check(&s->timing, opts->short_ns) : 0;
    if (why) return decline(gi->name, why, declined);
  }

  uint32_t n = n_in + n_out;
  io_mode *modes = calloc(n ? n : 1, sizeof *modes);
  qnn_tensor_t *tensors = calloc(n ? n : 1, sizeof *tensors);
  int rc = (!modes || !tensors) ? htpu_set_error(HTPU_ENOMEM, 0, "out of memory") : 0;
  size_t scratch_size = 0;
  int converts = 0;
  for (uint32_t i = 0; !rc && i < n; i++) {
    int is_in = i < n_in;
    const htpu_tensor_info *t = is_in ? &gi->inputs[i] : &gi->outputs[i - n_in];
    rc = plan_io(gi->name, is_in ? "input" : "output", t, is_in ? &inputs[i] : &outputs[i - n_in],
                 &modes[i]);
    converts |= !rc && modes[i] == IO_CONVERT;
    scratch_size += scratch_slot_size(t);
  }
  scratch_block *scratch = NULL;
  if (!rc && converts && opts && opts->no_wait) {
    /* A new block is FastRPC memory (rpcmem_alloc, an ioctl) whose slots must then be
     * registered: that is for the call made again without no_wait. */
    scratch = scratch_take_idle(&s->scratch);
    if (!scratch) rc = decline(gi->name, HTPU_DECLINE_RESOURCE, declined);
  } else if (!rc && converts) {
    scratch = scratch_take(&s->scratch, rt, scratch_size);
    if (!scratch) rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", scratch_size);
  }

  /* Fill the descriptors and convert inputs. */
  uint64_t quant_ns = 0, dequant_ns = 0, exec_ns = 0;
  size_t at = 0;
  for (uint32_t i = 0; !rc && i < n; i++) {
    int is_in = i < n_in;
    const htpu_tensor_info *t = is_in ? &gi->inputs[i] : &gi->outputs[i - n_in];
    const htpu_io *io = is_in ? &inputs[i] : &outputs[i - n_in];
    tensors[i] = is_in ? tm->inputs[i] : tm->outputs[i - n_in];
    void *buf = io->data;
    size_t slot = at; /* every non-f32 tensor has its slot, converted this time or not */
    at += scratch_slot_size(t);
    if (modes[i] == IO_CONVERT) {
      buf = scratch->data + slot;
      if (is_in) {
        uint64_t q0 = htpu_now_ns();
        rc = htpu_quantize(t, io->data, buf);
        quant_ns += htpu_now_ns() - q0;
        if (rc) htpu_append_error(" (graph '%s')", gi->name);
      }
    }
    tensors[i].u.v1.mem_type = QNN_TENSORMEMTYPE_RAW;
    tensors[i].u.v1.u.client_buf.data = buf;
    tensors[i].u.v1.u.client_buf.data_size = (uint32_t)t->byte_size;
  }

  if (!rc && (unsigned)vote >= HTPU_PERF_PROFILE_COUNT)
    rc = htpu_set_error(HTPU_EINVAL, 0, "perf_profile %d is out of range", (int)vote);
  if (!rc) {
    /* A failed vote does not fail the inference: it runs at whatever clock is voted. */
    (void)perf_call_enter(&rt->perf, vote);
    htpu_clear_error();
    rc = execute_with_recovery(g, tensors, n_in, n_out, opts, quant_ns, &exec_ns, declined);
    perf_call_leave(&rt->perf, vote);
  }

  for (uint32_t i = n_in; !rc && i < n; i++) {
    if (modes[i] != IO_CONVERT) continue;
    uint64_t d0 = htpu_now_ns();
    rc = htpu_dequantize(&gi->outputs[i - n_in], tensors[i].u.v1.u.client_buf.data,
                         outputs[i - n_in].data);
    dequant_ns += htpu_now_ns() - d0;
  }

  if (scratch) scratch_give(&s->scratch, scratch);
  free(tensors);
  free(modes);

  if (exec_ns) {
    STAT_ADD(execute_ns_total, exec_ns);
    STAT_SET(execute_ns_last, exec_ns);
  }
  STAT_ADD(quantize_ns_total, quant_ns);
  STAT_ADD(dequantize_ns_total, dequant_ns);
  if (stats) {
    stats->execute_ns = exec_ns;
    stats->quantize_ns = quant_ns;
    stats->dequantize_ns = dequant_ns;
    stats->total_ns = htpu_now_ns() - t_start;
  }
  return rc;
}

int htpu_graph_execute(htpu_graph *h, const htpu_io *inputs, uint32_t num_inputs,
                       const htpu_io *outputs, uint32_t num_outputs, htpu_exec_stats *stats) {
  return htpu_graph_execute_ex(h, inputs, num_inputs, outputs, num_outputs, NULL, stats);
}

int htpu_graph_execute_ex(htpu_graph *h, const htpu_io *inputs, uint32_t num_inputs,
                          const htpu_io *outputs, uint32_t num_outputs,
                          const htpu_exec_options *opts, htpu_exec_stats *stats) {
  htpu_clear_error();
  if (stats) memset(stats, 0, sizeof *stats);
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
  htpu_decline declined = HTPU_DECLINE_NONE;
  int rc = run(g, inputs, num_inputs, outputs, num_outputs, opts, stats, &declined);
  if (stats) stats->declined = declined;
  /* A cancelled or declined call did not run: it is counted in executes_cancelled or
   * executes_declined only. */
  int ran = rc != HTPU_ECANCELLED && !declined;
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
