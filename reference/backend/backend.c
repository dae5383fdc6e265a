/* backend.c - log, backend and device lifecycles and the free-order rules between them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"
#include "rb_profile.h"

/* HTPU_REF_BUILD_ID values handed out, kept for the library's lifetime: QNN's build id
 * pointer stays valid, and a caller may hold it while the variable changes. */
typedef struct rb_build_id {
  struct rb_build_id *next;
  char text[];
} rb_build_id;
static pthread_mutex_t g_build_ids_lock = PTHREAD_MUTEX_INITIALIZER;
static rb_build_id *g_build_ids;

/* The id for `value`, interned (NULL: out of memory). */
static const char *intern_build_id(const char *value) {
  pthread_mutex_lock(&g_build_ids_lock);
  rb_build_id *b = g_build_ids;
  while (b && strcmp(b->text, value) != 0) b = b->next;
  if (!b) {
    size_t n = strlen(value) + 1;
    b = malloc(sizeof(*b) + n);
    if (b) {
      memcpy(b->text, value, n);
      b->next = g_build_ids;
      g_build_ids = b;
    }
  }
  pthread_mutex_unlock(&g_build_ids_lock);
  return b ? b->text : NULL;
}

__attribute__((destructor)) static void rb_build_ids_unload(void) {
  while (g_build_ids) {
    rb_build_id *next = g_build_ids->next;
    free(g_build_ids);
    g_build_ids = next;
  }
}

qnn_error_t rb_backend_get_build_id(const char **out) {
  if (!out) return QNN_BACKEND_ERROR_INVALID_ARGUMENT;
  /* HTPU_REF_BUILD_ID stands in for a real library's id, e.g. "v2.25.0.240728104910_97711",
   * to test what callers make of it. */
  const char *env = getenv("HTPU_REF_BUILD_ID");
  const char *id = env ? intern_build_id(env) : RB_BUILD_ID;
  if (!id) return QNN_COMMON_ERROR_MEM_ALLOC;
  *out = id;
  return QNN_SUCCESS;
}

qnn_error_t rb_backend_get_api_version(qnn_api_version_t *out) {
  if (!out) return QNN_BACKEND_ERROR_INVALID_ARGUMENT;
  *out = rb_current_api_version();
  return QNN_SUCCESS;
}

/* ---- log ---- */

static bool level_ok(uint32_t level) {
  return level >= QNN_LOG_LEVEL_ERROR && level <= QNN_LOG_LEVEL_DEBUG;
}

qnn_error_t rb_log_create(qnn_log_callback_t cb, uint32_t level, qnn_log_handle_t *out) {
  if (!out || !level_ok(level)) return QNN_LOG_ERROR_INVALID_ARGUMENT;
  rb_log *l = calloc(1, sizeof(*l));
  if (!l) return QNN_COMMON_ERROR_MEM_ALLOC;
  l->cb = cb;
  atomic_init(&l->level, level);
  /* QNN may report through the callback even when logCreate fails, and so do we. */
  uint32_t code = rb_fault(NULL, FR_LOG_CREATE, l);
  if (code) {
    free(l);
    return code;
  }
  pthread_mutex_lock(&g_rb.lock);
  l->handle = rb_new_handle();
  l->next = g_rb.logs;
  g_rb.logs = l;
  *out = (qnn_log_handle_t)l->handle;
  pthread_mutex_unlock(&g_rb.lock);
  rb_logf(l, QNN_LOG_LEVEL_VERBOSE, "logCreate: level %u", level);
  return QNN_SUCCESS;
}

qnn_error_t rb_log_set_level(qnn_log_handle_t h, uint32_t level) {
  qnn_error_t rc = QNN_SUCCESS;
  pthread_mutex_lock(&g_rb.lock);
  rb_log *l = rb_find_log(h);
  if (!l)
    rc = QNN_LOG_ERROR_INVALID_HANDLE;
  else if (!level_ok(level))
    rc = QNN_LOG_ERROR_INVALID_ARGUMENT;
  else
    atomic_store(&l->level, level);
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_log_free(qnn_log_handle_t h) {
  pthread_mutex_lock(&g_rb.lock);
  rb_log *l = rb_find_log(h);
  if (!l) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_LOG_ERROR_INVALID_HANDLE;
  }
  if (l->users) {
    /* The real backend would keep calling a freed logger; refuse instead and count it. */
    rb_violation(l, "logFree while %u backend(s)/device(s) still log through it (free them "
                 "first: context -> device -> backend -> log)", l->users);
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED;
  }
  for (rb_log **pp = &g_rb.logs; *pp; pp = &(*pp)->next)
    if (*pp == l) {
      *pp = l->next;
      break;
    }
  pthread_mutex_unlock(&g_rb.lock);
  free(l);
  return QNN_SUCCESS;
}

/* ---- backend ---- */

qnn_error_t rb_backend_create(uint32_t backend_id, qnn_log_handle_t log,
                              const qnn_backend_config_t **cfg, qnn_backend_handle_t *out) {
  if (!out) return QNN_BACKEND_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_rb.lock);
  rb_log *l = log ? rb_find_log(log) : NULL;
  if (log && !l) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_BACKEND_ERROR_INVALID_HANDLE;
  }
  if (l) l->users++; /* pins the log while we run unlocked */
  pthread_mutex_unlock(&g_rb.lock);

  rb_backend *b = calloc(1, sizeof(*b));
  qnn_error_t rc = b ? QNN_SUCCESS : QNN_COMMON_ERROR_MEM_ALLOC;
  char err[256];
  /* The backend's own rules first, so a typo in them is reported as such. */
  if (rc == QNN_SUCCESS && rb_faults_from_env(&b->faults, err, sizeof(err)) != 0) {
    rb_logf(l, QNN_LOG_LEVEL_ERROR, "backendCreate: %s", err);
    rc = QNN_BACKEND_ERROR_CANNOT_INITIALIZE;
  }
  if (rc == QNN_SUCCESS && rb_hw_from_env(&b->hw, err, sizeof(err)) != 0) {
    rb_logf(l, QNN_LOG_LEVEL_ERROR, "backendCreate: HTPU_REF_DEVICE: %s", err);
    rc = QNN_BACKEND_ERROR_CANNOT_INITIALIZE;
  }
  if (rc == QNN_SUCCESS && rb_caps_check_env(err, sizeof(err)) != 0) {
    rb_logf(l, QNN_LOG_LEVEL_ERROR, "backendCreate: %s", err);
    rc = QNN_BACKEND_ERROR_CANNOT_INITIALIZE;
  }
  const char *obj = rc == QNN_SUCCESS ? getenv("HTPU_REF_PROFILE_OBJECT") : NULL;
  if (obj && strlen(obj) >= sizeof b->profile_object) {
    rb_logf(l, QNN_LOG_LEVEL_ERROR, "backendCreate: HTPU_REF_PROFILE_OBJECT: %zu bytes; expected "
            "at most %zu", strlen(obj), sizeof b->profile_object - 1);
    rc = QNN_BACKEND_ERROR_CANNOT_INITIALIZE;
  } else if (obj) {
    snprintf(b->profile_object, sizeof b->profile_object, "%s", obj);
    b->has_profile_object = true;
  }
  if (rc == QNN_SUCCESS) b->op_faults = rb_fault_set_has(&b->faults, FR_GRAPH_OP);
  if (rc == QNN_SUCCESS) rb_session_from_env(&b->session);
  if (rc == QNN_SUCCESS) rc = rb_fault(NULL, FR_BACKEND_CREATE, l);
  for (uint32_t i = 0; rc == QNN_SUCCESS && cfg && cfg[i]; i++)
    rb_logf(l, QNN_LOG_LEVEL_VERBOSE, "backendCreate: config option %u accepted and ignored",
            cfg[i]->option);

  pthread_mutex_lock(&g_rb.lock);
  if (rc != QNN_SUCCESS) {
    if (l) l->users--;
    pthread_mutex_unlock(&g_rb.lock);
    free(b);
    return rc;
  }
  b->backend_id = backend_id;
  b->api = rb_provider_api_version(backend_id);
  b->log = l;
  b->handle = rb_new_handle();
  b->next = g_rb.backends;
  g_rb.backends = b;
  *out = (qnn_backend_handle_t)b->handle;
  pthread_mutex_unlock(&g_rb.lock);
  rb_logf(l, QNN_LOG_LEVEL_INFO, "backendCreate: backend id %u, build %s, %u fault rule(s), "
          "device v%u soc_model %u vtcm %u %s", backend_id, RB_BUILD_ID, b->faults.num_rules,
          b->hw.arch, b->hw.soc_model, b->hw.vtcm_bytes ? b->hw.vtcm_bytes : b->hw.vtcm_mb,
          b->hw.vtcm_bytes ? "bytes" : "MB");
  return QNN_SUCCESS;
}

qnn_error_t rb_backend_free(qnn_backend_handle_t h) {
  pthread_mutex_lock(&g_rb.lock);
  rb_backend *b = rb_find_backend(h);
  if (!b) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_BACKEND_ERROR_INVALID_HANDLE;
  }
  /* As in contextFree: async calls past their notification are waited for. */
  while (atomic_load(&b->busy) && rb_wait_notified_round(NULL, b)) {
    b = rb_find_backend(h);
    if (!b) {
      pthread_mutex_unlock(&g_rb.lock);
      return QNN_BACKEND_ERROR_INVALID_HANDLE;
    }
  }
  if (atomic_load(&b->busy)) {
    rb_violation(b->log, "backendFree while another call on this backend is in progress");
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED;
  }
  /* Children still alive are leaks by the caller: count each, then free them as the real
   * backend does when it tears down. */
  for (rb_context *c = g_rb.contexts, *next; c; c = next) {
    next = c->next;
    if (c->backend != b) continue;
    rb_violation(b->log, "backendFree: context 0x%lx was not freed (leaked; freeing it now)",
                 (unsigned long)c->handle);
    rb_count_leak();
    rb_context_destroy(c);
  }
  for (rb_device *d = g_rb.devices, *next; d; d = next) {
    next = d->next;
    if (d->backend != b) continue;
    rb_violation(b->log, "backendFree: device 0x%lx was not freed (leaked; freeing it now)",
                 (unsigned long)d->handle);
    rb_count_leak();
    rb_device_destroy(d);
  }
  rb_power_release_all(b);
  rb_pinfo_release_all(b);
  rb_profile_release_all(b);
  rb_signal_release_all(b);
  for (rb_backend **pp = &g_rb.backends; *pp; pp = &(*pp)->next)
    if (*pp == b) {
      *pp = b->next;
      break;
    }
  rb_log *l = b->log;
  if (l) l->users--;
  rb_logf(l, QNN_LOG_LEVEL_INFO, "backendFree: backend 0x%lx", (unsigned long)b->handle);
  pthread_mutex_unlock(&g_rb.lock);
  free(b);
  return QNN_SUCCESS;
}

/* ---- device ---- */

qnn_error_t rb_device_create(qnn_log_handle_t log, const qnn_device_config_t **cfg,
                             qnn_device_handle_t *out) {
  if (!out) return QNN_COMMON_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_rb.lock);
  rb_log *l = log ? rb_find_log(log) : NULL;
  if (log && !l) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_DEVICE_ERROR_INVALID_HANDLE;
  }
  rb_backend *b = rb_owner_for(l);
  if (!b) {
    rb_violation(l, "deviceCreate before backendCreate");
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE;
  }
  atomic_fetch_add(&b->busy, 1);
  pthread_mutex_unlock(&g_rb.lock);

  rb_log *dlog = l ? l : b->log;
  /* Counted process-wide (not per backend), so "fails the first N times" spans the
   * successive backends a retrying loader creates. */
  qnn_error_t rc = rb_fault(b, FR_DEVICE_CREATE, dlog);
  if (rc == QNN_SUCCESS) rc = rb_device_check_configs(b, dlog, cfg);
  if (rc == QNN_SUCCESS) rc = rb_release_check(dlog); /* a fake release's stub and skel */
  /* Creating the device opens the FastRPC session, which initialises rpcmem. */
  if (rc == QNN_SUCCESS) rb_fastrpc_session_open(dlog);
  rb_device *d = rc == QNN_SUCCESS ? calloc(1, sizeof(*d)) : NULL;
  if (rc == QNN_SUCCESS && !d) rc = QNN_COMMON_ERROR_MEM_ALLOC;

  pthread_mutex_lock(&g_rb.lock);
  atomic_fetch_sub(&b->busy, 1);
  if (rc == QNN_SUCCESS) {
    d->backend = b;
    d->log = l;
    if (l) l->users++;
    d->handle = rb_new_handle();
    d->next = g_rb.devices;
    g_rb.devices = d;
    *out = (qnn_device_handle_t)d->handle;
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_device_free(qnn_device_handle_t h) {
  pthread_mutex_lock(&g_rb.lock);
  rb_device *d = rb_find_device(h);
  if (!d) {
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_DEVICE_ERROR_INVALID_HANDLE;
  }
  unsigned n = 0;
  for (rb_context *c = g_rb.contexts; c; c = c->next) n += c->device == d;
  if (n) {
    rb_violation(d->log ? d->log : d->backend->log,
                 "deviceFree while %u context(s) created on it are alive", n);
    pthread_mutex_unlock(&g_rb.lock);
    return QNN_DEVICE_ERROR_ASSOCIATED_TO_CONTEXT;
  }
  rb_device_destroy(d);
  pthread_mutex_unlock(&g_rb.lock);
  return QNN_SUCCESS;
}
