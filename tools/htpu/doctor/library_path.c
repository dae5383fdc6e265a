/* library_path.c - the `library_path` step: no second QNN set on LD_LIBRARY_PATH shadows the
 * backend's (HTP backend only).
 *
 * The board image carries two QNN sets: QAIRT's in /usr/lib and ONNX Runtime's in
 * /usr/lib/onnxruntime-qnn (docs/board.md). The backend is opened by path, but it dlopens its
 * stub by name, so a directory on LD_LIBRARY_PATH holding another release's stub wins over the
 * one next to the backend: device creation then fails with 14001 (or 1008). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

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
  char stub_dir[4096];  /* the first LD_LIBRARY_PATH directory holding the stub, or "" */
  char other_dir[4096]; /* the first other directory holding any QNN library, or "" */
  char other_names[256];
} shadow;

/* One row per LD_LIBRARY_PATH directory, with the QNN libraries it holds. */
static void scan_dir(step *s, const char *dir, const char *backend_dir, shadow *sh) {
  char names[256] = "";
  size_t pos = 0;
  int has_stub = 0;
  for (size_t i = 0; i < NUM_QNN_NAMES; i++) {
    if (!doctor_file_exists(dir, k_qnn_names[i])) continue;
    if (i == 0) has_stub = 1;
    int w = snprintf(names + pos, sizeof(names) - pos, "%s%s", pos ? ", " : "", k_qnn_names[i]);
    if (w > 0 && (size_t)w < sizeof(names) - pos) pos += (size_t)w;
  }
  int is_backend_dir = same_dir(dir, backend_dir);
  report_row *row = step_row(s, "%s: %s%s", dir, names[0] ? names : "no QNN libraries",
                             is_backend_dir ? " (the backend's directory)" : "");
  if (row) {
    row_str(row, "dir", dir);
    row_str(row, "qnn_libraries", names);
    row_bool(row, "backend_dir", is_backend_dir);
  }
  if (has_stub && !sh->stub_dir[0]) snprintf(sh->stub_dir, sizeof(sh->stub_dir), "%s", dir);
  if (names[0] && !is_backend_dir && !sh->other_dir[0]) {
    snprintf(sh->other_dir, sizeof(sh->other_dir), "%s", dir);
    snprintf(sh->other_names, sizeof(sh->other_names), "%s", names);
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
  if (!ld || !ld[0]) {
    step_set(s, ST_OK, "LD_LIBRARY_PATH is unset: nothing shadows %s", backend_dir);
    return;
  }
  shadow *sh = calloc(1, sizeof(*sh));
  char *copy = strdup(ld);
  if (!sh || !copy) {
    free(sh);
    free(copy);
    step_set(s, ST_FAIL, "out of memory");
    return;
  }
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
    scan_dir(s, dir, backend_dir, sh);
  step_rows(s, "search order", "library_path");
  if (sh->stub_dir[0] && !same_dir(sh->stub_dir, backend_dir)) {
    step_set(s, ST_FAIL, "%s in %s (LD_LIBRARY_PATH) shadows the one next to %s", BOARD_STUB,
             sh->stub_dir, backend);
    step_hint(s,
              "the backend loads its stub by name, so it gets that directory's, of another QNN "
              "set%s; device creation then fails with 14001. Remove %s from LD_LIBRARY_PATH "
              "for this program (ONNX Runtime finds its own QNN set without it)",
              strstr(sh->stub_dir, "onnxruntime-qnn") ? " (ONNX Runtime's)" : "", sh->stub_dir);
  } else if (sh->other_dir[0]) {
    step_set(s, ST_WARN, "a second QNN set on LD_LIBRARY_PATH: %s in %s", sh->other_names,
             sh->other_dir);
    step_hint(s,
              "QNN libraries loaded by name come from there instead of %s: do not mix two QNN "
              "sets in one process (mixed releases fail with 1008 or 14001); remove %s from "
              "LD_LIBRARY_PATH for this program",
              backend_dir, sh->other_dir);
  } else {
    step_set(s, ST_OK, "no other QNN set on LD_LIBRARY_PATH");
  }
  free(copy);
  free(sh);
}

void check_library_path(doctor *d) {
  doctor_board_step(d, "library_path", "library path", judge);
}
