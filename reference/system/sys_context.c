/*
 * sys_context.c - QnnSystemInterface_getProviders and the system-context calls.
 *
 * Providers come from HTPU_REF_SYSTEM_PROVIDERS ("NAME:MAJ.MIN.PATCH,..."), each allocated with
 * exactly the table slots its System API version has. The graph-info stride follows the
 * provider's version, so each stride has its own entry points. HTPU_REF_SYSTEM_LAYOUT=v1only
 * makes every answer use V1-only graph infos and tensors whatever version the provider reports,
 * as QAIRT 2.13's library does while reporting System API 1.1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qnn/qnn_versions.h"
#include "../backend/ref_providers.h"
#include "rs_internal.h"

#define DEFAULT_SPEC "HTPU_REFERENCE_SYSTEM:1.7.0"
#define UNSUPPORTED_SLOTS 4u

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static rs_context *g_contexts;
static uintptr_t g_next_handle = 0x5000;

/* Process-wide fault rules, re-armed whenever HTPU_REF_FAULTS/HTPU_REF_LATENCY change. */
static fr_set g_faults;
static char *g_faults_env, *g_latency_env;
static int g_faults_parsed, g_faults_bad;

qnn_error_t rs_not_supported(void) { return QNN_COMMON_ERROR_NOT_SUPPORTED; }

static int same(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static uint32_t fault(uint32_t api) {
  const char *f = getenv("HTPU_REF_FAULTS"), *l = getenv("HTPU_REF_LATENCY");
  pthread_mutex_lock(&g_lock);
  if (!g_faults_parsed || !same(f, g_faults_env) || !same(l, g_latency_env)) {
    char err[256];
    free(g_faults_env);
    free(g_latency_env);
    g_faults_env = f ? strdup(f) : NULL;
    g_latency_env = l ? strdup(l) : NULL;
    memset(&g_faults, 0, sizeof(g_faults));
    g_faults_bad = fr_parse_rules(f, g_faults.rules, &g_faults.num_rules, err, sizeof(err)) ||
                   fr_parse_latency(l, &g_faults, err, sizeof(err));
    if (g_faults_bad) fprintf(stderr, "htpu_refsystem: HTPU_REF_FAULTS/LATENCY: %s\n", err);
    g_faults_parsed = 1;
  }
  uint32_t code = g_faults_bad ? QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT : fr_next(&g_faults, api);
  uint32_t lat = fr_latency(&g_faults, api);
  pthread_mutex_unlock(&g_lock);
  if (lat) usleep(lat);
  if (code) rs_log("%s: injected fault, returning %u", fr_api_name(api), code);
  return code;
}

qnn_error_t rs_context_create(qnn_system_context_handle_t *out) {
  if (!out) return QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT;
  uint32_t code = fault(FR_SYSTEM_CONTEXT_CREATE);
  if (code) return code;
  rs_context *c = calloc(1, sizeof(*c));
  if (!c) return QNN_COMMON_ERROR_MEM_ALLOC;
  pthread_mutex_lock(&g_lock);
  c->handle = g_next_handle++;
  c->next = g_contexts;
  g_contexts = c;
  *out = (qnn_system_context_handle_t)c->handle;
  pthread_mutex_unlock(&g_lock);
  return QNN_SUCCESS;
}

static rs_context *find_locked(const void *h) {
  for (rs_context *c = g_contexts; c; c = c->next)
    if (h && c->handle == (uintptr_t)h) return c;
  return NULL;
}

qnn_error_t rs_context_free(qnn_system_context_handle_t h) {
  pthread_mutex_lock(&g_lock);
  rs_context **pp = &g_contexts;
  while (*pp && !(h && (*pp)->handle == (uintptr_t)h)) pp = &(*pp)->next;
  rs_context *c = *pp;
  if (c) *pp = c->next;
  pthread_mutex_unlock(&g_lock);
  if (!c) return QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE;
  rs_free_all(c);
  free(c);
  return QNN_SUCCESS;
}

/* The layout of this answer: the provider's own (`stride`, 144-byte tensors), or the V1-only
 * one HTPU_REF_SYSTEM_LAYOUT asks for. -1 for a value it does not know. */
static int answer_layout(uint32_t stride, rs_layout *out) {
  const char *v = getenv("HTPU_REF_SYSTEM_LAYOUT");
  if (!v || !*v || strcmp(v, "native") == 0) {
    *out = (rs_layout){stride, QNN_TENSOR_STRIDE};
    return 0;
  }
  if (strcmp(v, "v1only") == 0) {
    *out = (rs_layout){QNN_GRAPH_INFO_STRIDE_V1_ONLY, QNN_TENSOR_STRIDE_V1_ONLY};
    return 0;
  }
  fprintf(stderr, "htpu_refsystem: HTPU_REF_SYSTEM_LAYOUT: '%s' (expected native or v1only)\n",
          v);
  return -1;
}

qnn_error_t rs_get_info(qnn_system_context_handle_t h, const void *buf, uint64_t size,
                        const void **info, qnn_context_binary_size_t *info_size,
                        uint32_t stride, uint32_t api) {
  pthread_mutex_lock(&g_lock);
  int known = find_locked(h) != NULL;
  pthread_mutex_unlock(&g_lock);
  if (!known) return QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE;
  if (!buf || !size || !info) return QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT;
  uint32_t code = fault(api);
  if (code) return code;
  rs_layout layout;
  if (answer_layout(stride, &layout) != 0) return QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT;

  char err[256];
  ref_model *m = NULL;
  if (!ref_model_has_magic(buf, (size_t)size)) {
    rs_log("%s: not a reference context binary (%llu bytes, bad magic)", fr_api_name(api),
           (unsigned long long)size);
    return QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY;
  }
  /* In place: the answer copies what it keeps before the call returns, so a large binary
   * costs no second copy here. */
  int in_place = (uintptr_t)buf % 8u == 0;
  if ((in_place ? ref_model_parse_in_place : ref_model_parse)(buf, (size_t)size, &m, err,
                                                              sizeof(err)) != 0) {
    rs_log("%s: malformed binary: %s", fr_api_name(api), err);
    return QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY;
  }
  /* Building happens under the lock: the context's block list is not otherwise guarded, and
   * a concurrent systemContextFree must not free it under us. */
  const qnn_system_context_binary_info_t *bi = NULL;
  qnn_error_t rc = QNN_SUCCESS;
  pthread_mutex_lock(&g_lock);
  rs_context *c = find_locked(h);
  if (!c) {
    rc = QNN_SYSTEM_CONTEXT_ERROR_INVALID_HANDLE;
  } else {
    size_t before = rs_allocated(c);
    if (rs_build_binary_info(c, m, size, layout, &bi) != 0) {
      rc = QNN_COMMON_ERROR_MEM_ALLOC;
    } else {
      *info = bi;
      if (info_size) *info_size = rs_allocated(c) - before;
    }
  }
  pthread_mutex_unlock(&g_lock);
  ref_model_free(m);
  return rc;
}

/* ---- entry points per graph-info stride ---- */

#define RS_STRIDE_FNS(S)                                                                     \
  static qnn_error_t get_binary_info_##S(qnn_system_context_handle_t h, void *buf,          \
                                         uint64_t size, const void **info,                  \
                                         qnn_context_binary_size_t *info_size) {            \
    if (!info_size) return QNN_SYSTEM_CONTEXT_ERROR_INVALID_ARGUMENT;                      \
    return rs_get_info(h, buf, size, info, info_size, S##u, FR_SYSTEM_CONTEXT_GET_BINARY_INFO); \
  }                                                                                          \
  static qnn_error_t get_metadata_##S(qnn_system_context_handle_t h, const void *buf,       \
                                      uint64_t size, const void **info) {                   \
    return rs_get_info(h, buf, size, info, NULL, S##u, FR_SYSTEM_CONTEXT_GET_METADATA);     \
  }
RS_STRIDE_FNS(64)
RS_STRIDE_FNS(88)

/* ---- providers ---- */

static pthread_mutex_t g_prov_lock = PTHREAD_MUTEX_INITIALIZER;
static ref_provider_set *g_sets;

static void fill_table(qnn_system_interface_table_t *t, qnn_version_t v, int supported) {
  qnn_unused_fn *slot = (qnn_unused_fn *)(void *)t;
  for (size_t i = 0; i < sizeof(*t) / sizeof(qnn_unused_fn); i++)
    slot[i] = (qnn_unused_fn)rs_not_supported;
  if (!supported) return;
  int wide = qnn_graph_info_stride(v) == QNN_GRAPH_INFO_STRIDE_V3;
  t->system_context_create = rs_context_create;
  t->system_context_get_binary_info = wide ? get_binary_info_88 : get_binary_info_64;
  t->system_context_get_metadata = wide ? get_metadata_88 : get_metadata_64;
  t->system_context_free = rs_context_free;
  /* beyond the provider's slots these are never copied (build_provider copies only those) */
  t->system_profile_create_serialization_target = rs_profile_create_target;
  t->system_profile_serialize_event_data = rs_profile_serialize;
  t->system_profile_free_serialization_target = rs_profile_free_target;
}

/* One provider block from "NAME:MAJ.MIN.PATCH". */
static int build_provider(const char *item, size_t len, char **name, void **block, char *err,
                          size_t errlen) {
  const char *f[2];
  size_t fl[2];
  qnn_system_interface_t head;
  memset(&head, 0, sizeof(head));
  if (fr_split(item, len, f, fl, 2) != 2 || fl[0] == 0 ||
      ref_parse_version(f[1], fl[1], &head.system_api_version) != 0) {
    snprintf(err, errlen, "bad system provider '%.*s' (expected NAME:MAJ.MIN.PATCH)", (int)len,
             item);
    return -1;
  }
  uint32_t slots = qnn_system_table_slots(head.system_api_version);
  int supported = slots != 0;
  if (!supported) slots = UNSUPPORTED_SLOTS;
  size_t off = offsetof(qnn_system_interface_t, table);
  *name = strndup(f[0], fl[0]);
  unsigned char *b = *name ? malloc(off + slots * sizeof(qnn_unused_fn)) : NULL;
  if (!b) {
    free(*name);
    *name = NULL;
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  qnn_system_interface_table_t table;
  fill_table(&table, head.system_api_version, supported);
  head.backend_id = QNN_BACKEND_ID_NULL;
  head.provider_name = *name;
  memcpy(b, &head, off);
  memcpy(b + off, &table, slots * sizeof(qnn_unused_fn));
  *block = b;
  return 0;
}

RS_EXPORT qnn_error_t QnnSystemInterface_getProviders(const qnn_system_interface_t ***list,
                                                      uint32_t *num) {
  if (!list || !num) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  const char *forced = getenv("HTPU_REF_SYSTEM_GETPROVIDERS_ERROR");
  uint32_t code = 0;
  if (forced && fr_parse_u32(forced, strlen(forced), 1, 0xFFFF, &code) == 0) return code;
  const char *spec = getenv("HTPU_REF_SYSTEM_PROVIDERS");
  if (!spec) spec = DEFAULT_SPEC;
  pthread_mutex_lock(&g_prov_lock);
  char err[256];
  ref_provider_set *s = ref_provider_set_get(&g_sets, spec, build_provider, err, sizeof(err));
  if (!s) {
    pthread_mutex_unlock(&g_prov_lock);
    fprintf(stderr, "htpu_refsystem: HTPU_REF_SYSTEM_PROVIDERS: %s\n", err);
    return QNN_COMMON_ERROR_GENERAL;
  }
  *list = s->count ? (const qnn_system_interface_t **)s->list : NULL;
  *num = s->count;
  pthread_mutex_unlock(&g_prov_lock);
  return QNN_SUCCESS;
}

__attribute__((destructor)) static void rs_unload(void) {
  ref_provider_sets_free(&g_sets);
  unsigned n = 0;
  while (g_contexts) {
    rs_context *c = g_contexts;
    g_contexts = c->next;
    rs_free_all(c);
    free(c);
    n++;
  }
  if (n) fprintf(stderr, "htpu_refsystem: %u system context(s) still alive at unload\n", n);
  free(g_faults_env);
  free(g_latency_env);
}
