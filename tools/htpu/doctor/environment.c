/* environment.c - the `environment` step: DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH. */
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

static void judge(doctor *d, step *s, const char *dsp, const char *adsp) {
  const char *backend = d->ro.backend_lib;
  if (d->dsp_opt) {
    if (!doctor_is_dir(DOCTOR_HOST, d->dsp_opt)) {
      step_set(s, ST_FAIL, "--dsp-library-path %s is not a directory", d->dsp_opt);
      return;
    }
    step_set(s, ST_OK, "DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH will be set to %s", d->dsp_opt);
    return;
  }
  if (!d->board) {
    step_set(s, ST_SKIP, "not applicable: only the HTP backend (libQnnHtp.so) needs them (%s)",
             (dsp || adsp) ? "set" : "unset");
    return;
  }
  if (!dsp || !adsp) {
    step_set(s, ST_WARN, "%s unset: the HTP backend may not find its DSP skel",
             !dsp && !adsp ? "DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH are"
             : !dsp        ? "DSP_LIBRARY_PATH is"
                           : "ADSP_LIBRARY_PATH is");
    step_hint(s, "export DSP_LIBRARY_PATH=/usr/lib/dsp ADSP_LIBRARY_PATH=/usr/lib/dsp (the image "
                 "sets both in erlinit.config and /etc/profile.d/qcom-npu-env.sh), or pass "
                 "--dsp-library-path /usr/lib/dsp");
    return;
  }
  if (strcmp(dsp, adsp) != 0) {
    step_set(s, ST_WARN, "DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH differ");
    step_hint(s, "set both to the same ';'-separated list, as the image does "
                 "(DSP_LIBRARY_PATH=ADSP_LIBRARY_PATH=/usr/lib/dsp): the DSP side must find the "
                 "same skel whichever variable is read");
    return;
  }
  if (strstr(dsp, "onnxruntime-qnn") || strstr(adsp, "onnxruntime-qnn")) {
    step_set(s, ST_WARN, "the DSP search path includes the onnxruntime-qnn QNN set");
    step_hint(s,
              "that skel belongs to a different QNN release than %s; a mismatched skel fails "
              "device creation with 14001. Put /usr/lib/dsp first.",
              backend);
    return;
  }
  step_set(s, ST_OK, "both set, same value");
}

void check_environment(doctor *d) {
  step *s = report_begin(&d->rep, "environment", "environment");
  const char *dsp = getenv("DSP_LIBRARY_PATH");
  const char *adsp = getenv("ADSP_LIBRARY_PATH");
  step_str(s, "DSP_LIBRARY_PATH", "DSP_LIBRARY_PATH", dsp);
  step_str(s, "ADSP_LIBRARY_PATH", "ADSP_LIBRARY_PATH", adsp);
  if (d->dsp_opt) step_str(s, "--dsp-library-path", "dsp_library_path_option", d->dsp_opt);
  judge(d, s, dsp, adsp);
  report_end(&d->rep, s);
}
