/* context.c - one context binary: introspect, deserialize, keep the binary for recovery. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "exec/exec.h"
#include "internal.h"
#include "profile/profile.h"
#include "qnnset/qnnset.h"
#include "qnn/qnn_signal_abi.h"
#include "loader/loader.h"
#include "base/base.h"
#include "printable.h"

/* The free, with the gate held exclusively (it leaves it): no execute may be in flight while
 * QNN frees a context; registered buffers must be deregistered before it is freed. */
static void context_free_gated(void *arg) {
  context_obj *c = arg;
  runtime_obj *rt = c->rt;
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

/* The last reference went: freed here, or (behind a stuck execute) by the janitor, so the
 * closing thread is not held for a hang (janitor.h). */
static void context_destroy(htpu_object *o) { janitor_run_gated(context_free_gated, o); }


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


/* A context object for `binary` and `info` (both its own from here) with the load's options;
 * NULL when out of memory (then both are freed). Holds the caller's reference on rt. */
static context_obj *context_new(runtime_obj *rt, void *binary, size_t len, model_info *info,
                                const htpu_load_options *lo) {
  context_obj *c = calloc(1, sizeof *c);
  if (!c) {
    model_info_free(info);
    free(binary);
    return NULL;
  }
  c->rt = rt;
  c->binary = binary;
  c->binary_len = len;
  c->info = info;
  c->priority_explicit = lo && lo->priority != HTPU_PRIORITY_DEFAULT;
  c->priority = c->priority_explicit ? lo->priority : HTPU_PRIORITY_NORMAL;
  c->exec_timeout_ns = lo ? lo->exec_timeout_ns : 0;
  c->queue_limit = lo ? lo->queue_limit : 0;
  mem_cache_init(&c->mem);
  pthread_mutex_init(&c->graphs_lock, NULL);
  return c;
}

/* A context that never got published: everything it holds, its runtime reference too. */
static void context_discard(context_obj *c) {
  runtime_obj *rt = c->rt;
  obj_keep_error(&rt->base);
  mem_cache_destroy(&c->mem);
  pthread_mutex_destroy(&c->graphs_lock);
  model_info_free(c->info);
  free(c->binary);
  free(c);
  obj_release(&rt->base);
}

/* Under the gate: the binary checked against the device, then the QNN context created, bounded
 * by the load's deadline (0: none), once more after a DSP restart. */
static int create_checked(context_obj *c, const char *origin, const htpu_load_options *lo,
                          uint64_t deadline, qnn_profile_handle_t profile, uint64_t mark) {
  runtime_obj *rt = c->rt;
  int rc = compat_check(rt, c->info, c->binary, c->binary_len);
  if (rc) return rc;
  int timed_out = 0;
  qnn_error_t e = create_bounded(c, &c->qnn, deadline, profile, &timed_out);
  /* A DSP restart during the load: the new DSP process can take it, once. */
  if (QNN_ERROR_CODE(e) == QNN_COMMON_ERROR_SYSTEM_COMMUNICATION && rt->recovery_retries)
    e = create_bounded(c, &c->qnn, deadline, profile, &timed_out);
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
  return 0;
}

/* The load itself, under the execute gate (exclusive: no execute in flight meanwhile), which it
 * waits for until the load's deadline: the QNN context, the load's profile read back (a failed
 * read fails the load the caller asked to profile), the context listed in its runtime. */
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
  if (!rc) rc = create_checked(c, origin, lo, deadline, prof->handle, mark);
  int prc = profile_call_end(rt, prof, rc == 0, "", lp); /* the handle is freed either way */
  if (!rc && prc) rc = prc;
  if (!rc && runtime_add_context(rt, c) != 0) rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if (rc && c->qnn) {
    rt->backend_lib.context_free(c->qnn, NULL);
    c->qnn = NULL;
  }
  if (gated) gate_leave_exclusive(&htpu_exec_gate);
  npu_lock_leave(&hold);
  if (rc) {
    htpu_profile_free(*lp);
    *lp = NULL;
  }
  return rc;
}

/* The load with its profile (htpu_load_options): its own handle, read after the load; the
 * load's timeout counts from t0, the start of the open. */
static int load_profiled(context_obj *c, const char *origin, const htpu_load_options *lo,
                         uint64_t t0) {
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
  return rc;
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
  model_pick pick = {lo ? lo->graph : NULL, 0, 1, 0};
  model_info *info = NULL;
  int rc = model_read_info(&rt->system_lib, path, &pick, &binary, &len, origin, sizeof origin,
                           &info);
  if (rc) {
    obj_keep_error(&rt->base);
    obj_release(&rt->base);
    return rc;
  }
  context_obj *c = context_new(rt, binary, len, info, lo);
  if (!c) {
    obj_release(&rt->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  rc = load_profiled(c, origin, lo, t0);
  if (rc) {
    if (rc == HTPU_EINCOMPATIBLE) htpu_append_error(" (%s)", origin);
    /* made by a newer release: which other installed set can load it */
    if (rc == HTPU_EINCOMPATIBLE && compat_too_new(c->rt, info)) qnnset_hint(&info->pub, rc);
    context_discard(c);
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
  char origin[1100], shown[1024];
  snprintf(origin, sizeof origin, "file '%s'", printable_str(path, shown, sizeof shown));
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
  char origin[1100], shown[1024];
  snprintf(origin, sizeof origin, "file '%s'", printable_str(path, shown, sizeof shown));
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
