/*
 * caps.c - propertyHasCapability: what the backend announces, switchable per test.
 *
 * The defaults are what every real libQnnHtp.so observed answers (QAIRT 2.25 to 2.46,
 * docs/reference-backend.md); the behaviour behind each switchable key follows its answer, so
 * a test can run the same client code against a backend with and without signals, async
 * execute, priorities, batch multiples or profiling features. Precedence:
 * htpu_ref_set_capability, then HTPU_REF_CAPS ("key=answer,..." read on every call), then the
 * default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htpu_ref_control.h"
#include "qnn/qnn_profile_abi.h"
#include "rb_internal.h"

typedef struct cap_entry {
  uint32_t key;
  qnn_error_t real; /* the real HTP's answer */
} cap_entry;

/* 303 (graph signals, deprecated) was not observed: the header defines it as "307, 308 and
 * 309 all supported", and 309 is not, so it answers "not supported". */
static const cap_entry k_caps[] = {
    {QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION, QNN_SUCCESS},
    {QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_WITH_SIGNALS, QNN_SUCCESS},
    /* loading: every release asked announces these; the list API on 2.25 to 2.33 (2.34 and
     * 2.46 answered only under emulation, unknown) */
    {QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_ENABLE_GRAPHS, QNN_SUCCESS},
    {QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_MEMORY_LIMIT_HINT, QNN_SUCCESS},
    {QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY, QNN_SUCCESS},
    {QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC, QNN_SUCCESS},
    /* contextGetProperty's custom properties (context.c): 2.31 to 2.46 answer 1000 */
    {QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY, QNN_COMMON_ERROR_NOT_SUPPORTED},
    {QNN_PROPERTY_GRAPH_SUPPORT_CONFIG, QNN_SUCCESS},
    {QNN_PROPERTY_GRAPH_SUPPORT_SIGNALS, QNN_COMMON_ERROR_NOT_SUPPORTED},
    {QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION, QNN_PROPERTY_ERROR_UNKNOWN_KEY},
    {QNN_PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL, QNN_SUCCESS},
    {QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_SIGNAL, QNN_SUCCESS},
    {QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_ASYNC_SIGNAL, QNN_COMMON_ERROR_NOT_SUPPORTED},
    {QNN_PROPERTY_GRAPH_SUPPORT_BATCH_MULTIPLE, QNN_SUCCESS},
    {QNN_PROPERTY_GROUP_SIGNAL, QNN_SUCCESS},
    {QNN_PROPERTY_SIGNAL_SUPPORT_ABORT, QNN_SUCCESS},
    {QNN_PROPERTY_SIGNAL_SUPPORT_TIMEOUT, QNN_SUCCESS},
    /* profiling (profile.c, docs/profiling.md): the API itself, extended events and the
     * optrace config supported; custom and max-events configs, continuous profiling and the
     * profiling state not */
    {QNN_PROPERTY_GROUP_PROFILE, QNN_SUCCESS},
    {QNN_PROPERTY_PROFILE_SUPPORT_CUSTOM_CONFIG, QNN_COMMON_ERROR_NOT_SUPPORTED},
    {QNN_PROPERTY_PROFILE_SUPPORT_MAX_EVENTS_CONFIG, QNN_COMMON_ERROR_NOT_SUPPORTED},
    {QNN_PROPERTY_PROFILE_SUPPORTS_EXTENDED_EVENT, QNN_SUCCESS},
    {QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG, QNN_SUCCESS},
    {QNN_PROPERTY_GRAPH_SUPPORT_CONTINUOUS_PROFILING, QNN_COMMON_ERROR_NOT_SUPPORTED},
    {QNN_PROPERTY_GRAPH_SUPPORT_PROFILING_STATE, QNN_COMMON_ERROR_NOT_SUPPORTED},
    /* device and memory features the loader needs: fixed, but switchable too */
    {QNN_PROPERTY_GROUP_DEVICE, QNN_SUCCESS},
    {QNN_PROPERTY_DEVICE_SUPPORT_INFRASTRUCTURE, QNN_SUCCESS},
    {QNN_PROPERTY_MEM_SUPPORT_ION, QNN_SUCCESS},
    {QNN_PROPERTY_MEM_SUPPORT_CUSTOM, QNN_SUCCESS},
};
#define NUM_CAPS (sizeof(k_caps) / sizeof(k_caps[0]))

static pthread_mutex_t g_caps_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_set[NUM_CAPS];           /* htpu_ref_set_capability */
static qnn_error_t g_value[NUM_CAPS];
static char *g_env_text;               /* the HTPU_REF_CAPS value g_env_* were parsed from */
static bool g_env_parsed, g_env_has[NUM_CAPS];
static qnn_error_t g_env_value[NUM_CAPS];

static int cap_index(uint32_t key) {
  for (size_t i = 0; i < NUM_CAPS; i++)
    if (k_caps[i].key == key) return (int)i;
  return -1;
}

/* Parses "key=answer,..." into has/value; 0, or -1 with a message. */
static int parse_caps(const char *text, bool *has, qnn_error_t *value, char *err,
                      size_t errlen) {
  memset(has, 0, NUM_CAPS * sizeof(*has));
  if (!text) return 0;
  const char *p = text;
  while (*p) {
    size_t len = strcspn(p, ",");
    const char *eq = memchr(p, '=', len);
    uint32_t key = 0, answer = 0;
    int idx = -1;
    if (!eq || fr_parse_u32(p, (size_t)(eq - p), 0, UINT32_MAX, &key) != 0 ||
        fr_parse_u32(eq + 1, len - (size_t)(eq - p) - 1, 0, 0xFFFF, &answer) != 0 ||
        (idx = cap_index(key)) < 0) {
      snprintf(err, errlen, "HTPU_REF_CAPS: bad entry '%.*s' (expected KEY=ANSWER with a "
               "switchable key: 205, 206, 207, 208, 211, 212, 215, 302, 303, 304, 306, 308, "
               "309, 310, 312, 315, 1201, 1202, 1203, 1401, 1402, 1403, 1404, 1405, 1102, 1103, "
               "1501, 1502, and an "
               "answer 0..65535)", (int)len, p);
      return -1;
    }
    has[idx] = true;
    value[idx] = answer;
    p += len;
    if (*p == ',') p++;
  }
  return 0;
}

/* Re-reads HTPU_REF_CAPS when its value changed (g_caps_lock held). A bad value is ignored
 * here; backendCreate refuses it (rb_caps_check_env). */
static void env_refresh_locked(void) {
  const char *text = getenv("HTPU_REF_CAPS");
  bool same = g_env_parsed && ((!text && !g_env_text) ||
                               (text && g_env_text && strcmp(text, g_env_text) == 0));
  if (same) return;
  free(g_env_text);
  g_env_text = text ? strdup(text) : NULL;
  g_env_parsed = true;
  char err[256];
  if (parse_caps(text, g_env_has, g_env_value, err, sizeof(err)) != 0)
    memset(g_env_has, 0, sizeof(g_env_has));
}

qnn_error_t rb_cap(uint32_t key) {
  int i = cap_index(key);
  if (i < 0) return QNN_COMMON_ERROR_NOT_SUPPORTED; /* DMA_BUF (1104) included */
  pthread_mutex_lock(&g_caps_lock);
  env_refresh_locked();
  qnn_error_t v = g_set[i] ? g_value[i] : g_env_has[i] ? g_env_value[i] : k_caps[i].real;
  pthread_mutex_unlock(&g_caps_lock);
  return v;
}

int rb_caps_check_env(char *err, size_t errlen) {
  bool has[NUM_CAPS];
  qnn_error_t value[NUM_CAPS];
  return parse_caps(getenv("HTPU_REF_CAPS"), has, value, err, errlen);
}

void rb_caps_reset(void) {
  pthread_mutex_lock(&g_caps_lock);
  memset(g_set, 0, sizeof(g_set));
  pthread_mutex_unlock(&g_caps_lock);
}

qnn_error_t rb_property_has_capability(uint32_t key) { return rb_cap(key); }

RB_EXPORT int htpu_ref_set_capability(uint32_t key, uint32_t answer) {
  int i = cap_index(key);
  if (i < 0) return -1;
  pthread_mutex_lock(&g_caps_lock);
  g_set[i] = true;
  g_value[i] = answer;
  pthread_mutex_unlock(&g_caps_lock);
  return 0;
}

RB_EXPORT void htpu_ref_reset_capabilities(void) { rb_caps_reset(); }

__attribute__((destructor)) static void rb_caps_unload(void) {
  free(g_env_text);
  g_env_text = NULL;
}
