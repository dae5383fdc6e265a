/* log.c - lines from the backend to the caller's QnnLog callback. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "rb_internal.h"

uint64_t rb_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void rb_logf(rb_log *log, uint32_t level, const char *fmt, ...) {
  if (!log || level > atomic_load(&log->level)) return;
  va_list ap;
  va_start(ap, fmt);
  if (log->cb) {
    /* The callback receives our format and a live va_list, exactly like QNN's. */
    log->cb(fmt, level, rb_now_us(), ap);
  } else {
    char line[1024];
    vsnprintf(line, sizeof(line), fmt, ap);
    fprintf(stderr, "htpu_refbackend[%u]: %s\n", level, line);
  }
  va_end(ap);
}
