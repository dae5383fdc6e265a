/* qnn_log.c - the bounded, thread-safe ring of QNN log lines. */
#include "qnn_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "hexagon_tpu.h"

#define RING_LINES 256
#define LINE_MAX_CHARS 320
#define QUOTE_MAX_LINES 16

typedef struct log_line {
  uint64_t seq;
  uint32_t level;
  char text[LINE_MAX_CHARS];
} log_line;

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static log_line ring[RING_LINES];
static uint64_t next_seq = 1; /* seq of the next line; lines [next_seq - RING_LINES, next_seq) live */
static int mirror_stderr = -1;

static const char *level_name(uint32_t level) {
  switch (level) {
    case QNN_LOG_LEVEL_ERROR: return "error";
    case QNN_LOG_LEVEL_WARN: return "warn";
    case QNN_LOG_LEVEL_INFO: return "info";
    case QNN_LOG_LEVEL_VERBOSE: return "verbose";
    case QNN_LOG_LEVEL_DEBUG: return "debug";
    default: return "log";
  }
}

void qnn_log_init_from_env(void) {
  const char *v = getenv("HTPU_LOG_STDERR");
  pthread_mutex_lock(&ring_lock);
  mirror_stderr = (v && *v && strcmp(v, "0") != 0) ? 1 : 0;
  pthread_mutex_unlock(&ring_lock);
}

void qnn_log_callback(const char *fmt, uint32_t level, uint64_t timestamp, va_list args) {
  (void)timestamp;
  char text[LINE_MAX_CHARS];
  /* Format before taking the lock: the backend may log from many threads at once. */
  if (!fmt) return;
  vsnprintf(text, sizeof text, fmt, args);
  size_t n = strlen(text);
  while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r')) text[--n] = '\0';

  pthread_mutex_lock(&ring_lock);
  log_line *slot = &ring[next_seq % RING_LINES];
  slot->seq = next_seq++;
  slot->level = level;
  memcpy(slot->text, text, n + 1);
  int mirror = mirror_stderr == 1;
  pthread_mutex_unlock(&ring_lock);
  if (mirror) fprintf(stderr, "[qnn %s] %s\n", level_name(level), text);
}

uint64_t qnn_log_mark(void) {
  pthread_mutex_lock(&ring_lock);
  uint64_t m = next_seq;
  pthread_mutex_unlock(&ring_lock);
  return m;
}

void qnn_log_append_since(uint64_t mark) {
  pthread_mutex_lock(&ring_lock);
  uint64_t end = next_seq;
  uint64_t first = mark;
  if (end - first > RING_LINES) first = end - RING_LINES;
  if (end - first > QUOTE_MAX_LINES) first = end - QUOTE_MAX_LINES;
  for (uint64_t s = first; s < end; s++) {
    const log_line *l = &ring[s % RING_LINES];
    if (l->seq != s) continue;
    htpu_append_error("\n  qnn %s: %s", level_name(l->level), l->text);
  }
  pthread_mutex_unlock(&ring_lock);
}

int qnn_fail(qnn_error_t e, uint64_t log_mark, const char *fmt, ...) {
  char prefix[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  uint32_t code = QNN_ERROR_CODE(e);
  htpu_set_error(HTPU_EQNN, code, "%s: QNN error %u (%s: %s)", prefix, code,
                 htpu_qnn_error_name(code), htpu_qnn_error_message(code));
  qnn_log_append_since(log_mark);
  return HTPU_EQNN;
}
