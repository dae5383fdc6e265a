/* device.c - the `device` step: whether a QNN device was created and what it reports (the
 * device's side of the compatibility preflight), from the runtime the runtime check opened. */
#include <inttypes.h>
#include <stdio.h>

#include "../util.h"
#include "doctor.h"

#define QNN_NOT_SUPPORTED 1000u

/* The VTCM the device reports: the one place that reads the runtime's VTCM field. Bytes in
 * JSON, as the library reports them; human units for people. */
static void detail_vtcm(step *dev, const htpu_runtime_info *ri) {
  char shown[64] = "(unknown)";
  if (ri->device_vtcm_bytes) cli_format_vtcm(ri->device_vtcm_bytes, shown, sizeof(shown));
  step_uint(dev, "VTCM", "device_vtcm_bytes", ri->device_vtcm_bytes, shown);
}

static void report_device(doctor *d, step *dev) {
  const htpu_runtime_info *ri = &d->ri;
  char shown[128];
  snprintf(shown, sizeof(shown), ri->device_arch ? "v%" PRIu32 : "(unknown)", ri->device_arch);
  step_uint(dev, "device arch", "device_arch", ri->device_arch, shown);
  if (!ri->device_soc_model)
    snprintf(shown, sizeof(shown), "(unknown)");
  else if (ri->device_soc_model == 35 || ri->device_soc_model == 93)
    snprintf(shown, sizeof(shown), "%" PRIu32 " (binaries built for 35 or 93 both load)",
             ri->device_soc_model);
  else
    snprintf(shown, sizeof(shown), "%" PRIu32, ri->device_soc_model);
  step_uint(dev, "SoC model", "device_soc_model", ri->device_soc_model, shown);
  detail_vtcm(dev, ri);
  step_bool(dev, "perf infrastructure", "has_perf_infrastructure", ri->has_perf_infrastructure);
  const char *pp = htpu_perf_profile_name(ri->perf_profile);
  step_str(dev, "perf profile", "perf_profile", pp ? pp : "unknown");
  snprintf(shown, sizeof(shown), "%" PRIu32, ri->startup_attempts);
  step_uint(dev, "start-up attempts", "startup_attempts", ri->startup_attempts, shown);
  if (ri->startup_attempts > 1) {
    step_set(dev, ST_OK, "QNN device created after %" PRIu32 " start-up attempts",
             ri->startup_attempts);
    step_hint(dev, "the first attempts failed with a transient code and were retried (normal "
                   "for the first FastRPC session right after boot, while the CDSP or "
                   "/dev/fastrpc-cdsp is not up yet); allow more with the runtime option "
                   "startup_retries (htpu run/bench --startup-retries N)");
  } else {
    step_set(dev, ST_OK, "QNN device created");
  }
  if (d->board && ri->device_arch && ri->device_arch != 68) {
    step_set(dev, ST_WARN, "QNN device created, but it reports v%" PRIu32 " where QCS6490 is v68",
             ri->device_arch);
    step_hint(dev, "the skel and binary checks above assume v68; binaries must be built for "
                   "the arch shown here");
  }
  if (d->board && !ri->has_perf_infrastructure) {
    if (dev->status == ST_OK) step_set(dev, ST_WARN, "QNN device created, no perf infrastructure");
    step_hint(dev,
              "performance profiles cannot be voted: the backend offers no HTP perf "
              "infrastructure; check that it is the board's /usr/lib/libQnnHtp.so.%s",
              d->qairt_clause);
  }
}

/* After the skip_device retry: why the first open failed. */
static void report_first_failure(doctor *d, step *dev) {
  if (d->first_qnn == QNN_NOT_SUPPORTED) {
    step_set(dev, ST_OK, "backend has no device (device creation: %s)",
             htpu_qnn_error_name(d->first_qnn));
    return;
  }
  step_set(dev, ST_FAIL, "%s: %s", htpu_err_name(d->first_rc), d->first_msg);
  doctor_runtime_hint(d, dev, d->first_rc, d->first_qnn, d->first_msg);
  char qnn_hint[sizeof(dev->hint)];
  snprintf(qnn_hint, sizeof(qnn_hint), "%s", dev->hint);
  step_hint(dev, "%s%sthe runtime opens without a device (skip_device); models that need one "
                 "will not run",
            qnn_hint, qnn_hint[0] ? "\n" : "");
}

void check_device(doctor *d) {
  if (!d->rt) return; /* only when a runtime opened: the runtime step says why not */
  step *dev = report_begin(&d->rep, "device", "device");
  if (d->rt_skip_device)
    report_first_failure(d, dev);
  else if (!d->have_info)
    step_set(dev, ST_SKIP, "runtime information unavailable");
  else if (d->ri.has_device)
    report_device(d, dev);
  else if (d->board)
    step_set(dev, ST_FAIL, "the HTP backend created no device");
  else
    step_set(dev, ST_OK, "backend has no device");
  report_end(&d->rep, dev);
}
