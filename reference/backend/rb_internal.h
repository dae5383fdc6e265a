/*
 * rb_internal.h - state shared by the files of the reference backend library.
 *
 * Every object the caller gets a handle to lives in one registry guarded by one mutex. Handles
 * are serial numbers, not pointers: a stale or foreign handle is simply not found (an
 * INVALID_HANDLE error, never a dereference), and a loader that dereferences a handle crashes
 * here as it would on the board.
 */
#ifndef HTPU_RB_INTERNAL_H
#define HTPU_RB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "qnn/qnn_abi.h"
#include "ref_faultrules.h"
#include "refmodel.h"

#define RB_EXPORT __attribute__((visibility("default")))
#define RB_BUILD_ID "htpu-reference-0.1.0"

/* Error-API codes (QnnError.h range 10000) not in the project's ABI subset. */
#define RB_ERROR_INVALID_ARGUMENT 10000u
#define RB_ERROR_INVALID_ERROR_HANDLE 10001u

typedef struct rb_log {
  struct rb_log *next;
  uintptr_t handle;
  qnn_log_callback_t cb; /* NULL: lines go to stderr, as QnnLog.h allows */
  _Atomic uint32_t level;
  uint32_t users; /* backends and devices logging through it (registry lock) */
} rb_log;

typedef struct rb_backend {
  struct rb_backend *next;
  uintptr_t handle;
  uint32_t backend_id; /* of the provider whose backendCreate made it */
  rb_log *log;
  fr_set faults;       /* HTPU_REF_FAULTS/HTPU_REF_LATENCY at backendCreate (fault lock) */
  atomic_bool fatal;   /* an injected 1011: the DSP did not recover */
  atomic_int busy;     /* calls using it outside the registry lock (fault latency, execute) */
} rb_backend;

typedef struct rb_device {
  struct rb_device *next;
  uintptr_t handle;
  rb_backend *backend;
  rb_log *log;
} rb_device;

struct rb_context;
typedef struct rb_graph {
  uintptr_t handle;
  struct rb_context *ctx;
  uint32_t index;
  atomic_int in_flight;       /* executes between handle check and return */
  pthread_mutex_t exec_lock;  /* QNN queues executes of one graph: we serialize them */
} rb_graph;

typedef struct rb_context {
  struct rb_context *next;
  uintptr_t handle;
  rb_backend *backend;
  rb_device *device; /* NULL: the default device */
  ref_model *model;
  uint32_t num_graphs;
  rb_graph *graphs;
  atomic_int executing; /* executes in flight over all its graphs */
} rb_context;

typedef struct rb_registry {
  pthread_mutex_t lock;
  uintptr_t next_handle;
  rb_log *logs;
  rb_backend *backends;
  rb_device *devices;
  rb_context *contexts;
} rb_registry;

extern rb_registry g_rb;

/* ---- registry.c (all with g_rb.lock held) ---- */
uintptr_t rb_new_handle(void);
rb_log *rb_find_log(const void *h);
rb_backend *rb_find_backend(const void *h);
rb_device *rb_find_device(const void *h);
rb_context *rb_find_context(const void *h);
rb_graph *rb_find_graph(const void *h);
/* Unlinks and frees a context that has no execute in flight. */
void rb_context_destroy(rb_context *c);
void rb_device_destroy(rb_device *d);

/* ---- log.c ---- */
/* Logs through log (NULL = nowhere) if level passes its threshold; the callback gets a real
 * va_list. Thread-safe; may be called with the registry lock held. */
void rb_logf(rb_log *log, uint32_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t rb_now_us(void);

/* ---- faults.c ---- */
/* Records a rule violation: counter, last message, and an ERROR line through log. */
void rb_violation(rb_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses HTPU_REF_FAULTS/HTPU_REF_LATENCY into s. Returns 0 or -1 with a message. */
int rb_faults_from_env(fr_set *s, char *err, size_t errlen);
/* One call of api: sleeps the configured latency, then returns the code of a matching rule
 * (global rules first, then b's; b may be NULL for the process-wide env rules) or 0. A fault
 * is logged through log and counted. */
uint32_t rb_fault(rb_backend *b, uint32_t api, rb_log *log);
void rb_count_leak(void);
void rb_count_execute(void);
void rb_exec_in_flight_add(int delta);
/* graphExecute calls in flight in this process, on any backend. */
int rb_exec_in_flight(void);

/* ---- backend.c ---- */
qnn_error_t rb_backend_create(uint32_t backend_id, qnn_log_handle_t log,
                              const qnn_backend_config_t **cfg, qnn_backend_handle_t *out);
qnn_error_t rb_backend_free(qnn_backend_handle_t h);
qnn_error_t rb_backend_get_api_version(qnn_api_version_t *out);
qnn_error_t rb_backend_get_build_id(const char **out);
qnn_error_t rb_property_has_capability(uint32_t key);
qnn_error_t rb_log_create(qnn_log_callback_t cb, uint32_t level, qnn_log_handle_t *out);
qnn_error_t rb_log_set_level(qnn_log_handle_t h, uint32_t level);
qnn_error_t rb_log_free(qnn_log_handle_t h);
qnn_error_t rb_device_create(qnn_log_handle_t log, const qnn_device_config_t **cfg,
                             qnn_device_handle_t *out);
qnn_error_t rb_device_free(qnn_device_handle_t h);
qnn_error_t rb_not_supported(void);

/* ---- providers.c ---- */
RB_EXPORT qnn_error_t QnnInterface_getProviders(const qnn_interface_t ***list, uint32_t *num);
/* API version reported by backendGetApiVersion: that of the first provider last handed out. */
qnn_api_version_t rb_current_api_version(void);

/* ---- errors.c ---- */
qnn_error_t rb_error_get_message(qnn_error_t err, const char **msg);
const char *rb_error_text(uint32_t code); /* NULL for codes we do not know */

/* ---- context.c ---- */
qnn_error_t rb_context_create_from_binary(qnn_backend_handle_t, qnn_device_handle_t,
                                          const qnn_context_config_t **, const void *,
                                          qnn_context_binary_size_t, qnn_context_handle_t *,
                                          qnn_profile_handle_t);
qnn_error_t rb_context_free(qnn_context_handle_t, qnn_profile_handle_t);
qnn_error_t rb_context_validate_binary(qnn_backend_handle_t, qnn_device_handle_t,
                                       const qnn_context_config_t **, const void *,
                                       qnn_context_binary_size_t);
qnn_error_t rb_graph_retrieve(qnn_context_handle_t, const char *, qnn_graph_handle_t *);

/* ---- graph_exec.c ---- */
qnn_error_t rb_graph_execute(qnn_graph_handle_t, const qnn_tensor_t *, uint32_t, qnn_tensor_t *,
                             uint32_t, qnn_profile_handle_t, qnn_signal_handle_t);

#endif /* HTPU_RB_INTERNAL_H */
