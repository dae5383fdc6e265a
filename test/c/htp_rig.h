/* htp_rig.h - what the HTP device-feature tests (test_refbackend_htp_*.c) share: the backend's
 * control API with the FastRPC allocator, a log -> backend -> device stack driven through the
 * backend's own table, the log lines it reported, and rpcmem-backed tensors for MEMHANDLE
 * execution. */
#ifndef HTPU_TEST_HTP_RIG_H
#define HTPU_TEST_HTP_RIG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_device_abi.h"
#include "qnn/qnn_htp_abi.h"
#include "ref_control.h"
#include "refmodel.h"

/* One graph "add": y = a + b, f32 [1,4]. */
extern const char *const HTP_ADD;

/* Captured log lines ("<level>:<text>\n"): the callback to give logCreate, a clear, and a copy
 * of the text so far. */
void hlog_cb(const char *fmt, uint32_t level, uint64_t ts, va_list args);
void hlog_clear(void);
const char *hlog(void);

/* The control API of the backend and the allocator library (ref_control.h), with a clean
 * start (power history forgotten, log cleared) and finish around each test. */
typedef ref_ctl hctl;
int hctl_open(hctl *c);
void hctl_close(hctl *c);
htpu_ref_stats hstats(const hctl *c);
/* The QNN functions of the first provider (with no HTPU_REF_PROVIDERS: the default one). */
const qnn_interface_table_t *htp_table(const hctl *c);

/* log -> backend -> device (with `device_env` as HTPU_REF_DEVICE around backendCreate). */
typedef struct stack {
  hctl c;
  const qnn_interface_table_t *t;
  qnn_log_handle_t log;
  qnn_backend_handle_t be;
  qnn_device_handle_t dev;
} stack;
qnn_error_t stack_open(stack *s, const char *device_env);
void stack_close(stack *s);
/* A context of `text` on the stack's device, and its graph `graph`. */
qnn_error_t load(stack *s, const char *text, const char *graph, qnn_context_handle_t *ctx,
                 qnn_graph_handle_t *g);

/* A stack with HTP_ADD loaded and one rpcmem allocation for its tensors. */
typedef struct shared {
  stack s;
  qnn_context_handle_t ctx;
  qnn_graph_handle_t g;
  ref_model *model;
  unsigned char *buf; /* one rpcmem allocation for a, b and y at offsets 0, 16, 32 (+ slack) */
  int fd;
  size_t size;
} shared;
qnn_error_t shared_open(shared *x);
void shared_close(shared *x);

/* The shape [1,4] of HTP_ADD's tensors, for memory descriptors. */
extern uint32_t g_dims14[2];
/* An HTP shared-buffer descriptor of `size` bytes at `offset` in the allocation behind fd. */
qnn_htp_mem_descriptor_t htp_desc(int fd, uint64_t size, uint64_t offset);
/* A custom ([1,4], dtype) memory descriptor carrying h. */
qnn_mem_descriptor_t custom_desc(qnn_htp_mem_descriptor_t *h, uint32_t dtype);
/* Graph tensors of `add` (a, b in; y out) bound to mem handles. */
void mh_tensors(const ref_model *m, qnn_mem_handle_t h[3], qnn_tensor_t in[2],
                qnn_tensor_t out[1], uint32_t dims[3][2]);

#endif
