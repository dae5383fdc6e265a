/* fastrpc.c - the `fastrpc` step: the CDSP device node, cdsprpcd and the FastRPC library with
 * its rpcmem calls (HTP backend); for other backends only a --fastrpc-lib that was given. */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_open.h"

#include "doctor.h"

#define FASTRPC_DEVICE "/dev/fastrpc-cdsp"

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
static void judge_other_backend(doctor *d, step *s) {
  const char *lib = d->ro.fastrpc_lib, *base = doctor_base_name(d->ro.backend_lib);
  step_str(s, "FastRPC library", "fastrpc_lib", lib);
  if (!d->fastrpc_given) {
    step_set(s, ST_SKIP, "not applicable: %s is not the HTP backend (libQnnHtp.so)", base);
    return;
  }
  char why[512];
  int r = probe_fastrpc_lib(lib, why, sizeof(why));
  step_str(s, "rpcmem", "rpcmem", why);
  if (r == 0) {
    step_set(s, ST_OK, "--fastrpc-lib loads and has the rpcmem calls (device checks not "
                       "applicable to %s)", base);
    return;
  }
  step_set(s, ST_FAIL, "--fastrpc-lib %s: %s", lib, why);
  step_hint(s, "give the path of libcdsprpc.so (or 'reference' for the reference stand-in next "
               "to htpu)");
}

static void judge_board(doctor *d, step *s) {
  const char *lib = d->ro.fastrpc_lib;
  /* The kernel's driver makes a character device. A tree given with --root cannot hold one
   * without root's mknod, so there a regular file stands in for it; anything else (a
   * directory, a FIFO ...) is no device, whatever its permissions. */
  struct stat st;
  int dev_exists = doctor_stat(d->root, FASTRPC_DEVICE, &st) == 0;
  int dev_kind_ok = dev_exists && (S_ISCHR(st.st_mode) || (d->root[0] && S_ISREG(st.st_mode)));
  int dev_ok = dev_kind_ok && doctor_access(d->root, FASTRPC_DEVICE, R_OK | W_OK) == 0;
  int daemon = doctor_process_running(d, "cdsprpcd");
  char why[512];
  int rpc = probe_fastrpc_lib(lib, why, sizeof(why));
  char kind[96];
  snprintf(kind, sizeof(kind), "%s, not a device",
           dev_exists ? file_kind_name((unsigned)st.st_mode) : "missing");
  step_str(s, FASTRPC_DEVICE, "fastrpc_device",
           dev_ok          ? "read/write"
           : !dev_exists   ? "missing"
           : !dev_kind_ok  ? kind
                           : "not accessible");
  step_str(s, "cdsprpcd", "cdsprpcd", daemon ? "running" : "not running");
  step_str(s, "libcdsprpc.so", "libcdsprpc", rpc >= 0 ? "loads" : why);
  step_str(s, "FastRPC library", "fastrpc_lib", lib);
  step_str(s, "rpcmem", "rpcmem", rpc >= 0 ? why : "not loaded");
  if (!dev_exists) {
    step_set(s, ST_FAIL, "no CDSP FastRPC device (%s missing)", FASTRPC_DEVICE);
    step_hint(s, "the CDSP remoteproc must be running (cat /sys/class/remoteproc/*/state shows "
                 "'running'): the remoteproc driver boots it once udev loads its module "
                 "(qcom_q6v5_pas), and qcom-coldplug.sh starts it as a fallback; "
                 FASTRPC_DEVICE " appears once it runs (coldplug waits up to 20 s for it, then "
                 "starts cdsprpcd)");
  } else if (!dev_kind_ok) {
    step_set(s, ST_FAIL, "%s is %s, not the CDSP FastRPC device", FASTRPC_DEVICE,
             file_kind_name((unsigned)st.st_mode));
    step_hint(s, "the fastrpc driver makes it a character device once the CDSP runs: as root, "
                 "remove what stands in its place (rm -r " FASTRPC_DEVICE ") and restart the "
                 "CDSP (or reboot)");
  } else if (rpc < 0) {
    step_set(s, ST_FAIL, "%s does not load: %s", lib, why);
    step_hint(s, "install the fastrpc user library (qcom-fastrpc: libcdsprpc.so in /usr/lib), "
                 "or give its path with --fastrpc-lib; the HTP stub needs it too");
  } else if (!dev_ok) {
    step_set(s, ST_FAIL, "%s is not readable and writable by this user", FASTRPC_DEVICE);
    step_hint(s, "the image's udev rule 99-qcom-npu.rules makes fastrpc-* mode 0666");
  } else if (!daemon) {
    step_set(s, ST_WARN, "cdsprpcd is not running");
    step_hint(s, "qcom-coldplug.sh starts it once " FASTRPC_DEVICE " exists (it waits up to 20 s "
                 "for the CDSP to come up). Right after boot the first session can fail with "
                 "0x72, which means the CDSP or " FASTRPC_DEVICE " is not up yet: wait and "
                 "retry");
  } else if (rpc > 0) {
    step_set(s, ST_WARN, "%s loads but has %s: shared buffers will use ordinary memory", lib,
             why);
    step_hint(s, "point --fastrpc-lib (runtime option fastrpc_lib) at the real libcdsprpc.so");
  } else {
    step_set(s, ST_OK, "CDSP device and daemon present, %s loads", lib);
  }
}

void check_fastrpc(doctor *d) {
  step *s = report_begin(&d->rep, "fastrpc", "fastrpc");
  if (d->board)
    judge_board(d, s);
  else
    judge_other_backend(d, s);
  report_end(&d->rep, s);
}
