/* runtime.c - the `runtime` step: htpu_runtime_open as a user of the library would, and what
 * the loader found. The runtime stays open for the device and shared-memory checks. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../util.h"
#include "doctor.h"


/* Fills the step from htpu_runtime_get_info (kept in d->ri for the later checks). */
static void report_runtime(doctor *d, step *s) {
  htpu_runtime_info *ri = &d->ri;
  memset(ri, 0, sizeof(*ri));
  if (htpu_runtime_get_info(d->rt, ri) != 0) {
    step_set(s, ST_FAIL, "runtime opened but htpu_runtime_get_info failed: %s",
             htpu_last_error());
    return;
  }
  d->have_info = 1;
  char backend[64];
  snprintf(backend, sizeof(backend), "%" PRIu32 " (%s)", ri->backend_id,
           cli_backend_name(ri->backend_id));
  const char *build_id = ri->build_id ? ri->build_id : "";
  const char *log_note = ri->log_note && ri->log_note[0] ? ri->log_note : NULL;
  step_str(s, "backend library", "backend_lib", ri->backend_lib);
  step_str(s, "provider", "provider_name", ri->provider_name);
  step_uint(s, "backend id", "backend_id", ri->backend_id, backend);
  step_version(s, "core API", "core_api_version", ri->core_api_version);
  step_version(s, "backend API", "backend_api_version", ri->backend_api_version);
  step_str_shown(s, "build id", "build_id", build_id, build_id[0] ? build_id : "(none)");
  step_str(s, "system library", "system_lib", ri->system_lib);
  step_str(s, "system provider", "system_provider_name", ri->system_provider_name);
  step_version(s, "system API", "system_api_version", ri->system_api_version);
  step_bool(s, "device created", "has_device", ri->has_device);
  step_str(s, "DSP_LIBRARY_PATH in effect", "dsp_library_path",
           ri->dsp_library_path && ri->dsp_library_path[0] ? ri->dsp_library_path : NULL);
  step_str_shown(s, "QNN log", "log_note", log_note, log_note ? log_note : "(captured)");
  char core[48];
  cli_format_version(ri->core_api_version, core, sizeof(core));
  const char *name = ri->provider_name ? ri->provider_name : "(no name)";
  if (!log_note) {
    step_set(s, ST_OK, "%s, core API %s", name, core);
    return;
  }
  /* QNN allows a NULL log: the runtime works, but failures will not quote QNN's own lines. */
  step_set(s, ST_WARN, "%s, core API %s, without a QNN log", name, core);
  step_hint(s, "logCreate failed, so the runtime runs without a QNN log handle (QNN allows "
               "that): error messages will not quote QNN's log lines. The real libQnnHtp has "
               "been seen to fail logCreate (11002) when no DSP is reachable.");
}

/* Whether a QNN error can come from deviceCreate: the device range, or a common code
 * (NOT_SUPPORTED is how a backend without devices answers). htpu_last_error() names the stage
 * only in prose, so this is decided by the code; a backend-stage failure with a common code is
 * retried too, but then fails again deterministically and is reported as the runtime failure. */
static int could_be_device_stage(uint32_t qnn) {
  return (qnn >= 14000 && qnn < 15000) || (qnn >= 1000 && qnn < 2000);
}

/* A backend without devices (the Saver, a CPU backend) fails device creation; for those we
 * retry with skip_device to tell "no device" apart from "broken". Not on the board's HTP
 * backend: there a failed device creation means a poisoned DSP configuration, and a second
 * backendCreate in the same process has taken the whole process down on this board. */
static int retry_without_device(doctor *d, int rc, uint32_t qnn) {
  if (rc != HTPU_EQNN || !could_be_device_stage(qnn) || d->board) return 0;
  htpu_runtime_options ro = d->ro;
  ro.skip_device = 1;
  if (htpu_runtime_open(&ro, &d->rt) != 0) return 0;
  d->rt_skip_device = 1;
  return 1;
}

void check_runtime(doctor *d) {
  step *s = report_begin(&d->rep, "runtime", "runtime");
  if (!d->backend_loads || !d->system_loads || d->rep.num_failed) {
    /* The runtime would only repeat the failure above; on the board a backendCreate with a
     * known-bad setup can also poison the DSP configuration for this process. */
    step_set(s, ST_SKIP, "not attempted: fix the failures above first");
    report_end(&d->rep, s);
    return;
  }
  if (d->npu_other_users && !d->force) {
    /* a session beside another NPU user is what has reset this board (npu users step) */
    step_set(s, ST_SKIP, "not attempted: another process holds the NPU (npu users); --force "
                         "creates a session anyway");
    report_end(&d->rep, s);
    return;
  }
  int rc = htpu_runtime_open(&d->ro, &d->rt);
  if (rc != 0) {
    d->first_rc = rc;
    d->first_qnn = htpu_last_qnn_code();
    snprintf(d->first_msg, sizeof(d->first_msg), "%s", htpu_last_error());
    if (!retry_without_device(d, rc, d->first_qnn)) {
      step_set(s, ST_FAIL, "%s: %s", htpu_err_name(rc),
               d->first_msg[0] ? d->first_msg : htpu_strerror(rc));
      doctor_runtime_hint(d, s, rc, d->first_qnn, d->first_msg);
      report_end(&d->rep, s);
      return;
    }
  }
  report_runtime(d, s);
  report_end(&d->rep, s);
}
