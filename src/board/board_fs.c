/* board_fs.c - the board's files under a root, read without ever blocking (see board.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "board.h"
#include "file_open.h"
#include "root_path.h"

#define HOST_MAX (PATH_MAX + 4096)

/* Opens a board file for reading: the state and an fd (only for OK). A link loop or a path
 * too long is something there that cannot be read; a missing component is nothing there. */
static int open_board_file(const char *root, const char *path, int *fd, uint64_t *size,
                           char *why, size_t why_len) {
  char host[HOST_MAX], err[HOST_MAX + 256];
  *fd = -1;
  if (root_resolve(root, path, 1, host, sizeof host) != 0) {
    int e = errno;
    if (why && why_len) snprintf(why, why_len, "cannot open '%s': %s", host, strerror(e));
    return e == ENOENT || e == ENOTDIR ? HTPU_READING_MISSING : HTPU_READING_UNREADABLE;
  }
  *fd = file_open_regular(host, size, err, sizeof err);
  if (*fd >= 0) return HTPU_READING_OK;
  struct stat st;
  int there = lstat(host, &st) == 0;
  if (why && why_len) snprintf(why, why_len, "%s", err);
  return there ? HTPU_READING_UNREADABLE : HTPU_READING_MISSING;
}

/* Reads fd to its end or `limit` bytes, whichever comes first, into a new NUL-terminated
 * buffer; *cut when there was more. 0, or -1 with errno. */
static int read_bounded(int fd, size_t limit, char **out, size_t *len, int *cut) {
  size_t cap = limit < 4096 ? limit : 4096, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) return -1;
  for (;;) {
    if (n == cap) {
      if (cap == limit) {
        char extra;
        ssize_t more;
        while ((more = read(fd, &extra, 1)) < 0 && errno == EINTR) {}
        *cut = more > 0;
        break;
      }
      size_t next = cap * 2 < limit ? cap * 2 : limit;
      char *grown = realloc(buf, next + 1);
      if (!grown) {
        free(buf);
        errno = ENOMEM;
        return -1;
      }
      buf = grown;
      cap = next;
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int e = errno;
      free(buf);
      errno = e;
      return -1;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

int board_read_text(const char *root, const char *path, size_t limit, char **out, int *cut,
                    char *why, size_t why_len) {
  *out = NULL;
  *cut = 0;
  int fd;
  uint64_t size;
  int state = open_board_file(root, path, &fd, &size, why, why_len);
  if (state != HTPU_READING_OK) return state;
  /* sysfs and procfs files report size 0 and are made on read: read to the end, bounded */
  size_t n = 0;
  int r = read_bounded(fd, limit ? limit : 1, out, &n, cut);
  int e = errno;
  close(fd);
  if (r != 0) {
    if (why && why_len) snprintf(why, why_len, "reading '%s' failed: %s", path, strerror(e));
    return HTPU_READING_UNREADABLE;
  }
  return HTPU_READING_OK;
}

int board_read_line(const char *root, const char *path, char *out, size_t len, char *why,
                    size_t why_len) {
  out[0] = '\0';
  char *text = NULL;
  int cut = 0;
  /* an attribute is a line; 4 KiB is a page, what sysfs ever returns */
  int state = board_read_text(root, path, 4096, &text, &cut, why, why_len);
  if (state != HTPU_READING_OK) return state;
  size_t n = strcspn(text, "\r\n");
  while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t')) n--;
  if (n >= len) n = len - 1;
  /* data from outside: what a message or a JSON string may carry, control bytes shown as '?' */
  for (size_t i = 0; i < n; i++)
    out[i] = (unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7F ? '?' : text[i];
  out[n] = '\0';
  free(text);
  return HTPU_READING_OK;
}

DIR *board_opendir(const char *root, const char *path) {
  char host[HOST_MAX];
  return root_resolve(root, path, 1, host, sizeof host) == 0 ? opendir(host) : NULL;
}

int board_readlink(const char *root, const char *path, char *buf, size_t len) {
  char host[HOST_MAX];
  if (len == 0 || root_resolve(root, path, 0, host, sizeof host) != 0) return -1;
  ssize_t n = readlink(host, buf, len - 1);
  if (n < 0) return -1;
  buf[n] = '\0';
  return 0;
}

int board_check_root(const char *root, const char *who) {
  if (!root || !root[0]) return 0;
  struct stat st;
  if (stat(root, &st) != 0)
    return htpu_set_error(HTPU_EINVAL, 0, "%s: root '%s': %s; expected a directory standing "
                          "in for / (holding the board's sys/, proc/ and dev/)",
                          who, root, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return htpu_set_error(HTPU_EINVAL, 0, "%s: root '%s' is %s; expected a directory standing "
                          "in for / (holding the board's sys/, proc/ and dev/)",
                          who, root, file_kind_name((unsigned)st.st_mode));
  return 0;
}

/* By hand, not strtoll: with _GNU_SOURCE and glibc 2.38 strtoll becomes __isoc23_strtoll,
 * and the core library keeps to GLIBC_2.34 (docs/nerves.md, "glibc symbol versions"). */
int board_parse_i64(const char *text, int64_t *out) {
  const char *p = text;
  while (*p == ' ' || *p == '\t') p++;
  int neg = *p == '-';
  if (*p == '-' || *p == '+') p++;
  if (!isdigit((unsigned char)*p)) return -1;
  uint64_t v = 0;
  for (; isdigit((unsigned char)*p); p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_C(9223372036854775807) - d) / 10) return -1; /* beyond int64 */
    v = v * 10 + d;
  }
  while (*p == ' ' || *p == '\t' || *p == '\n') p++;
  if (*p) return -1;
  *out = neg ? -(int64_t)v : (int64_t)v;
  return 0;
}

long board_name_number(const char *name, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n) != 0 || !name[n]) return -1;
  long v = 0;
  for (const char *p = name + n; *p; p++) {
    if (!isdigit((unsigned char)*p) || v > 100000000L) return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}
