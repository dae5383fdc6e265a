/* context.c - one context binary: introspect, deserialize, keep the binary for recovery. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_file.h"
#include "internal.h"
#include "model/model.h"
#include "qnnset/qnnset.h"
#include "profile.h"
#include "qnn/qnn_signal_abi.h"
#include "qnn_log.h"
#include "retry.h"
#include "stats.h"

static void context_destroy(htpu_object *o) {
  context_obj *c = (context_obj *)o;
  runtime_obj *rt = c->rt;
  /* No execute may be in flight while QNN frees a context; registered buffers must be
   * deregistered before it is freed. */
  gate_enter_exclusive(&htpu_exec_gate);
  runtime_remove_context(rt, c);
  mem_cache_release(&c->mem, &rt->backend_lib, -1);
  if (c->qnn) rt->backend_lib.context_free(c->qnn, NULL);
  gate_leave_exclusive(&htpu_exec_gate);
  mem_cache_destroy(&c->mem);
  pthread_mutex_destroy(&c->graphs_lock);
  free(c->graphs);
  model_info_free(c->info);
  free(c->binary);
  free(c);
  STAT_SUB(live_contexts, 1);
  obj_release(&rt->base); /* may tear the runtime down: after the context, as QNN requires */
}

/* contextCreateFromBinary of the context's retained binary, with the load's profile handle
 * (NULL: none). Under the gate, exclusively. */
static qnn_error_t create_from_binary_signalled(context_obj *c, qnn_context_handle_t *out,
                                                qnn_profile_handle_t profile,
                                                qnn_signal_handle_t signal) {
  runtime_obj *rt = c->rt;
  *out = NULL;
  /* The context's priority reaches QNN as its PRIORITY config (the default of the graphs
   * retrieved from it) where the backend takes context configs and priority control; asked
   * for explicitly only, so a plain load passes no config list at all. */
  static const uint32_t qnn_priority[HTPU_PRIORITY_COUNT] = {
      [HTPU_PRIORITY_LOW] = QNN_PRIORITY_LOW,
      [HTPU_PRIORITY_NORMAL] = QNN_PRIORITY_NORMAL,
      [HTPU_PRIORITY_NORMAL_HIGH] = QNN_PRIORITY_NORMAL_HIGH,
      [HTPU_PRIORITY_HIGH] = QNN_PRIORITY_HIGH,
  };
  qnn_context_config_t prio = {.option = QNN_CONTEXT_CONFIG_OPTION_PRIORITY};
  const qnn_context_config_t *cfgs[] = {&prio, NULL};
  const qnn_context_config_t **configs = NULL;
  if (c->priority_explicit && rt->priority_control) {
    prio.u.priority = qnn_priority[c->priority];
    configs = cfgs;
  }
  qnn_context_binary_size_t n = (qnn_context_binary_size_t)c->binary_len;
  if (signal)
    return rt->backend_lib.context_create_from_binary_with_signal(
        rt->backend, rt->device, configs, c->binary, n, out, profile, signal);
  return rt->backend_lib.context_create_from_binary(rt->backend, rt->device, configs, c->binary,
                                                    n, out, profile);
}

static qnn_error_t create_from_binary(context_obj *c, qnn_context_handle_t *out,
                                      qnn_profile_handle_t profile) {
  return create_from_binary_signalled(c, out, profile, NULL);
}

/* The load options' values (the profile fields are checked where they are used). */
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
  return 0;
}

/* The load under its timeout signal where the backend bounds loads (else unbounded: the load
 * runs to its end, documented). 5013/5012 -> HTPU_ETIMEDOUT naming the binary and limit. */
static qnn_error_t create_bounded(context_obj *c, const htpu_load_options *lo,
                                  qnn_profile_handle_t profile, int *timed_out) {
  runtime_obj *rt = c->rt;
  *timed_out = 0;
  if (!lo || !lo->timeout_ns || !rt->load_signals) return create_from_binary(c, &c->qnn, profile);
  qnn_signal_config_t tcfg = {.option = QNN_SIGNAL_CONFIG_OPTION_TIMEOUT};
  tcfg.u.timeout_duration_us = (lo->timeout_ns + 999u) / 1000u;
  const qnn_signal_config_t *cfgs[] = {&tcfg, NULL};
  qnn_signal_handle_t sig = NULL;
  if (rt->backend_lib.signal_create(rt->backend, cfgs, &sig) != QNN_SUCCESS || !sig)
    return create_from_binary(c, &c->qnn, profile); /* refused: unbounded */
  qnn_error_t e = create_from_binary_signalled(c, &c->qnn, profile, sig);
  rt->backend_lib.signal_free(sig);
  uint32_t code = QNN_ERROR_CODE(e);
  *timed_out = code == QNN_CONTEXT_ERROR_TIMED_OUT || code == QNN_CONTEXT_ERROR_ABORTED;
  return e;
}

/* Takes ownership of binary (freed on failure too). path: the file it was read from, or NULL
 * (an ONNX model's external binaries are looked for beside it). */
static int context_create(htpu_runtime *h, void *binary, size_t len, const char *model_origin,
                          const char *path, const htpu_load_options *lo, htpu_context **out) {
  int bad = check_load_options(lo, model_origin);
  if (bad) {
    free(binary);
    return bad;
  }
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt) {
    free(binary);
    return htpu_set_error(HTPU_ECLOSED, 0, "opening a context: the runtime is closed");
  }
  uint64_t t0 = htpu_now_ns();
  /* A raw binary, or an ONNX EPContext model's chosen binary (src/model/) */
  char origin[5000];
  snprintf(origin, sizeof origin, "%s", model_origin);
  model_pick pick = {lo ? lo->graph : NULL, 0, 1};
  model_info *info = NULL;
  int rc = model_read_info(&rt->system_lib, path, &pick, &binary, &len, origin, sizeof origin,
                           &info);
  if (rc) {
    obj_keep_error(&rt->base);
    obj_release(&rt->base);
    return rc;
  }
  context_obj *c = calloc(1, sizeof *c);
  if (!c) {
    model_info_free(info);
    free(binary);
    obj_release(&rt->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  c->rt = rt; /* the reference taken by obj_acquire now belongs to the context */
  c->binary = binary;
  c->binary_len = len;
  c->info = info;
  c->priority_explicit = lo && lo->priority != HTPU_PRIORITY_DEFAULT;
  c->priority = c->priority_explicit ? lo->priority : HTPU_PRIORITY_NORMAL;
  c->exec_timeout_ns = lo ? lo->exec_timeout_ns : 0;
  mem_cache_init(&c->mem);
  pthread_mutex_init(&c->graphs_lock, NULL);

  uint64_t mark = qnn_log_mark();
  /* The load's profile (htpu_load_options): its own handle, read after the load. */
  profile_call prof;
  rc = profile_call_begin(rt, lo ? lo->profile_level : 0, lo ? lo->profile_max_events : 0,
                          &prof);
  uint64_t t_load = htpu_now_ns();
  if (!rc && lo && lo->profile_level && !lo->profile)
    rc = htpu_set_error(HTPU_EINVAL, 0, "loading %s: profile_level is set but profile (where "
                        "to store the events) is NULL", origin);
  gate_enter_exclusive(&htpu_exec_gate);
  if (!rc) rc = compat_check(rt, info, c->binary, len);
  if (!rc) {
    int timed_out = 0;
    qnn_error_t e = create_bounded(c, lo, prof.handle, &timed_out);
    /* A DSP restart during the load: the new DSP process can take it, once. */
    if (QNN_ERROR_CODE(e) == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION && rt->recovery_retries)
      e = create_bounded(c, lo, prof.handle, &timed_out);
    if (timed_out) {
      c->qnn = NULL;
      rc = htpu_set_error(HTPU_ETIMEDOUT, QNN_ERROR_CODE(e),
                          "loading %s: the load passed its %llu ms deadline (timeout_ns); "
                          "nothing was created",
                          origin, (unsigned long long)(lo->timeout_ns / 1000000u));
    } else if (e != QNN_SUCCESS || !c->qnn) {
      c->qnn = NULL;
      rc = qnn_fail(e, mark, "creating the context from %s failed", origin);
    }
  }
  /* The load's events, read before the context is published: a failed read fails the load
   * the caller asked to profile. The handle is freed either way. */
  htpu_profile *lp = NULL;
  int prc = profile_call_end(rt, &prof, rc == 0, "", &lp);
  if (!rc && prc) {
    rt->backend_lib.context_free(c->qnn, NULL);
    c->qnn = NULL;
    rc = prc;
  }
  if (!rc && runtime_add_context(rt, c) != 0) {
    htpu_profile_free(lp);
    lp = NULL;
    rt->backend_lib.context_free(c->qnn, NULL);
    c->qnn = NULL;
    rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  gate_leave_exclusive(&htpu_exec_gate);
  if (lp) {
    lp->start_ns = lp->execute_start_ns = t_load;
    lp->execute_ns = lp->total_ns = htpu_now_ns() - t_load;
    *lo->profile = lp;
  }
  if (rc) {
    if (rc == HTPU_EINCOMPATIBLE) htpu_append_error(" (%s)", origin);
    if (rc == HTPU_EINCOMPATIBLE) qnnset_hint(&info->pub, rc); /* which installed set can */
    obj_keep_error(&rt->base);
    mem_cache_destroy(&c->mem);
    pthread_mutex_destroy(&c->graphs_lock);
    model_info_free(c->info);
    free(c->binary);
    free(c);
    obj_release(&rt->base);
    return rc;
  }
  obj_init(&c->base, OBJ_CONTEXT, context_destroy);
  STAT_ADD(live_contexts, 1);
  STAT_ADD(loads, 1);
  STAT_ADD(load_ns_total, htpu_now_ns() - t0);
  void *handle = obj_register(&c->base);
  if (!handle) {
    obj_release(&c->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  *out = handle;
  return 0;
}

int htpu_context_open_file(htpu_runtime *rt, const char *path, htpu_context **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file: out is NULL");
  *out = NULL;
  if (!path) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file: path is NULL");
  void *buf = NULL;
  size_t len = 0;
  int rc = read_whole_file(path, &buf, &len);
  if (rc) return rc;
  char origin[600];
  snprintf(origin, sizeof origin, "file '%s'", path);
  return context_create(rt, buf, len, origin, path, NULL, out);
}

int htpu_context_open_buffer(htpu_runtime *rt, const void *buf, size_t len, htpu_context **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_buffer: out is NULL");
  *out = NULL;
  if (!buf || len == 0)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "htpu_context_open_buffer: empty buffer; expected a QNN context binary");
  void *copy = malloc(len);
  if (!copy) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", len);
  memcpy(copy, buf, len);
  char origin[64];
  snprintf(origin, sizeof origin, "a %zu-byte buffer", len);
  return context_create(rt, copy, len, origin, NULL, NULL, out);
}

int htpu_context_open_file_ex(htpu_runtime *rt, const char *path, const htpu_load_options *opts,
                              htpu_context **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file_ex: out is NULL");
  *out = NULL;
  if (opts && opts->profile) *opts->profile = NULL;
  if (!path) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file_ex: path is NULL");
  void *buf = NULL;
  size_t len = 0;
  int rc = read_whole_file(path, &buf, &len);
  if (rc) return rc;
  char origin[600];
  snprintf(origin, sizeof origin, "file '%s'", path);
  return context_create(rt, buf, len, origin, path, opts, out);
}

int htpu_context_open_buffer_ex(htpu_runtime *rt, const void *buf, size_t len,
                                const htpu_load_options *opts, htpu_context **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_buffer_ex: out is NULL");
  *out = NULL;
  if (opts && opts->profile) *opts->profile = NULL;
  if (!buf || len == 0)
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_buffer_ex: empty buffer; expected "
                          "a QNN context binary");
  void *copy = malloc(len);
  if (!copy) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", len);
  memcpy(copy, buf, len);
  char origin[64];
  snprintf(origin, sizeof origin, "a %zu-byte buffer", len);
  return context_create(rt, copy, len, origin, NULL, opts, out);
}

int htpu_context_close(htpu_context **cp) {
  htpu_clear_error();
  if (!cp || !*cp) return 0;
  htpu_object *o = obj_unregister(*cp, OBJ_CONTEXT);
  *cp = NULL;
  if (!o) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_context_close: not a live context handle");
  context_cancel_calls((context_obj *)o);
  obj_release(o);
  return 0;
}

void context_cancel_calls(context_obj *c) {
  pthread_mutex_lock(&c->graphs_lock);
  for (size_t i = 0; i < c->num_graphs; i++) calls_cancel(c->graphs[i], NULL, 0);
  pthread_mutex_unlock(&c->graphs_lock);
}

const htpu_model_info *htpu_context_model_info(htpu_context *h) {
  context_obj *c = (context_obj *)obj_acquire(h, OBJ_CONTEXT);
  if (!c) return NULL;
  const htpu_model_info *info = &c->info->pub;
  /* Borrowed: valid while the caller's handle keeps the context alive. */
  obj_release(&c->base);
  return info;
}

size_t htpu_context_last_error(htpu_context *h, char *buf, size_t len) {
  htpu_object *o = obj_acquire(h, OBJ_CONTEXT);
  if (!o) return htpu_copy_message("context is closed", buf, len);
  size_t n = obj_copy_error(o, buf, len);
  obj_release(o);
  return n;
}

/* One try (retry_try_fn on a context_obj): a new QNN context from the retained binary, and
 * every open graph's handle in it. On failure frees what it made, sets the error and *code
 * (the QNN code, 0 if none). */
static int recreate(void *arg, uint32_t attempt, uint32_t *code) {
  (void)attempt;
  context_obj *c = arg;
  runtime_obj *rt = c->rt;
  const qnn_backend_lib *b = &rt->backend_lib;
  uint64_t mark = qnn_log_mark();
  qnn_context_handle_t q = NULL;
  qnn_error_t e = create_from_binary(c, &q, NULL);
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

/* Under the gate, exclusively. */
static int recover_locked(context_obj *c, uint64_t seen_generation) {
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
  retry_policy p = {rt->recovery_retries, rt->retry_delay_ms, NULL};
  int rc = retry_run(&p, recreate, c);
  if (rc) {
    c->dead = 1;
    STAT_ADD(recovery_failures, 1);
    return rc;
  }
  c->generation++;
  STAT_ADD(recoveries, 1);
  perf_recast(&rt->perf);
  return 0;
}

int context_recover(context_obj *c, uint64_t seen_generation) {
  /* Held through the backoff too: in between, the context has no QNN handle and its graphs'
   * handles are stale, so nothing may execute or open a graph on it; and the restart that
   * made it stale made every context of the process stale, so others would only fail. */
  gate_enter_exclusive(&htpu_exec_gate);
  int rc = recover_locked(c, seen_generation);
  gate_leave_exclusive(&htpu_exec_gate);
  return rc;
}
