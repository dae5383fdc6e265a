/* claim.c - the runtime's qnn_set option and the one-set-per-process rule (qnnset.h).
 *
 * The DSP keeps the configuration of the process's first QNN session (the skel it loaded) for
 * the life of the process; on the board, going from one configuration to another in one process
 * took the VM down. So the first runtime of a DSP set decides the process's set, and it stays
 * decided after that runtime closes: a later runtime of another set is refused before any QNN
 * call. Its stub stays loaded for the same reason (it is never closed). */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "qnnset.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_set[PATH_MAX];      /* the process's set, "" before the first */
static char g_set_by[PATH_MAX];   /* what decided it: "the QNN set" or "the backend" */

/* Claims `dir` (resolved) for the process; 0, or HTPU_EINVAL naming both sets. `set`: the
 * set read from dir (NULL when it is none), whose stub must not be taken by another release's
 * already (loaded.c); checked after the one-set rule, which says more when both apply. */
static int claim(const char *dir, const char *by, const htpu_qnn_set *set) {
  pthread_mutex_lock(&g_lock);
  int rc = 0;
  if (!g_set[0]) {
    rc = set ? qnnset_check_loaded_stub(set) : 0;
    if (!rc) {
      snprintf(g_set, sizeof g_set, "%s", dir);
      snprintf(g_set_by, sizeof g_set_by, "%s", by);
    }
  } else if (strcmp(g_set, dir) != 0) {
    rc = htpu_set_error(HTPU_EINVAL, 0,
                        "this process already uses the QNN set in '%s' (%s of its first "
                        "runtime), and the DSP keeps the first configuration for the life of "
                        "the process: the set in '%s' needs another OS process (docs/board.md, "
                        "\"QNN sets\")",
                        g_set, g_set_by, dir);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

void qnnset_claimed(char *out, size_t len) {
  pthread_mutex_lock(&g_lock);
  snprintf(out, len, "%s", g_set);
  pthread_mutex_unlock(&g_lock);
}

/* The set's stub (of the arch it is judged by: layout.c), opened by full path: the backend
 * opens its stub by name, and the dynamic loader answers that with the copy already loaded
 * (matched by its soname), so the set's own stub is used whatever the library search path
 * holds, also for a backend without an RPATH of its own folder. The board's test-only stubs
 * (libQnnHtpV68CalculatorStub.so) and other archs' are left alone. */
static int open_stub(const htpu_qnn_set *s) {
  if (dlopen(s->stub, RTLD_NOW | RTLD_LOCAL)) return 0;
  return htpu_set_error(HTPU_ELOAD_BACKEND, 0, "opening the QNN set's stub '%s': %s", s->stub,
                        dlerror());
}

static int apply_set(const htpu_runtime_options *in, qnnset_options *out) {
  htpu_qnn_set *s = &out->set;
  if (htpu_qnn_set_inspect(in->qnn_set, s)) return HTPU_EINVAL;
  /* the libraries left at their defaults, or naming the set's own */
  const char *bl = in->backend_lib ? in->backend_lib : HTPU_DEFAULT_BACKEND_LIB;
  const char *sl = in->system_lib ? in->system_lib : HTPU_DEFAULT_SYSTEM_LIB;
  if ((strcmp(bl, HTPU_DEFAULT_BACKEND_LIB) && strcmp(bl, s->backend_lib)) ||
      (strcmp(sl, HTPU_DEFAULT_SYSTEM_LIB) && strcmp(sl, s->system_lib)))
    return htpu_set_error(HTPU_EINVAL, 0,
                          "qnn_set '%s' and another backend_lib or system_lib both given: the "
                          "set names its own libraries; leave them at their defaults",
                          in->qnn_set);
  if (!s->complete || !s->consistent)
    return htpu_set_error(HTPU_EINVAL, 0, "the QNN set in '%s' cannot be used: %s", s->dir,
                          s->note);
  int rc = claim(s->dir, "the QNN set", s);
  if (!rc) rc = open_stub(s);
  if (rc) return rc;
  out->opts.backend_lib = s->backend_lib;
  out->opts.system_lib = s->system_lib;
  if (!in->dsp_library_path) out->opts.dsp_library_path = s->skel_dir;
  return 0;
}

int qnnset_apply(const htpu_runtime_options *in, qnnset_options *out) {
  out->opts = *in;
  if (in->qnn_set) return apply_set(in, out);
  /* Without a set: a libQnnHtp.so decides the process's set by its folder. Other backends
   * (the reference, QNN's CPU backend) configure no DSP and are not checked; neither is a
   * path that does not resolve (its load fails before any QNN call). */
  const char *lib = in->backend_lib ? in->backend_lib : HTPU_DEFAULT_BACKEND_LIB;
  const char *base = strrchr(lib, '/');
  char real[PATH_MAX];
  if (strcmp(base ? base + 1 : lib, "libQnnHtp.so") != 0 || !realpath(lib, real)) return 0;
  char *slash = strrchr(real, '/');
  if (slash && slash != real) *slash = '\0';
  /* its folder read as a set for its stub: one of another release loaded already is refused */
  return claim(real, "the backend", qnnset_read(real, &out->set) == 0 ? &out->set : NULL);
}
