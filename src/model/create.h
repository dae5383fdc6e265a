/* create.h - a QNN context from a context's retained binary (create.c). */
#ifndef HTPU_MODEL_CREATE_H
#define HTPU_MODEL_CREATE_H

#include <stdint.h>

#include "qnn/qnn_abi.h"

struct context_obj;

/* contextCreateFromBinary of c's binary, with its priority config where asked and announced,
 * and the load's profile handle (NULL: none). Under the execute gate, exclusively. */
qnn_error_t create_from_binary(struct context_obj *c, qnn_context_handle_t *out,
                               qnn_profile_handle_t profile);

/* The same with `signal` passed to createFromBinaryWithSignal (NULL: the plain call): an abort
 * signal its caller triggers to stop it. Where the backend takes load signals (load_signals). */
qnn_error_t create_from_binary_signalled(struct context_obj *c, qnn_context_handle_t *out,
                                         qnn_profile_handle_t profile, qnn_signal_handle_t signal);

/* The same under a timeout signal until deadline_ns (CLOCK_MONOTONIC; 0: none) where the
 * backend bounds loads (load_signals; else unbounded: it runs to its end). *timed_out: QNN
 * answered 5013/5012, or the deadline had passed (then nothing was asked). */
qnn_error_t create_bounded(struct context_obj *c, qnn_context_handle_t *out, uint64_t deadline_ns,
                           qnn_profile_handle_t profile, int *timed_out);

#endif
