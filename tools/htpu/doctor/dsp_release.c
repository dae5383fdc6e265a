/* dsp_release.c - the `dsp_release` step: the v68 stub and skel that dsp_libraries found come
 * from one QAIRT release, the backend's (HTP backend only).
 *
 * Neither file can be asked: the skel is Hexagon code and the stub only answers through the
 * DSP. But QAIRT links its build id into every library as text, the same string
 * backendGetBuildId returns ("v2.25.0.240728104910_97711", docs/abi.md), so it is read from the
 * files themselves. A mismatched pair fails device creation with 14001. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "build_id_scan.h"
#include "doctor.h"

#define ID_MAX BUILD_ID_SCAN_MAX

/* The first QAIRT build id in the file (common/build_id_scan.c). Returns 1 (found, in out), 0
 * (none), -1 (cannot be read as a regular file: why says so; never a FIFO's endless wait). */
static int find_build_id(const char *path, char *out, size_t len, char *why, size_t why_len) {
  FILE *f = doctor_fopen(DOCTOR_HOST, path, why, why_len, NULL);
  if (!f) return -1;
  int found = build_id_scan(f, out, len);
  fclose(f);
  return found;
}

/* One library's build id as a fact; returns 1 when it names a QAIRT release (in *v). */
static int read_id(step *s, const char *label, const char *key, const char *path, char *id,
                   size_t len, htpu_version3 *v) {
  id[0] = '\0';
  char why[4700];
  int r = find_build_id(path, id, len, why, sizeof(why));
  if (r < 0) {
    step_str_shown(s, label, key, NULL, why);
    return 0;
  }
  if (r)
    step_str(s, label, key, id);
  else
    step_str_shown(s, label, key, NULL, "(no build id in the file)");
  return r && htpu_qairt_version_from_build_id(id, v) == 0;
}

static int same_release(htpu_version3 a, htpu_version3 b) {
  return a.major == b.major && a.minor == b.minor && a.patch == b.patch;
}

static void judge(doctor *d, step *s) {
  if (!d->skel_path[0] || !d->stub_path[0]) {
    step_set(s, ST_SKIP, "not compared: the %s was not found (dsp libraries step)",
             !d->skel_path[0] ? "skel" : "stub");
    return;
  }
  char stub_id[ID_MAX + 1], skel_id[ID_MAX + 1];
  htpu_version3 stub_v, skel_v, backend_v;
  int stub_ok = read_id(s, "stub build id", "stub_build_id", d->stub_path, stub_id,
                        sizeof(stub_id), &stub_v);
  int skel_ok = read_id(s, "skel build id", "skel_build_id", d->skel_path, skel_id,
                        sizeof(skel_id), &skel_v);
  int backend_ok = htpu_qairt_version_from_build_id(d->facts.build_id, &backend_v) == 0;
  step_str(s, "stub", "stub", d->stub_path);
  step_str(s, "skel", "skel", d->skel_path);
  if (!stub_ok || !skel_ok) {
    step_set(s, ST_WARN, "no QAIRT build id found in the %s: cannot tell its release",
             !stub_ok && !skel_ok ? "stub or the skel"
             : !stub_ok           ? "stub"
                                  : "skel");
    step_hint(s,
              "QAIRT's libraries carry their build id as text (`strings FILE | grep "
              "'^v2\\.'`); use the stub and skel shipped with the backend's own release.%s",
              d->qairt_clause);
    return;
  }
  char release[32];
  snprintf(release, sizeof(release), "%u.%u.%u", stub_v.major, stub_v.minor, stub_v.patch);
  if (!same_release(stub_v, skel_v)) {
    step_set(s, ST_FAIL, "the stub is QAIRT %s, the skel QAIRT %u.%u.%u: not one release",
             release, skel_v.major, skel_v.minor, skel_v.patch);
    step_hint(s,
              "install the stub and skel of one QAIRT release, the backend's: on the image "
              "/usr/lib/%s and /usr/lib/dsp/%s (a second QNN set such as "
              "/usr/lib/onnxruntime-qnn must not be on the library or DSP search path). A "
              "mismatched pair fails device creation with 14001.%s",
              BOARD_STUB, BOARD_SKEL, d->qairt_clause);
    return;
  }
  if (backend_ok && !same_release(backend_v, stub_v)) {
    step_set(s, ST_FAIL, "the stub and skel are QAIRT %s, the backend QAIRT %u.%u.%u", release,
             backend_v.major, backend_v.minor, backend_v.patch);
    step_hint(s,
              "use the stub and skel shipped with %s (its own release), or the backend of "
              "theirs; mixing releases fails device creation with 14001 or 1008",
              d->ro.backend_lib);
    return;
  }
  if (strcmp(stub_id, skel_id) != 0) {
    step_set(s, ST_WARN, "the stub and skel are both QAIRT %s, but different builds", release);
    step_hint(s, "install the pair from one QAIRT package: builds of one release are meant to "
                 "be used together");
    return;
  }
  step_set(s, ST_OK, "stub and skel are one QAIRT %s build%s", release,
           backend_ok ? ", the backend's release" : "");
}

void check_dsp_release(doctor *d) {
  doctor_board_step(d, "dsp_release", "stub/skel release", judge);
}
