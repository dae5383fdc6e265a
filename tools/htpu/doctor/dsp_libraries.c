/* dsp_libraries.c - the `dsp_libraries` step: the DSP library search path in fastrpc's order,
 * where the v68 skel is found, and the stub next to the backend (HTP backend only). These are
 * what this process loads: read on this machine (DOCTOR_HOST), never under --root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

/* fastrpc appends these to DSP_LIBRARY_PATH (qualcomm/fastrpc DEFAULT_DSP_SEARCH_PATHS). */
static const char *const k_fastrpc_default_dirs[] = {"/usr/lib/rfsa/adsp", "/usr/lib/dsp"};
#define NUM_DEFAULT_DIRS (sizeof(k_fastrpc_default_dirs) / sizeof(k_fastrpc_default_dirs[0]))

/* One directory of the search path as a row; notes the first that holds the skel. */
static void add_dir(step *s, const char *dir, const char *from, char *skel_dir, size_t len,
                    char *not_file, size_t not_file_len) {
  int exists = doctor_is_dir(DOCTOR_HOST, dir);
  int skel = exists && doctor_file_exists(DOCTOR_HOST, dir, BOARD_SKEL);
  /* a skel that is there but no regular file (a directory ...) is not loaded: fastrpc goes on
   * to the next directory */
  char kind_buf[64], what[128];
  const char *kind =
      exists && !skel ? doctor_kind(DOCTOR_HOST, dir, BOARD_SKEL, kind_buf, sizeof(kind_buf))
                      : NULL;
  if (skel && !skel_dir[0]) snprintf(skel_dir, len, "%s", dir);
  if (kind && !not_file[0]) snprintf(not_file, not_file_len, "%s/%s is %s", dir, BOARD_SKEL, kind);
  snprintf(what, sizeof(what), "%s is %s, not a library", BOARD_SKEL, kind ? kind : "");
  report_row *row = step_row(s, "%s: %s (%s)", dir,
                             !exists ? "no such directory"
                             : skel  ? BOARD_SKEL " present"
                             : kind  ? what
                                     : "no " BOARD_SKEL,
                             from);
  if (!row) return;
  row_str(row, "dir", dir);
  row_str(row, "from", from);
  row_bool(row, "exists", exists);
  row_bool(row, "skel", skel);
}

/* The fastrpc search order, one row per directory: the given list (';'-separated, order
 * matters) followed by fastrpc's compiled-in defaults. Returns whether the skel was found,
 * with its directory in skel_dir. */
static int list_search_path(step *s, const char *search, const char *from, char *skel_dir,
                            size_t len, char *not_file, size_t not_file_len) {
  skel_dir[0] = '\0';
  not_file[0] = '\0';
  char *copy = search ? strdup(search) : NULL;
  char *save = NULL;
  for (char *dir = copy ? strtok_r(copy, ";", &save) : NULL; dir;
       dir = strtok_r(NULL, ";", &save))
    if (dir[0]) add_dir(s, dir, from, skel_dir, len, not_file, not_file_len);
  free(copy);
  for (size_t i = 0; i < NUM_DEFAULT_DIRS; i++)
    add_dir(s, k_fastrpc_default_dirs[i], "fastrpc default", skel_dir, len, not_file,
            not_file_len);
  step_rows(s, "search path", "search_path");
  return skel_dir[0] != '\0';
}

static void judge(doctor *d, step *s) {
  const char *backend = d->ro.backend_lib;
  const char *search = d->dsp_opt ? d->dsp_opt : getenv("DSP_LIBRARY_PATH");
  char skel_dir[4096], stub_dir[4096], not_file[4300];
  int skel = list_search_path(s, search, d->dsp_opt ? "--dsp-library-path" : "DSP_LIBRARY_PATH",
                              skel_dir, sizeof(skel_dir), not_file, sizeof(not_file));
  /* the stub is dlopen'ed by the backend through the linker path; next to it is where the
   * image installs it */
  snprintf(stub_dir, sizeof(stub_dir), "%s", backend);
  char *slash = strrchr(stub_dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(stub_dir, sizeof(stub_dir), "/usr/lib");
  int stub = doctor_file_exists(DOCTOR_HOST, stub_dir, BOARD_STUB);
  if (skel) snprintf(d->skel_path, sizeof(d->skel_path), "%s/%s", skel_dir, BOARD_SKEL);
  if (stub) snprintf(d->stub_path, sizeof(d->stub_path), "%s/%s", stub_dir, BOARD_STUB);
  step_str(s, BOARD_SKEL, "skel_dir", skel ? skel_dir : "not found in the DSP search path");
  step_str(s, BOARD_STUB, "stub_dir", stub ? stub_dir : "not found next to the backend");
  if (!skel && not_file[0]) {
    step_set(s, ST_FAIL, "%s not found: %s, not a library", BOARD_SKEL, not_file);
    step_hint(s,
              "fastrpc loads the skel from the first directory of the search path holding it "
              "as a file: replace that with the skel of the backend's own QAIRT release (a "
              "file), or point DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH at the directory holding "
              "it.%s",
              d->qairt_clause);
  } else if (!skel) {
    step_set(s, ST_FAIL, "%s not found (QCS6490 is HTP v68)", BOARD_SKEL);
    step_hint(s,
              "point DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH at the directory holding the skel "
              "of the backend's own QAIRT release (/usr/lib/dsp on the image), or install that "
              "release's DSP libraries there; none of the directories listed above has it.%s",
              d->qairt_clause);
  } else if (strstr(skel_dir, "onnxruntime-qnn")) {
    step_set(s, ST_WARN, "the first %s in the search path is the onnxruntime-qnn copy",
             BOARD_SKEL);
    step_hint(s,
              "the skel must come from the same QAIRT release as %s, else device creation "
              "fails with 14001.%s",
              backend, d->qairt_clause);
  } else if (!stub) {
    step_set(s, ST_WARN, "%s is not next to %s", BOARD_STUB, backend);
    step_hint(s,
              "the backend dlopens the stub by name: it must be on the linker path and from "
              "the same QAIRT release.%s",
              d->qairt_clause);
  } else {
    step_set(s, ST_OK, "v68 skel and stub found");
  }
}

void check_dsp_libraries(doctor *d) {
  step *s = report_begin(&d->rep, "dsp_libraries", "dsp libraries");
  if (d->board)
    judge(d, s);
  else
    step_set(s, ST_SKIP, "not applicable: %s loads no DSP skel",
             doctor_base_name(d->ro.backend_lib));
  report_end(&d->rep, s);
}
