/* board.c - small file-system and process helpers of the board checks, and the one place
 * where a board path is turned into the path doctor reads on this machine (doctor_resolve). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "file_open.h"

const char *doctor_base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void doctor_board_step(doctor *d, const char *key, const char *title,
                       void (*judge)(doctor *d, step *s)) {
  step *s = report_begin(&d->rep, key, title);
  if (d->board)
    judge(d, s);
  else
    step_set(s, ST_SKIP, "not applicable: %s is not the HTP backend (libQnnHtp.so): not on a "
                         "board",
             doctor_base_name(d->ro.backend_lib));
  report_end(&d->rep, s);
}

/* The FastRPC/skel checks only make sense for the board's HTP backend. */
int doctor_is_board_backend(const char *backend) {
  return strcmp(doctor_base_name(backend), "libQnnHtp.so") == 0;
}

/* ---- board paths under --root ------------------------------------------------------------ */

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
      if (++links > DOCTOR_MAX_LINKS) {
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

int doctor_resolve(const char *root, const char *path, int follow_last, char *out, size_t len) {
  if (root && root[0]) return resolve_in_root(root, path, follow_last, out, len);
  /* no --root: the machine's own path, resolved by the kernel as it always was */
  if (snprintf(out, len, "%s", path) >= (int)len) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

int doctor_stat(const char *root, const char *path, struct stat *st) {
  char host[PATH_MAX + 4096];
  return doctor_resolve(root, path, 1, host, sizeof(host)) == 0 ? stat(host, st) : -1;
}

int doctor_lstat(const char *root, const char *path, struct stat *st) {
  char host[PATH_MAX + 4096];
  return doctor_resolve(root, path, 0, host, sizeof(host)) == 0 ? lstat(host, st) : -1;
}

DIR *doctor_opendir(const char *root, const char *path) {
  char host[PATH_MAX + 4096];
  return doctor_resolve(root, path, 1, host, sizeof(host)) == 0 ? opendir(host) : NULL;
}

int doctor_access(const char *root, const char *path, int mode) {
  char host[PATH_MAX + 4096];
  return doctor_resolve(root, path, 1, host, sizeof(host)) == 0 ? access(host, mode) : -1;
}

int doctor_is_dir(const char *root, const char *path) {
  struct stat st;
  return doctor_stat(root, path, &st) == 0 && S_ISDIR(st.st_mode);
}

int doctor_file_exists(const char *root, const char *dir, const char *name) {
  char p[4096];
  int n = snprintf(p, sizeof(p), "%s/%s", dir, name);
  struct stat st;
  return n > 0 && (size_t)n < sizeof(p) && doctor_stat(root, p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *doctor_kind(const char *root, const char *dir, const char *name, char *buf,
                        size_t len) {
  char p[4096];
  int n = snprintf(p, sizeof(p), "%s/%s", dir, name);
  struct stat st;
  if (n <= 0 || (size_t)n >= sizeof(p) || doctor_stat(root, p, &st) != 0 || S_ISREG(st.st_mode))
    return NULL;
  snprintf(buf, len, "%s", file_kind_name((unsigned)st.st_mode));
  return buf;
}

FILE *doctor_fopen(const char *root, const char *path, char *why, size_t why_len, int *there) {
  char host[PATH_MAX + 4096], err[PATH_MAX + 4700];
  if (there) *there = 0;
  if (doctor_resolve(root, path, 1, host, sizeof(host)) != 0) {
    int e = errno;
    /* a link loop, or a link too long, is there; a missing component is not */
    if (there) *there = e != ENOENT && e != ENOTDIR;
    if (why) snprintf(why, why_len, "cannot open '%s': %s", host, strerror(e));
    return NULL;
  }
  uint64_t size = 0;
  int fd = file_open_regular(host, &size, err, sizeof(err));
  if (fd < 0) {
    struct stat st;
    if (there) *there = lstat(host, &st) == 0;
    if (why) snprintf(why, why_len, "%s", err);
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    if (there) *there = 1;
    if (why) snprintf(why, why_len, "cannot read '%s': %s", host, strerror(errno));
    close(fd);
  }
  return f;
}

int doctor_read_line(const char *root, const char *path, char *out, size_t len, char *why,
                     size_t why_len) {
  out[0] = '\0';
  int there = 0;
  FILE *f = doctor_fopen(root, path, why, why_len, &there);
  if (!f) return there ? -2 : -1;
  if (!fgets(out, (int)len, f)) out[0] = '\0';
  fclose(f);
  size_t n = strcspn(out, "\r\n");
  while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t')) n--;
  out[n] = '\0';
  return 0;
}

int doctor_process_running(const doctor *d, const char *comm_name) {
  DIR *proc = doctor_opendir(d->root, "/proc");
  if (!proc) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(proc))) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char p[400], comm[64] = "";
    snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
    FILE *f = doctor_fopen(d->root, p, NULL, 0, NULL); /* never a FIFO's endless wait */
    if (!f) continue;
    if (fgets(comm, sizeof(comm), f)) {
      comm[strcspn(comm, "\n")] = '\0';
      found = strcmp(comm, comm_name) == 0;
    }
    fclose(f);
  }
  closedir(proc);
  return found;
}
