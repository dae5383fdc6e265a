/* probe.c - a backend library's provider facts, read without creating anything on the DSP. */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "hexagon_tpu.h"
#include "libs.h"

static void copy_truncated(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

static htpu_version3 version3(qnn_version_t v) { return (htpu_version3){v.major, v.minor, v.patch}; }

int htpu_backend_probe(const char *backend_lib, uint32_t backend_id, htpu_backend_facts *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_backend_probe: out is NULL");
  memset(out, 0, sizeof *out);
  qnn_backend_lib b;
  /* The same loader as htpu_runtime_open: the same provider choice and staged errors. */
  int rc = loader_open_backend(backend_lib ? backend_lib : HTPU_DEFAULT_BACKEND_LIB, backend_id,
                               &b);
  if (rc) return rc;
  copy_truncated(out->provider_name, sizeof out->provider_name, b.provider->provider_name);
  out->backend_id = b.backend_id;
  out->core_api_version = version3(b.core_api);
  out->backend_api_version = version3(b.backend_api);
  /* backendGetBuildId takes no backend handle: the id is known before any DSP session. */
  const char *build_id = NULL;
  if (b.backend_get_build_id && b.backend_get_build_id(&build_id) == QNN_SUCCESS)
    copy_truncated(out->build_id, sizeof out->build_id, build_id);
  loader_close_backend(&b);
  return 0;
}
