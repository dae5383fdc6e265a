/* library_path.c - the `library_path` step: no second QNN set on the library path shadows the
 * backend's (HTP backend only).
 *
 * The board image carries two QNN sets: QAIRT's in /usr/lib and ONNX Runtime's in
 * /usr/lib/onnxruntime-qnn (docs/board.md). The backend is opened by path, but it dlopens its
 * stub by name, so a directory searched before the backend's holding another release's stub
 * wins over the one next to the backend: device creation then fails with 14001 (or 1008). The
 * dynamic linker searches LD_LIBRARY_PATH, then the directories of /etc/ld.so.conf (and the
 * files it includes, /etc/ld.so.conf.d/\*.conf: through ld.so.cache, ahead of /usr/lib), so both
 * are scanned, in that order; the configuration is read under --root, bounded. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doctor.h"
#include "file_open.h"

/* The QNN libraries a second set brings; the stub first (the one the backend loads by name). */
static const char *const k_qnn_names[] = {BOARD_STUB, "libQnnHtp.so", "libQnnSystem.so",
                                          "libQnnHtpPrepare.so"};
#define NUM_QNN_NAMES (sizeof(k_qnn_names) / sizeof(k_qnn_names[0]))

/* Whether two directory names are one directory (compared resolved when both exist). */
static int same_dir(const char *a, const char *b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  if (realpath(a, ra) && realpath(b, rb)) return strcmp(ra, rb) == 0;
  return strcmp(a, b) == 0;
}

typedef struct shadow {
  char stub_dir[4096];  /* the first directory searched holding the stub, or "" */
  char stub_path[8192]; /* where it was read (under --root for the configuration's) */
  char stub_from[300];  /* where it is listed: "LD_LIBRARY_PATH" or a configuration file */
  char other_dir[4096]; /* the first other directory holding any QNN library, or "" */
  char other_from[300];
  char other_names[256];
} shadow;

/* One row per directory searched, with the QNN libraries it holds. `dir` as listed, read
 * under `root` (d->root for the linker's configuration's, DOCTOR_HOST for LD_LIBRARY_PATH's). */
static void scan_dir(step *s, const char *root, const char *dir, const char *from,
                     const char *backend_dir, shadow *sh) {
  char names[256] = "", path[8192];
  size_t pos = 0;
  int has_stub = 0;
  /* where it is read (as far as it resolves, when it does not) */
  doctor_resolve(root, dir, 1, path, sizeof(path));
  for (size_t i = 0; i < NUM_QNN_NAMES; i++) {
    if (!doctor_file_exists(root, dir, k_qnn_names[i])) continue;
    if (i == 0) has_stub = 1;
    int w = snprintf(names + pos, sizeof(names) - pos, "%s%s", pos ? ", " : "", k_qnn_names[i]);
    if (w > 0 && (size_t)w < sizeof(names) - pos) pos += (size_t)w;
  }
  int is_backend_dir = same_dir(path, backend_dir);
  report_row *row = step_row(s, "%s: %s%s (%s)", dir, names[0] ? names : "no QNN libraries",
                             is_backend_dir ? " (the backend's directory)" : "", from);
  if (row) {
    row_str(row, "dir", dir);
    row_str(row, "from", from);
    row_str(row, "qnn_libraries", names);
    row_bool(row, "backend_dir", is_backend_dir);
  }
  if (has_stub && !sh->stub_dir[0]) {
    snprintf(sh->stub_dir, sizeof(sh->stub_dir), "%s", dir);
    snprintf(sh->stub_path, sizeof(sh->stub_path), "%s", path);
    report_copy(sh->stub_from, sizeof(sh->stub_from), from);
  }
  if (names[0] && !is_backend_dir && !sh->other_dir[0]) {
    snprintf(sh->other_dir, sizeof(sh->other_dir), "%s", dir);
    report_copy(sh->other_from, sizeof(sh->other_from), from);
    snprintf(sh->other_names, sizeof(sh->other_names), "%s", names);
  }
}

/* ---- the linker's configuration: /etc/ld.so.conf and what it includes ---------------------- */

#define LD_SO_CONF "/etc/ld.so.conf"
#define CONF_MAX_FILES 64        /* configuration files read, includes included */
#define CONF_MAX_DEPTH 4         /* include nesting */
#define CONF_MAX_DIRS 128        /* directories taken */
#define CONF_MAX_BYTES (1 << 16) /* read of each file */

typedef struct conf_dirs {
  int n;
  char dir[CONF_MAX_DIRS][512];  /* as listed, a board path */
  char from[CONF_MAX_DIRS][300]; /* the file listing it, a board path */
  int files;
  int found;        /* /etc/ld.so.conf was read */
  char refused[200]; /* why /etc/ld.so.conf is there but was not read ("a FIFO ..."), or "" */
  char note[2048];  /* what was left out (bounds reached, files refused), "; "-separated */
  int more;         /* notes that did not fit */
} conf_dirs;

static void conf_note(conf_dirs *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void conf_note(conf_dirs *c, const char *fmt, ...) {
  char buf[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (strstr(c->note, buf)) return; /* the same bound met again on another include level */
  size_t used = strlen(c->note), n = strlen(buf);
  if (used + 2 + n + 1 > sizeof(c->note) - 32) { /* room kept for " (and N more)" */
    c->more++;
    return;
  }
  if (used) {
    memcpy(c->note + used, "; ", 2);
    used += 2;
  }
  memcpy(c->note + used, buf, n + 1);
}

/* Why a configuration file that is there was not read: what it is when it is no regular file
 * ("a FIFO (named pipe), not a regular file", as for a directory), else the open's cause. */
static void refused_reason(const doctor *d, const char *file, const char *why, char *out,
                           size_t len) {
  struct stat st;
  if (doctor_stat(d->root, file, &st) != 0)
    snprintf(out, len, "%s", strerror(errno));
  else if (!S_ISREG(st.st_mode))
    snprintf(out, len, "%s, not a regular file", file_kind_name((unsigned)st.st_mode));
  else
    report_copy(out, len, why);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void parse_conf(const doctor *d, conf_dirs *c, const char *file, int depth);

/* `include PATTERN`: a file, or DIR/\*.conf (the files of DIR whose names end in .conf, in name
 * order, as glob() gives them); other wildcards are not followed. PATTERN is a board path,
 * relative ones to the including file's directory. */
static void conf_include(const doctor *d, conf_dirs *c, const char *file, const char *pattern,
                         int depth) {
  char full[1024];
  if (pattern[0] == '/') {
    snprintf(full, sizeof(full), "%s", pattern);
  } else {
    const char *slash = strrchr(file, '/');
    int dlen = slash ? (int)(slash - file) : 0;
    snprintf(full, sizeof(full), "%.*s/%s", dlen, file, pattern);
  }
  char *base = strrchr(full, '/');
  *base++ = '\0'; /* full: the directory; base: the file name or pattern */
  if (!strpbrk(base, "*?[") && !strpbrk(full, "*?[")) {
    char one[1100];
    snprintf(one, sizeof(one), "%s/%s", full, base);
    parse_conf(d, c, one, depth + 1);
    return;
  }
  if (strcmp(base, "*.conf") != 0 || strpbrk(full, "*?[")) {
    conf_note(c, "include %s in %s not followed (only DIR/*.conf patterns are)", pattern, file);
    return;
  }
  DIR *dir = doctor_opendir(d->root, full);
  if (!dir) {
    /* no such directory: nothing to include, as for ldconfig; anything else is left out */
    if (errno != ENOENT) conf_note(c, "include %s in %s: %s: %s", pattern, file, full,
                                   strerror(errno));
    return;
  }
  char *names[CONF_MAX_FILES];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t len = strlen(e->d_name);
    if (len <= 5 || strcmp(e->d_name + len - 5, ".conf") != 0) continue;
    if (n == CONF_MAX_FILES) {
      conf_note(c, "more than 64 files match %s/%s: the rest not read", full, base);
      break;
    }
    if (!(names[n] = strdup(e->d_name))) break;
    n++;
  }
  closedir(dir);
  qsort(names, (size_t)n, sizeof(names[0]), by_name);
  for (int i = 0; i < n; i++) {
    char one[1400];
    snprintf(one, sizeof(one), "%s/%s", full, names[i]);
    parse_conf(d, c, one, depth + 1);
    free(names[i]);
  }
}

/* One configuration file (a board path, read under --root): its directories in order, its
 * includes where they stand. Comments (#) and hwcap lines are skipped; "DIR=TYPE" is DIR. */
static void parse_conf(const doctor *d, conf_dirs *c, const char *file, int depth) {
  if (depth > CONF_MAX_DEPTH) {
    conf_note(c, "includes nested deeper than 4 at %s: not read", file);
    return;
  }
  if (c->files == CONF_MAX_FILES) {
    conf_note(c, "more than 64 configuration files: %s and the rest not read", file);
    return;
  }
  char why[4700];
  int there = 0;
  FILE *f = doctor_fopen(d->root, file, why, sizeof(why), &there);
  if (!f) {
    if (!there) return; /* an include of nothing: ldconfig says nothing either */
    char reason[4800];
    refused_reason(d, file, why, reason, sizeof(reason));
    if (depth == 0) report_copy(c->refused, sizeof(c->refused), reason);
    conf_note(c, "%s is %s", file, reason);
    return;
  }
  c->files++;
  if (depth == 0) c->found = 1;
  char line[4096];
  size_t bytes = 0;
  while (fgets(line, sizeof(line), f)) {
    bytes += strlen(line);
    if (bytes > CONF_MAX_BYTES) {
      conf_note(c, "%s is longer than 64 KiB: the rest not read", file);
      break;
    }
    line[strcspn(line, "#\r\n")] = '\0';
    char *p = line + strspn(line, " \t");
    size_t len = strlen(p);
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) p[--len] = '\0';
    if (!len) continue;
    if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
      char *save = NULL;
      for (char *pat = strtok_r(p + 8, " \t", &save); pat; pat = strtok_r(NULL, " \t", &save))
        conf_include(d, c, file, pat, depth);
      continue;
    }
    if (strncmp(p, "hwcap", 5) == 0 && (p[5] == ' ' || p[5] == '\t')) continue;
    p[strcspn(p, "=")] = '\0';
    len = strlen(p);
    while (len > 1 && p[len - 1] == '/') p[--len] = '\0';
    if (p[0] != '/') continue; /* ldconfig takes absolute directories */
    if (c->n == CONF_MAX_DIRS) {
      conf_note(c, "more than 128 directories: %s and the rest not scanned", p);
      break;
    }
    report_copy(c->dir[c->n], sizeof(c->dir[0]), p);
    report_copy(c->from[c->n], sizeof(c->from[0]), file);
    c->n++;
  }
  fclose(f);
}

/* The linker's configuration as read: how many directories and files, or why it was not,
 * and what was left out. */
static void show_conf(step *s, conf_dirs *c) {
  char conf_shown[64];
  snprintf(conf_shown, sizeof(conf_shown), "%d director%s in %d file%s", c->n,
           c->n == 1 ? "y" : "ies", c->files, c->files == 1 ? "" : "s");
  char refused_shown[256];
  snprintf(refused_shown, sizeof(refused_shown), "not read: %s", c->refused);
  step_str(s, LD_SO_CONF, "ld_so_conf",
           c->found       ? conf_shown
           : c->refused[0] ? refused_shown
                           : "not there");
  if (c->more) {
    size_t used = strlen(c->note);
    snprintf(c->note + used, sizeof(c->note) - used, " (and %d more)", c->more);
  }
  if (c->note[0]) step_str(s, "left out", "ld_so_conf_note", c->note);
}

/* The step's verdict from the first stub and the first other QNN library found on the path
 * (ld: LD_LIBRARY_PATH; n_conf: the directories the configuration lists). */
static void verdict(step *s, const shadow *sh, const char *ld, int n_conf, const char *backend,
                    const char *backend_dir) {
  int from_ld = strcmp(sh->stub_from, "LD_LIBRARY_PATH") == 0;
  if (sh->stub_dir[0] && !same_dir(sh->stub_path, backend_dir)) {
    step_set(s, ST_FAIL, "%s in %s (%s) shadows the one next to %s", BOARD_STUB, sh->stub_dir,
             sh->stub_from, backend);
    if (from_ld)
      step_hint(s,
                "the backend loads its stub by name, so it gets that directory's, of another "
                "QNN set%s; device creation then fails with 14001. Remove %s from "
                "LD_LIBRARY_PATH for this program (ONNX Runtime finds its own QNN set without "
                "it)",
                strstr(sh->stub_dir, "onnxruntime-qnn") ? " (ONNX Runtime's)" : "",
                sh->stub_dir);
    else
      step_hint(s,
                "the backend loads its stub by name, and the linker finds that directory's "
                "first (%s lists it, ahead of %s), of another QNN set%s; device creation then "
                "fails with 14001. As root, remove %s from %s and run ldconfig (ONNX Runtime "
                "finds its own QNN set without it)",
                sh->stub_from, backend_dir,
                strstr(sh->stub_dir, "onnxruntime-qnn") ? " (ONNX Runtime's)" : "",
                sh->stub_dir, sh->stub_from);
  } else if (sh->other_dir[0]) {
    int other_ld = strcmp(sh->other_from, "LD_LIBRARY_PATH") == 0;
    char where[400];
    snprintf(where, sizeof(where), "%s%s", other_ld ? "LD_LIBRARY_PATH" : "the linker's path, ",
             other_ld ? "" : sh->other_from);
    step_set(s, ST_WARN, "a second QNN set on %s: %s in %s", where, sh->other_names,
             sh->other_dir);
    step_hint(s,
              "QNN libraries loaded by name come from there instead of %s: do not mix two QNN "
              "sets in one process (mixed releases fail with 1008 or 14001); %s",
              backend_dir,
              other_ld ? "remove it from LD_LIBRARY_PATH for this program"
                       : "as root, remove it from that file and run ldconfig");
  } else if ((!ld || !ld[0]) && n_conf == 0) {
    step_set(s, ST_OK, "LD_LIBRARY_PATH is unset and %s lists no directories: nothing shadows %s",
             LD_SO_CONF, backend_dir);
  } else {
    step_set(s, ST_OK, "no other QNN set on LD_LIBRARY_PATH or in %s", LD_SO_CONF);
  }
}

static void judge(doctor *d, step *s) {
  const char *ld = getenv("LD_LIBRARY_PATH");
  const char *backend = d->ro.backend_lib;
  char backend_dir[4096];
  snprintf(backend_dir, sizeof(backend_dir), "%s", backend);
  char *slash = strrchr(backend_dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(backend_dir, sizeof(backend_dir), "/usr/lib");
  step_str(s, "LD_LIBRARY_PATH", "LD_LIBRARY_PATH", ld);
  shadow *sh = calloc(1, sizeof(*sh));
  conf_dirs *c = calloc(1, sizeof(*c));
  char *copy = strdup(ld ? ld : "");
  if (!sh || !c || !copy) {
    free(sh);
    free(c);
    free(copy);
    step_set(s, ST_FAIL, "out of memory");
    return;
  }
  parse_conf(d, c, LD_SO_CONF, 0);
  show_conf(s, c);
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
    scan_dir(s, DOCTOR_HOST, dir, "LD_LIBRARY_PATH", backend_dir, sh);
  for (int i = 0; i < c->n; i++) scan_dir(s, d->root, c->dir[i], c->from[i], backend_dir, sh);
  step_rows(s, "search order", "library_path");
  verdict(s, sh, ld, c->n, backend, backend_dir);
  free(copy);
  free(c);
  free(sh);
}

void check_library_path(doctor *d) {
  doctor_board_step(d, "library_path", "library path", judge);
}
