/*
 * doctor.c - `htpu doctor`: the first thing to run on a board. Runs the checks of doctor/ in
 * the order a load goes through them: the DSP environment, the library files and what the
 * backend's provider says about itself, the board's FastRPC plumbing, DSP libraries and boot
 * firmware (only for the HTP backend; skipped, not failed, for others), then a runtime and what
 * the device says about itself (arch, SoC, VTCM, power votes, shared memory, start-up attempts).
 *
 * Each check is its own file under doctor/ and reports through doctor/report.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "doctor/doctor.h"
#include "file_open.h"
#include "guard.h"
#include "hexagon_tpu.h"
#include "qnn_sets.h"
#include "util.h"

typedef void (*doctor_check)(doctor *d);

/* In the order a model load meets them; later checks use what earlier ones learned. */
static const doctor_check k_checks[] = {
    check_environment,   check_backend_library, check_provider,       check_system_library,
    check_remoteproc,    check_device_tree,     check_fastrpc,        check_npu_users,
    check_dsp_libraries, check_dsp_release,     check_qnn_sets,       check_library_path,
    check_firmware,      check_governor,        check_nsp_temperature, check_runtime,
    check_device,        check_shared_memory,
};

/* --backend, --system-lib and --fastrpc-lib into the runtime options ("reference" included;
 * `--backend reference` implies the reference system library unless --system-lib is given).
 * Returns 0, or CLI_EXIT_FAIL when a "reference" path cannot be resolved. */
static int resolve_libraries(const cli_args *a, htpu_runtime_options *ro, int *fastrpc_given) {
  static cli_libs libs; /* the options point into it for the rest of the command */
  static char fastrpc_buf[4096];
  if (cli_resolve_libs(cli_get(a, "backend"), cli_get(a, "system-lib"), &libs) != 0)
    return CLI_EXIT_FAIL;
  int failed = 0;
  const char *fastrpc = cli_resolve_lib(cli_get(a, "fastrpc-lib"), CLI_REFERENCE_CDSPRPC,
                                        fastrpc_buf, sizeof(fastrpc_buf), &failed);
  if (failed) return CLI_EXIT_FAIL;
  if (libs.backend_lib) ro->backend_lib = libs.backend_lib;
  if (libs.system_lib) ro->system_lib = libs.system_lib;
  ro->fastrpc_lib = fastrpc ? fastrpc : CLI_DEFAULT_FASTRPC_LIB;
  *fastrpc_given = fastrpc != NULL;
  return 0;
}

/* --root stands in for /: it must be a directory, else every board check would read nothing
 * and report a confident wrong diagnosis (no CDSP, no device tree ...): cli_check_root. */

static int run_doctor(const cli_args *a) {
  int root_rc = cli_check_root(a->cmd, cli_get(a, "root"));
  if (root_rc) return root_rc;
  doctor *d = calloc(1, sizeof(*d));
  if (!d) return cli_fail(a->cmd, "out of memory");
  htpu_runtime_options_init(&d->ro);
  if (resolve_libraries(a, &d->ro, &d->fastrpc_given) != 0) {
    free(d);
    return CLI_EXIT_FAIL;
  }
  d->dsp_opt = cli_get(a, "dsp-library-path");
  if (d->dsp_opt) d->ro.dsp_library_path = d->dsp_opt;
  static htpu_qnn_set set; /* --qnn: the runtime check opens that set */
  int qx = cli_qnn_option(a, &d->ro, &set);
  if (qx != CLI_EXIT_OK) {
    free(d);
    return qx;
  }
  if (!d->dsp_opt && d->ro.qnn_set) d->dsp_opt = d->ro.dsp_library_path; /* the set's skel */
  d->board = doctor_is_board_backend(d->ro.backend_lib);
  d->root = cli_get(a, "root");
  if (!d->root) d->root = "";
  d->force = cli_has(a, "force");
  d->ro.npu_lock_wait = cli_npu_lock_waiting; /* the runtime step may wait for another program */
  d->ro.npu_lock_wait_arg = (void *)a->cmd;
  d->rep.json = cli_has(a, "json");
  if (!d->rep.json) printf("htpu doctor %s\n", HTPU_VERSION_STRING);

  for (size_t i = 0; i < sizeof(k_checks) / sizeof(k_checks[0]); i++) k_checks[i](d);
  htpu_runtime_close(&d->rt);

  int failed = d->rep.num_failed;
  int rc = failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
  if (d->rep.json) {
    if (report_print_json(&d->rep, "htpu.doctor/2") != 0) rc = CLI_EXIT_FAIL;
  } else if (failed) {
    printf("%d check%s failed\n", failed, failed == 1 ? "" : "s");
  } else {
    printf("all checks passed%s\n", d->rep.num_warned ? " (with warnings)" : "");
  }
  if (failed) fprintf(stderr, "htpu doctor: %d check%s failed\n", failed, failed == 1 ? "" : "s");
  report_free(&d->rep);
  free(d);
  return rc;
}

static const cli_option doctor_options[] = {
    {"backend", "PATH",
     "QNN backend library (default " HTPU_DEFAULT_BACKEND_LIB "; 'reference' = the reference "
     "backend, with the reference system library unless --system-lib is given)",
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
    {"root", "DIR",
     "read the board's files (/sys, /proc, /dev) under DIR instead of / (a copy of a board's "
     "tree, or a test's fake one)",
     0},
    CLI_QNN_OPTION,
    {"force", NULL,
     "create the runtime step's QNN session even while another process holds the NPU (the "
     "npu users step); without it that step is skipped",
     0},
    {"json", NULL, "print the report as JSON (schema htpu.doctor/2, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_doctor = {
    .name = "doctor",
    .synopsis = "[--backend PATH|reference] [--system-lib PATH|reference] "
                "[--dsp-library-path DIR] [--fastrpc-lib PATH|reference] [--root DIR] [--qnn DIR] "
                "[--force] [--json]",
    .summary = "check the environment, the QNN libraries and the NPU, step by step",
    .description =
        "Run this first on a board. Each step prints ok, warn, FAIL or skip:\n"
        "  environment       DSP_LIBRARY_PATH / ADSP_LIBRARY_PATH: both set, same value (HTP\n"
        "                    backend only)\n"
        "  backend library   the file exists, loads and exports QnnInterface_getProviders\n"
        "  backend provider  what the library says about itself without creating anything:\n"
        "                    provider, backend id, API versions, build id, QAIRT release\n"
        "  system library    the same for QnnSystemInterface_getProviders\n"
        "  remoteproc        HTP backend: the CDSP's remoteproc (/sys/class/remoteproc/*, its\n"
        "                    name and state) is running\n"
        "  device tree       HTP backend: the CDSP's FastRPC node in /proc/device-tree, its\n"
        "                    compute banks and memory region (remote heap)\n"
        "  fastrpc           HTP backend: /dev/fastrpc-cdsp read/write, cdsprpcd, the FastRPC\n"
        "                    library (libcdsprpc.so or --fastrpc-lib) with its rpcmem calls\n"
        "  npu users         HTP backend: other processes holding /dev/fastrpc-cdsp open (pid,\n"
        "                    name, QNN libraries mapped) and the NPU lock's holder; with one,\n"
        "                    the runtime step creates no session unless --force\n"
        "  dsp libraries     HTP backend: each directory of the DSP search path, which holds\n"
        "                    libQnnHtpV68Skel.so; the stub next to the backend\n"
        "  stub/skel release HTP backend: the stub and skel carry one QAIRT build id (read\n"
        "                    from the files), of the backend's release\n"
        "  qnn sets          every QNN set installed on the image (its release, layout, and\n"
        "                    whether its stub and skel are of that release); --qnn DIR uses one\n"
        "  library path      HTP backend: no second QNN set on LD_LIBRARY_PATH or in\n"
        "                    /etc/ld.so.conf(.d) (e.g. /usr/lib/onnxruntime-qnn) shadows\n"
        "                    the backend's stub\n"
        "  boot firmware     HTP backend: /sys/class/dmi/id/bios_version is new enough for\n"
        "                    unsigned protection domains\n"
        "  cpu governor      HTP backend: every cpufreq policy runs the performance governor\n"
        "                    (schedutil parked idle cores at 691 MHz: 29 -> 21 fps measured)\n"
        "  nsp temperature   HTP backend: the NSP thermal zones below their hot trip point\n"
        "                    (above it the NPU throttles itself, unseen by Linux)\n"
        "  runtime           htpu_runtime_open: provider, backend id, API versions, build id,\n"
        "                    system provider and API version, whether QNN's log is captured\n"
        "  device            whether a QNN device was created, and what it reports: arch, SoC\n"
        "                    model, VTCM, perf infrastructure, start-up attempts\n"
        "  shared memory     a test allocation: FastRPC shared memory, or why not\n"
        "Board checks are skipped (not failed) for other backends. --root DIR reads the\n"
        "board's /sys, /proc, /dev and /etc/ld.so.conf under DIR (a directory). Failures\n"
        "carry the library's message and a hint. Exit 0 when nothing failed.\n",
    .options = doctor_options,
    .min_positional = 0,
    .max_positional = 0,
    .run = run_doctor,
};
