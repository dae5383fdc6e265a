/* hints.c - the advice doctor gives for a failed runtime open. */
#include <inttypes.h>
#include <stdio.h>

#include "doctor.h"

/* QNN error codes the hints know about (the low 16 bits; see docs/abi.md). */
#define QNN_SYSTEM_COMMUNICATION 1007u
#define QNN_INCOMPATIBLE_BINARIES 1008u
#define QNN_SYSTEM_COMMUNICATION_FATAL 1011u
#define QNN_BACKEND_CANNOT_INITIALIZE 4000u
#define QNN_DEVICE_INVALID_CONFIG 14001u
#define QNN_DEVICE_HW_UNAVAILABLE 14002u

void doctor_runtime_hint(const doctor *d, step *s, int rc, uint32_t qnn, const char *message) {
  (void)message;
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
                 "newer); the board's QAIRT 2.42 qualifies. Check which library was loaded.");
    return;
  case HTPU_EQNN: break;
  default: return;
  }
  switch (qnn) {
  case QNN_DEVICE_INVALID_CONFIG:
    step_hint(s,
              "14001 = skel/stub version mismatch: DSP_LIBRARY_PATH must point at the QAIRT "
              "2.42 skel (/usr/lib/dsp/%s), not the onnxruntime-qnn copy. The DSP keeps the "
              "first configuration for the life of the process: fix the environment and run "
              "again in a new process.",
              BOARD_SKEL);
    return;
  case QNN_DEVICE_HW_UNAVAILABLE:
    step_hint(s, "14002 = NPU unavailable: is the CDSP up (/sys/class/remoteproc/*/state), "
                 "cdsprpcd running, /dev/fastrpc-cdsp accessible?");
    return;
  case QNN_INCOMPATIBLE_BINARIES:
    step_hint(s, "1008 = QNN libraries of different releases are mixed (backend, stub, skel): "
                 "use one QAIRT set throughout");
    return;
  case QNN_SYSTEM_COMMUNICATION:
  case QNN_SYSTEM_COMMUNICATION_FATAL:
    step_hint(s, "the DSP restarted (subsystem restart); run again, and check dmesg for the "
                 "cause");
    return;
  case QNN_BACKEND_CANNOT_INITIALIZE:
    if (d->board) {
      step_hint(s, "the FastRPC session could not be opened; right after boot cdsprpcd may "
                   "still be starting (0x72 / 0xffffffff in the log): wait a few seconds and "
                   "retry");
      return;
    }
    break;
  default: break;
  }
  step_hint(s, "QNN error %" PRIu32 " (%s): %s", qnn, htpu_qnn_error_name(qnn),
            htpu_qnn_error_message(qnn));
}
