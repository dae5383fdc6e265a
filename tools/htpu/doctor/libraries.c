/* libraries.c - the `backend_library` and `system_library` steps: each file exists, loads and
 * exports its QNN entry point. */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "doctor.h"

/* Returns whether the library is usable. */
static int judge_library(step *s, const char *option, const char *what, const char *path,
                         const char *symbol) {
  step_str(s, "path", "path", path);
  struct stat st;
  /* dlopen searches the linker path for a bare name, so only paths with a '/' are stat'ed. */
  if (strchr(path, '/') && stat(path, &st) != 0) {
    step_set(s, ST_FAIL, "%s: %s", path, strerror(errno));
    step_hint(s, "give the library's path with --%s", option);
    return 0;
  }
  dlerror();
  /* RTLD_LAZY: this only proves the file and its DT_NEEDED dependencies resolve; the runtime
   * opens it again with its own flags. RTLD_NODELETE: the provider probe and the runtime must
   * get this same mapping, not an unload + reload (QNN reports reloads as LOADING_BINARIES,
   * 1009, and unloading C++ libraries with live static state is fragile). */
  void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) {
    const char *e = dlerror();
    step_set(s, ST_FAIL, "%s does not load: %s", path, e ? e : "unknown dlopen error");
    step_hint(s,
              "check its dependencies with `ldd %s` (the board's QNN libraries need "
              "libstdc++.so.6 and libgcc_s.so.1; the HTP stub needs libcdsprpc.so)",
              path);
    return 0;
  }
  void *sym = dlsym(h, symbol);
  if (!sym)
    step_set(s, ST_FAIL, "%s loads but has no %s: not a QNN %s", path, symbol, what);
  else
    step_set(s, ST_OK, "loads, %s found", symbol);
  dlclose(h);
  return sym != NULL;
}

void check_backend_library(doctor *d) {
  step *s = report_begin(&d->rep, "backend_library", "backend library");
  d->backend_loads =
      judge_library(s, "backend", "backend", d->ro.backend_lib, "QnnInterface_getProviders");
  report_end(&d->rep, s);
}

void check_system_library(doctor *d) {
  step *s = report_begin(&d->rep, "system_library", "system library");
  d->system_loads = judge_library(s, "system-lib", "system library", d->ro.system_lib,
                                  "QnnSystemInterface_getProviders");
  report_end(&d->rep, s);
}
