/*
 * doctor.c - `htpu doctor`: the first thing to run on a board. Checks, in the order a load
 * goes through them, the DSP environment, the library files, the board's FastRPC plumbing (only
 * for the HTP backend), then opens a runtime and reports what the loader found.
 *
 * Human output prints each step as soon as it is known (a hang or crash in the QNN libraries
 * then shows where it happened); --json collects the steps and prints one document at the end.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "hexagon_tpu.h"
#include "json.h"
#include "util.h"

/* QNN error codes the hints know about (the low 16 bits; see docs/abi.md). */
#define QNN_NOT_SUPPORTED 1000u
#define QNN_SYSTEM_COMMUNICATION 1007u
#define QNN_INCOMPATIBLE_BINARIES 1008u
#define QNN_SYSTEM_COMMUNICATION_FATAL 1011u
#define QNN_BACKEND_CANNOT_INITIALIZE 4000u
#define QNN_DEVICE_INVALID_CONFIG 14001u
#define QNN_DEVICE_HW_UNAVAILABLE 14002u

/* fastrpc appends these to DSP_LIBRARY_PATH (qualcomm/fastrpc DEFAULT_DSP_SEARCH_PATHS). */
static const char *const k_fastrpc_default_dirs[] = {"/usr/lib/rfsa/adsp", "/usr/lib/dsp"};
/* QCS6490 is HTP v68: its skel/stub pair. */
#define BOARD_SKEL "libQnnHtpV68Skel.so"
#define BOARD_STUB "libQnnHtpV68Stub.so"

typedef enum { ST_OK, ST_WARN, ST_FAIL, ST_SKIP } step_status;

static const char *status_tag(step_status s) {
  static const char *const tags[] = {"[ ok ]", "[warn]", "[FAIL]", "[skip]"};
  return tags[s];
}

static const char *status_word(step_status s) {
  static const char *const words[] = {"ok", "warn", "fail", "skip"};
  return words[s];
}

#define MAX_DETAILS 16
#define MAX_STEPS 16

typedef enum { D_STR, D_NULL, D_UINT, D_BOOL } detail_kind;

/* One fact of a step: `label` is shown to humans, `key` (snake_case) is the JSON member. */
typedef struct detail {
  const char *label;
  const char *key;
  detail_kind kind;
  char str[1024]; /* human rendering (and the JSON value of D_STR) */
  uint64_t u;
} detail;

typedef struct step {
  const char *key;  /* stable snake_case id, the JSON "name" */
  const char *name; /* shown to humans */
  step_status status;
  char message[8192]; /* the staged runtime message may carry several QNN log lines */
  char hint[1024];
  int num_details;
  detail details[MAX_DETAILS];
} step;

typedef struct doctor {
  int json;
  int num_steps;
  int num_failed, num_warned;
  step steps[MAX_STEPS];
} doctor;

/* ---- building steps ---- */

static step *step_begin(doctor *d, const char *key, const char *name) {
  if (d->num_steps == MAX_STEPS) abort(); /* fixed list of steps below: a bug if exceeded */
  step *s = &d->steps[d->num_steps++];
  memset(s, 0, sizeof(*s));
  s->key = key;
  s->name = name;
  s->status = ST_OK;
  return s;
}

static void set_message(step *s, step_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_message(step *s, step_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->message, sizeof(s->message), fmt, ap);
  va_end(ap);
  s->status = st;
}

static void set_hint(step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_hint(step *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->hint, sizeof(s->hint), fmt, ap);
  va_end(ap);
}

static detail *add_detail(step *s, const char *label, const char *key, detail_kind kind) {
  if (s->num_details == MAX_DETAILS) abort(); /* fixed keys below: a bug if exceeded */
  detail *x = &s->details[s->num_details++];
  x->label = label;
  x->key = key;
  x->kind = kind;
  return x;
}

/* Truncating copy (paths longer than a detail are cut, never overflow). */
static void copy_str(char *dst, size_t len, const char *src) {
  size_t n = strlen(src);
  if (n >= len) n = len - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* NULL value: JSON null, "(unset)" for humans. */
static void detail_str(step *s, const char *label, const char *key, const char *value) {
  detail *x = add_detail(s, label, key, value ? D_STR : D_NULL);
  copy_str(x->str, sizeof(x->str), value ? value : "(unset)");
}

/* A number in JSON, `shown` for humans. */
static void detail_uint(step *s, const char *label, const char *key, uint64_t v,
                        const char *shown) {
  detail *x = add_detail(s, label, key, D_UINT);
  x->u = v;
  copy_str(x->str, sizeof(x->str), shown);
}

static void detail_bool(step *s, const char *label, const char *key, int v) {
  detail *x = add_detail(s, label, key, D_BOOL);
  x->u = v != 0;
  copy_str(x->str, sizeof(x->str), v ? "yes" : "no");
}

static void detail_version(step *s, const char *label, const char *key, htpu_version3 v) {
  char buf[48];
  cli_format_version(v, buf, sizeof(buf));
  detail_str(s, label, key, buf);
}

/* Prints continuation lines of a multi-line text under the step, indented. */
static void print_indented(const char *label, const char *text) {
  const char *p = text;
  int first = 1;
  while (*p) {
    const char *nl = strchr(p, '\n');
    int n = nl ? (int)(nl - p) : (int)strlen(p);
    printf("       %s%.*s\n", first ? label : "", n, p);
    if (first) label = "";
    first = 0;
    p += n + (nl ? 1 : 0);
  }
}

static void step_end(doctor *d, step *s) {
  if (s->status == ST_FAIL) d->num_failed++;
  if (s->status == ST_WARN) d->num_warned++;
  if (d->json) return;
  const char *nl = strchr(s->message, '\n');
  int first_len = nl ? (int)(nl - s->message) : (int)strlen(s->message);
  printf("%s %s: %.*s\n", status_tag(s->status), s->name, first_len, s->message);
  if (nl) print_indented("", nl + 1);
  size_t w = 0;
  for (int i = 0; i < s->num_details; i++)
    if (strlen(s->details[i].label) > w) w = strlen(s->details[i].label);
  for (int i = 0; i < s->num_details; i++)
    printf("       %-*s  %s\n", (int)w, s->details[i].label, s->details[i].str);
  if (s->hint[0]) print_indented("hint: ", s->hint);
  fflush(stdout);
}

/* ---- environment ---- */

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The board's HTP backend is libQnnHtp.so; the FastRPC/skel checks only make sense for it. */
static int is_board_backend(const char *backend) {
  const char *base = strrchr(backend, '/');
  base = base ? base + 1 : backend;
  return strcmp(base, "libQnnHtp.so") == 0;
}

static void fill_environment(step *s, const char *backend, const char *dsp_opt) {
  const char *dsp = getenv("DSP_LIBRARY_PATH");
  const char *adsp = getenv("ADSP_LIBRARY_PATH");
  detail_str(s, "DSP_LIBRARY_PATH", "DSP_LIBRARY_PATH", dsp);
  detail_str(s, "ADSP_LIBRARY_PATH", "ADSP_LIBRARY_PATH", adsp);
  if (dsp_opt) detail_str(s, "--dsp-library-path", "dsp_library_path_option", dsp_opt);

  if (dsp_opt) {
    if (!is_dir(dsp_opt)) {
      set_message(s, ST_FAIL, "--dsp-library-path %s is not a directory", dsp_opt);
      return;
    }
    set_message(s, ST_OK, "DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH will be set to %s", dsp_opt);
    return;
  }
  if (!is_board_backend(backend)) {
    set_message(s, ST_OK, "%s", (dsp || adsp) ? "set" : "unset (not needed for this backend)");
    return;
  }
  if (!dsp || !adsp) {
    set_message(s, ST_WARN, "%s unset: the HTP backend may not find its DSP skel",
                !dsp && !adsp ? "DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH are"
                : !dsp        ? "DSP_LIBRARY_PATH is"
                              : "ADSP_LIBRARY_PATH is");
    set_hint(s, "export DSP_LIBRARY_PATH=/usr/lib/dsp ADSP_LIBRARY_PATH=/usr/lib/dsp (the image "
                "sets both in erlinit.config and /etc/profile.d/qcom-npu-env.sh), or pass "
                "--dsp-library-path /usr/lib/dsp");
    return;
  }
  if (strstr(dsp, "onnxruntime-qnn") || strstr(adsp, "onnxruntime-qnn")) {
    set_message(s, ST_WARN, "the DSP search path includes the onnxruntime-qnn QNN set");
    set_hint(s,
             "that skel belongs to a different QNN version than %s; a mismatched skel fails "
             "device creation with 14001. Put /usr/lib/dsp first.",
             backend);
    return;
  }
  set_message(s, ST_OK, "set");
}

static void check_environment(doctor *d, const char *backend, const char *dsp_opt) {
  step *s = step_begin(d, "environment", "environment");
  fill_environment(s, backend, dsp_opt);
  step_end(d, s);
}

/* ---- library files ---- */

/* Returns whether the library is usable. */
static int fill_library(step *s, const char *option, const char *what, const char *path,
                        const char *symbol) {
  detail_str(s, "path", "path", path);
  struct stat st;
  /* dlopen searches the linker path for a bare name, so only paths with a '/' are stat'ed. */
  if (strchr(path, '/') && stat(path, &st) != 0) {
    set_message(s, ST_FAIL, "%s: %s", path, strerror(errno));
    set_hint(s, "give the library's path with --%s", option);
    return 0;
  }
  dlerror();
  /* RTLD_LAZY: this only proves the file and its DT_NEEDED dependencies resolve; the runtime
   * opens it again with its own flags. RTLD_NODELETE: the runtime must get this same mapping,
   * not an unload + reload (QNN reports reloads as LOADING_BINARIES, 1009, and unloading C++
   * libraries with live static state is fragile). */
  void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) {
    const char *e = dlerror();
    set_message(s, ST_FAIL, "%s does not load: %s", path, e ? e : "unknown dlopen error");
    set_hint(s,
             "check its dependencies with `ldd %s` (the board's QNN libraries need "
             "libstdc++.so.6 and libgcc_s.so.1; the HTP stub needs libcdsprpc.so)",
             path);
    return 0;
  }
  void *sym = dlsym(h, symbol);
  if (!sym) {
    set_message(s, ST_FAIL, "%s loads but has no %s: not a QNN %s", path, symbol, what);
  } else {
    set_message(s, ST_OK, "loads, %s found", symbol);
  }
  dlclose(h);
  return sym != NULL;
}

static int check_library(doctor *d, const char *key, const char *name, const char *option,
                         const char *what, const char *path, const char *symbol) {
  step *s = step_begin(d, key, name);
  int usable = fill_library(s, option, what, path, symbol);
  step_end(d, s);
  return usable;
}

/* ---- board plumbing (HTP backend only) ---- */

static int process_running(const char *comm_name) {
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(proc))) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char p[300], comm[64] = "";
    snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    if (fgets(comm, sizeof(comm), f)) {
      comm[strcspn(comm, "\n")] = '\0';
      found = strcmp(comm, comm_name) == 0;
    }
    fclose(f);
  }
  closedir(proc);
  return found;
}

static int file_exists(const char *dir, const char *name) {
  char p[4096];
  int n = snprintf(p, sizeof(p), "%s/%s", dir, name);
  return n > 0 && (size_t)n < sizeof(p) && access(p, F_OK) == 0;
}

/* The first directory of the fastrpc search order holding `name`: the env value
 * (';'-separated, order matters) followed by fastrpc's compiled-in defaults. */
static int find_in_dsp_path(const char *search, const char *name, char *out, size_t len) {
  if (search) {
    char *copy = strdup(search);
    if (!copy) return 0;
    char *save = NULL;
    for (char *dir = strtok_r(copy, ";", &save); dir; dir = strtok_r(NULL, ";", &save)) {
      if (dir[0] && file_exists(dir, name)) {
        snprintf(out, len, "%s", dir);
        free(copy);
        return 1;
      }
    }
    free(copy);
  }
  for (size_t i = 0; i < sizeof(k_fastrpc_default_dirs) / sizeof(k_fastrpc_default_dirs[0]); i++) {
    if (file_exists(k_fastrpc_default_dirs[i], name)) {
      snprintf(out, len, "%s", k_fastrpc_default_dirs[i]);
      return 1;
    }
  }
  return 0;
}

static void check_board(doctor *d, const char *backend, const char *dsp_opt) {
  step *s = step_begin(d, "fastrpc", "fastrpc");
  const char *dev = "/dev/fastrpc-cdsp";
  int dev_ok = access(dev, R_OK | W_OK) == 0;
  int dev_exists = access(dev, F_OK) == 0;
  int daemon = process_running("cdsprpcd");
  dlerror();
  /* NODELETE: libcdsprpc sets FastRPC up in its constructor; keep that state for the stub. */
  void *rpc = dlopen("libcdsprpc.so", RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  const char *rpc_err = rpc ? NULL : dlerror();
  detail_str(s, dev, "fastrpc_device",
             dev_ok       ? "read/write"
             : dev_exists ? "not accessible"
                          : "missing");
  detail_str(s, "cdsprpcd", "cdsprpcd", daemon ? "running" : "not running");
  detail_str(s, "libcdsprpc.so", "libcdsprpc",
             rpc ? "loads" : (rpc_err ? rpc_err : "does not load"));
  if (rpc) dlclose(rpc);
  if (!dev_exists || !rpc) {
    set_message(s, ST_FAIL, "%s",
                !dev_exists ? "no CDSP FastRPC device" : "libcdsprpc.so does not load");
    set_hint(s, "the CDSP remoteproc must be running (/sys/class/remoteproc/*/state) and "
                "qcom-fastrpc installed; qcom-coldplug.sh starts both at boot");
  } else if (!dev_ok) {
    set_message(s, ST_FAIL, "%s is not readable and writable by this user", dev);
    set_hint(s, "the image's udev rule 99-qcom-npu.rules makes fastrpc-* mode 0666");
  } else if (!daemon) {
    set_message(s, ST_WARN, "cdsprpcd is not running");
    set_hint(s, "qcom-coldplug.sh starts it after /dev/fastrpc-cdsp appears; right after boot "
                "the first session can fail with 0x72 until it is up: wait and retry");
  } else {
    set_message(s, ST_OK, "CDSP device and daemon present");
  }
  step_end(d, s);

  s = step_begin(d, "dsp_libraries", "dsp libraries");
  const char *search = dsp_opt ? dsp_opt : getenv("DSP_LIBRARY_PATH");
  char skel_dir[4096], stub_dir[4096];
  int skel = find_in_dsp_path(search, BOARD_SKEL, skel_dir, sizeof(skel_dir));
  /* the stub is dlopen'ed by the backend through the linker path; next to it is where the
   * image installs it */
  snprintf(stub_dir, sizeof(stub_dir), "%s", backend);
  char *slash = strrchr(stub_dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(stub_dir, sizeof(stub_dir), "/usr/lib");
  int stub = file_exists(stub_dir, BOARD_STUB);
  detail_str(s, BOARD_SKEL, "skel_dir", skel ? skel_dir : "not found in the DSP search path");
  detail_str(s, BOARD_STUB, "stub_dir", stub ? stub_dir : "not found next to the backend");
  if (!skel) {
    set_message(s, ST_FAIL, "%s not found (QCS6490 is HTP v68)", BOARD_SKEL);
    set_hint(s, "point DSP_LIBRARY_PATH at the QAIRT skel directory (/usr/lib/dsp on the image)");
  } else if (strstr(skel_dir, "onnxruntime-qnn")) {
    set_message(s, ST_WARN, "the first %s in the search path is the onnxruntime-qnn copy",
                BOARD_SKEL);
    set_hint(s,
             "the skel must come from the same QAIRT release as %s, else device creation "
             "fails with 14001",
             backend);
  } else if (!stub) {
    set_message(s, ST_WARN, "%s is not next to %s", BOARD_STUB, backend);
    set_hint(s, "the backend dlopens the stub by name: it must be on the linker path and from "
                "the same QAIRT release");
  } else {
    set_message(s, ST_OK, "v68 skel and stub found");
  }
  step_end(d, s);
}

/* ---- runtime ---- */

static void runtime_hint(step *s, int rc, uint32_t qnn, const char *backend) {
  switch (rc) {
  case HTPU_ELOAD_BACKEND:
  case HTPU_ELOAD_SYSTEM:
    set_hint(s, "check the path and the library's dependencies (`ldd PATH`); on the board use "
                "/usr/lib/libQnnHtp.so and /usr/lib/libQnnSystem.so, not the onnxruntime-qnn set");
    return;
  case HTPU_ESYMBOL:
  case HTPU_ENO_PROVIDER:
    set_hint(s, "the library is not a QNN backend/system library, or a broken one");
    return;
  case HTPU_EVERSION:
    set_hint(s, "hexagon_tpu needs QNN core API >= 2.18 and System API >= 1.1 (QAIRT 2.25 or "
                "newer); the board's QAIRT 2.42 qualifies. Check which library was loaded.");
    return;
  case HTPU_EQNN: break;
  default: return;
  }
  switch (qnn) {
  case QNN_DEVICE_INVALID_CONFIG:
    set_hint(s,
             "14001 = skel/stub version mismatch: DSP_LIBRARY_PATH must point at the QAIRT "
             "2.42 skel (/usr/lib/dsp/%s), not the onnxruntime-qnn copy. The DSP keeps the "
             "first configuration for the life of the process: fix the environment and run "
             "again in a new process.",
             BOARD_SKEL);
    return;
  case QNN_DEVICE_HW_UNAVAILABLE:
    set_hint(s, "14002 = NPU unavailable: is the CDSP up (/sys/class/remoteproc/*/state), "
                "cdsprpcd running, /dev/fastrpc-cdsp accessible?");
    return;
  case QNN_INCOMPATIBLE_BINARIES:
    set_hint(s, "1008 = QNN libraries of different releases are mixed (backend, stub, skel): "
                "use one QAIRT set throughout");
    return;
  case QNN_SYSTEM_COMMUNICATION:
  case QNN_SYSTEM_COMMUNICATION_FATAL:
    set_hint(s, "the DSP restarted (subsystem restart); run again, and check dmesg for the cause");
    return;
  case QNN_BACKEND_CANNOT_INITIALIZE:
    if (is_board_backend(backend)) {
      set_hint(s, "the FastRPC session could not be opened; right after boot cdsprpcd may "
                  "still be starting (0x72 / 0xffffffff in the log): wait a few seconds and "
                  "retry");
      return;
    }
    break;
  default: break;
  }
  set_hint(s, "QNN error %" PRIu32 " (%s): %s", qnn, htpu_qnn_error_name(qnn),
           htpu_qnn_error_message(qnn));
}

/* Fills the runtime step from htpu_runtime_get_info; returns has_device, or -1. */
static int report_runtime(step *s, htpu_runtime *rt) {
  htpu_runtime_info ri;
  memset(&ri, 0, sizeof(ri));
  if (htpu_runtime_get_info(rt, &ri) != 0) {
    set_message(s, ST_FAIL, "runtime opened but htpu_runtime_get_info failed: %s",
                htpu_last_error());
    return -1;
  }
  char backend[64];
  snprintf(backend, sizeof(backend), "%" PRIu32 " (%s)", ri.backend_id,
           cli_backend_name(ri.backend_id));
  detail_str(s, "backend library", "backend_lib", ri.backend_lib);
  detail_str(s, "provider", "provider_name", ri.provider_name);
  detail_uint(s, "backend id", "backend_id", ri.backend_id, backend);
  detail_version(s, "core API", "core_api_version", ri.core_api_version);
  detail_version(s, "backend API", "backend_api_version", ri.backend_api_version);
  detail_str(s, "build id", "build_id", ri.build_id ? ri.build_id : "");
  if (!ri.build_id || !ri.build_id[0]) /* "" in JSON, visible for humans */
    copy_str(s->details[s->num_details - 1].str, sizeof(s->details[0].str), "(none)");
  detail_str(s, "system library", "system_lib", ri.system_lib);
  detail_str(s, "system provider", "system_provider_name", ri.system_provider_name);
  detail_version(s, "system API", "system_api_version", ri.system_api_version);
  detail_bool(s, "device created", "has_device", ri.has_device);
  detail_str(s, "DSP_LIBRARY_PATH in effect", "dsp_library_path",
             ri.dsp_library_path && ri.dsp_library_path[0] ? ri.dsp_library_path : NULL);
  set_message(s, ST_OK, "%s, core API %" PRIu32 ".%" PRIu32 ".%" PRIu32,
              ri.provider_name ? ri.provider_name : "(no name)", ri.core_api_version.major,
              ri.core_api_version.minor, ri.core_api_version.patch);
  return ri.has_device != 0;
}

/* Whether a QNN error can come from deviceCreate: the device range, or a common code
 * (NOT_SUPPORTED is how a backend without devices answers). htpu_last_error() names the stage
 * only in prose, so this is decided by the code; a backend-stage failure with a common code is
 * retried too, but then fails again deterministically and is reported as the runtime failure. */
static int could_be_device_stage(uint32_t qnn) {
  return (qnn >= 14000 && qnn < 15000) || (qnn >= 1000 && qnn < 2000);
}

/* Opens the runtime as a user of the library would. A backend without devices (the Saver, a
 * CPU backend) fails device creation; for those we retry with skip_device to tell "no device"
 * apart from "broken". Not on the board's HTP backend: there a failed device creation means a
 * poisoned DSP configuration, and a second backendCreate in the same process has taken the
 * whole process down on this board (platform notes 1.4). */
static void check_runtime(doctor *d, const htpu_runtime_options *base) {
  step *s = step_begin(d, "runtime", "runtime");
  htpu_runtime_options ro = *base;
  htpu_runtime *rt = NULL;
  int rc = htpu_runtime_open(&ro, &rt);
  if (rc == 0) {
    int has = report_runtime(s, rt);
    htpu_runtime_close(&rt);
    step_end(d, s);
    step *dev = step_begin(d, "device", "device");
    if (has < 0) {
      set_message(dev, ST_SKIP, "runtime information unavailable");
    } else {
      if (has)
        set_message(dev, ST_OK, "QNN device created");
      else if (is_board_backend(base->backend_lib))
        set_message(dev, ST_FAIL, "the HTP backend created no device");
      else
        set_message(dev, ST_OK, "backend has no device");
    }
    step_end(d, dev);
    return;
  }

  char first_msg[sizeof(s->message)];
  snprintf(first_msg, sizeof(first_msg), "%s", htpu_last_error());
  uint32_t first_qnn = htpu_last_qnn_code();

  if (rc == HTPU_EQNN && could_be_device_stage(first_qnn) && !is_board_backend(base->backend_lib)) {
    ro.skip_device = 1;
    if (htpu_runtime_open(&ro, &rt) == 0) {
      (void)report_runtime(s, rt);
      htpu_runtime_close(&rt);
      step_end(d, s);
      step *dev = step_begin(d, "device", "device");
      if (first_qnn == QNN_NOT_SUPPORTED) {
        set_message(dev, ST_OK, "backend has no device (device creation: %s)",
                    htpu_qnn_error_name(first_qnn));
      } else {
        set_message(dev, ST_FAIL, "%s: %s", htpu_err_name(rc), first_msg);
        runtime_hint(dev, rc, first_qnn, base->backend_lib);
        char qnn_hint[sizeof(dev->hint)];
        snprintf(qnn_hint, sizeof(qnn_hint), "%s", dev->hint);
        set_hint(dev,
                 "%s%sthe runtime opens without a device (skip_device); models that need "
                 "one will not run",
                 qnn_hint, qnn_hint[0] ? "\n" : "");
      }
      step_end(d, dev);
      return;
    }
  }
  set_message(s, ST_FAIL, "%s: %s", htpu_err_name(rc),
              first_msg[0] ? first_msg : htpu_strerror(rc));
  runtime_hint(s, rc, first_qnn, base->backend_lib);
  step_end(d, s);
}

/* ---- JSON ---- */

static void print_json(const doctor *d) {
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_object_begin(&j, NULL);
  cli_json_string(&j, "schema", "htpu.doctor/1");
  cli_json_string(&j, "htpu_version", HTPU_VERSION_STRING);
  cli_json_bool(&j, "ok", d->num_failed == 0);
  cli_json_uint(&j, "failed", (uint64_t)d->num_failed);
  cli_json_uint(&j, "warnings", (uint64_t)d->num_warned);
  cli_json_array_begin(&j, "steps", 0);
  for (int i = 0; i < d->num_steps; i++) {
    const step *s = &d->steps[i];
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "name", s->key);
    cli_json_string(&j, "status", status_word(s->status));
    cli_json_string(&j, "message", s->message);
    cli_json_string(&j, "hint", s->hint[0] ? s->hint : NULL);
    cli_json_object_begin(&j, "details");
    for (int k = 0; k < s->num_details; k++) {
      const detail *x = &s->details[k];
      switch (x->kind) {
      case D_STR: cli_json_string(&j, x->key, x->str); break;
      case D_NULL: cli_json_null(&j, x->key); break;
      case D_UINT: cli_json_uint(&j, x->key, x->u); break;
      case D_BOOL: cli_json_bool(&j, x->key, (int)x->u); break;
      }
    }
    cli_json_object_end(&j);
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  cli_json_object_end(&j);
  cli_json_finish(&j);
}

/* ---- command ---- */

static int run_doctor(const cli_args *a) {
  char backend_buf[4096], system_buf[4096];
  int failed = 0;
  const char *backend = cli_resolve_lib(cli_get(a, "backend"), CLI_REFERENCE_BACKEND, backend_buf,
                                        sizeof(backend_buf), &failed);
  if (failed) return CLI_EXIT_FAIL;
  const char *system_lib = cli_resolve_lib(cli_get(a, "system-lib"), CLI_REFERENCE_SYSTEM,
                                           system_buf, sizeof(system_buf), &failed);
  if (failed) return CLI_EXIT_FAIL;
  const char *dsp_opt = cli_get(a, "dsp-library-path");

  htpu_runtime_options ro;
  htpu_runtime_options_init(&ro);
  if (backend) ro.backend_lib = backend;
  if (system_lib) ro.system_lib = system_lib;
  if (dsp_opt) ro.dsp_library_path = dsp_opt;

  doctor *d = calloc(1, sizeof(*d));
  if (!d) return cli_fail(a->cmd, "out of memory");
  d->json = cli_has(a, "json");
  if (!d->json) printf("htpu doctor %s\n", HTPU_VERSION_STRING);

  check_environment(d, ro.backend_lib, dsp_opt);
  int backend_ok = check_library(d, "backend_library", "backend library", "backend", "backend",
                                 ro.backend_lib, "QnnInterface_getProviders");
  int system_ok = check_library(d, "system_library", "system library", "system-lib",
                                "system library", ro.system_lib, "QnnSystemInterface_getProviders");
  if (is_board_backend(ro.backend_lib)) check_board(d, ro.backend_lib, dsp_opt);

  if (backend_ok && system_ok && d->num_failed == 0) {
    check_runtime(d, &ro);
  } else {
    /* The runtime would only repeat the failure above; on the board a backendCreate with a
     * known-bad setup can also poison the DSP configuration for this process. */
    step *s = step_begin(d, "runtime", "runtime");
    set_message(s, ST_SKIP, "not attempted: fix the failures above first");
    step_end(d, s);
  }

  int rc = d->num_failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
  if (d->json) {
    print_json(d);
  } else if (d->num_failed) {
    printf("%d check%s failed\n", d->num_failed, d->num_failed == 1 ? "" : "s");
  } else {
    printf("all checks passed%s\n", d->num_warned ? " (with warnings)" : "");
  }
  if (d->num_failed)
    fprintf(stderr, "htpu doctor: %d check%s failed\n", d->num_failed,
            d->num_failed == 1 ? "" : "s");
  free(d);
  return rc;
}

static const cli_option doctor_options[] = {
    {"backend", "PATH",
     "QNN backend library (default " HTPU_DEFAULT_BACKEND_LIB "; 'reference' = the reference "
     "backend)",
     0},
    {"system-lib", "PATH",
     "QNN system library (default " HTPU_DEFAULT_SYSTEM_LIB "; 'reference' = the reference "
     "system library)",
     0},
    {"dsp-library-path", "DIR",
     "set DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH to DIR before the backend is created", 0},
    {"json", NULL, "print the report as JSON (schema htpu.doctor/1, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_doctor = {
    .name = "doctor",
    .synopsis = "[--backend PATH|reference] [--system-lib PATH|reference] "
                "[--dsp-library-path DIR] [--json]",
    .summary = "check the environment, the QNN libraries and the NPU, step by step",
    .description =
        "Run this first on a board. Each step prints ok, warn, FAIL or skip:\n"
        "  environment      DSP_LIBRARY_PATH / ADSP_LIBRARY_PATH (needed by the HTP backend)\n"
        "  backend library  the file exists, loads and exports QnnInterface_getProviders\n"
        "  system library   the same for QnnSystemInterface_getProviders\n"
        "  fastrpc          HTP backend only: /dev/fastrpc-cdsp, cdsprpcd, libcdsprpc.so\n"
        "  dsp libraries    HTP backend only: the v68 skel in the DSP search path, the stub\n"
        "  runtime          htpu_runtime_open: provider, backend id, API versions, build id,\n"
        "                   system provider and API version\n"
        "  device           whether a QNN device was created (\"backend has no device\" for\n"
        "                   backends without one)\n"
        "Failures carry the library's message and a hint. Exit 0 when nothing failed.\n",
    .options = doctor_options,
    .min_positional = 0,
    .max_positional = 0,
    .run = run_doctor,
};
