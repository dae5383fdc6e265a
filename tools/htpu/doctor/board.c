/* board.c - small file-system and process helpers of the board checks. */
#include <dirent.h>
#include <errno.h>
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

int doctor_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int doctor_file_exists(const char *dir, const char *name) {
  char p[4096];
  int n = snprintf(p, sizeof(p), "%s/%s", dir, name);
  struct stat st;
  return n > 0 && (size_t)n < sizeof(p) && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *doctor_kind(const char *dir, const char *name, char *buf, size_t len) {
  char p[4096];
  int n = snprintf(p, sizeof(p), "%s/%s", dir, name);
  struct stat st;
  if (n <= 0 || (size_t)n >= sizeof(p) || stat(p, &st) != 0 || S_ISREG(st.st_mode)) return NULL;
  snprintf(buf, len, "%s", file_kind_name((unsigned)st.st_mode));
  return buf;
}

FILE *doctor_fopen(const char *path, char *why, size_t why_len) {
  char err[4600];
  uint64_t size = 0;
  int fd = file_open_regular(path, &size, err, sizeof(err));
  if (fd < 0) {
    if (why) snprintf(why, why_len, "%s", err);
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    if (why) snprintf(why, why_len, "cannot read '%s': %s", path, strerror(errno));
    close(fd);
  }
  return f;
}

int doctor_read_line(const char *path, char *out, size_t len, char *why, size_t why_len) {
  out[0] = '\0';
  FILE *f = doctor_fopen(path, why, why_len);
  if (!f) {
    struct stat st;
    return lstat(path, &st) == 0 ? -2 : -1;
  }
  if (!fgets(out, (int)len, f)) out[0] = '\0';
  fclose(f);
  size_t n = strcspn(out, "\r\n");
  while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t')) n--;
  out[n] = '\0';
  return 0;
}

int doctor_process_running(const doctor *d, const char *comm_name) {
  char proc_dir[4096];
  DIR *proc = opendir(doctor_board_path(d, "/proc", proc_dir, sizeof(proc_dir)));
  if (!proc) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(proc))) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char p[4400], comm[64] = "";
    snprintf(p, sizeof(p), "%s/%s/comm", proc_dir, e->d_name);
    FILE *f = doctor_fopen(p, NULL, 0); /* never a FIFO's endless wait */
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

const char *doctor_board_path(const doctor *d, const char *path, char *buf, size_t len) {
  snprintf(buf, len, "%s%s", d->root, path);
  return buf;
}
