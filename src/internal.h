/*
 * internal.h - the objects behind htpu_runtime, htpu_context and htpu_graph.
 *
 *   runtime  (owns: libraries, QNN log, backend, device)
 *     ^ referenced by
 *   context  (owns: QNN context, its copy of the binary, the model info)
 *     ^ referenced by
 *   graph    (owns: QNN graph handle, the execute lock)
 *
 * A child holds a reference on its parent, so the parent's teardown can only run after the
 * child's: QNN teardown is context -> device -> backend -> log -> dlclose whatever order
 * callers close in.
 */
#ifndef HTPU_INTERNAL_H
#define HTPU_INTERNAL_H

#include <pthread.h>

#include "gate.h"
#include "hexagon_tpu.h"
#include "loader.h"
#include "model_info.h"
#include "object.h"

typedef struct runtime_obj {
  htpu_object base;
  qnn_backend_lib backend_lib;
  qnn_system_lib system_lib;
  qnn_log_handle_t log;
  qnn_backend_handle_t backend;
  qnn_device_handle_t device;
  char *build_id;
  char *dsp_library_path;
} runtime_obj;

typedef struct context_obj {
  htpu_object base;
  runtime_obj *rt;
  qnn_context_handle_t qnn;
  void *binary; /* our copy, retained to recreate the context after a DSP restart */
  size_t binary_len;
  model_info *info;
} context_obj;

typedef struct graph_obj {
  htpu_object base;
  context_obj *ctx;
  uint32_t index; /* into ctx->info */
  qnn_graph_handle_t qnn;
  pthread_mutex_t exec_lock; /* QNN executes of one graph are serialized */
} graph_obj;

/* Formats "QNN error N (NAME: message)" plus the log lines since mark into the thread's last
 * error, with the given prefix; returns HTPU_EQNN. */
int qnn_fail(qnn_error_t e, uint64_t log_mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
