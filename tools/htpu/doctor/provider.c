/* provider.c - the `backend_provider` step: what the backend library says about itself
 * (htpu_backend_probe), reported right after it loads, whatever fails later. On a board whose
 * DSP is down this is still how the user learns which QAIRT is installed. */
#include <inttypes.h>
#include <stdio.h>

#include "../util.h"
#include "doctor.h"

static void report_facts(doctor *d, step *s) {
  const htpu_backend_facts *f = &d->facts;
  char shown[96];
  snprintf(shown, sizeof(shown), "%" PRIu32 " (%s)", f->backend_id,
           cli_backend_name(f->backend_id));
  step_str_shown(s, "provider", "provider_name", f->provider_name,
                 f->provider_name[0] ? f->provider_name : "(no name)");
  step_uint(s, "backend id", "backend_id", f->backend_id, shown);
  step_version(s, "core API", "core_api_version", f->core_api_version);
  step_version(s, "backend API", "backend_api_version", f->backend_api_version);
  step_str_shown(s, "build id", "build_id", f->build_id, f->build_id[0] ? f->build_id : "(none)");
  step_str_shown(s, "QAIRT release", "qairt_version", d->qairt[0] ? d->qairt : NULL,
                 d->qairt[0] ? d->qairt : "(the build id does not name it)");
  char core[48];
  cli_format_version(f->core_api_version, core, sizeof(core));
  step_set(s, ST_OK, "%s, backend id %s, core API %s%s%s",
           f->provider_name[0] ? f->provider_name : "(no name)", shown, core,
           d->qairt[0] ? ", QAIRT " : "", d->qairt);
}

void check_provider(doctor *d) {
  step *s = report_begin(&d->rep, "backend_provider", "backend provider");
  if (!d->backend_loads) {
    step_set(s, ST_SKIP, "not attempted: the backend library does not load");
    report_end(&d->rep, s);
    return;
  }
  /* The provider the runtime would pick: the same backend id option. */
  int rc = htpu_backend_probe(d->ro.backend_lib, d->ro.backend_id, &d->facts);
  if (rc != 0) {
    step_set(s, ST_FAIL, "%s: %s", htpu_err_name(rc), htpu_last_error());
    doctor_runtime_hint(d, s, rc, htpu_last_qnn_code(), htpu_last_error());
    report_end(&d->rep, s);
    return;
  }
  doctor_set_qairt(d, d->facts.build_id);
  report_facts(d, s);
  report_end(&d->rep, s);
}
