/*
 * release.c - what a QAIRT release's backend does with its stub and skel, for the fake
 * releases the tests build (mk/qnnsets.mk: this backend with RB_RELEASE_BUILD_ID set).
 *
 * A real libQnnHtp.so opens its stub by name (libQnnHtpV68Stub.so) when the device is
 * created, and the stub loads the skel the DSP finds first in DSP_LIBRARY_PATH; a stub or skel
 * of another release fails device creation with QNN_DEVICE_ERROR_INVALID_CONFIG (14001, the
 * board's symptom). The fake release does the same with what it can see on the host: the stub
 * by name as the dynamic loader finds it for a library with QAIRT's RPATH $ORIGIN (one loaded
 * under that soname first, whoever loaded it; else the one beside it), and the skel as the
 * first file of that name in the
 * ';'-separated DSP_LIBRARY_PATH; both must carry its build id. The ordinary reference backend
 * (no release) checks nothing.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_id_scan.h"
#include "rb_internal.h"

#ifdef RB_RELEASE_BUILD_ID

#define STUB_NAME "libQnnHtpV68Stub.so"
#define SKEL_NAME "libQnnHtpV68Skel.so"

/* The first skel in the DSP search path, as FastRPC searches it. 1 found, 0 none. */
static int find_skel(char *path, size_t len) {
  const char *p = getenv("DSP_LIBRARY_PATH");
  while (p && *p) {
    size_t n = strcspn(p, ";");
    if (n && (size_t)snprintf(path, len, "%.*s/%s", (int)n, p, SKEL_NAME) < len) {
      FILE *f = fopen(path, "rb");
      if (f) {
        fclose(f);
        return 1;
      }
    }
    p += n + (p[n] == ';');
  }
  return 0;
}

static qnn_error_t check_skel(rb_log *log) {
  char path[PATH_MAX], id[BUILD_ID_SCAN_MAX + 1] = "";
  if (!find_skel(path, sizeof path)) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: no %s in DSP_LIBRARY_PATH '%s'",
            SKEL_NAME, getenv("DSP_LIBRARY_PATH") ? getenv("DSP_LIBRARY_PATH") : "");
    return QNN_DEVICE_ERROR_INVALID_CONFIG;
  }
  FILE *f = fopen(path, "rb");
  if (f) {
    if (!build_id_scan(f, id, sizeof id)) id[0] = '\0';
    fclose(f);
  }
  if (strcmp(id, RB_BUILD_ID) != 0) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: the skel %s is %s, not this release's %s",
            path, id[0] ? id : "(no build id)", RB_BUILD_ID);
    return QNN_DEVICE_ERROR_INVALID_CONFIG;
  }
  return QNN_SUCCESS;
}

/* The stub as the dynamic loader finds a name a library opens (this library carries QAIRT's
 * RPATH $ORIGIN, mk/qnnsets.mk): a library already loaded under that soname first, then beside
 * this library, then the search path. Done by hand because the sanitizers' dlopen interceptor
 * hides the calling library from glibc, which would then skip its RPATH. */
static void *open_stub(void) {
  void *h = dlopen(STUB_NAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  Dl_info self;
  if (!h && dladdr((void *)open_stub, &self) && self.dli_fname && strrchr(self.dli_fname, '/')) {
    char path[PATH_MAX];
    int n = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
    FILE *f = NULL;
    if ((size_t)snprintf(path, sizeof path, "%.*s/%s", n, self.dli_fname, STUB_NAME) <
            sizeof path &&
        (f = fopen(path, "rb")) != NULL) {
      fclose(f);
      h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
  }
  return h ? h : dlopen(STUB_NAME, RTLD_NOW | RTLD_LOCAL);
}

qnn_error_t rb_release_check(rb_log *log) {
  void *stub = open_stub();
  if (!stub) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: cannot open %s: %s", STUB_NAME, dlerror());
    return QNN_DEVICE_ERROR_INVALID_CONFIG;
  }
  const char *id = dlsym(stub, "htpu_fake_stub_build_id");
  qnn_error_t rc = QNN_SUCCESS;
  if (!id || strcmp(id, RB_BUILD_ID) != 0) {
    rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: the stub %s is %s, not this release's %s",
            STUB_NAME, id ? id : "(no build id)", RB_BUILD_ID);
    rc = QNN_DEVICE_ERROR_INVALID_CONFIG;
  }
  dlclose(stub);
  return rc == QNN_SUCCESS ? check_skel(log) : rc;
}

#else

qnn_error_t rb_release_check(rb_log *log) {
  (void)log;
  return QNN_SUCCESS;
}

#endif
