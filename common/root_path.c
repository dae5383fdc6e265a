/* root_path.c - see root_path.h. */
#include "root_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* out = root + board + tail, or ENAMETOOLONG. */
static int join3(char *out, size_t len, const char *root, const char *board, const char *tail) {
  int n = snprintf(out, len, "%s%s%s", root, board, tail);
  if (n < 0 || (size_t)n >= len) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/* Resolves `path` inside `root` as the kernel would after chroot(root): one component at a
 * time, each symbolic link read (lstat, readlink) and its target walked in its place, an
 * absolute target from the root, `..` taken on the resolved directory and never above the
 * root. `done` holds the resolved board path ("" for /), `rest` what is left to walk. */
static int resolve_in_root(const char *root, const char *path, int follow_last, char *out,
                           size_t len) {
  char done[PATH_MAX] = "", rest[2 * PATH_MAX], host[PATH_MAX + 4096], target[PATH_MAX];
  int links = 0;
  join3(out, len, root, path, ""); /* what messages name until a step says more */
  if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  const char *p = rest;
  for (;;) {
    while (*p == '/') p++;
    if (!*p) break;
    const char *next = strchr(p, '/');
    if (!next) next = p + strlen(p);
    size_t clen = (size_t)(next - p);
    if (clen == 1 && p[0] == '.') {
      p = next;
      continue;
    }
    if (clen == 2 && p[0] == '.' && p[1] == '.') {
      char *slash = strrchr(done, '/'); /* at the root already: stays there */
      if (slash) *slash = '\0';
      p = next;
      continue;
    }
    size_t dlen = strlen(done);
    if (dlen + 1 + clen >= sizeof(done)) {
      errno = ENAMETOOLONG;
      return -1;
    }
    done[dlen] = '/';
    memcpy(done + dlen + 1, p, clen);
    done[dlen + 1 + clen] = '\0';
    int last = *next == '\0';
    if (last && !follow_last) break; /* the caller lstat()s it */
    struct stat st;
    if (join3(host, sizeof(host), root, done, "") != 0) return -1;
    if (lstat(host, &st) != 0) {
      int e = errno;
      join3(out, len, root, done, next); /* names the path for messages, as far as it goes */
      errno = e;
      return -1;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > ROOT_MAX_LINKS) {
        join3(out, len, root, done, next);
        errno = ELOOP;
        return -1;
      }
      ssize_t n = readlink(host, target, sizeof(target) - 1);
      if (n < 0) return -1;
      if ((size_t)n >= sizeof(target) - 1) {
        errno = ENAMETOOLONG;
        return -1;
      }
      target[n] = '\0';
      done[dlen] = '\0'; /* the link's directory: a relative target starts there */
      if (target[0] == '/') done[0] = '\0';
      char joined[sizeof(rest)];
      int w = snprintf(joined, sizeof(joined), "%s%s", target, next);
      if (w < 0 || (size_t)w >= sizeof(joined)) {
        errno = ENAMETOOLONG;
        return -1;
      }
      memcpy(rest, joined, (size_t)w + 1);
      p = rest;
      continue;
    }
    if (!last && !S_ISDIR(st.st_mode)) {
      join3(out, len, root, done, next);
      errno = ENOTDIR;
      return -1;
    }
    p = next;
  }
  return join3(out, len, root, done, "");
}

int root_resolve(const char *root, const char *path, int follow_last, char *out, size_t len) {
  if (root && root[0]) return resolve_in_root(root, path, follow_last, out, len);
  /* no --root: the machine's own path, resolved by the kernel as it always was */
  if (snprintf(out, len, "%s", path) >= (int)len) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

