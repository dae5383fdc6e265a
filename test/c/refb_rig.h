/* refb_rig.h - what the reference-backend tests (test_refbackend_*.c, test_refsystem.c) share:
 * the QNN stack they drive directly through the backend's own table, execution buffers as a
 * correct caller builds them, and the log lines the backend reported. */
#ifndef HTPU_TEST_REFB_RIG_H
#define HTPU_TEST_REFB_RIG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "qnn/qnn_abi.h"
#include "ref_control.h"
#include "refmodel.h"

/* One graph "add": y = a + b, f32 [1,4]. */
extern const char *const RB_ADD;

/* Captured log lines ("<level>:<text>\n"), shared by all tests: the callback to give
 * logCreate, a clear, a copy of the text so far and the number of callbacks. */
void log_cb(const char *fmt, uint32_t level, uint64_t ts, va_list args);
void log_clear(void);
const char *log_text(void);
unsigned log_calls(void);

/* The control API, and a clean start (log cleared too) and finish around each test. */
typedef ref_ctl ctl;
int ctl_open(ctl *c);
void ctl_close(ctl *c);
htpu_ref_stats stats_of(const ctl *c);

/* A backend stack: log -> backend -> device -> context -> graph. */
typedef struct rig {
  ctl c;
  const qnn_interface_table_t *t;
  qnn_log_handle_t log;
  qnn_backend_handle_t be;
  qnn_device_handle_t dev;
  qnn_context_handle_t ctx;
  qnn_graph_handle_t g;
  ref_model *model; /* the test's own parse, for tensor ids and shapes */
} rig;

/* Opens the stack up to the graph `graph` of `text`, with HTPU_REF_FAULTS/HTPU_REF_LATENCY
 * set (when non-NULL) around backendCreate only. Returns the first failing QNN code, or 0. */
qnn_error_t rig_open_env(rig *r, const char *text, const char *graph, const char *faults,
                         const char *latency);
qnn_error_t rig_open(rig *r, const char *text, const char *graph);
void rig_close(rig *r);

/* Execution buffers for graph gi of a model, as a correct caller builds them. */
typedef struct io {
  uint32_t nin, nout;
  qnn_tensor_t in[4], out[4];
  uint32_t dims[8][REF_MAX_RANK];
  void *buf[8];
} io;
int io_init(io *x, const ref_model *m, uint32_t gi);
void io_free(io *x);
/* graphExecute of the rig's graph with x's tensors. */
qnn_error_t exec(rig *r, io *x);

/* ---- signals, queues, capabilities (test_refbackend_signals/_async/_batch_multiple/
 * _priority.c) ---- */

/* A signal of the rig's backend configured with option (QNN_SIGNAL_CONFIG_OPTION_ABORT, or
 * _TIMEOUT with timeout_us; 0: no config). NULL when signalCreate fails. */
qnn_signal_handle_t sig_new(rig *r, uint32_t option, uint64_t timeout_us);
/* graphExecute of the rig's graph with x's tensors and signal s. */
qnn_error_t exec_sig(rig *r, io *x, qnn_signal_handle_t s);
/* Monotonic milliseconds. */
double now_ms(void);
/* Waits (polling, up to 30 s) until the graph called name has `running` executes running and
 * `queued` waiting in its queue (-1: any). 0 when it happened. */
int wait_graph(const ctl *c, const char *name, int running, int queued);
/* Opens the rig's stack up to a context made from `text` with configs cfg (NULL-terminated),
 * through contextCreateFromBinary; returns its code (the graph is retrieved when it works). */
qnn_error_t rig_open_cfg(rig *r, const char *text, const char *graph,
                         const qnn_context_config_t **cfg);

/* Reads the slots a provider's version has; all must be callable. */
int slots_all_set(const void *provider, size_t table_off, uint32_t slots);
/* The provider block's size: exact under ASan, at least `expected` elsewhere. */
int block_size_ok(const void *p, size_t expected);

#endif
