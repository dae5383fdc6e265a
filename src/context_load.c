/* context_load.c - one context's load, step by step (load.h): its choices, its QNN context
 * under the execute gate, the context object becoming a handle; and its teardown, in QNN's
 * order, when its last reference goes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "exec/exec.h"
#include "load.h"
#include "loader/loader.h"
#include "model/model.h"
#include "qnn/qnn_signal_abi.h"
#include "qnnset/qnnset.h"

/* The load options' values that need no binary (the profile fields are checked where they
 * are used; the graph names against the binary, in choose_graphs). */
static int check_load_options(const htpu_load_options *lo, const char *origin) {
  if (!lo) return 0;
  if ((unsigned)lo->priority >= HTPU_PRIORITY_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "loading %s: priority %d is out of range; expected 0 (default), 1 "
                          "(low), 2 (normal), 3 (normal_high) or 4 (high)",
                          origin, lo->priority);
  if (lo->timeout_ns > HTPU_MAX_TIMEOUT_NS || lo->exec_timeout_ns > HTPU_MAX_TIMEOUT_NS)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "loading %s: %s %llu is above the limit of %llu ns (24 h)", origin,
                          lo->timeout_ns > HTPU_MAX_TIMEOUT_NS ? "timeout_ns" : "exec_timeout_ns",
                          (unsigned long long)(lo->timeout_ns > HTPU_MAX_TIMEOUT_NS
                                                   ? lo->timeout_ns
                                                   : lo->exec_timeout_ns),
                          (unsigned long long)HTPU_MAX_TIMEOUT_NS);
  if (lo->memory_limit_mb > HTPU_MAX_MEMORY_LIMIT_MB)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "loading %s: memory_limit_mb %llu is out of range; expected 0 (no "
                          "hint) to %llu (MB: in bytes the limit must fit QNN's 64 bits)",
                          origin, (unsigned long long)lo->memory_limit_mb,
                          (unsigned long long)HTPU_MAX_MEMORY_LIMIT_MB);
  if (lo->num_graphs && !lo->graphs)
    return htpu_set_error(HTPU_EINVAL, 0, "loading %s: num_graphs is %u but graphs is NULL",
                          origin, lo->num_graphs);
  for (uint32_t i = 0; i < lo->num_graphs; i++)
    if (!lo->graphs[i])
      return htpu_set_error(HTPU_EINVAL, 0, "loading %s: graphs[%u] is NULL; expected a graph "
                            "name", origin, i);
  return 0;
}

/* The graphs the load deserializes (all, or lo->graphs: each must be in the binary) and
 * their spill-fill need. The names point into the model info. */
static int choose_graphs(context_obj *c, const htpu_load_options *lo, const char *origin) {
  const htpu_model_info *m = &c->info->pub;
  c->graph_on = model_info_alloc(c->info, m->num_graphs);
  if (!c->graph_on) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  uint32_t asked = lo && lo->graphs ? lo->num_graphs : 0;
  for (uint32_t g = 0; g < m->num_graphs; g++) c->graph_on[g] = asked == 0;
  for (uint32_t i = 0; i < asked; i++) {
    uint32_t g = 0;
    while (g < m->num_graphs && strcmp(m->graphs[g].name, lo->graphs[i]) != 0) g++;
    if (g == m->num_graphs) {
      char names[1024], option[48];
      model_info_graph_names(m, NULL, names, sizeof names);
      /* the option the caller named it with (graph and graphs in C, Elixir and htpu): graph,
       * which a caller may pass as graphs too (Elixir's model options, htpu load --graph),
       * else its entry of graphs */
      if (lo->graph && strcmp(lo->graph, lo->graphs[i]) == 0)
        snprintf(option, sizeof option, "the graph option");
      else
        snprintf(option, sizeof option, "entry %u of the graphs option", i);
      return htpu_set_error(HTPU_ENOT_FOUND, 0,
                            "loading %s: the binary holds no graph '%s' (%s); it holds %s",
                            origin, lo->graphs[i], option, names);
    }
    c->graph_on[g] = 1;
  }
  for (uint32_t g = 0; g < m->num_graphs; g++) c->num_enabled += c->graph_on[g];
  /* the blob info's figures, as htpu_model_info reports them (0: none reported) */
  c->spill_fill = memory_spill_fill_bytes(m->graph_memory, m->num_graphs, c->graph_on);
  if (!asked) return 0;
  c->enabled = model_info_alloc(c->info, (c->num_enabled + 1) * sizeof *c->enabled);
  if (!c->enabled) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  for (uint32_t g = 0, k = 0; g < m->num_graphs; g++)
    if (c->graph_on[g]) c->enabled[k++] = m->graphs[g].name;
  c->enable_passed = c->rt->enable_graphs;
  return 0;
}

/* A context object for `bin` and `info` (both its own from here) with the load's options;
 * NULL when out of memory (then both are released). Holds the caller's reference on rt. */
static context_obj *context_new(runtime_obj *rt, model_binary *bin, model_info *info,
                                const htpu_load_options *lo) {
  context_obj *c = calloc(1, sizeof *c);
  if (!c) {
    model_info_free(info);
    binary_release(bin);
    return NULL;
  }
  c->rt = rt;
  c->bin = *bin;
  memset(bin, 0, sizeof *bin);
  c->info = info;
  c->priority_explicit = lo && lo->priority != HTPU_PRIORITY_DEFAULT;
  c->priority = c->priority_explicit ? lo->priority : HTPU_PRIORITY_NORMAL;
  c->exec_timeout_ns = lo ? lo->exec_timeout_ns : 0;
  c->queue_limit = lo ? lo->queue_limit : 0;
  /* The binary is kept until the context is freed whatever the backend does with it: where
   * it announces PERSISTENT_BINARY it is told so, and may skip a copy of its own. */
  c->persistent = rt->persistent_binary;
  c->memory_limit_mb = lo ? lo->memory_limit_mb : 0;
  c->memory_limit_passed = c->memory_limit_mb && rt->memory_limit_hint;
  mem_cache_init(&c->mem);
  pthread_mutex_init(&c->graphs_lock, NULL);
  return c;
}

void load_drop_anchor(context_obj *c) {
  context_obj *a = c->sf_drop;
  c->sf_drop = NULL;
  if (a) obj_release(&a->base); /* may run its destroy: never under the gate */
}

/* The loader's reference: a context that never got published goes with it (members of its
 * spill-fill group may still hold theirs: then it goes with the last of them). */
void load_discard(context_obj *c) {
  runtime_obj *rt = c->rt;
  obj_keep_error(&rt->base);
  load_drop_anchor(c);
  obj_release(&c->base);
}

/* The context chosen in an ONNX model: by the graph option, else by the first graph asked for
 * (a model of several contexts needs one of them). */
static model_pick pick_of(const htpu_load_options *lo) {
  model_pick p = {lo ? lo->graph : NULL, 0, 1, 0, NULL, 0, 0};
  if (lo && lo->num_graphs && lo->graphs) {
    p.graphs = lo->graphs;
    p.num_graphs = lo->num_graphs;
    p.graph_in_list = !p.graph;
    if (!p.graph) p.graph = lo->graphs[0];
  }
  return p;
}

int load_prepare(htpu_runtime *h, model_binary *bin, const char *path, char *origin,
                 size_t origin_len, const htpu_load_options *lo, uint64_t t0, context_obj **out) {
  (void)t0;
  *out = NULL;
  int rc = check_load_options(lo, origin);
  runtime_obj *rt = rc ? NULL : (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rc && !rt) rc = htpu_set_error(HTPU_ECLOSED, 0, "opening a context: the runtime is closed");
  model_info *info = NULL;
  model_pick pick = pick_of(lo);
  /* a raw binary, or an ONNX EPContext model's chosen binary (released on failure) */
  if (!rc)
    rc = model_read_binary_info(&rt->system_lib, path, &pick, bin, !(lo && lo->copy_binary),
                                origin, origin_len, &info);
  else
    binary_release(bin);
  if (rc) {
    if (rt) {
      obj_keep_error(&rt->base);
      obj_release(&rt->base);
    }
    return rc;
  }
  context_obj *c = context_new(rt, bin, info, lo);
  if (!c) {
    obj_release(&rt->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  /* Counted from here (the loader's reference, the handle's once published): a list's later
   * models may join its spill-fill group, holding a reference on it, before it is published. */
  obj_init(&c->base, OBJ_CONTEXT, context_destroy);
  rc = choose_graphs(c, lo, origin);
  if (rc) {
    load_discard(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* After a create that met a DSP restart (1007, e), one more: the new DSP process can take it. */
static qnn_error_t once_more(context_obj *c, qnn_error_t e, uint64_t deadline,
                             qnn_profile_handle_t prof, int use_group, int *timed_out) {
  if (QNN_ERROR_CODE(e) == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION && c->rt->recovery_retries &&
      !*timed_out)
    e = create_bounded(c, &c->qnn, deadline, prof, use_group, timed_out);
  return e;
}

/* The create, and after a DSP restart during it one more. */
static qnn_error_t create_once_more(context_obj *c, uint64_t deadline, qnn_profile_handle_t prof,
                                    int use_group, int *timed_out) {
  qnn_error_t e = create_bounded(c, &c->qnn, deadline, prof, use_group, timed_out);
  return once_more(c, e, deadline, prof, use_group, timed_out);
}

/* Whether a failed create in a group is worth another try outside it: the anchor went (a DSP
 * restart, 1007; an unknown handle, 5002) or the backend refused the config (1000, 5010). */
static int group_failure(qnn_error_t e) {
  uint32_t code = QNN_ERROR_CODE(e);
  return code == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION ||
         code == QNN_CONTEXT_ERROR_INVALID_HANDLE || code == QNN_COMMON_ERROR_NOT_SUPPORTED ||
         code == QNN_CONTEXT_ERROR_INVALID_CONFIG;
}

/* The create with c's spill-fill group: joining the current group; if that fails, as the
 * first of a group of its own; if the backend refuses the group config itself, without it
 * (sharing then goes off for the runtime, its note says why). tried: the result of a first
 * create made already (a list call's, with the same group choice), or NULL. */
static qnn_error_t create_grouped(context_obj *c, uint64_t deadline, qnn_profile_handle_t prof,
                                  const qnn_error_t *tried, int *timed_out) {
  int grouped = c->sf_anchor != NULL;
  qnn_error_t e = tried ? once_more(c, *tried, deadline, prof, grouped, timed_out)
                        : create_once_more(c, deadline, prof, grouped, timed_out);
  if (e == QNN_SUCCESS || *timed_out || !c->sf_anchor || !group_failure(e)) return e;
  if (c->sf_anchor != c) {
    sf_make_first(c);
    e = create_once_more(c, deadline, prof, 1, timed_out);
    if (e == QNN_SUCCESS || *timed_out || !group_failure(e)) return e;
  }
  qnn_error_t group_e = e;
  e = create_once_more(c, deadline, prof, 0, timed_out);
  if (e == QNN_SUCCESS) sf_refused(c, QNN_ERROR_CODE(group_e));
  return e;
}

int load_create(context_obj *c, const char *origin, const htpu_load_options *lo,
                uint64_t deadline, qnn_profile_handle_t profile, const qnn_error_t *tried,
                uint64_t mark) {
  runtime_obj *rt = c->rt;
  int rc = tried ? 0 : compat_check(rt, c->info, c->graph_on, c->bin.data, c->bin.len);
  if (rc) return rc;
  int timed_out = 0;
  qnn_error_t e = create_grouped(c, deadline, profile, tried, &timed_out);
  if (timed_out) {
    c->qnn = NULL;
    return htpu_set_error(HTPU_ETIMEDOUT, QNN_ERROR_CODE(e),
                          "loading %s: the load passed its %llu ms deadline (timeout_ns); "
                          "nothing was created",
                          origin, (unsigned long long)(lo->timeout_ns / 1000000u));
  }
  if (e != QNN_SUCCESS || !c->qnn) {
    c->qnn = NULL;
    return qnn_fail(e, mark, "creating the context from %s failed", origin);
  }
  sf_loaded(c);
  return 0;
}

/* The load itself, under the execute gate (exclusive: no execute in flight meanwhile), which it
 * waits for until the load's deadline: its spill-fill group, the QNN context, the load's
 * profile read back (a failed read fails the load the caller asked to profile), the context
 * listed in its runtime. */
static int load_gated(context_obj *c, const char *origin, const htpu_load_options *lo,
                      uint64_t deadline, profile_call *prof, htpu_profile **lp) {
  runtime_obj *rt = c->rt;
  uint64_t mark = qnn_log_mark();
  /* Another process's creation first (the NPU lock, src/board/), then this process's gate. */
  npu_lock_hold hold;
  int rc = npu_lock_enter_load(&rt->npu_lock, deadline, origin, &hold);
  int gated = !rc && gate_enter_exclusive(&htpu_exec_gate, NULL, deadline);
  if (!rc && !gated)
    rc = htpu_set_error(HTPU_ETIMEDOUT, 0,
                        "loading %s: the load passed its %llu ms deadline (timeout_ns) while it "
                        "waited for the executes in flight to end (no load runs beside an "
                        "execute: the execute gate); nothing was created",
                        origin, (unsigned long long)(lo->timeout_ns / 1000000u));
  if (!rc) sf_choose(c, 0);
  if (!rc) rc = load_create(c, origin, lo, deadline, prof->handle, NULL, mark);
  int prc = profile_call_end(rt, prof, rc == 0, "", lp); /* the handle is freed either way */
  if (!rc && prc) rc = prc;
  if (!rc && runtime_add_context(rt, c) != 0) rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if (rc && c->qnn) {
    rt->backend_lib.context_free(c->qnn, NULL);
    c->qnn = NULL;
  }
  if (rc && rt->sf_anchor == c) rt->sf_anchor = NULL; /* it never became a context */
  if (gated) gate_leave_exclusive(&htpu_exec_gate);
  npu_lock_leave(&hold);
  load_drop_anchor(c);
  if (rc) {
    htpu_profile_free(*lp);
    *lp = NULL;
  }
  return rc;
}

int load_run(context_obj *c, const char *origin, const htpu_load_options *lo, uint64_t t0) {
  profile_call prof;
  int rc = profile_call_begin(c->rt, lo ? lo->profile_level : 0,
                              lo ? lo->profile_max_events : 0, &prof);
  uint64_t t_load = htpu_now_ns();
  if (!rc && lo && lo->profile_level && !lo->profile)
    rc = htpu_set_error(HTPU_EINVAL, 0, "loading %s: profile_level is set but profile (where "
                        "to store the events) is NULL", origin);
  htpu_profile *lp = NULL;
  if (rc) {
    profile_call_end(c->rt, &prof, 0, "", &lp);
    return rc;
  }
  uint64_t deadline = lo && lo->timeout_ns ? t0 + lo->timeout_ns : 0;
  rc = load_gated(c, origin, lo, deadline, &prof, &lp);
  if (lp) {
    lp->start_ns = lp->execute_start_ns = t_load;
    lp->execute_ns = lp->total_ns = htpu_now_ns() - t_load;
    *lo->profile = lp;
  }
  if (rc == HTPU_EINCOMPATIBLE) {
    htpu_append_error(" (%s)", origin);
    /* made by a newer release: which other installed set can load it */
    if (compat_too_new(c->rt, c->info, c->graph_on)) qnnset_hint(&c->info->pub, rc);
  }
  return rc;
}

int load_publish(context_obj *c, uint64_t t0, htpu_context **out) {
  c->load_ns = htpu_now_ns() - t0;
  c->published = 1;
  STAT_ADD(live_contexts, 1);
  STAT_ADD(loads, 1);
  STAT_ADD(load_ns_total, c->load_ns);
  /* what is held, not the binary's own length: an embedded binary maps its whole model */
  if (c->bin.kind == BINARY_COPIED) STAT_ADD(binary_bytes_copied, binary_held_bytes(&c->bin));
  if (c->bin.kind == BINARY_MAPPED) STAT_ADD(binary_bytes_mapped, binary_held_bytes(&c->bin));
  if (c->list_loaded) STAT_ADD(list_loads, 1);
  void *handle = obj_register(&c->base);
  if (!handle) {
    obj_release(&c->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  *out = handle;
  return 0;
}

/* What is left of c once QNN no longer holds it (off the gate): its binary (QNN read it until
 * contextFree: PERSISTENT_BINARY), its memory, then the group's first context it kept (after
 * its member: its destroy takes the gate itself) and its runtime. */
static void context_teardown(context_obj *c, context_obj *anchor) {
  runtime_obj *rt = c->rt;
  load_drop_anchor(c);
  if (c->published) {
    STAT_SUB(live_contexts, 1);
    if (c->bin.kind == BINARY_COPIED) STAT_SUB(binary_bytes_copied, binary_held_bytes(&c->bin));
    if (c->bin.kind == BINARY_MAPPED) STAT_SUB(binary_bytes_mapped, binary_held_bytes(&c->bin));
  }
  binary_release(&c->bin);
  mem_cache_destroy(&c->mem);
  pthread_mutex_destroy(&c->graphs_lock);
  free(c->graphs);
  model_info_free(c->info);
  free(c);
  if (anchor) obj_release(&anchor->base);
  obj_release(&rt->base); /* may tear the runtime down: after the context, as QNN requires */
}

/* The free, with the gate held exclusively (it leaves it): no execute may be in flight while
 * QNN frees a context; registered buffers must be deregistered before it is freed. */
static void context_free_gated(void *arg) {
  context_obj *c = arg;
  runtime_obj *rt = c->rt;
  runtime_remove_context(rt, c);
  mem_cache_release(&c->mem, &rt->backend_lib, -1);
  if (c->qnn) rt->backend_lib.context_free(c->qnn, NULL);
  context_obj *anchor = sf_leave(c);
  gate_leave_exclusive(&htpu_exec_gate);
  context_teardown(c, anchor);
}

/* The last reference went: freed here, or (behind a stuck execute) by the janitor, so the
 * closing thread is not held for a hang (janitor.h). A load that failed made nothing QNN holds
 * (and is neither listed nor any runtime's current group): it waits for no execute. */
void context_destroy(htpu_object *o) {
  context_obj *c = (context_obj *)o;
  if (c->published || c->qnn) {
    janitor_run_gated(context_free_gated, c);
    return;
  }
  context_teardown(c, c->sf_anchor && c->sf_anchor != c ? c->sf_anchor : NULL);
}
