/* context.c - one context binary: introspect, deserialize, keep the binary for recovery. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qnn_log.h"
#include "stats.h"

static void context_destroy(htpu_object *o) {
  context_obj *c = (context_obj *)o;
  runtime_obj *rt = c->rt;
  if (c->qnn) {
    /* No execute of this runtime may be in flight while QNN frees a context. */
    gate_enter_exclusive(&htpu_exec_gate);
    rt->backend_lib.context_free(c->qnn, NULL);
    gate_leave_exclusive(&htpu_exec_gate);
  }
  model_info_free(c->info);
  free(c->binary);
  free(c);
  STAT_SUB(live_contexts, 1);
  obj_release(&rt->base); /* may tear the runtime down: after the context, as QNN requires */
}

/* Takes ownership of binary (freed on failure too). */
static int context_create(htpu_runtime *h, void *binary, size_t len, const char *origin,
                          htpu_context **out) {
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt) {
    free(binary);
    return htpu_set_error(HTPU_ECLOSED, 0, "opening a context: the runtime is closed");
  }
  uint64_t t0 = htpu_now_ns();
  model_info *info = NULL;
  int rc = introspect_binary(&rt->system_lib, binary, len, &info);
  if (rc) {
    htpu_append_error(" (%s)", origin);
    obj_keep_error(&rt->base);
    obj_release(&rt->base);
    free(binary);
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

  uint64_t mark = qnn_log_mark();
  gate_enter_exclusive(&htpu_exec_gate);
  qnn_error_t e = rt->backend_lib.context_create_from_binary(
      rt->backend, rt->device, NULL, c->binary, (qnn_context_binary_size_t)len, &c->qnn, NULL);
  gate_leave_exclusive(&htpu_exec_gate);
  if (e != QNN_SUCCESS || !c->qnn) {
    c->qnn = NULL;
    qnn_fail(e, mark, "creating the context from %s failed", origin);
    obj_keep_error(&rt->base);
    model_info_free(c->info);
    free(c->binary);
    free(c);
    obj_release(&rt->base);
    return HTPU_EQNN;
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
  return context_create(rt, buf, len, origin, out);
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
  return context_create(rt, copy, len, origin, out);
}

int htpu_context_close(htpu_context **cp) {
  htpu_clear_error();
  if (!cp || !*cp) return 0;
  htpu_object *o = obj_unregister(*cp, OBJ_CONTEXT);
  *cp = NULL;
  if (!o) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_context_close: not a live context handle");
  obj_release(o);
  return 0;
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
