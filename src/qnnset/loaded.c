/* loaded.c - a stub of another release already in the process (qnnset.h).
 *
 * A backend opens its stub by name (libQnnHtpV68Stub.so), and the dynamic loader answers a name
 * with a library already loaded under that soname before it looks anywhere else, the backend's
 * own RPATH ($ORIGIN) included. So a stub of another release that some other library of the
 * process loaded first (ONNX Runtime's QNN execution provider loads its own) is the one the
 * set's backend would get: a mixed release, which the DSP refuses at best (14001) and which
 * the one-set rule exists to prevent. It is looked for before any QNN call and refused. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_id_scan.h"
#include "base/base.h"
#include "qnnset.h"

static void file_build_id(const char *path, char *out, size_t len) {
  out[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) return;
  if (!build_id_scan(f, out, len)) out[0] = '\0';
  fclose(f);
}

/* The file of the library loaded under `soname`, into out; 0, or -1 when none is loaded. */
static int loaded_file(const char *soname, char *out, size_t len) {
  /* RTLD_NOLOAD: only a library already there answers (its count is raised, so closed again) */
  void *h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return -1;
  struct link_map *lm = NULL;
  int rc = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name ? 0 : -1;
  if (!rc) snprintf(out, len, "%s", lm->l_name);
  dlclose(h);
  return rc;
}

int qnnset_check_loaded_stub(const htpu_qnn_set *s) {
  if (!s->stub[0]) return 0;
  const char *soname = strrchr(s->stub, '/');
  soname = soname ? soname + 1 : s->stub;
  char loaded[PATH_MAX], real[PATH_MAX], own[PATH_MAX];
  if (loaded_file(soname, loaded, sizeof loaded) != 0) return 0;
  if (realpath(loaded, real) && realpath(s->stub, own) && strcmp(real, own) == 0)
    return 0; /* the set's own */
  char id[BUILD_ID_SCAN_MAX + 1];
  file_build_id(loaded, id, sizeof id);
  if (id[0] && strcmp(id, s->stub_build_id) == 0) return 0; /* a copy of the same release */
  return htpu_set_error(HTPU_EINVAL, 0,
                        "the QNN set in '%s' cannot be used in this process: %s is already "
                        "loaded from '%s' (%s), not the set's own (%s); the set's backend opens "
                        "its stub by that name and would be handed that one, a mixed release. "
                        "Another library of this process loaded it (ONNX Runtime's QNN "
                        "execution provider loads its own): use the set in another OS process "
                        "(docs/board.md, \"QNN sets\")",
                        s->dir, soname, loaded, id[0] ? id : "no build id", s->stub_build_id);
}
