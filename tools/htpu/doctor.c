/*
 * doctor.c - `htpu doctor`: the first thing to run on a board. Checks, in the order a load
 * goes through them, the DSP environment, the library files, the board's FastRPC plumbing (only
 * for the HTP backend; skipped, not failed, for others), then opens a runtime and reports what
 * the loader found and what the device says about itself (arch, SoC, VTCM, power votes, shared
 * memory, start-up attempts).
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
#define MAX_DIRS 12

/* D_DIRS: the step's `dirs`, a JSON array of objects. */
typedef enum { D_STR, D_NULL, D_UINT, D_BOOL, D_DIRS } detail_kind;

/* One directory of the DSP library search path. */
typedef struct dir_check {
  char dir[512];
  const char *from; /* "DSP_LIBRARY_PATH", "--dsp-library-path", "fastrpc default" */
  int exists;
  int skel;
} dir_check;

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
  int num_dirs;
  dir_check dirs[MAX_DIRS];
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
  for (int i = 0; i < s->num_details; i++) {
    if (s->details[i].kind != D_DIRS) {
      printf("       %-*s  %s\n", (int)w, s->details[i].label, s->details[i].str);
      continue;
    }
    for (int k = 0; k < s->num_dirs; k++) {
      const dir_check *c = &s->dirs[k];
      printf("       %-*s  %s: %s (%s)\n", (int)w, k ? "" : s->details[i].label, c->dir,
             !c->exists ? "no such directory"
             : c->skel  ? BOARD_SKEL " present"
                        : "no " BOARD_SKEL,
             c->from);
    }
    if (!s->num_dirs) printf("       %-*s  (empty)\n", (int)w, s->details[i].label);
  }
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
    set_message(s, ST_SKIP, "not applicable: only the HTP backend (libQnnHtp.so) needs them (%s)",
                (dsp || adsp) ? "set" : "unset");
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
  if (strcmp(dsp, adsp) != 0) {
    set_message(s, ST_WARN, "DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH differ");
    set_hint(s, "set both to the same ';'-separated list, as the image does "
                "(DSP_LIBRARY_PATH=ADSP_LIBRARY_PATH=/usr/lib/dsp): the DSP side must find the "
                "same skel whichever variable is read");
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
  set_message(s, ST_OK, "both set, same value");
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

/* The fastrpc search order, one entry per directory: the given list (';'-separated, order
 * matters) followed by fastrpc's compiled-in defaults. */
static void list_dsp_path(step *s, const char *search, const char *from) {
  s->num_dirs = 0;
  char *copy = search ? strdup(search) : NULL;
  char *save = NULL;
  for (char *dir = copy ? strtok_r(copy, ";", &save) : NULL; dir && s->num_dirs < MAX_DIRS;
       dir = strtok_r(NULL, ";", &save)) {
    if (!dir[0]) continue;
    dir_check *c = &s->dirs[s->num_dirs++];
    copy_str(c->dir, sizeof(c->dir), dir);
    c->from = from;
    c->exists = is_dir(dir);
    c->skel = c->exists && file_exists(dir, BOARD_SKEL);
  }
  free(copy);
  for (size_t i = 0; i < sizeof(k_fastrpc_default_dirs) / sizeof(k_fastrpc_default_dirs[0]) &&
                     s->num_dirs < MAX_DIRS;
       i++) {
    dir_check *c = &s->dirs[s->num_dirs++];
    copy_str(c->dir, sizeof(c->dir), k_fastrpc_default_dirs[i]);
    c->from = "fastrpc default";
    c->exists = is_dir(c->dir);
    c->skel = c->exists && file_exists(c->dir, BOARD_SKEL);
  }
  add_detail(s, "search path", "search_path", D_DIRS);
}

/* Loads the FastRPC library the runtime will use for shared memory and looks for the rpcmem
 * calls. Returns 0 (usable), 1 (loads, calls missing: `why` names them), -1 (does not load). */
static int probe_fastrpc_lib(const char *path, char *why, size_t len) {
  dlerror();
  /* NODELETE: libcdsprpc sets FastRPC up in its constructor; keep that state for the stub. */
  void *rpc = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  if (!rpc) {
    const char *e = dlerror();
    snprintf(why, len, "%s", e ? e : "does not load");
    return -1;
  }
  static const char *const calls[] = {"rpcmem_alloc", "rpcmem_free", "rpcmem_to_fd"};
  size_t pos = 0;
  why[0] = '\0';
  for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
    if (dlsym(rpc, calls[i])) continue;
    int w = snprintf(why + pos, len - pos, "%s%s", pos ? ", " : "no ", calls[i]);
    if (w > 0 && (size_t)w < len - pos) pos += (size_t)w;
  }
  dlclose(rpc);
  if (pos) return 1;
  snprintf(why, len, "loads, rpcmem_alloc/rpcmem_free/rpcmem_to_fd found");
  return 0;
}

/* Not the HTP backend: the board checks do not apply. The FastRPC library is still probed
 * when --fastrpc-lib names one (shared buffers use it with any backend that registers memory). */
static void skip_board(doctor *d, const char *backend, const char *fastrpc_lib, int fastrpc_given) {
  const char *base = strrchr(backend, '/');
  base = base ? base + 1 : backend;
  step *s = step_begin(d, "fastrpc", "fastrpc");
  detail_str(s, "FastRPC library", "fastrpc_lib", fastrpc_lib);
  if (fastrpc_given) {
    char why[512];
    int r = probe_fastrpc_lib(fastrpc_lib, why, sizeof(why));
    detail_str(s, "rpcmem", "rpcmem", why);
    if (r == 0) {
      set_message(s, ST_OK, "--fastrpc-lib loads and has the rpcmem calls (device checks not "
                            "applicable to %s)", base);
    } else {
      set_message(s, ST_FAIL, "--fastrpc-lib %s: %s", fastrpc_lib, why);
      set_hint(s, "give the path of libcdsprpc.so (or 'reference' for the reference stand-in "
                  "next to htpu)");
    }
  } else {
    set_message(s, ST_SKIP, "not applicable: %s is not the HTP backend (libQnnHtp.so)", base);
  }
  step_end(d, s);
  s = step_begin(d, "dsp_libraries", "dsp libraries");
  set_message(s, ST_SKIP, "not applicable: %s loads no DSP skel", base);
  step_end(d, s);
}

static void check_board(doctor *d, const char *backend, const char *dsp_opt,
                        const char *fastrpc_lib) {
  step *s = step_begin(d, "fastrpc", "fastrpc");
  const char *dev = "/dev/fastrpc-cdsp";
  int dev_ok = access(dev, R_OK | W_OK) == 0;
  int dev_exists = access(dev, F_OK) == 0;
  int daemon = process_running("cdsprpcd");
  char why[512];
  int rpc = probe_fastrpc_lib(fastrpc_lib, why, sizeof(why));
  detail_str(s, dev, "fastrpc_device",
             dev_ok       ? "read/write"
             : dev_exists ? "not accessible"
                          : "missing");
  detail_str(s, "cdsprpcd", "cdsprpcd", daemon ? "running" : "not running");
  detail_str(s, "libcdsprpc.so", "libcdsprpc", rpc >= 0 ? "loads" : why);
  detail_str(s, "FastRPC library", "fastrpc_lib", fastrpc_lib);
  detail_str(s, "rpcmem", "rpcmem", rpc >= 0 ? why : "not loaded");
  if (!dev_exists) {
    set_message(s, ST_FAIL, "no CDSP FastRPC device (%s missing)", dev);
    set_hint(s, "the CDSP remoteproc must be running (cat /sys/class/remoteproc/*/state shows "
                "'running'); qcom-coldplug.sh loads its firmware and starts it at boot, after "
                "which /dev/fastrpc-cdsp appears");
  } else if (rpc < 0) {
    set_message(s, ST_FAIL, "%s does not load: %s", fastrpc_lib, why);
    set_hint(s, "install the fastrpc user library (qcom-fastrpc: libcdsprpc.so in /usr/lib), "
                "or give its path with --fastrpc-lib; the HTP stub needs it too");
  } else if (!dev_ok) {
    set_message(s, ST_FAIL, "%s is not readable and writable by this user", dev);
    set_hint(s, "the image's udev rule 99-qcom-npu.rules makes fastrpc-* mode 0666");
  } else if (!daemon) {
    set_message(s, ST_WARN, "cdsprpcd is not running");
    set_hint(s, "qcom-coldplug.sh starts it after /dev/fastrpc-cdsp appears; right after boot "
                "the first session can fail with 0x72 until it is up: wait and retry");
  } else if (rpc > 0) {
    set_message(s, ST_WARN, "%s loads but has %s: shared buffers will use ordinary memory",
                fastrpc_lib, why);
    set_hint(s, "point --fastrpc-lib (runtime option fastrpc_lib) at the real libcdsprpc.so");
  } else {
    set_message(s, ST_OK, "CDSP device and daemon present, %s loads", fastrpc_lib);
  }
  step_end(d, s);

  s = step_begin(d, "dsp_libraries", "dsp libraries");
  const char *search = dsp_opt ? dsp_opt : getenv("DSP_LIBRARY_PATH");
  char skel_dir[4096], stub_dir[4096];
  int skel = find_in_dsp_path(search, BOARD_SKEL, skel_dir, sizeof(skel_dir));
  list_dsp_path(s, search, dsp_opt ? "--dsp-library-path" : "DSP_LIBRARY_PATH");
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
    set_hint(s, "point DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH at the directory holding the "
                "QAIRT 2.42 skel (/usr/lib/dsp on the image), or install the QAIRT DSP "
                "libraries there; none of the directories listed above has it");
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

/* What the open runtime said about the device, kept for the device and shared_memory steps
 * (the runtime is closed before they are printed). */
typedef struct device_facts_seen {
  int has_device;
  uint32_t arch, soc_model, vtcm_mb, startup_attempts;
  int has_perf, has_shared;
  char perf_profile[64];
  char note[1024];      /* the test buffer's htpu_shared_note, else shared_memory_note */
  int alloc_rc;         /* htpu_shared_alloc of the test buffer */
  int alloc_fastrpc;    /* ... and whether it is FastRPC memory */
  char alloc_err[512];
} device_facts_seen;

#define SHARED_TEST_BYTES 4096u

/* Fills the runtime step from htpu_runtime_get_info, and `f` for the device steps (with a test
 * allocation of shared memory); returns has_device, or -1. */
static int report_runtime(step *s, htpu_runtime *rt, device_facts_seen *f) {
  htpu_runtime_info ri;
  memset(&ri, 0, sizeof(ri));
  memset(f, 0, sizeof(*f));
  if (htpu_runtime_get_info(rt, &ri) != 0) {
    set_message(s, ST_FAIL, "runtime opened but htpu_runtime_get_info failed: %s",
                htpu_last_error());
    return -1;
  }
  f->has_device = ri.has_device != 0;
  f->arch = ri.device_arch;
  f->soc_model = ri.device_soc_model;
  f->vtcm_mb = (uint32_t)(ri.device_vtcm_bytes / 1048576u); /* shown in whole MB */
  f->startup_attempts = ri.startup_attempts;
  f->has_perf = ri.has_perf_infrastructure != 0;
  f->has_shared = ri.has_shared_memory != 0;
  const char *pp = htpu_perf_profile_name(ri.perf_profile);
  copy_str(f->perf_profile, sizeof(f->perf_profile), pp ? pp : "unknown");
  copy_str(f->note, sizeof(f->note), ri.shared_memory_note ? ri.shared_memory_note : "");
  if (f->has_device) {
    /* rpcmem only works once a FastRPC session is open: a real allocation is the test */
    htpu_shared *buf = NULL;
    f->alloc_rc = htpu_shared_alloc(rt, SHARED_TEST_BYTES, &buf);
    if (f->alloc_rc == 0) {
      f->alloc_fastrpc = htpu_shared_is_fastrpc(buf);
      const char *why = htpu_shared_note(buf); /* the test allocation's own reason wins */
      if (why && why[0]) copy_str(f->note, sizeof(f->note), why);
    } else {
      copy_str(f->alloc_err, sizeof(f->alloc_err), htpu_last_error());
    }
    htpu_shared_free(&buf);
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

static void report_device(step *dev, const device_facts_seen *f, int board) {
  char shown[128];
  snprintf(shown, sizeof(shown), f->arch ? "v%" PRIu32 : "(unknown)", f->arch);
  detail_uint(dev, "device arch", "device_arch", f->arch, shown);
  if (!f->soc_model)
    snprintf(shown, sizeof(shown), "(unknown)");
  else if (f->soc_model == 35 || f->soc_model == 93)
    snprintf(shown, sizeof(shown), "%" PRIu32 " (binaries built for 35 or 93 both load)",
             f->soc_model);
  else
    snprintf(shown, sizeof(shown), "%" PRIu32, f->soc_model);
  detail_uint(dev, "SoC model", "device_soc_model", f->soc_model, shown);
  snprintf(shown, sizeof(shown), f->vtcm_mb ? "%" PRIu32 " MB" : "(unknown)", f->vtcm_mb);
  detail_uint(dev, "VTCM", "device_vtcm_mb", f->vtcm_mb, shown);
  detail_bool(dev, "perf infrastructure", "has_perf_infrastructure", f->has_perf);
  detail_str(dev, "perf profile", "perf_profile", f->perf_profile);
  snprintf(shown, sizeof(shown), "%" PRIu32, f->startup_attempts);
  detail_uint(dev, "start-up attempts", "startup_attempts", f->startup_attempts, shown);
  if (f->startup_attempts > 1)
    set_message(dev, ST_OK, "QNN device created after %" PRIu32 " start-up attempts",
                f->startup_attempts);
  else
    set_message(dev, ST_OK, "QNN device created");
  if (f->startup_attempts > 1)
    set_hint(dev, "the first attempts failed with a transient code and were retried (normal "
                  "for the first FastRPC session right after boot, while cdsprpcd starts); "
                  "allow more with the runtime option startup_retries (htpu run/bench --startup-retries N)");
  if (board && f->arch && f->arch != 68) {
    set_message(dev, ST_WARN, "QNN device created, but it reports v%" PRIu32
                              " where QCS6490 is v68", f->arch);
    set_hint(dev, "the skel and binary checks above assume v68; binaries must be built for "
                  "the arch shown here");
  }
  if (!f->has_perf && board) {
    if (dev->status == ST_OK) set_message(dev, ST_WARN, "QNN device created, no perf infrastructure");
    set_hint(dev, "performance profiles cannot be voted: the backend offers no HTP perf "
                  "infrastructure (check that libQnnHtp.so is the QAIRT 2.42 one)");
  }
}

/* A test allocation through htpu_shared_alloc: FastRPC memory, or the fallback and why. */
static void check_shared_memory(doctor *d, const device_facts_seen *f, int board,
                                const char *fastrpc_lib, int fastrpc_given) {
  step *s = step_begin(d, "shared_memory", "shared memory");
  detail_str(s, "FastRPC library", "fastrpc_lib", fastrpc_lib);
  detail_bool(s, "registration possible", "has_shared_memory", f->has_shared);
  detail_str(s, "test allocation", "test_allocation",
             f->alloc_rc     ? "failed"
             : f->alloc_fastrpc ? "FastRPC memory"
                                : "ordinary memory (fallback)");
  detail_str(s, "note", "note", f->note[0] ? f->note : NULL);
  if (!f->note[0]) /* null in JSON, readable for humans */
    copy_str(s->details[s->num_details - 1].str, sizeof(s->details[0].str), "(none)");
  if (f->alloc_rc) {
    set_message(s, ST_FAIL, "htpu_shared_alloc of %u bytes failed: %s", SHARED_TEST_BYTES,
                f->alloc_err);
    return (void)step_end(d, s);
  }
  if (f->alloc_fastrpc) {
    set_message(s, ST_OK, "yes: FastRPC shared buffers, registered with the context on use");
    return (void)step_end(d, s);
  }
  const char *why = f->note[0] ? f->note : "no reason given";
  if (!board && !fastrpc_given) {
    (void)why;
    set_message(s, ST_SKIP, "not applicable: no FastRPC library for this backend (shared "
                            "buffers use ordinary memory; see the note)");
    set_hint(s, "--fastrpc-lib reference uses the reference stand-in next to htpu");
    return (void)step_end(d, s);
  }
  set_message(s, ST_WARN, "no: shared buffers fall back to ordinary memory (copied on every "
                          "call): %s", why);
  if (!f->has_shared)
    set_hint(s, "the library dlopens %s after the device exists and needs rpcmem_alloc, "
                "rpcmem_free and rpcmem_to_fd; check the fastrpc step above (`ldd`, "
                "--fastrpc-lib PATH)",
             fastrpc_lib);
  else
    set_hint(s, "rpcmem_alloc returned nothing: FastRPC memory comes from /dev/dma_heap/system, "
                "which must be readable and writable (the image's udev rule makes it 0666), and "
                "only works once a FastRPC session is open");
  step_end(d, s);
}

/* Opens the runtime as a user of the library would. A backend without devices (the Saver, a
 * CPU backend) fails device creation; for those we retry with skip_device to tell "no device"
 * apart from "broken". Not on the board's HTP backend: there a failed device creation means a
 * poisoned DSP configuration, and a second backendCreate in the same process has taken the
 * whole process down on this board (platform notes 1.4). */
static void check_runtime(doctor *d, const htpu_runtime_options *base, int fastrpc_given) {
  step *s = step_begin(d, "runtime", "runtime");
  htpu_runtime_options ro = *base;
  htpu_runtime *rt = NULL;
  device_facts_seen facts;
  int board = is_board_backend(base->backend_lib);
  int rc = htpu_runtime_open(&ro, &rt);
  if (rc == 0) {
    int has = report_runtime(s, rt, &facts);
    htpu_runtime_close(&rt);
    step_end(d, s);
    step *dev = step_begin(d, "device", "device");
    if (has < 0) {
      set_message(dev, ST_SKIP, "runtime information unavailable");
    } else {
      if (has)
        report_device(dev, &facts, board);
      else if (board)
        set_message(dev, ST_FAIL, "the HTP backend created no device");
      else
        set_message(dev, ST_OK, "backend has no device");
    }
    step_end(d, dev);
    if (has > 0) {
      check_shared_memory(d, &facts, board, base->fastrpc_lib, fastrpc_given);
    } else {
      step *sm = step_begin(d, "shared_memory", "shared memory");
      set_message(sm, ST_SKIP, "no QNN device: shared buffers need one");
      step_end(d, sm);
    }
    return;
  }

  char first_msg[sizeof(s->message)];
  snprintf(first_msg, sizeof(first_msg), "%s", htpu_last_error());
  uint32_t first_qnn = htpu_last_qnn_code();

  if (rc == HTPU_EQNN && could_be_device_stage(first_qnn) && !is_board_backend(base->backend_lib)) {
    ro.skip_device = 1;
    if (htpu_runtime_open(&ro, &rt) == 0) {
      (void)report_runtime(s, rt, &facts);
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
      case D_DIRS:
        cli_json_array_begin(&j, x->key, 0);
        for (int n = 0; n < s->num_dirs; n++) {
          cli_json_object_begin(&j, NULL);
          cli_json_string(&j, "dir", s->dirs[n].dir);
          cli_json_string(&j, "from", s->dirs[n].from);
          cli_json_bool(&j, "exists", s->dirs[n].exists);
          cli_json_bool(&j, "skel", s->dirs[n].skel);
          cli_json_object_end(&j);
        }
        cli_json_array_end(&j);
        break;
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
  cli_libs libs; /* `--backend reference` implies the reference system library */
  if (cli_resolve_libs(cli_get(a, "backend"), cli_get(a, "system-lib"), &libs) != 0)
    return CLI_EXIT_FAIL;
  int failed = 0;
  char fastrpc_buf[4096];
  const char *fastrpc_opt = cli_resolve_lib(cli_get(a, "fastrpc-lib"), CLI_REFERENCE_CDSPRPC,
                                            fastrpc_buf, sizeof(fastrpc_buf), &failed);
  if (failed) return CLI_EXIT_FAIL;
  const char *dsp_opt = cli_get(a, "dsp-library-path");

  htpu_runtime_options ro;
  htpu_runtime_options_init(&ro);
  if (libs.backend_lib) ro.backend_lib = libs.backend_lib;
  if (libs.system_lib) ro.system_lib = libs.system_lib;
  if (dsp_opt) ro.dsp_library_path = dsp_opt;
  if (fastrpc_opt) ro.fastrpc_lib = fastrpc_opt;
  if (!ro.fastrpc_lib) ro.fastrpc_lib = CLI_DEFAULT_FASTRPC_LIB;

  doctor *d = calloc(1, sizeof(*d));
  if (!d) return cli_fail(a->cmd, "out of memory");
  d->json = cli_has(a, "json");
  if (!d->json) printf("htpu doctor %s\n", HTPU_VERSION_STRING);

  check_environment(d, ro.backend_lib, dsp_opt);
  int backend_ok = check_library(d, "backend_library", "backend library", "backend", "backend",
                                 ro.backend_lib, "QnnInterface_getProviders");
  int system_ok = check_library(d, "system_library", "system library", "system-lib",
                                "system library", ro.system_lib, "QnnSystemInterface_getProviders");
  if (is_board_backend(ro.backend_lib))
    check_board(d, ro.backend_lib, dsp_opt, ro.fastrpc_lib);
  else
    skip_board(d, ro.backend_lib, ro.fastrpc_lib, fastrpc_opt != NULL);

  if (backend_ok && system_ok && d->num_failed == 0) {
    check_runtime(d, &ro, fastrpc_opt != NULL);
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
    {"fastrpc-lib", "PATH",
     "FastRPC library for shared memory (default libcdsprpc.so; 'reference' = the reference "
     "stand-in libhtpu_refcdsprpc.so)",
     0},
    {"json", NULL, "print the report as JSON (schema htpu.doctor/1, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_doctor = {
    .name = "doctor",
    .synopsis = "[--backend PATH|reference] [--system-lib PATH|reference] "
                "[--dsp-library-path DIR] [--fastrpc-lib PATH|reference] [--json]",
    .summary = "check the environment, the QNN libraries and the NPU, step by step",
    .description =
        "Run this first on a board. Each step prints ok, warn, FAIL or skip:\n"
        "  environment      DSP_LIBRARY_PATH / ADSP_LIBRARY_PATH: both set, same value (HTP\n"
        "                   backend only)\n"
        "  backend library  the file exists, loads and exports QnnInterface_getProviders\n"
        "  system library   the same for QnnSystemInterface_getProviders\n"
        "  fastrpc          HTP backend: /dev/fastrpc-cdsp read/write, cdsprpcd, the FastRPC\n"
        "                   library (libcdsprpc.so or --fastrpc-lib) with its rpcmem calls\n"
        "  dsp libraries    HTP backend: each directory of the DSP search path, which holds\n"
        "                   libQnnHtpV68Skel.so; the stub next to the backend\n"
        "  runtime          htpu_runtime_open: provider, backend id, API versions, build id,\n"
        "                   system provider and API version\n"
        "  device           whether a QNN device was created, and what it reports: arch, SoC\n"
        "                   model, VTCM, perf infrastructure, start-up attempts\n"
        "  shared memory    a test allocation: FastRPC shared memory, or why not\n"
        "Board checks are skipped (not failed) for other backends. Failures carry the\n"
        "library's message and a hint. Exit 0 when nothing failed.\n",
    .options = doctor_options,
    .min_positional = 0,
    .max_positional = 0,
    .run = run_doctor,
};
