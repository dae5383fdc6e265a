/* npu_users.c - the processes that hold the CDSP's FastRPC device open (see board.h): every
 * /proc/PID/fd link whose target is /dev/fastrpc-cdsp*, read as a link (never followed), and
 * the QNN libraries each such process has mapped; FastRPC's own daemons apart from the users.
 *
 * The daemons (qualcomm/fastrpc's adsprpcd, cdsprpcd, sdsprpcd, gdsprpcd) open the device at
 * boot (the secure node first) and keep it open for as long as they run: they attach to the
 * DSP's root process domain (its exception logs, its remote file system), create no user
 * process domain and run no QNN. Every other holder is a user, QNN mapped or not: any FastRPC
 * client opens a process domain of its own on the CDSP (SNPE, a Hexagon SDK program, a QNN
 * program whose libraries are not loaded yet or are named otherwise). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "board.h"

#define DEVICE_PREFIX "/dev/fastrpc-cdsp"
/* /proc/PID/maps of a big process is long; the libraries come early (after the executable) */
#define MAPS_LIMIT (4u << 20)

static void lower_copy(char *dst, size_t len, const char *src) {
  size_t i = 0;
  for (; src[i] && i + 1 < len; i++) dst[i] = (char)tolower((unsigned char)src[i]);
  dst[i] = '\0';
}

/* The libraries a user of the NPU maps that say which stack it runs: QNN's (libQnn*, and any
 * file with "qnn" in its name, e.g. ONNX Runtime's provider), FastRPC's, hexagon_tpu's. */
enum { LIB_OTHER = 0, LIB_FASTRPC = 1, LIB_QNN = 2 };
static int library_kind(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char low[256];
  lower_copy(low, sizeof low, base);
  if (!strstr(low, ".so")) return LIB_OTHER;
  if (strstr(low, "qnn") || strstr(low, "hexagon_tpu")) return LIB_QNN;
  return strstr(low, "cdsprpc") ? LIB_FASTRPC : LIB_OTHER;
}

/* FastRPC's daemons, one per DSP (qualcomm/fastrpc, src/Makefile.am: bin_PROGRAMS). */
static const char *const DAEMONS[] = {"adsprpcd", "cdsprpcd", "sdsprpcd", "gdsprpcd"};

/* Appends `path` to the space-separated list unless already there; "..." when full. */
static void add_library(char *list, size_t len, const char *path) {
  size_t have = strlen(list), n = strlen(path);
  if (have >= 3 && strcmp(list + have - 3, "...") == 0) return;
  for (const char *p = list; (p = strstr(p, path)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return;
  if (have + (have ? 1 : 0) + n + 4 >= len) {
    snprintf(list + have, len - have, "%s...", have ? " " : "");
    return;
  }
  snprintf(list + have, len - have, "%s%s", have ? " " : "", path);
}

/* Fills u->libraries; returns 1 when a QNN library is among them. */
static int read_libraries(const char *root, long pid, htpu_npu_user *u) {
  char path[64], *maps = NULL;
  int cut = 0, qnn = 0;
  snprintf(path, sizeof path, "/proc/%ld/maps", pid);
  if (board_read_text(root, path, MAPS_LIMIT, &maps, &cut, NULL, 0) != HTPU_READING_OK) return 0;
  for (char *line = maps; line && *line;) {
    char *next = strchr(line, '\n');
    if (next) *next++ = '\0';
    /* address perms offset dev inode pathname: the path is the first field starting with '/' */
    char *slash = strchr(line, '/');
    int kind = slash ? library_kind(slash) : LIB_OTHER;
    if (kind != LIB_OTHER) add_library(u->libraries, sizeof u->libraries, slash);
    if (kind == LIB_QNN) qnn = 1;
    line = next;
  }
  free(maps);
  return qnn;
}

/* A FastRPC daemon: its name is a daemon's, its executable (when the link can be read) is
 * that program, and it runs no QNN. A program merely named so is a user. */
static int is_daemon(const char *root, long pid, const htpu_npu_user *x, int maps_qnn) {
  int named = 0;
  for (size_t i = 0; i < sizeof DAEMONS / sizeof DAEMONS[0]; i++)
    if (strcmp(x->comm, DAEMONS[i]) == 0) named = 1;
  if (!named || maps_qnn) return 0;
  char path[64], exe[PATH_MAX];
  snprintf(path, sizeof path, "/proc/%ld/exe", pid);
  if (board_readlink(root, path, exe, sizeof exe) != 0) return 1; /* not ours to see: the name */
  char *deleted = strstr(exe, " (deleted)"); /* replaced by an upgrade while it runs */
  if (deleted && deleted[10] == '\0') *deleted = '\0';
  const char *base = strrchr(exe, '/');
  return strcmp(base ? base + 1 : exe, x->comm) == 0;
}

/* Counts pid's descriptors on the device. -1 when they cannot be listed (not ours to see). */
static int count_device_fds(const char *root, long pid, char *device, size_t len) {
  char path[96];
  snprintf(path, sizeof path, "/proc/%ld/fd", pid);
  DIR *dir = board_opendir(root, path);
  if (!dir) return errno == ENOENT || errno == ESRCH ? 0 : -1; /* gone meanwhile: not a user */
  int count = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char link[160], target[256];
    snprintf(link, sizeof link, "/proc/%ld/fd/%.32s", pid, e->d_name);
    if (board_readlink(root, link, target, sizeof target) != 0) continue;
    if (strncmp(target, DEVICE_PREFIX, strlen(DEVICE_PREFIX)) != 0) continue;
    if (!count++) snprintf(device, len, "%.63s", target);
  }
  closedir(dir);
  return count;
}

static int by_pid(const void *a, const void *b) {
  int32_t x = ((const htpu_npu_user *)a)->pid, y = ((const htpu_npu_user *)b)->pid;
  return (x > y) - (x < y);
}

/* Appends x to a list of *n entries with room for *cap. 0, or HTPU_ENOMEM. */
static int append(htpu_npu_user **list, uint32_t *n, uint32_t *cap, const htpu_npu_user *x) {
  if (*n == *cap) {
    uint32_t next = *cap ? *cap * 2 : 4;
    htpu_npu_user *grown = realloc(*list, next * sizeof *grown);
    if (!grown) return HTPU_ENOMEM;
    *list = grown;
    *cap = next;
  }
  (*list)[(*n)++] = *x;
  return 0;
}

/* The room of the two lists while /proc is scanned. */
typedef struct scan {
  uint32_t users_cap, daemons_cap;
} scan;

/* One /proc entry: appended to the users or the daemons when it holds the device. 0, or
 * HTPU_ENOMEM. */
static int examine(const char *root, long pid, htpu_npu_users *u, scan *sc) {
  htpu_npu_user holder, *x = &holder;
  memset(x, 0, sizeof *x);
  int fds = count_device_fds(root, pid, x->device, sizeof x->device);
  if (fds < 0) u->unexamined++;
  if (fds <= 0) return 0;
  x->pid = (int32_t)pid;
  x->fds = (uint32_t)fds;
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/comm", pid);
  if (board_read_line(root, path, x->comm, sizeof x->comm, NULL, 0) != HTPU_READING_OK)
    x->comm[0] = '\0';
  int qnn = read_libraries(root, pid, x);
  if (is_daemon(root, pid, x, qnn))
    return append(&u->daemons, &u->num_daemons, &sc->daemons_cap, x);
  return append(&u->users, &u->count, &sc->users_cap, x);
}

int htpu_npu_users_read(const char *root, int32_t exclude_pid, htpu_npu_users **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_npu_users_read: out is NULL");
  *out = NULL;
  int rc = board_check_root(root, "htpu_npu_users_read");
  if (rc) return rc;
  htpu_npu_users *u = calloc(1, sizeof *u);
  if (!u) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  DIR *proc = board_opendir(root, "/proc");
  if (!proc) {
    snprintf(u->note, sizeof u->note, "'%s/proc' cannot be opened: %s; no process examined",
             root ? root : "", strerror(errno));
    *out = u;
    return 0;
  }
  scan sc = {0, 0};
  struct dirent *e;
  while (!rc && (e = readdir(proc))) {
    long pid = board_name_number(e->d_name, "");
    if (pid <= 0 || pid > INT32_MAX || pid == exclude_pid) continue;
    rc = examine(root, pid, u, &sc);
  }
  closedir(proc);
  if (rc) {
    htpu_npu_users_free(u);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory listing the NPU's users");
  }
  if (u->count) qsort(u->users, u->count, sizeof *u->users, by_pid);
  if (u->num_daemons) qsort(u->daemons, u->num_daemons, sizeof *u->daemons, by_pid);
  *out = u;
  return 0;
}

void htpu_npu_users_free(htpu_npu_users *u) {
  if (!u) return;
  free(u->users);
  free(u->daemons);
  free(u);
}
