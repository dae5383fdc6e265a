/*
 * inspect.c - htpu_inspect_*: a model's metadata through the system library alone, whether
 * the file is a raw context binary or an ONNX EPContext model (model_unwrap first).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_file.h"
#include "base/base.h"
#include "onnx_model.h"
#include "printable.h"

int model_read_info(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                    void **buf, size_t *len, char *origin, size_t origin_len, model_info **out) {
  *out = NULL;
  model_source *src = NULL;
  int rc = model_unwrap(sys, path, pick, buf, len, origin, origin_len, &src);
  if (!rc && !src && pick->index > 0)
    rc = htpu_set_error(HTPU_EINVAL, 0, "%s is a raw context binary, one context; there is no "
                        "context %u", origin, pick->index);
  if (!rc) {
    rc = introspect_binary(sys, *buf, *len, out);
    if (rc) htpu_append_error(" (%s)", origin);
  }
  if (rc) {
    model_source_free(src);
    free(*buf);
    *buf = NULL;
    return rc;
  }
  if (src) model_source_attach(*out, src);
  return 0;
}

int model_read_binary_info(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                           model_binary *bin, int allow_map, char *origin, size_t origin_len,
                           model_info **out) {
  *out = NULL;
  model_source *src = NULL;
  int rc = model_unwrap_binary(sys, path, pick, bin, allow_map, origin, origin_len, &src);
  if (rc) return rc; /* bin released */
  /* QNN's getBinaryInfo takes a non-const pointer; nothing of ours writes through it, and a
   * mapping is private (binary_source.c). */
  rc = introspect_binary(sys, (void *)bin->data, bin->len, out);
  if (rc) {
    htpu_append_error(" (%s)", origin);
    model_source_free(src);
    binary_release(bin);
    return rc;
  }
  if (src) model_source_attach(*out, src);
  return 0;
}

/* Takes the malloc'd bytes (freed here). path: the file they came from, or NULL. */
static int inspect(const char *system_lib, const char *path, void *buf, size_t len,
                   const model_pick *pick, htpu_model_info **out) {
  qnn_system_lib sys;
  int rc = loader_open_system(system_lib ? system_lib : HTPU_DEFAULT_SYSTEM_LIB, &sys);
  if (rc) {
    free(buf);
    return rc;
  }
  char origin[5000], shown[1024];
  if (path)
    snprintf(origin, sizeof origin, "file '%s'", printable_str(path, shown, sizeof shown));
  else
    snprintf(origin, sizeof origin, "a %zu-byte buffer", len);
  model_info *m = NULL;
  rc = model_read_info(&sys, path, pick, &buf, &len, origin, sizeof origin, &m);
  loader_close_system(&sys);
  free(buf);
  if (!rc) *out = &m->pub;
  return rc;
}

int htpu_inspect_buffer(const char *system_lib, const void *buf, size_t len,
                        htpu_model_info **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_inspect_buffer: out is NULL");
  *out = NULL;
  if (!buf || len == 0)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "htpu_inspect_buffer: empty buffer; expected a QNN context binary or "
                          "an ONNX EPContext model");
  /* A private copy: QNN takes a non-const pointer and the caller's buffer may be read-only. */
  void *copy = malloc(len);
  if (!copy) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory (%zu bytes)", len);
  memcpy(copy, buf, len);
  model_pick pick = {.graph = NULL};
  return inspect(system_lib, NULL, copy, len, &pick, out);
}

static int inspect_path(const char *fn, const char *system_lib, const char *path,
                        const model_pick *pick, htpu_model_info **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "%s: out is NULL", fn);
  *out = NULL;
  if (!path) return htpu_set_error(HTPU_EINVAL, 0, "%s: path is NULL", fn);
  void *buf = NULL;
  size_t len = 0;
  int rc = read_whole_file(path, &buf, &len);
  if (rc) return rc;
  return inspect(system_lib, path, buf, len, pick, out);
}

int htpu_inspect_file(const char *system_lib, const char *path, htpu_model_info **out) {
  model_pick pick = {.graph = NULL};
  return inspect_path("htpu_inspect_file", system_lib, path, &pick, out);
}

int htpu_inspect_file_context(const char *system_lib, const char *path, uint32_t index,
                              htpu_model_info **out) {
  model_pick pick = {.index = index};
  return inspect_path("htpu_inspect_file_context", system_lib, path, &pick, out);
}

int htpu_inspect_file_all(const char *system_lib, const char *path, htpu_model_info **out) {
  model_pick pick = {.all = 1};
  return inspect_path("htpu_inspect_file_all", system_lib, path, &pick, out);
}

int htpu_model_binary(const char *system_lib, const char *path, const char *graph,
                      uint32_t index, void **out, size_t *len) {
  htpu_clear_error();
  if (!out || !len) return htpu_set_error(HTPU_EINVAL, 0, "htpu_model_binary: out or len is NULL");
  *out = NULL;
  *len = 0;
  if (!path) return htpu_set_error(HTPU_EINVAL, 0, "htpu_model_binary: path is NULL");
  void *buf = NULL;
  size_t n = 0;
  int rc = read_whole_file(path, &buf, &n);
  if (rc) return rc;
  qnn_system_lib sys;
  rc = loader_open_system(system_lib ? system_lib : HTPU_DEFAULT_SYSTEM_LIB, &sys);
  if (rc) {
    free(buf);
    return rc;
  }
  char origin[5000], shown[1024];
  snprintf(origin, sizeof origin, "file '%s'", printable_str(path, shown, sizeof shown));
  model_pick pick = {.graph = graph, .index = index};
  model_info *m = NULL;
  rc = model_read_info(&sys, path, &pick, &buf, &n, origin, sizeof origin, &m);
  loader_close_system(&sys);
  int found = !rc && !graph;
  for (uint32_t g = 0; !rc && graph && g < m->pub.num_graphs; g++)
    found = found || strcmp(m->pub.graphs[g].name, graph) == 0;
  if (!rc && !found)
    rc = htpu_set_error(HTPU_ENOT_FOUND, 0, "%s holds no graph '%s'", origin, graph);
  model_info_free(m);
  if (rc) {
    free(buf);
    return rc;
  }
  *out = buf;
  *len = n;
  return 0;
}
