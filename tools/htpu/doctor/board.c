/* board.c - small file-system and process helpers of the board checks; a board path becomes
 * the path doctor reads on this machine through common/root_path.c (doctor_resolve). */
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
#include "root_path.h"

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

int doctor_resolve(const char *root, const char *path, int follow_last, char *out, size_t len) {
  return root_resolve(root, path, follow_last, out, len);
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
