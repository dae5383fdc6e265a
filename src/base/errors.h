/*
 * errors.h - the calling thread's last error, and per-handle copies of it.
 *
 * Every failing path calls htpu_set_error() once with the full message; the public entry
 * point then copies it into the handle it was called on (obj_keep_error in object.h).
 */
#ifndef HTPU_ERRORS_H
#define HTPU_ERRORS_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h" /* HTPU_ERROR_MAX: the longest message, with its NUL */

/* Records the calling thread's last error (message formatted printf-style) and returns `code`
 * so call sites can `return htpu_set_error(...)`. */
int htpu_set_error(int code, uint32_t qnn_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends text to the calling thread's last error message (e.g. captured QNN log lines). */
void htpu_append_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Clears the calling thread's last error (done at the start of each public call). */
void htpu_clear_error(void);

/* Copies src into buf (len bytes), always NUL-terminated, marking truncation with "...";
 * returns strlen(src). */
size_t htpu_copy_message(const char *src, char *buf, size_t len);

#endif
