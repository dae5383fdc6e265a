/*
 * qnn_log.h - capture of QNN log lines.
 *
 * QNN's log callback carries no user pointer, so one process-wide bounded ring collects every
 * line. A call notes the ring position when it starts (qnn_log_mark) and, when it fails,
 * quotes the lines emitted since (qnn_log_append_since) in its error message; qnn_fail does
 * both for a failed QNN call, the error every module reports.
 */
#ifndef HTPU_QNN_LOG_H
#define HTPU_QNN_LOG_H

#include <stdint.h>

#include "qnn/qnn_abi.h"

/* The callback handed to logCreate. Re-entrant; called from any thread. */
void qnn_log_callback(const char *fmt, uint32_t level, uint64_t timestamp, va_list args);

uint64_t qnn_log_mark(void);

/* Appends "\n  qnn log: <line>" for each line emitted since `mark` (at most the newest 16) to
 * the calling thread's last error. */
void qnn_log_append_since(uint64_t mark);

/* Formats "QNN error N (NAME: message)" plus the log lines since mark into the thread's last
 * error, with the given prefix; returns HTPU_EQNN. */
int qnn_fail(qnn_error_t e, uint64_t log_mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Optional mirror of every line to stderr (HTPU_LOG_STDERR=1), for debugging on a board. */
void qnn_log_init_from_env(void);

#endif
