/*
 * providers.c - QnnInterface_getProviders: provider structs built from HTPU_REF_PROVIDERS.
 *
 * Each provider is allocated with exactly the table slots its core API version has, so a
 * loader that reads a slot the version lacks overflows the heap block (ASan reports it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_versions.h"
#include "rb_internal.h"
#include "rb_profile.h"
#include "ref_providers.h"

/* A fake release (rb_internal.h) reports its own API versions. */
#ifdef RB_RELEASE_SPEC
#define DEFAULT_SPEC RB_RELEASE_SPEC
#else
#define DEFAULT_SPEC "HTPU_REFERENCE:6:2.32.0:5.42.0"
#endif
/* Slot count given to versions the project does not support (2.7's table is laid out
 * differently); every slot answers NOT_SUPPORTED. */
#define UNSUPPORTED_SLOTS 44u
#define MAX_BACKEND_ID 15u

/* backendCreate takes no provider argument, so each backend id gets its own entry point and
 * the backend it creates knows which provider's id to check binaries against. */
#define RB_IDS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
  X(14) X(15)
#define RB_CREATE_FN(id)                                                                 \
  static qnn_error_t backend_create_##id(qnn_log_handle_t log,                           \
                                         const qnn_backend_config_t **cfg,               \
                                         qnn_backend_handle_t *out) {                    \
    return rb_backend_create(id##u, log, cfg, out);                                      \
  }
RB_IDS(RB_CREATE_FN)
#define RB_CREATE_ENTRY(id) backend_create_##id,
static qnn_error_t (*const k_create[MAX_BACKEND_ID + 1])(qnn_log_handle_t,
                                                         const qnn_backend_config_t **,
                                                         qnn_backend_handle_t *) = {
    RB_IDS(RB_CREATE_ENTRY)};

/* Provider lists by spec (ref_providers.h); the versions of the one most recently handed out
 * are api_versions.c's. */

static pthread_mutex_t g_prov_lock = PTHREAD_MUTEX_INITIALIZER;
static ref_provider_set *g_sets;

static void fill_table(qnn_interface_table_t *t, uint32_t backend_id, int supported) {
  qnn_unused_fn *slot = (qnn_unused_fn *)(void *)t;
  for (size_t i = 0; i < sizeof(*t) / sizeof(qnn_unused_fn); i++)
    slot[i] = (qnn_unused_fn)rb_not_supported;
  if (!supported) return;
  t->property_has_capability = rb_property_has_capability;
  t->backend_create = k_create[backend_id];
  t->backend_get_api_version = rb_backend_get_api_version;
  t->backend_get_build_id = rb_backend_get_build_id;
  t->backend_free = rb_backend_free;
  t->context_create_from_binary = rb_context_create_from_binary;
  t->context_create_from_binary_with_signal = rb_context_create_from_binary_with_signal;
  t->context_create_from_binary_list_async = rb_context_create_from_binary_list_async;
  t->signal_create = rb_signal_create;
  t->signal_set_config = rb_signal_set_config;
  t->signal_trigger = rb_signal_trigger;
  t->signal_free = rb_signal_free;
  t->graph_set_config = rb_graph_set_config;
  t->graph_execute_async = rb_graph_execute_async;
  t->context_free = rb_context_free;
  t->context_get_property = rb_context_get_property;
  t->graph_retrieve = rb_graph_retrieve;
  t->graph_execute = rb_graph_execute;
  t->log_create = rb_log_create;
  t->log_set_log_level = rb_log_set_level;
  t->log_free = rb_log_free;
  t->device_create = rb_device_create;
  t->device_free = rb_device_free;
  t->error_get_message = rb_error_get_message;
  t->context_validate_binary = rb_context_validate_binary;
  t->mem_register = rb_mem_register;
  t->mem_de_register = rb_mem_de_register;
  t->device_get_platform_info = rb_device_get_platform_info;
  t->device_free_platform_info = rb_device_free_platform_info;
  t->device_get_infrastructure = rb_device_get_infrastructure;
  t->device_get_info = rb_device_get_info;
  t->profile_create = rb_profile_create;
  t->profile_set_config = rb_profile_set_config;
  t->profile_get_events = rb_profile_get_events;
  t->profile_get_sub_events = rb_profile_get_sub_events;
  t->profile_get_event_data = rb_profile_get_event_data;
  t->profile_get_extended_event_data = rb_profile_get_extended_event_data;
  t->profile_free = rb_profile_free;
}

/* One provider block from "NAME:BACKEND_ID:CORE_VERSION:BACKEND_VERSION". */
static int build_provider(const char *item, size_t len, char **name, void **block, char *err,
                          size_t errlen) {
  const char *f[4];
  size_t fl[4];
  uint32_t id = 0;
  qnn_interface_t head;
  memset(&head, 0, sizeof(head));
  if (fr_split(item, len, f, fl, 4) != 4 || fl[0] == 0 ||
      fr_parse_u32(f[1], fl[1], 0, MAX_BACKEND_ID, &id) != 0 ||
      ref_parse_version(f[2], fl[2], &head.api_version.core_api_version) != 0 ||
      ref_parse_version(f[3], fl[3], &head.api_version.backend_api_version) != 0) {
    snprintf(err, errlen, "bad provider '%.*s' (expected NAME:BACKEND_ID(0-%u):"
             "CORE_MAJ.MIN.PATCH:BACKEND_MAJ.MIN.PATCH)", (int)len, item, MAX_BACKEND_ID);
    return -1;
  }
  uint32_t slots = qnn_core_table_slots(head.api_version.core_api_version);
  int supported = slots != 0;
  if (!supported) slots = UNSUPPORTED_SLOTS;
  size_t table_off = offsetof(qnn_interface_t, table);
  /* The name lives in its own block so nothing of ours sits right after the last slot. */
  *name = strndup(f[0], fl[0]);
  unsigned char *b = *name ? malloc(table_off + slots * sizeof(qnn_unused_fn)) : NULL;
  if (!b) {
    free(*name);
    *name = NULL;
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  qnn_interface_table_t table;
  fill_table(&table, id, supported);
  head.backend_id = id;
  head.provider_name = *name;
  memcpy(b, &head, table_off);
  memcpy(b + table_off, &table, slots * sizeof(qnn_unused_fn));
  *block = b;
  return 0;
}

RB_EXPORT qnn_error_t QnnInterface_getProviders(const qnn_interface_t ***list, uint32_t *num) {
  if (!list || !num) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  const char *forced = getenv("HTPU_REF_GETPROVIDERS_ERROR");
  if (forced && *forced) {
    uint32_t code = 0;
    if (fr_parse_u32(forced, strlen(forced), 0, 0xFFFF, &code) == 0 && code) return code;
  }
  uint32_t code = rb_fault(NULL, FR_GET_PROVIDERS, NULL);
  if (code) return code;
  const char *spec = getenv("HTPU_REF_PROVIDERS");
  if (!spec) spec = DEFAULT_SPEC;

  pthread_mutex_lock(&g_prov_lock);
  char err[256];
  ref_provider_set *s = ref_provider_set_get(&g_sets, spec, build_provider, err, sizeof(err));
  if (!s) {
    pthread_mutex_unlock(&g_prov_lock);
    fprintf(stderr, "htpu_refbackend: HTPU_REF_PROVIDERS: %s\n", err);
    return QNN_COMMON_ERROR_GENERAL;
  }
  rb_api_versions_handed_out((const qnn_interface_t *const *)s->list, s->count);
  *list = s->count ? (const qnn_interface_t **)s->list : NULL;
  *num = s->count;
  pthread_mutex_unlock(&g_prov_lock);
  return QNN_SUCCESS;
}

/* Provider arrays stay valid until the library is unloaded, as a real backend's do. */
__attribute__((destructor)) static void providers_unload(void) { ref_provider_sets_free(&g_sets); }
