/* report_file.c - see report_file.h. */
#include "report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "hexagon_tpu.h"

#define MAX_LINKS 40 /* as the kernel's own bound on a path's symlinks */

static int fail(report_file *o, int err) {
  return htpu_set_error(HTPU_EIO, 0, "cannot write '%s': %s", o->path, strerror(err));
}

static void release(report_file *o) {
  free(o->final);
  free(o->tmp);
  o->final = o->tmp = NULL;
}

/* N when the symlink `link` is this process's file descriptor N (/proc/self/fd/N, reached as
 * /dev/stdout, /dev/fd/N, ...), else -1. */
static int own_fd(const char *link) {
  const char *slash = strrchr(link, '/');
  if (!slash || !slash[1]) return -1;
  char *end, *dir = strndup(link, slash == link ? 1 : (size_t)(slash - link));
  char real[PATH_MAX], mine[64];
  int is_mine = dir && realpath(dir, real) != NULL;
  free(dir);
  snprintf(mine, sizeof mine, "/proc/%ld/fd", (long)getpid());
  if (!is_mine || strcmp(real, mine) != 0) return -1;
  long n = strtol(slash + 1, &end, 10);
  return *end || n < 0 || n > INT_MAX ? -1 : (int)n;
}

/* The name a write to `path` lands on: its symlinks followed one by one (a relative target is
 * relative to the link's directory), up to the first name that is not a symlink, existing or
 * not; or, at a link that is one of this process's descriptors, that link with *fd set. NULL
 * with errno on failure. */
static char *follow_links(const char *path, int *fd) {
  *fd = -1;
  char *cur = strdup(path);
  for (int hop = 0; cur && hop <= MAX_LINKS; hop++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
    if ((*fd = own_fd(cur)) >= 0) return cur;
    char target[PATH_MAX];
    ssize_t n = readlink(cur, target, sizeof target - 1);
    if (n <= 0) {
      int err = n < 0 ? errno : ENOENT;
      free(cur);
      errno = err;
      return NULL;
    }
    target[n] = '\0';
    const char *slash = strrchr(cur, '/');
    size_t dir = target[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
    char *next = malloc(dir + (size_t)n + 1);
    if (next) {
      memcpy(next, cur, dir);
      memcpy(next + dir, target, (size_t)n + 1);
    }
    free(cur);
    cur = next;
  }
  if (cur) {
    free(cur);
    errno = ELOOP;
  } else {
    errno = ENOMEM;
  }
  return NULL;
}

/* The temporary file's name in the target's directory: a fixed prefix and a random suffix, as
 * long whatever the target's name (TEMP_NAME_LEN characters), so that any name the filesystem
 * takes for the target (up to NAME_MAX) can be written. */
#define TEMP_PREFIX ".htpu-"
#define TEMP_NAME_LEN (sizeof TEMP_PREFIX - 1 + 12)

/* A new, empty, uniquely named file beside o->final (its directory, TEMP_PREFIX and 12 random
 * hex digits), mode 0666 less the umask as any new file (or the replaced file's bits). Returns
 * the fd or -1 (errno). */
static int make_temp(report_file *o) {
  static uint64_t counter;
  const char *slash = strrchr(o->final, '/');
  size_t dir = slash ? (size_t)(slash - o->final) + 1 : 0;
  size_t cap = dir + TEMP_NAME_LEN + 1;
  o->tmp = malloc(cap);
  if (!o->tmp) {
    errno = ENOMEM;
    return -1;
  }
  for (int attempt = 0; attempt < 100; attempt++) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull;
    x ^= (uint64_t)ts.tv_nsec * 0xbf58476d1ce4e5b9ull ^ ((uint64_t)getpid() << 32);
    snprintf(o->tmp, cap, "%.*s" TEMP_PREFIX "%012llx", (int)dir, o->final,
             (unsigned long long)(x & 0xffffffffffffull));
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0) {
      if (o->keep_mode && fchmod(fd, (mode_t)o->mode) != 0) {
        int err = errno;
        close(fd);
        unlink(o->tmp);
        errno = err;
        return -1;
      }
      return fd;
    }
    if (errno != EEXIST) break;
  }
  int err = errno;
  free(o->tmp);
  o->tmp = NULL;
  errno = err;
  return -1;
}

/* Decides how `path` is written; opens it (direct, when open_direct) or the temporary file. */
static int prepare(report_file *o, const char *path, int open_direct) {
  o->fd = -1;
  o->err = 0;
  o->path = path;
  o->final = o->tmp = NULL;
  o->keep_mode = 0;
  o->mode = 0;
  o->len = 0;
  int fd_no;
  o->final = follow_links(path, &fd_no);
  if (!o->final) return fail(o, errno);
  if (fd_no >= 0) {
    /* one of this process's descriptors (/dev/stdout): written through it, at its offset, so
     * what else the process writes there stays in order (opening the link anew would start a
     * regular file over from its beginning) */
    release(o);
    if (!open_direct) return 0;
    o->fd = fcntl(fd_no, F_DUPFD_CLOEXEC, 0);
    return o->fd < 0 ? fail(o, errno) : 0;
  }
  struct stat st;
  int exists = stat(path, &st) == 0;
  int direct = exists && !S_ISREG(st.st_mode);
  if (!exists && errno != ENOENT) direct = -1;
  if (direct < 0 || (exists && S_ISDIR(st.st_mode))) {
    int err = direct < 0 ? errno : EISDIR;
    release(o);
    return fail(o, err);
  }
  if (direct) {
    /* a device, FIFO or socket: opened and written as the shell's `>` would */
    release(o);
    if (!open_direct) return 0;
    o->fd = open(path, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
    return o->fd < 0 ? fail(o, errno) : 0;
  }
  if (exists) {
    o->keep_mode = 1;
    o->mode = (unsigned)(st.st_mode & 07777);
  }
  o->fd = make_temp(o);
  if (o->fd >= 0) return 0;
  int err = errno;
  release(o);
  if (!exists || (err != EACCES && err != EPERM && err != EROFS)) return fail(o, err);
  /* the directory takes no new file (not writable, immutable, read-only) but the file may be
   * writable itself: it is written in place, as the shell's `>` would; not atomic (a reader
   * can see it part-written, a failure leaves it so) */
  int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (open_direct ? O_TRUNC : 0));
  if (fd < 0) {
    int in_place = errno;
    return htpu_set_error(HTPU_EIO, 0,
                          "cannot write '%s': %s (creating a temporary file beside it; "
                          "opening it to write in place: %s)",
                          path, strerror(err), strerror(in_place));
  }
  if (open_direct) o->fd = fd;
  else close(fd); /* only a check: the other writer opens it itself */
  return 0;
}

int report_open(report_file *o, const char *path) { return prepare(o, path, 1); }

static void flush_buf(report_file *o) {
  size_t off = 0;
  while (!o->err && off < o->len) {
    ssize_t n = write(o->fd, o->buf + off, o->len - off);
    if (n > 0) off += (size_t)n;
    else if (n < 0 && errno == EINTR) continue;
    else o->err = n < 0 ? errno : EIO;
  }
  o->len = 0;
}

void report_write(report_file *o, const void *data, size_t n) {
  const char *p = data;
  while (n && !o->err) {
    if (o->len == sizeof o->buf) flush_buf(o);
    size_t k = sizeof o->buf - o->len;
    if (k > n) k = n;
    memcpy(o->buf + o->len, p, k);
    o->len += k;
    p += k;
    n -= k;
  }
}

void report_puts(report_file *o, const char *s) { report_write(o, s, strlen(s)); }

void report_putc(report_file *o, char c) { report_write(o, &c, 1); }

void report_printf(report_file *o, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    if (!o->err) o->err = EINVAL;
    return;
  }
  if ((size_t)n < sizeof small) {
    report_write(o, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    if (!o->err) o->err = ENOMEM;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  report_write(o, big, (size_t)n);
  free(big);
}

int report_close(report_file *o) {
  flush_buf(o);
  int err = o->err;
  /* the content reaches the disk before the name points at it */
  if (!err && o->tmp && fsync(o->fd) != 0) err = errno;
  if (close(o->fd) != 0 && !err && errno != EINTR) err = errno;
  o->fd = -1;
  if (!err && o->tmp && rename(o->tmp, o->final) != 0) err = errno;
  if (err && o->tmp) unlink(o->tmp);
  release(o);
  return err ? fail(o, err) : 0;
}

int report_reserve(report_file *o, const char *path, const char **name) {
  int rc = prepare(o, path, 0);
  if (rc) return rc;
  if (o->tmp) close(o->fd);
  o->fd = -1;
  *name = o->tmp ? o->tmp : path;
  return 0;
}

int report_commit(report_file *o) {
  int err = o->tmp && rename(o->tmp, o->final) != 0 ? errno : 0;
  if (err) unlink(o->tmp);
  release(o);
  return err ? fail(o, err) : 0;
}

void report_abandon(report_file *o) {
  if (o->tmp) unlink(o->tmp);
  release(o);
}
