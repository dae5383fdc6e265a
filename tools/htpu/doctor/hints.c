/* hints.c - the advice doctor gives for a failed runtime open, and the QAIRT release the hints
 * may name (only the one the loaded library's build id states). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "doctor.h"

/* QNN error codes the hints know about (the low 16 bits; see docs/abi.md). */
#define QNN_SYSTEM_COMMUNICATION 1007u
#define QNN_INCOMPATIBLE_BINARIES 1008u
#define QNN_SYSTEM_COMMUNICATION_FATAL 1011u
#define QNN_BACKEND_CANNOT_INITIALIZE 4000u
#define QNN_DEVICE_INVALID_CONFIG 14001u
#define QNN_DEVICE_HW_UNAVAILABLE 14002u

void doctor_set_qairt(doctor *d, const char *build_id) {
  htpu_version3 v;
  d->qairt[0] = d->qairt_clause[0] = '\0';
  if (htpu_qairt_version_from_build_id(build_id, &v) != 0) return;
  snprintf(d->qairt, sizeof(d->qairt), "%" PRIu32 ".%" PRIu32 ".%" PRIu32, v.major, v.minor,
           v.patch);
  snprintf(d->qairt_clause, sizeof(d->qairt_clause), " The loaded library is QAIRT %s.",
           d->qairt);
}

/* 4000 from the board's backend: no FastRPC session. */
static void hint_no_session(const doctor *d, step *s, const char *message) {
  int no_log = message && strstr(message, "QNN log unavailable") != NULL;
  step_hint(s,
            "4000 = the FastRPC session to the CDSP could not be opened. Right after boot, 0x72 "
            "in the log means the CDSP or /dev/fastrpc-cdsp is not up yet: the remoteproc "
            "driver boots the CDSP once udev loads its module, qcom-coldplug.sh waits up to "
            "20 s for /dev/fastrpc-cdsp and then starts cdsprpcd; wait and run again (the "
            "runtime's start-up retries cover a short wait).%s%s",
            no_log ? " logCreate failed too: the DSP was not reachable at all; check the fastrpc "
                     "step and cat /sys/class/remoteproc/*/state."
                   : "",
            d->firmware_too_old ? " The boot firmware is too old for unsigned protection "
                                  "domains (boot firmware step): 0x80000600 in the log means that."
                                : "");
}

void doctor_runtime_hint(const doctor *d, step *s, int rc, uint32_t qnn, const char *message) {
  switch (rc) {
  case HTPU_ELOAD_BACKEND:
  case HTPU_ELOAD_SYSTEM:
    step_hint(s, "check the path and the library's dependencies (`ldd PATH`); on the board use "
                 "/usr/lib/libQnnHtp.so and /usr/lib/libQnnSystem.so, not the onnxruntime-qnn "
                 "set");
    return;
  case HTPU_ESYMBOL:
  case HTPU_ENO_PROVIDER:
    step_hint(s, "the library is not a QNN backend/system library, or a broken one");
    return;
  case HTPU_EVERSION:
    step_hint(s, "hexagon_tpu needs QNN core API >= 2.18 and System API >= 1.1 (QAIRT 2.25 or "
                 "newer); the message lists what the library offers. Check which library was "
                 "loaded.");
    return;
  case HTPU_EQNN: break;
  default: return;
  }
  switch (qnn) {
  case QNN_DEVICE_INVALID_CONFIG:
    step_hint(s,
              "14001 = skel/stub version mismatch: DSP_LIBRARY_PATH must point at the skel of "
              "the backend's own QAIRT release (/usr/lib/dsp/%s on the image), not the "
              "onnxruntime-qnn copy.%s The DSP keeps the first configuration for the life of "
              "the process: fix the environment and run again in a new process.",
              BOARD_SKEL, d->qairt_clause);
    return;
  case QNN_DEVICE_HW_UNAVAILABLE:
    step_hint(s, "14002 = NPU unavailable: is the CDSP up (/sys/class/remoteproc/*/state), "
                 "cdsprpcd running, /dev/fastrpc-cdsp accessible?");
    return;
  case QNN_INCOMPATIBLE_BINARIES:
    step_hint(s,
              "1008 = QNN libraries of different releases are mixed (backend, stub, skel): use "
              "one QAIRT set throughout.%s",
              d->qairt_clause);
    return;
  case QNN_SYSTEM_COMMUNICATION:
  case QNN_SYSTEM_COMMUNICATION_FATAL:
    step_hint(s, "the DSP restarted (subsystem restart); run again, and check dmesg for the "
                 "cause");
    return;
  case QNN_BACKEND_CANNOT_INITIALIZE:
    if (d->board) {
      hint_no_session(d, s, message);
      return;
    }
    break;
  default: break;
  }
  step_hint(s, "QNN error %" PRIu32 " (%s): %s", qnn, htpu_qnn_error_name(qnn),
            htpu_qnn_error_message(qnn));
}
