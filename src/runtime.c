/* runtime.c - QNN log + backend + device, and the libraries they come from. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qnn_log.h"
#include "stats.h"

int qnn_fail(qnn_error_t e, uint64_t log_mark, const char *fmt, ...) {
  char prefix[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  uint32_t code = QNN_ERROR_CODE(e);
  htpu_set_error(HTPU_EQNN, code, "%s: QNN error %u (%s: %s)", prefix, code,
                 htpu_qnn_error_name(code), htpu_qnn_error_message(code));
  qnn_log_append_since(log_mark);
  return HTPU_EQNN;
}

void htpu_runtime_options_init(htpu_runtime_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->backend_lib = HTPU_DEFAULT_BACKEND_LIB;
  o->system_lib = HTPU_DEFAULT_SYSTEM_LIB;
  o->log_level = QNN_LOG_LEVEL_WARN;
}

/* Frees what exists, in QNN's required order; safe on a partly built runtime. */
static void runtime_teardown(runtime_obj *rt) {
  qnn_backend_lib *b = &rt->backend_lib;
  if (rt->device && b->device_free) b->device_free(rt->device);
  if (rt->backend) b->backend_free(rt->backend);
  if (rt->log && b->log_free) b->log_free(rt->log);
  rt->device = rt->backend = rt->log = NULL;
  loader_close_system(&rt->system_lib);
  loader_close_backend(b);
}

static void runtime_destroy(htpu_object *o) {
  runtime_obj *rt = (runtime_obj *)o;
  runtime_teardown(rt);
  free(rt->build_id);
  free(rt->dsp_library_path);
  free(rt);
  STAT_SUB(live_runtimes, 1);
}

static int create_qnn_objects(runtime_obj *rt, const htpu_runtime_options *o) {
  qnn_backend_lib *b = &rt->backend_lib;
  uint64_t mark = qnn_log_mark();
  if (b->log_create) {
    qnn_error_t e = b->log_create(qnn_log_callback, o->log_level, &rt->log);
    if (e != QNN_SUCCESS) {
      rt->log = NULL; /* QNN may leave garbage behind on failure */
      return qnn_fail(e, mark, "creating the QNN log for '%s' failed", b->path);
    }
  }
  mark = qnn_log_mark();
  qnn_error_t e = b->backend_create(rt->log, NULL, &rt->backend);
  if (e != QNN_SUCCESS || !rt->backend) {
    rt->backend = NULL;
    return qnn_fail(e, mark, "creating the QNN backend of '%s' failed", b->path);
  }
  const char *build_id = NULL;
  if (b->backend_get_build_id && b->backend_get_build_id(&build_id) == QNN_SUCCESS && build_id)
    rt->build_id = strdup(build_id);
  else
    rt->build_id = strdup("");
  if (!rt->build_id) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");

  /* Backends without devices answer the device capability with NOT_SUPPORTED; skip them, as
   * every known client does. */
  int want_device = !o->skip_device && b->device_create && b->device_free;
  if (want_device && b->property_has_capability &&
      b->property_has_capability(QNN_PROPERTY_GROUP_DEVICE) != QNN_SUCCESS)
    want_device = 0;
  if (want_device) {
    mark = qnn_log_mark();
    e = b->device_create(rt->log, NULL, &rt->device);
    if (e != QNN_SUCCESS) {
      rt->device = NULL;
      return qnn_fail(e, mark, "creating the QNN device of '%s' failed", b->path);
    }
  }
  return 0;
}

int htpu_runtime_open(const htpu_runtime_options *opts, htpu_runtime **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_runtime_open: out is NULL");
  *out = NULL;
  htpu_runtime_options defaults;
  htpu_runtime_options_init(&defaults);
  const htpu_runtime_options *o = opts ? opts : &defaults;
  const char *backend_path = o->backend_lib ? o->backend_lib : HTPU_DEFAULT_BACKEND_LIB;
  const char *system_path = o->system_lib ? o->system_lib : HTPU_DEFAULT_SYSTEM_LIB;
  if (o->log_level < QNN_LOG_LEVEL_ERROR || o->log_level > QNN_LOG_LEVEL_DEBUG)
    return htpu_set_error(HTPU_EINVAL, 0, "log_level %u is out of range; expected 1 (error) .. 5 (debug)",
                          o->log_level);
  qnn_log_init_from_env();

  /* Before anything is loaded: the DSP side reads these when the first FastRPC session opens,
   * and Erlang's os:putenv never reaches the C environment. */
  if (o->dsp_library_path) {
    if (setenv("DSP_LIBRARY_PATH", o->dsp_library_path, 1) != 0 ||
        setenv("ADSP_LIBRARY_PATH", o->dsp_library_path, 1) != 0)
      return htpu_set_error(HTPU_EINVAL, 0, "setting DSP_LIBRARY_PATH to '%s' failed",
                            o->dsp_library_path);
  }

  runtime_obj *rt = calloc(1, sizeof *rt);
  if (!rt) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  int rc = loader_open_backend(backend_path, o->backend_id, &rt->backend_lib);
  if (!rc) rc = loader_open_system(system_path, &rt->system_lib);
  if (!rc) rc = create_qnn_objects(rt, o);
  if (!rc) {
    const char *dsp = getenv("DSP_LIBRARY_PATH");
    rt->dsp_library_path = strdup(dsp ? dsp : "");
    if (!rt->dsp_library_path) rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  if (rc) {
    runtime_teardown(rt);
      free(rt->build_id);
    free(rt->dsp_library_path);
    free(rt);
    return rc;
  }
  obj_init(&rt->base, OBJ_RUNTIME, runtime_destroy);
  STAT_ADD(live_runtimes, 1);
  void *h = obj_register(&rt->base);
  if (!h) {
    obj_release(&rt->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  *out = h;
  return 0;
}

int htpu_runtime_close(htpu_runtime **rtp) {
  htpu_clear_error();
  if (!rtp || !*rtp) return 0;
  htpu_object *o = obj_unregister(*rtp, OBJ_RUNTIME);
  *rtp = NULL;
  if (!o) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_runtime_close: not a live runtime handle");
  obj_release(o);
  return 0;
}

int htpu_runtime_get_info(htpu_runtime *h, htpu_runtime_info *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_runtime_get_info: out is NULL");
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_runtime_get_info: runtime is closed");
  const qnn_backend_lib *b = &rt->backend_lib;
  out->backend_lib = b->path;
  out->system_lib = rt->system_lib.path;
  out->provider_name = b->provider->provider_name ? b->provider->provider_name : "";
  out->backend_id = b->backend_id;
  out->core_api_version = (htpu_version3){b->core_api.major, b->core_api.minor, b->core_api.patch};
  out->backend_api_version =
      (htpu_version3){b->backend_api.major, b->backend_api.minor, b->backend_api.patch};
  out->build_id = rt->build_id;
  out->system_provider_name =
      rt->system_lib.provider->provider_name ? rt->system_lib.provider->provider_name : "";
  out->system_api_version =
      (htpu_version3){rt->system_lib.api.major, rt->system_lib.api.minor, rt->system_lib.api.patch};
  out->has_device = rt->device != NULL;
  out->dsp_library_path = rt->dsp_library_path;
  /* The strings stay valid while the caller's handle is open: drop only our reference. */
  obj_release(&rt->base);
  return 0;
}

size_t htpu_runtime_last_error(htpu_runtime *h, char *buf, size_t len) {
  htpu_object *o = obj_acquire(h, OBJ_RUNTIME);
  if (!o) return htpu_copy_message("runtime is closed", buf, len);
  size_t n = obj_copy_error(o, buf, len);
  obj_release(o);
  return n;
}
