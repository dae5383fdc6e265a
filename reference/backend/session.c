/* session.c - what session creations this process made, in order, for tests of a lock across
 * processes: HTPU_REF_SESSION_LOG=FILE appends "PID API begin" for every backendCreate,
 * deviceCreate and contextCreateFromBinary; HTPU_REF_HOLD=API:FIFO makes each call of API wait,
 * after its "begin" line and a "PID API held" line, until a writer opens the FIFO and closes it
 * again ("PID API resumed" then). A test thus holds a process inside a creation for as long as
 * it likes and sees exactly when, with no clock involved. Read at backendCreate and kept with
 * the backend (as HTPU_REF_FAULTS), so a runtime's `env:` option reaches its later loads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rb_internal.h"

void rb_session_from_env(rb_session *s) {
  memset(s, 0, sizeof *s);
  s->hold_api = FR_API_COUNT;
  const char *log = getenv("HTPU_REF_SESSION_LOG");
  if (log) snprintf(s->log, sizeof s->log, "%s", log);
  const char *hold = getenv("HTPU_REF_HOLD");
  const char *colon = hold ? strchr(hold, ':') : NULL;
  if (!colon) return;
  for (uint32_t a = 0; a < FR_API_COUNT; a++) {
    const char *name = fr_api_name(a);
    if (strlen(name) == (size_t)(colon - hold) && strncmp(name, hold, strlen(name)) == 0) {
      s->hold_api = a;
      snprintf(s->hold_fifo, sizeof s->hold_fifo, "%s", colon + 1);
    }
  }
  if (s->hold_api == FR_API_COUNT)
    fprintf(stderr, "htpu_refbackend: HTPU_REF_HOLD '%s': expected API:FIFO with a QNN name\n",
            hold);
}

/* One line, one write: O_APPEND keeps lines of several processes whole. */
static void log_line(const rb_session *s, uint32_t api, const char *what) {
  if (!s->log[0]) return;
  int fd = open(s->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[160];
  int n = snprintf(line, sizeof line, "%ld %s %s\n", (long)getpid(), fr_api_name(api), what);
  if (n > 0 && write(fd, line, (size_t)n) != n) {}
  close(fd);
}

void rb_session_event(const rb_backend *b, uint32_t api) {
  if (api != FR_BACKEND_CREATE && api != FR_DEVICE_CREATE && api != FR_CONTEXT_CREATE_FROM_BINARY)
    return;
  rb_session now;
  const rb_session *s = b ? &b->session : NULL;
  if (!s) {
    rb_session_from_env(&now); /* backendCreate: no backend yet, the environment is current */
    s = &now;
  }
  log_line(s, api, "begin");
  if (s->hold_api != api) return;
  log_line(s, api, "held");
  /* open blocks until the test opens the FIFO for writing; read until it closes it */
  int fd;
  while ((fd = open(s->hold_fifo, O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR) {}
  if (fd >= 0) {
    char buf[64];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {}
    close(fd);
  }
  log_line(s, api, fd >= 0 ? "resumed" : "resumed (the FIFO could not be opened)");
}
