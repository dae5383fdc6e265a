/* binary_file.c - see binary_file.h. */
#include "binary_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/base.h"
#include "file_open.h"
#include "hexagon_tpu.h"
#include "printable.h"

/* A path in a message: escaped (printable.h), in a buffer of the statement's own. */
#define SHOWN(path) printable_str(path, (char[1024]){0}, 1024)

/* 0 = not set yet: the first read takes HTPU_MAX_BINARY_BYTES from the environment, or the
 * default. Relaxed atomics: a limit set while another thread reads a file applies to the next. */
static _Atomic uint64_t max_binary_bytes;

void htpu_set_max_binary_bytes(uint64_t bytes) {
  atomic_store_explicit(&max_binary_bytes, bytes ? bytes : HTPU_DEFAULT_MAX_BINARY_BYTES,
                        memory_order_relaxed);
}

uint64_t htpu_max_binary_bytes(void) {
  uint64_t v = atomic_load_explicit(&max_binary_bytes, memory_order_relaxed);
  if (v) return v;
  v = HTPU_DEFAULT_MAX_BINARY_BYTES;
  const char *env = getenv("HTPU_MAX_BINARY_BYTES");
  if (env && *env) {
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(env, &end, 10);
    if (errno == 0 && end && *end == '\0' && n > 0 && env[0] != '-') v = n;
  }
  uint64_t unset = 0; /* an explicit htpu_set_max_binary_bytes in the meantime wins */
  atomic_compare_exchange_strong(&max_binary_bytes, &unset, v);
  return atomic_load_explicit(&max_binary_bytes, memory_order_relaxed);
}

int binary_file_open(const char *path, uint64_t *size) {
  char err[1024];
  /* never blocks: a FIFO, device or socket is refused before anything is read from it */
  int fd = file_open_regular(path, size, err, sizeof err);
  if (fd < 0) return htpu_set_error(HTPU_EIO, 0, "%s", err);
  return fd;
}

/* A file whose fstat size is 0: read to its end, within the limit. */
static int read_unsized(int fd, const char *path, uint64_t limit, void **out, size_t *out_len) {
  char err[1024];
  void *buf = NULL;
  size_t len = 0;
  int rc = file_read_unsized(fd, path, limit, &buf, &len, err, sizeof err);
  if (rc < 0) return htpu_set_error(HTPU_EIO, 0, "%s", err);
  if (rc > 0)
    return htpu_set_error(HTPU_EMODEL, 0,
                          "'%s' has more than the %" PRIu64 "-byte limit for a context "
                          "binary (read to its end: its size, like a /proc file's, is "
                          "reported as 0); raise it with htpu_set_max_binary_bytes "
                          "(HTPU_MAX_BINARY_BYTES) if it is one",
                          SHOWN(path), limit);
  if (len == 0) {
    free(buf);
    return htpu_set_error(HTPU_EMODEL, 0, "'%s' is empty; expected a QNN context binary",
                          SHOWN(path));
  }
  *out = buf;
  *out_len = len;
  return 0;
}

int binary_file_check_size(const char *path, uint64_t size) {
  uint64_t limit = htpu_max_binary_bytes();
  if (size <= limit && size <= SIZE_MAX) return 0;
  return htpu_set_error(HTPU_EMODEL, 0,
                        "'%s' has %" PRIu64 " bytes, more than the %" PRIu64
                        "-byte limit for a context binary; raise it with "
                        "htpu_set_max_binary_bytes (HTPU_MAX_BINARY_BYTES) if it is one",
                        SHOWN(path), size, limit);
}

int binary_file_read_fd(int fd, const char *path, uint64_t size, void **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  /* 0 from fstat is not "empty" for procfs-like files */
  if (size == 0) return read_unsized(fd, path, htpu_max_binary_bytes(), out, out_len);
  /* refused before a byte is allocated: a huge (or sparse) file costs neither memory nor time */
  int rc = binary_file_check_size(path, size);
  if (rc) return rc;
  size_t len = (size_t)size;
  void *buf = malloc(len);
  if (!buf)
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory reading '%s' (%zu bytes)", SHOWN(path),
                          len);
  char err[1024];
  if (file_read_exact(fd, path, buf, len, err, sizeof err)) {
    free(buf);
    return htpu_set_error(HTPU_EIO, 0, "%s", err);
  }
  *out = buf;
  *out_len = len;
  return 0;
}

int read_whole_file(const char *path, void **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  uint64_t size = 0;
  int fd = binary_file_open(path, &size);
  if (fd < 0) return fd;
  int rc = binary_file_read_fd(fd, path, size, out, out_len);
  close(fd);
  return rc;
}
