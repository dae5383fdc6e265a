/* file_open.c - see file_open.h. */
#include "file_open.h"
#include "printable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A path in a message: escaped (printable.h), in a buffer of the statement's own. */
#define SHOWN(path) printable_str(path, (char[1024]){0}, 1024)

const char *file_kind_name(unsigned mode) {
  switch (mode & S_IFMT) {
  case S_IFREG: return "a regular file";
  case S_IFDIR: return "a directory";
  case S_IFIFO: return "a FIFO (named pipe)";
  case S_IFCHR: return "a character device";
  case S_IFBLK: return "a block device";
  case S_IFSOCK: return "a socket";
  default: return "not a regular file";
  }
}

int file_open_regular(const char *path, uint64_t *size, char *err, size_t err_len) {
  *size = 0;
  /* O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    snprintf(err, err_len, "cannot open '%s': %s", SHOWN(path), strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    snprintf(err, err_len, "cannot stat '%s': %s", SHOWN(path), strerror(errno));
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, err_len, "'%s' is %s; expected a regular file", SHOWN(path),
             file_kind_name((unsigned)st.st_mode));
    close(fd);
    return -1;
  }
  /* a regular file never blocks, but clear the flag so reads behave as usual everywhere */
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    snprintf(err, err_len, "cannot read '%s': %s", SHOWN(path), strerror(errno));
    close(fd);
    return -1;
  }
  *size = (uint64_t)st.st_size;
  return fd;
}

int file_read_exact(int fd, const char *path, void *buf, size_t len, char *err, size_t err_len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      snprintf(err, err_len, "reading '%s' failed after %zu of %zu bytes: %s", SHOWN(path), got,
               len, n < 0 ? strerror(errno) : "the file shrank while being read");
      return -1;
    }
    got += (size_t)n;
  }
  return 0;
}

int file_read_unsized(int fd, const char *path, uint64_t limit, void **out, size_t *len,
                      char *err, size_t err_len) {
  *out = NULL;
  *len = 0;
  /* one byte past the limit tells "more than the limit" from "exactly the limit" */
  uint64_t want = limit < SIZE_MAX - 1 ? limit + 1 : SIZE_MAX;
  size_t cap = want < 4096 ? (size_t)want : 4096, got = 0;
  char *buf = malloc(cap ? cap : 1);
  if (!buf) {
    snprintf(err, err_len, "out of memory reading '%s'", SHOWN(path));
    return -1;
  }
  for (;;) {
    if (got == cap) {
      if (cap >= want) break; /* limit + 1 bytes read: too large */
      size_t next = cap > want / 2 ? (size_t)want : cap * 2;
      char *grown = realloc(buf, next);
      if (!grown) {
        free(buf);
        snprintf(err, err_len, "out of memory reading '%s' (%zu bytes so far)", SHOWN(path),
                 got);
        return -1;
      }
      buf = grown;
      cap = next;
    }
    ssize_t n = read(fd, buf + got, cap - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      snprintf(err, err_len, "reading '%s' failed after %zu bytes: %s", SHOWN(path), got,
               strerror(errno));
      free(buf);
      return -1;
    }
    if (n == 0) {
      *out = buf;
      *len = got;
      return 0;
    }
    got += (size_t)n;
  }
  free(buf);
  return 1;
}
