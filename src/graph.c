/* graph.c - graph handles: retrieve by name, describe, close. Execute is in execute.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"
#include "internal.h"
#include "qnn/qnn_signal_abi.h"
#include "loader/loader.h"
#include "base/base.h"

/* The graph's abort signal, where the runtime has execute signals. A signal the backend
 * refuses leaves the graph in no-signal mode (host-side deadlines), noted in signal_note. */
static void state_make_signal(graph_state *s, runtime_obj *rt) {
  if (!rt->execute_signals) {
    snprintf(s->signal_note, sizeof s->signal_note,
             "the backend announces no execute signals");
    return;
  }
  qnn_signal_config_t abort_cfg = {.option = QNN_SIGNAL_CONFIG_OPTION_ABORT};
  const qnn_signal_config_t *cfgs[] = {&abort_cfg, NULL};
  qnn_error_t e = rt->backend_lib.signal_create(rt->backend, cfgs, &s->signal);
  if (e != QNN_SUCCESS || !s->signal) {
    uint32_t code = QNN_ERROR_CODE(e);
    s->signal = NULL;
    snprintf(s->signal_note, sizeof s->signal_note,
             "signalCreate (abort) was refused: QNN error %u (%s)", code,
             htpu_qnn_error_name(code));
  }
}

static graph_state *state_new(context_obj *c, uint32_t index) {
  graph_state *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  runtime_obj *rt = c->rt;
  pthread_mutex_init(&s->q_lock, NULL);
  pthread_condattr_t mono; /* idle workers sleep until an execute's expected end (call.c) */
  pthread_condattr_init(&mono);
  pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
  pthread_cond_init(&s->worker_cv, &mono);
  pthread_condattr_destroy(&mono);
  pthread_cond_init(&s->calls_cv, NULL);
  pthread_cond_init(&s->async_cv, NULL);
  /* A graph sharing a spill-fill buffer runs only through graphExecute, whose gate lane keeps
   * its group's executes one at a time; QNN's async queue would run them beside each other. */
  s->async = rt->execute_async && !c->sf_anchor;
  s->queue_limit = c->queue_limit ? c->queue_limit : rt->queue_limit; /* 0: none */
  s->name = c->info->pub.graphs[index].name;
  s->lib = &rt->backend_lib;
  atomic_init(&s->contenders, 0);
  scratch_pool_init(&s->scratch, runtime_free_region);
  state_make_signal(s, rt);
  return s;
}

/* Also for a state that never joined a context (no blocks: nothing crosses to the DSP). Its
 * last handle is gone, so no call is queued, running or submitted. */
static void state_free(graph_state *s, runtime_obj *rt) {
  if (!s) return;
  calls_stop_worker(s);
  if (s->signal) rt->backend_lib.signal_free(s->signal);
  scratch_pool_destroy(&s->scratch, rt);
  pthread_cond_destroy(&s->calls_cv);
  pthread_cond_destroy(&s->async_cv);
  pthread_cond_destroy(&s->worker_cv);
  pthread_mutex_destroy(&s->q_lock);
  free(s);
}

static void graph_destroy(htpu_object *o) {
  graph_obj *g = (graph_obj *)o;
  context_obj *c = g->ctx;
  /* QNN has no graph free: a retrieved graph lives as long as its context. The graph's state
   * goes with its last handle; before the context's reference goes, as its FastRPC blocks
   * are deregistered from the context. Not under graphs_lock: that frees under the gate. */
  if (context_detach_graph(c, g->state)) state_free(g->state, c->rt);
  free(g);
  STAT_SUB(live_graphs, 1);
  obj_release(&c->base);
}

/* The graph name's index among c's graphs (NULL: its only graph, or the only one its load
 * enabled). Returns 0, or an error (set): an unknown name lists the binary's graphs, a graph
 * the load did not enable names the option that would. */
static int find_graph(const context_obj *c, const char *name, uint32_t *index) {
  const htpu_model_info *info = &c->info->pub;
  char names[1024];
  *index = 0;
  if (!name) {
    if (c->num_enabled == 1)
      while (!c->graph_on[*index]) ++*index;
    if (c->num_enabled == 1) return 0;
    model_info_graph_names(info, c->graph_on, names, sizeof names);
    return htpu_set_error(HTPU_EINVAL, 0, "the context holds %u graphs (%s); name the one to open",
                          c->num_enabled, names);
  }
  int found = -1;
  for (uint32_t i = 0; i < info->num_graphs; i++)
    if (strcmp(info->graphs[i].name, name) == 0) found = (int)i;
  *index = found < 0 ? 0 : (uint32_t)found;
  if (found >= 0 && c->graph_on[found]) return 0;
  if (found >= 0) {
    model_info_graph_names(info, c->graph_on, names, sizeof names);
    return htpu_set_error(HTPU_ENOT_FOUND, 0,
                          "graph '%s' was not loaded: the context was loaded with only %s "
                          "(htpu_load_options.graphs; in Elixir the :graph or :graphs option); "
                          "load the binary again with it",
                          name, names);
  }
  model_info_graph_names(info, NULL, names, sizeof names);
  return htpu_set_error(HTPU_ENOT_FOUND, 0, "no graph named '%s' in this context; it holds %s",
                        name, names);
}

/* Retrieves g's QNN graph and joins (or, with *fresh, starts) its state: g->state. A context
 * gone stale in a DSP restart is recovered as an execute would, then asked again. */
static int attach_state(graph_obj *g, graph_state **fresh) {
  context_obj *c = g->ctx;
  runtime_obj *rt = c->rt;
  const char *gname = c->info->pub.graphs[g->index].name;
  for (uint32_t attempt = 0;; attempt++) {
    uint64_t mark = qnn_log_mark();
    /* Shared with the gate: a recovery may be replacing the context's QNN handle (and its
     * graphs'); the graph joins the context's list before one can run. */
    gate_reader node;
    gate_enter_shared(&htpu_exec_gate, &node, 0, NULL, 0, NULL, NULL);
    if (c->dead) {
      gate_leave_shared(&htpu_exec_gate, &node);
      return htpu_set_error(HTPU_EDEVICE_RESET, 0,
                            "opening graph '%s': the DSP restarted and this model could not be "
                            "recovered; close it and load it again",
                            gname);
    }
    uint64_t generation = c->generation;
    qnn_graph_handle_t q = NULL;
    /* A context left stale by a recovery its call stopped has no QNN handle: recovered here. */
    qnn_error_t e = atomic_load(&c->stale)
                        ? QNN_COMMON_ERROR_SYSTEM_COMMUNICATION
                        : rt->backend_lib.graph_retrieve(c->qnn, gname, &q);
    /* A graph already open on this context keeps its state (and its QNN handle, the same
     * graph): every handle of it executes under one lock. */
    if (e == QNN_SUCCESS && q) g->state = context_attach_graph(c, g->index, q, fresh);
    gate_leave_shared(&htpu_exec_gate, &node);
    if (g->state) return 0;
    if (e == QNN_SUCCESS && q) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    /* The context went stale in a DSP restart (with no graph executing to notice): recover it
     * as an execute would, then retrieve again. */
    uint32_t code = QNN_ERROR_CODE(e);
    if (code == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION && attempt < rt->recovery_retries) {
      int rc = context_recover(c, generation, NULL, 0);
      if (rc) {
        htpu_append_error(" (opening graph '%s')", gname);
        return rc;
      }
      continue;
    }
    return qnn_fail(e, mark, "retrieving graph '%s' failed", gname);
  }
}

int htpu_graph_open(htpu_context *h, const char *name, htpu_graph **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_graph_open: out is NULL");
  *out = NULL;
  context_obj *c = (context_obj *)obj_acquire(h, OBJ_CONTEXT);
  if (!c) return htpu_set_error(HTPU_ECLOSED, 0, "opening a graph: the context is closed");
  uint32_t index = 0;
  int rc = find_graph(c, name, &index);
  if (rc) goto fail;
  graph_obj *g = calloc(1, sizeof *g);
  graph_state *fresh = g ? state_new(c, index) : NULL; /* used unless the graph is open already */
  if (!fresh) {
    free(g);
    rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
    goto fail;
  }
  g->ctx = c;
  g->index = index;
  rc = attach_state(g, &fresh);
  state_free(fresh, c->rt); /* NULL when it became the graph's */
  if (rc) {
    free(g);
    goto fail;
  }
  /* The reference from obj_acquire is now the graph's (g->ctx). */
  obj_init(&g->base, OBJ_GRAPH, graph_destroy);
  STAT_ADD(live_graphs, 1);
  void *handle = obj_register(&g->base);
  if (!handle) {
    obj_release(&g->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  *out = handle;
  return 0;
fail:
  obj_keep_error(&c->base);
  obj_release(&c->base);
  return rc;
}

int htpu_graph_close(htpu_graph **gp) {
  htpu_clear_error();
  if (!gp || !*gp) return 0;
  htpu_object *o = obj_unregister(*gp, OBJ_GRAPH);
  *gp = NULL;
  if (!o) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_graph_close: not a live graph handle");
  /* A no-wait execute (or timing read) in progress must not end up with the last reference:
   * the destroy would run on its thread (a BEAM normal scheduler), freeing FastRPC blocks
   * under the exclusive gate and maybe the context. So the close keeps the handle's
   * reference until they are done; they never wait, so neither does this for long. */
  obj_unpin_wait(o);
  /* The calls submitted through this handle are cancelled (waiting ones leave, a running one
   * is aborted) and waited for: none may hold the graph when its last reference goes. */
  graph_obj *g = (graph_obj *)o;
  atomic_store(&g->closing, 1); /* a call of it still converting never takes its turn */
  calls_cancel(g->state, g, 1);
  obj_release(o);
  return 0;
}

const htpu_graph_info *htpu_graph_get_info(htpu_graph *h) {
  graph_obj *g = (graph_obj *)obj_acquire(h, OBJ_GRAPH);
  if (!g) return NULL;
  const htpu_graph_info *gi = &g->ctx->info->pub.graphs[g->index];
  obj_release(&g->base); /* borrowed while the caller's handle is open */
  return gi;
}

const htpu_tensor_info *htpu_graph_input(htpu_graph *h, uint32_t index) {
  const htpu_graph_info *gi = htpu_graph_get_info(h);
  return (gi && index < gi->num_inputs) ? &gi->inputs[index] : NULL;
}

const htpu_tensor_info *htpu_graph_output(htpu_graph *h, uint32_t index) {
  const htpu_graph_info *gi = htpu_graph_get_info(h);
  return (gi && index < gi->num_outputs) ? &gi->outputs[index] : NULL;
}

int htpu_graph_get_timing(htpu_graph *h, htpu_graph_timing *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_graph_get_timing: out is NULL");
  memset(out, 0, sizeof *out);
  /* Pinned: read from threads that must not block, so never the last reference. */
  graph_obj *g = (graph_obj *)obj_acquire_pinned(h, OBJ_GRAPH);
  if (!g) return htpu_set_error(HTPU_ECLOSED, 0, "reading timing: the graph is closed");
  window_read(&g->state->timing, out);
  obj_release_pinned(&g->base);
  return 0;
}

size_t htpu_graph_last_error(htpu_graph *h, char *buf, size_t len) {
  htpu_object *o = obj_acquire(h, OBJ_GRAPH);
  if (!o) return htpu_copy_message("graph is closed", buf, len);
  size_t n = obj_copy_error(o, buf, len);
  obj_release(o);
  return n;
}
