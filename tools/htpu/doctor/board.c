/* board.c - small file-system and process helpers of the board checks. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"

const char *doctor_base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
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
  return n > 0 && (size_t)n < sizeof(p) && access(p, F_OK) == 0;
}

int doctor_process_running(const char *comm_name) {
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(proc))) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char p[300], comm[64] = "";
    snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
    FILE *f = fopen(p, "r");
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

const char *doctor_board_path(const char *path, char *buf, size_t len) {
  const char *root = getenv("HTPU_DOCTOR_ROOT");
  snprintf(buf, len, "%s%s", root ? root : "", path);
  return buf;
}
