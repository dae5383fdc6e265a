/* loader.c - dlopen, provider selection and version checks. */
#include "libs.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "hexagon_tpu.h"
#include "qnn/qnn_versions.h"

static const char *dl_error(void) {
  const char *e = dlerror();
  return e ? e : "no dlerror() message";
}

static const char *safe_name(const char *s) { return s ? s : "(unnamed)"; }

/* dlopen + dlsym of the entry point. Returns 0, or the stage's code with its message. */
static int open_entry(const char *path, int flags, int load_code, const char *what,
                      const char *symbol, void **dl_out, void **entry) {
  dlerror();
  void *dl = dlopen(path, flags);
  if (!dl)
    return htpu_set_error(load_code, 0, "loading the %s '%s' failed: %s", what, path, dl_error());
  *entry = dlsym(dl, symbol);
  if (!*entry) {
    htpu_set_error(HTPU_ESYMBOL, 0, "resolving the symbol '%s' in '%s' failed: %s", symbol, path,
                   dl_error());
    dlclose(dl);
    return HTPU_ESYMBOL;
  }
  *dl_out = dl;
  return 0;
}

/* The last step of both loaders: keep the path, or undo everything. */
static int finish_open(void *dl, const char *path, char **path_out, void *out, size_t out_size) {
  *path_out = strdup(path);
  if (*path_out) return 0;
  dlclose(dl);
  memset(out, 0, out_size);
  return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
}

/* Reads one slot only when the provider's version has it. */
#define TAKE_SLOT(lib, field)                                              \
  ((lib)->field = (QNN_INTERFACE_SLOT(field) < (lib)->slots)               \
                      ? (lib)->provider->table.field                       \
                      : NULL)

/* Appends "NAME (id N, core a.b.c)" of every provider to buf, for messages. */
static void describe_providers(const qnn_interface_t **list, uint32_t n, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < n && used + 1 < len; i++) {
    const qnn_interface_t *p = list[i];
    if (!p) continue;
    const qnn_version_t *c = &p->api_version.core_api_version;
    int w = snprintf(buf + used, len - used, "%s%s (backend id %u, core API %u.%u.%u)",
                     used ? ", " : "", safe_name(p->provider_name), p->backend_id, c->major,
                     c->minor, c->patch);
    if (w < 0) break;
    used += (size_t)w;
  }
}

/* The provider to use: the one with the requested backend id (none requested: HTP first,
 * then any) whose core API version has a known table. *id_matched: one had the id. */
static const qnn_interface_t *choose_provider(const qnn_interface_t **list, uint32_t n,
                                              uint32_t want_backend_id, int *id_matched) {
  const qnn_interface_t *chosen = NULL;
  for (int pass = 0; pass < 2 && !chosen; pass++) {
    for (uint32_t i = 0; i < n; i++) {
      const qnn_interface_t *p = list[i];
      if (!p) continue;
      if (want_backend_id && p->backend_id != want_backend_id) continue;
      /* With no id requested, the first pass looks for HTP only. */
      if (!want_backend_id && pass == 0 && p->backend_id != QNN_BACKEND_ID_HTP) continue;
      *id_matched = 1;
      if (qnn_core_table_slots(p->api_version.core_api_version) == 0) continue;
      chosen = p;
      break;
    }
  }
  return chosen;
}

/* Copies the function pointers the provider's core API version has (qnn_versions.h). */
static void take_table(qnn_backend_lib *out, void *dl, const qnn_interface_t *chosen) {
  out->dl = dl;
  out->provider = chosen;
  out->core_api = chosen->api_version.core_api_version;
  out->backend_api = chosen->api_version.backend_api_version;
  out->backend_id = chosen->backend_id;
  out->slots = qnn_core_table_slots(out->core_api);
  TAKE_SLOT(out, property_has_capability);
  TAKE_SLOT(out, backend_create);
  TAKE_SLOT(out, backend_get_api_version);
  TAKE_SLOT(out, backend_get_build_id);
  TAKE_SLOT(out, backend_free);
  TAKE_SLOT(out, context_create_from_binary);
  TAKE_SLOT(out, context_free);
  TAKE_SLOT(out, graph_retrieve);
  TAKE_SLOT(out, graph_execute);
  TAKE_SLOT(out, graph_execute_async);
  TAKE_SLOT(out, log_create);
  TAKE_SLOT(out, log_free);
  TAKE_SLOT(out, device_create);
  TAKE_SLOT(out, device_free);
  TAKE_SLOT(out, error_get_message);
  TAKE_SLOT(out, context_validate_binary);
  TAKE_SLOT(out, mem_register);
  TAKE_SLOT(out, mem_de_register);
  TAKE_SLOT(out, device_get_info);
  TAKE_SLOT(out, device_get_platform_info);
  TAKE_SLOT(out, device_free_platform_info);
  TAKE_SLOT(out, device_get_infrastructure);
  TAKE_SLOT(out, signal_create);
  TAKE_SLOT(out, signal_trigger);
  TAKE_SLOT(out, signal_free);
  TAKE_SLOT(out, context_create_from_binary_with_signal);
  TAKE_SLOT(out, context_create_from_binary_list_async);
  TAKE_SLOT(out, context_get_property);
}

int loader_open_backend(const char *path, uint32_t want_backend_id, qnn_backend_lib *out) {
  memset(out, 0, sizeof *out);
  /* RTLD_GLOBAL: the HTP backend loads its stub and skel helpers, which resolve symbols
   * against it; this is how every known working client opens it. */
  void *dl = NULL, *entry = NULL;
  int orc = open_entry(path, RTLD_NOW | RTLD_GLOBAL, HTPU_ELOAD_BACKEND, "backend library",
                       QNN_INTERFACE_GET_PROVIDERS_SYMBOL, &dl, &entry);
  if (orc) return orc;
  qnn_interface_get_providers_fn get = (qnn_interface_get_providers_fn)entry;
  const qnn_interface_t **list = NULL;
  uint32_t n = 0;
  qnn_error_t rc = get(&list, &n);
  if (rc != QNN_SUCCESS || !list || n == 0) {
    uint32_t code = QNN_ERROR_CODE(rc);
    if (rc != QNN_SUCCESS)
      htpu_set_error(HTPU_ENO_PROVIDER, code, "no provider: %s() in '%s' failed with QNN error %u (%s)",
                     QNN_INTERFACE_GET_PROVIDERS_SYMBOL, path, code, htpu_qnn_error_name(code));
    else
      htpu_set_error(HTPU_ENO_PROVIDER, 0, "no provider: '%s' offers no QNN interface provider",
                     path);
    dlclose(dl);
    return HTPU_ENO_PROVIDER;
  }

  int id_matched = 0;
  const qnn_interface_t *chosen = choose_provider(list, n, want_backend_id, &id_matched);
  if (!chosen) {
    char found[1024];
    describe_providers(list, n, found, sizeof found);
    if (!id_matched)
      htpu_set_error(HTPU_ENO_PROVIDER, 0,
                     "no provider: '%s' has no provider with backend id %u; found: %s", path,
                     want_backend_id, found);
    else
      htpu_set_error(HTPU_EVERSION, 0,
                     "version: no provider of '%s' has a supported core API version (need "
                     "%u.x with x >= %u); found: %s",
                     path, QNN_CORE_API_MAJOR, QNN_CORE_API_FLOOR_MINOR, found);
    dlclose(dl);
    return id_matched ? HTPU_EVERSION : HTPU_ENO_PROVIDER;
  }

  take_table(out, dl, chosen);
  const char *missing = !out->backend_create               ? "backendCreate"
                        : !out->backend_free               ? "backendFree"
                        : !out->context_create_from_binary ? "contextCreateFromBinary"
                        : !out->context_free               ? "contextFree"
                        : !out->graph_retrieve             ? "graphRetrieve"
                        : !out->graph_execute              ? "graphExecute"
                                                           : NULL;
  if (missing) {
    htpu_set_error(HTPU_ENO_PROVIDER, 0,
                   "no provider: provider '%s' of '%s' has no %s function (NULL table entry)",
                   safe_name(chosen->provider_name), path, missing);
    dlclose(dl);
    memset(out, 0, sizeof *out);
    return HTPU_ENO_PROVIDER;
  }
  return finish_open(dl, path, &out->path, out, sizeof *out);
}

void loader_close_backend(qnn_backend_lib *lib) {
  if (lib->dl) dlclose(lib->dl);
  free(lib->path);
  memset(lib, 0, sizeof *lib);
}

#define TAKE_SYS_SLOT(lib, dst, field)                                     \
  ((lib)->dst = (QNN_SYSTEM_INTERFACE_SLOT(field) < (lib)->slots)          \
                    ? (lib)->provider->table.field                         \
                    : NULL)

int loader_open_system(const char *path, qnn_system_lib *out) {
  memset(out, 0, sizeof *out);
  void *dl = NULL, *entry = NULL;
  int orc = open_entry(path, RTLD_NOW | RTLD_LOCAL, HTPU_ELOAD_SYSTEM, "system library",
                       QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL, &dl, &entry);
  if (orc) return orc;
  qnn_system_interface_get_providers_fn get = (qnn_system_interface_get_providers_fn)entry;
  const qnn_system_interface_t **list = NULL;
  uint32_t n = 0;
  qnn_error_t rc = get(&list, &n);
  if (rc != QNN_SUCCESS || !list || n == 0) {
    uint32_t code = QNN_ERROR_CODE(rc);
    htpu_set_error(HTPU_ENO_PROVIDER, code,
                   "no provider: the system library '%s' offers no provider (%s() returned QNN "
                   "error %u, %u providers)",
                   path, QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL, code, n);
    dlclose(dl);
    return HTPU_ENO_PROVIDER;
  }
  const qnn_system_interface_t *chosen = NULL;
  char found[512] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < n; i++) {
    const qnn_system_interface_t *p = list[i];
    if (!p) continue;
    if (!chosen && qnn_system_table_slots(p->system_api_version) != 0) chosen = p;
    int w = snprintf(found + used, sizeof found - used, "%s%s (system API %u.%u.%u)",
                     used ? ", " : "", safe_name(p->provider_name), p->system_api_version.major,
                     p->system_api_version.minor, p->system_api_version.patch);
    if (w > 0 && (size_t)w < sizeof found - used) used += (size_t)w;
  }
  if (!chosen) {
    htpu_set_error(HTPU_EVERSION, 0,
                   "version: no provider of the system library '%s' has a supported system API "
                   "version (need %u.x with x >= %u); found: %s",
                   path, QNN_SYSTEM_API_MAJOR, QNN_SYSTEM_API_FLOOR_MINOR, found);
    dlclose(dl);
    return HTPU_EVERSION;
  }
  out->dl = dl;
  out->provider = chosen;
  out->api = chosen->system_api_version;
  out->slots = qnn_system_table_slots(out->api);
  TAKE_SYS_SLOT(out, context_create, system_context_create);
  TAKE_SYS_SLOT(out, get_binary_info, system_context_get_binary_info);
  TAKE_SYS_SLOT(out, context_free, system_context_free);
  if (!out->context_create || !out->get_binary_info || !out->context_free) {
    htpu_set_error(HTPU_ENO_PROVIDER, 0,
                   "no provider: system provider '%s' of '%s' lacks the system context functions",
                   safe_name(chosen->provider_name), path);
    dlclose(dl);
    memset(out, 0, sizeof *out);
    return HTPU_ENO_PROVIDER;
  }
  return finish_open(dl, path, &out->path, out, sizeof *out);
}

void loader_close_system(qnn_system_lib *lib) {
  if (lib->dl) dlclose(lib->dl);
  free(lib->path);
  memset(lib, 0, sizeof *lib);
}
