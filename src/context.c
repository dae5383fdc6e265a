/* context.c - context handles: opened from a file or a buffer (the load's steps, and the
 * teardown of what it made, are context_load.c's), described and closed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "exec/exec.h"
#include "load.h"
#include "loader/loader.h"
#include "model/model.h"
#include "printable.h"

/* Takes ownership of bin (released on failure too). path: the file it was read from, or NULL
 * (an ONNX model's external binaries are looked for beside it). */
static int context_create(htpu_runtime *h, model_binary *bin, const char *path,
                          const char *model_origin, const htpu_load_options *lo,
                          htpu_context **out) {
  uint64_t t0 = htpu_now_ns();
  /* where the bytes came from; an ONNX EPContext model's chosen binary is named on (model/) */
  char origin[LOAD_ORIGIN_LEN];
  snprintf(origin, sizeof origin, "%s", model_origin);
  context_obj *c = NULL;
  int rc = load_prepare(h, bin, path, origin, sizeof origin, lo, t0, &c);
  if (rc) return rc;
  rc = load_run(c, origin, lo, t0);
  if (rc) {
    load_discard(c);
    return rc;
  }
  return load_publish(c, t0, out);
}

static int open_file(htpu_runtime *rt, const char *path, const htpu_load_options *opts,
                     htpu_context **out) {
  model_binary bin;
  int rc = binary_open_file(path, !(opts && opts->copy_binary), &bin);
  if (rc) return rc;
  char origin[1100], shown[1024];
  snprintf(origin, sizeof origin, "file '%s'", printable_str(path, shown, sizeof shown));
  return context_create(rt, &bin, path, origin, opts, out);
}

static int open_buffer(htpu_runtime *rt, const void *buf, size_t len,
                       const htpu_load_options *opts, htpu_context **out) {
  model_binary bin;
  int rc = binary_from_buffer(buf, len, opts ? opts->buffer_release : NULL,
                              opts ? opts->buffer_release_arg : NULL, &bin);
  if (rc) return rc;
  char origin[64];
  snprintf(origin, sizeof origin, "a %zu-byte buffer", len);
  return context_create(rt, &bin, NULL, origin, opts, out);
}

int htpu_context_open_file(htpu_runtime *rt, const char *path, htpu_context **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file: out is NULL");
  *out = NULL;
  if (!path) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file: path is NULL");
  return open_file(rt, path, NULL, out);
}

int htpu_context_open_buffer(htpu_runtime *rt, const void *buf, size_t len, htpu_context **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_buffer: out is NULL");
  *out = NULL;
  if (!buf || len == 0)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "htpu_context_open_buffer: empty buffer; expected a QNN context binary");
  return open_buffer(rt, buf, len, NULL, out);
}

int htpu_context_open_file_ex(htpu_runtime *rt, const char *path, const htpu_load_options *opts,
                              htpu_context **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file_ex: out is NULL");
  *out = NULL;
  if (opts && opts->profile) *opts->profile = NULL;
  if (!path) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_file_ex: path is NULL");
  return open_file(rt, path, opts, out);
}

int htpu_context_open_buffer_ex(htpu_runtime *rt, const void *buf, size_t len,
                                const htpu_load_options *opts, htpu_context **out) {
  htpu_clear_error();
  int lent = opts && opts->buffer_release;
  if (!out || !buf || len == 0) {
    if (lent) opts->buffer_release(opts->buffer_release_arg); /* released on every failure */
    if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_buffer_ex: out is NULL");
    *out = NULL;
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_open_buffer_ex: empty buffer; expected "
                          "a QNN context binary");
  }
  *out = NULL;
  if (opts && opts->profile) *opts->profile = NULL;
  return open_buffer(rt, buf, len, opts, out);
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

int htpu_context_get_load_info(htpu_context *h, htpu_context_load_info *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_context_get_load_info: out is NULL");
  memset(out, 0, sizeof *out);
  context_obj *c = (context_obj *)obj_acquire(h, OBJ_CONTEXT);
  if (!c) return htpu_set_error(HTPU_ECLOSED, 0, "reading the load info: the context is closed");
  /* All set by the load and fixed since (sf_joined is atomic): no lock. */
  out->binary = binary_kind_name(c->bin.kind);
  out->binary_note = c->bin.note;
  out->binary_bytes = c->bin.len;
  out->binary_copy_bytes = c->bin.kind == BINARY_COPIED ? c->bin.len : 0;
  out->persistent_binary = c->persistent;
  out->graphs_enabled = c->num_enabled;
  out->enable_graphs_passed = c->enable_passed;
  out->memory_limit_mb = c->memory_limit_mb;
  out->memory_limit_passed = c->memory_limit_passed;
  out->spill_fill_bytes = c->spill_fill;
  int shared = c->sf_anchor && atomic_load(&c->sf_joined);
  out->spill_fill_group = shared ? c->sf_id : 0;
  out->spill_fill_group_bytes = shared ? c->sf_bytes : 0;
  out->spill_fill_note = shared              ? ""
                         : c->sf_anchor      ? "a recovery could not rejoin the group's buffer"
                                             : c->sf_note;
  out->list_loaded = c->list_loaded;
  out->load_ns = c->load_ns;
  obj_release(&c->base); /* the strings are borrowed while the caller's handle is open */
  return 0;
}

size_t htpu_context_last_error(htpu_context *h, char *buf, size_t len) {
  htpu_object *o = obj_acquire(h, OBJ_CONTEXT);
  if (!o) return htpu_copy_message("context is closed", buf, len);
  size_t n = obj_copy_error(o, buf, len);
  obj_release(o);
  return n;
}
