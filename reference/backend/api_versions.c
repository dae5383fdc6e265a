/*
 * api_versions.c - the core API versions of the providers QnnInterface_getProviders handed out
 * last: what backendGetApiVersion answers, and what a backend created through one of them
 * checks binaries against. Kept apart from providers.c, whose function tables name every
 * call of the backend, so that backendCreate's need for a version is not a way back up to
 * them.
 */
#include "rb_internal.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* a fake release (rb_internal.h) reports its own */
static qnn_api_version_t g_current = {{RB_RELEASE_CORE_API}, {RB_RELEASE_BACKEND_API}};
static const qnn_interface_t *const *g_list; /* valid until the library is unloaded */
static uint32_t g_count;

void rb_api_versions_handed_out(const qnn_interface_t *const *list, uint32_t n) {
  pthread_mutex_lock(&g_lock);
  if (n) g_current = list[0]->api_version;
  g_list = list;
  g_count = n;
  pthread_mutex_unlock(&g_lock);
}

qnn_api_version_t rb_provider_api_version(uint32_t backend_id) {
  pthread_mutex_lock(&g_lock);
  qnn_api_version_t v = g_current;
  for (uint32_t i = 0; g_list && i < g_count; i++) {
    if (g_list[i]->backend_id == backend_id) {
      v = g_list[i]->api_version;
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return v;
}

qnn_api_version_t rb_current_api_version(void) {
  pthread_mutex_lock(&g_lock);
  qnn_api_version_t v = g_current;
  pthread_mutex_unlock(&g_lock);
  return v;
}
