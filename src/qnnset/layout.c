/* layout.c - a folder read as a QNN set (qnnset.h): the flat layout (everything in one
 * folder, ONNX Runtime's) or QAIRT's (the skel in dsp/), the stub and skel of the v68 (else the
 * first architecture found), and each file's build id. Nothing is loaded. */
#include <dirent.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "build_id_scan.h"
#include "base/base.h"
#include "qnnset.h"

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* snprintf that says whether it fit: a path cut short would name another file. */
__attribute__((format(printf, 3, 4))) static int put(char *out, size_t len, const char *fmt,
                                                     ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out, len, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < len) return 0;
  out[0] = '\0';
  return -1;
}

/* The stub in dir: libQnnHtpV68Stub.so, else the first libQnnHtpV<n>Stub.so (by name). */
static void find_stub(const char *dir, char *out, size_t len, char arch[8]) {
  out[0] = '\0';
  arch[0] = '\0';
  char best[256] = "";
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    unsigned n = 0;
    char tail[16];
    char path[HTPU_QNN_SET_PATH_MAX];
    if (sscanf(e->d_name, "libQnnHtpV%u%15s", &n, tail) != 2 || strcmp(tail, "Stub.so") != 0)
      continue;
    /* a dangling symlink or a folder of that name is no stub: the set then misses one */
    if (put(path, sizeof path, "%s/%s", dir, e->d_name) || !is_file(path)) continue;
    if (!best[0] || n == 68 || (strcmp(best, "libQnnHtpV68Stub.so") != 0 &&
                                strcmp(e->d_name, best) < 0))
      snprintf(best, sizeof best, "%s", e->d_name);
  }
  closedir(d);
  if (!best[0]) return;
  put(out, len, "%s/%s", dir, best);
  sscanf(best, "libQnnHtpV%7[0-9]", arch);
}

static void read_id(const char *path, char *out, size_t len) {
  out[0] = '\0';
  FILE *f = path[0] ? fopen(path, "rb") : NULL;
  if (!f) return;
  if (!build_id_scan(f, out, len)) out[0] = '\0';
  fclose(f);
}

/* The skel of `arch` in dir itself (flat) or in dir/dsp (QAIRT's /usr/lib + /usr/lib/dsp). */
static void find_skel(htpu_qnn_set *s, const char *arch) {
  char name[64], path[HTPU_QNN_SET_PATH_MAX];
  snprintf(name, sizeof name, "libQnnHtpV%sSkel.so", arch[0] ? arch : "68");
  const char *subdirs[] = {"", "/dsp"};
  const char *layouts[] = {"flat", "qairt"};
  for (int i = 0; i < 2; i++) {
    if (put(path, sizeof path, "%s%s/%s", s->dir, subdirs[i], name) || !is_file(path)) continue;
    put(s->skel, sizeof s->skel, "%s", path);
    put(s->skel_dir, sizeof s->skel_dir, "%s%s", s->dir, subdirs[i]);
    snprintf(s->layout, sizeof s->layout, "%s", layouts[i]);
    return;
  }
  snprintf(s->layout, sizeof s->layout, "flat"); /* no skel: judged incomplete */
}

static void judge(htpu_qnn_set *s) {
  size_t n = 0;
  const char *missing[4] = {0};
  if (!s->system_lib[0]) missing[n++] = "libQnnSystem.so";
  if (!s->stub[0]) missing[n++] = "a libQnnHtpV<arch>Stub.so";
  if (!s->skel[0]) missing[n++] = "the skel (here or in dsp/)";
  s->complete = n == 0;
  if (n) {
    snprintf(s->note, sizeof s->note, "missing %s%s%s%s%s", missing[0], n > 1 ? ", " : "",
             n > 1 ? missing[1] : "", n > 2 ? ", " : "", n > 2 ? missing[2] : "");
    return;
  }
  s->consistent = s->build_id[0] && strcmp(s->build_id, s->stub_build_id) == 0 &&
                  strcmp(s->build_id, s->skel_build_id) == 0;
  if (!s->consistent)
    snprintf(s->note, sizeof s->note, "not one release: backend %s, stub %s, skel %s",
             s->build_id[0] ? s->build_id : "(no build id)",
             s->stub_build_id[0] ? s->stub_build_id : "(no build id)",
             s->skel_build_id[0] ? s->skel_build_id : "(no build id)");
}

int qnnset_read(const char *dir, htpu_qnn_set *s) {
  memset(s, 0, sizeof *s);
  char real[PATH_MAX];
  if (!realpath(dir, real) || strlen(real) > HTPU_QNN_SET_PATH_MAX - 64) return -1;
  put(s->dir, sizeof s->dir, "%s", real);
  if (put(s->backend_lib, sizeof s->backend_lib, "%s/libQnnHtp.so", s->dir) ||
      !is_file(s->backend_lib))
    return -1;
  if (put(s->system_lib, sizeof s->system_lib, "%s/libQnnSystem.so", s->dir) == 0 &&
      !is_file(s->system_lib))
    s->system_lib[0] = '\0';
  char arch[8];
  find_stub(s->dir, s->stub, sizeof s->stub, arch);
  find_skel(s, arch);
  read_id(s->backend_lib, s->build_id, sizeof s->build_id);
  read_id(s->stub, s->stub_build_id, sizeof s->stub_build_id);
  read_id(s->skel, s->skel_build_id, sizeof s->skel_build_id);
  /* not htpu_qairt_version_from_build_id: that one sets the thread's error, and a hint is
   * read while an error is being written */
  unsigned v[3];
  if (sscanf(s->build_id, "v%u.%u.%u", &v[0], &v[1], &v[2]) == 3)
    s->release = (htpu_version3){v[0], v[1], v[2]};
  judge(s);
  return 0;
}

int htpu_qnn_set_inspect(const char *dir, htpu_qnn_set *out) {
  htpu_clear_error();
  if (!dir || !out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_qnn_set_inspect: NULL argument");
  if (qnnset_read(dir, out) == 0) return 0;
  return htpu_set_error(HTPU_EINVAL, 0,
                        "'%s' is not a QNN set: no libQnnHtp.so in it (a set is a folder with "
                        "the backend, libQnnSystem.so, the stub and the skel of one QAIRT "
                        "release; the skel may be in its dsp/ subfolder)",
                        dir);
}
