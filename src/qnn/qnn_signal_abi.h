/*
 * qnn_signal_abi.h - QnnSignal: one call's abort switch or time limit (table slots 44-47).
 *
 * Written by this project from published layout facts (docs/abi.md), not copied from any
 * Qualcomm header; `make check-abi` compares it with the SDK's QnnSignal.h.
 *
 * The rules the headers state (QAIRT 2.25 and 2.43 alike):
 *  - a signal is configured for an abort or for a timeout, never both ("mutually exclusive");
 *  - it is in use from the start to the return of the one call it was passed to; passing it
 *    to a second call meanwhile fails (graph calls: QNN_GRAPH_ERROR_SIGNAL_IN_USE, other calls:
 *    QNN_SIGNAL_ERROR_SIGNAL_IN_USE), as do setConfig and free on it;
 *  - after that call returns it is idle and may be passed to another call (reusable);
 *  - trigger on an idle signal fails with QNN_SIGNAL_ERROR_SIGNAL_IDLE; trigger of an abort
 *    signal blocks until the call has released its resources and is about to return;
 *  - a timeout runs from the call's start (executeAsync: from the call until its notification).
 */
#ifndef HTPU_QNN_SIGNAL_ABI_H
#define HTPU_QNN_SIGNAL_ABI_H

#include <stdint.h>

#include "qnn_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* QnnSignal_* results (QNN_SIGNAL_ERROR_UNSUPPORTED is QNN_COMMON_ERROR_NOT_SUPPORTED). The
 * header's text calls 9001 "TRIGGER_SIGNAL_IDLE"; its enumerator is SIGNAL_IDLE. */
#define QNN_SIGNAL_ERROR_SIGNAL_IN_USE 9000u
#define QNN_SIGNAL_ERROR_SIGNAL_IDLE 9001u
#define QNN_SIGNAL_ERROR_INVALID_ARGUMENT 9002u
#define QNN_SIGNAL_ERROR_INVALID_HANDLE 9003u
#define QNN_SIGNAL_ERROR_TIMEOUT 9004u
#define QNN_SIGNAL_ERROR_INCOMPATIBLE_SIGNAL_TYPE 9005u

#define QNN_SIGNAL_CONFIG_OPTION_CUSTOM 0u
#define QNN_SIGNAL_CONFIG_OPTION_ABORT 1u
#define QNN_SIGNAL_CONFIG_OPTION_TIMEOUT 2u /* u.timeout_duration_us: microseconds */
#define QNN_SIGNAL_CONFIG_UNDEFINED 0x7FFFFFFFu

/* signalCreate/signalSetConfig take a NULL-terminated array of pointers to these (NULL: a
 * signal configured to do nothing). */
typedef struct qnn_signal_config {
  uint32_t option; /* QNN_SIGNAL_CONFIG_OPTION_* */
  union {
    void *custom_config;
    uint64_t timeout_duration_us; /* tolerance "platform dependent" */
  } u;
} qnn_signal_config_t;

#ifdef __cplusplus
}
#endif
#endif /* HTPU_QNN_SIGNAL_ABI_H */
