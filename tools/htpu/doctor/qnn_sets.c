/* qnn_sets.c - the `qnn_sets` step: every QNN set installed on the image (htpu_qnn_sets_find:
 * /usr/lib with /usr/lib/dsp, /usr/lib/onnxruntime-qnn, ...; under --root for a board's copy),
 * each with its release from its files' build ids and whether its stub and skel are of that
 * release. Which one the runtime uses is the backend (or --qnn); the others are a choice, not
 * a hazard, as long as one process uses one (docs/board.md, "QNN sets"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

#define SHOWN_SETS 16

static void add_row(step *s, const htpu_qnn_set *q, int in_use) {
  char release[32] = "unknown";
  if (q->release.major)
    snprintf(release, sizeof release, "%" PRIu32 ".%" PRIu32 ".%" PRIu32, q->release.major,
             q->release.minor, q->release.patch);
  report_row *row = step_row(s, "%s: QAIRT %s, %s layout, %s%s", q->dir, release, q->layout,
                             q->complete && q->consistent ? "stub and skel of its release"
                                                          : q->note,
                             in_use ? " (in use)" : "");
  if (!row) return;
  row_str(row, "dir", q->dir);
  row_str(row, "release", q->release.major ? release : "");
  row_str(row, "layout", q->layout);
  row_str(row, "build_id", q->build_id);
  row_bool(row, "complete", q->complete);
  row_bool(row, "consistent", q->consistent);
  row_bool(row, "in_use", in_use);
  row_str(row, "note", q->note);
}

void check_qnn_sets(doctor *d) {
  step *s = report_begin(&d->rep, "qnn_sets", "QNN sets on the image");
  htpu_qnn_set *sets = calloc(SHOWN_SETS, sizeof *sets);
  uint32_t n = 0;
  int rc = sets ? htpu_qnn_sets_find(d->root, sets, SHOWN_SETS, &n) : HTPU_ENOMEM;
  if (rc) {
    step_set(s, ST_WARN, "could not look for QNN sets: %s", htpu_last_error());
    free(sets);
    report_end(&d->rep, s);
    return;
  }
  uint32_t usable = 0, shown = n < SHOWN_SETS ? n : SHOWN_SETS;
  for (uint32_t i = 0; i < shown; i++) {
    int in_use = strcmp(sets[i].backend_lib, d->ro.backend_lib ? d->ro.backend_lib : "") == 0;
    usable += sets[i].complete && sets[i].consistent;
    add_row(s, &sets[i], in_use);
  }
  step_rows(s, "sets", "sets");
  if (n == 0)
    step_set(s, ST_SKIP, "none found (a set is a folder holding libQnnHtp.so with its system "
             "library, stub and skel)");
  else if (usable < shown)
    step_set(s, ST_WARN, "%" PRIu32 " found, %" PRIu32 " of them usable (one release's stub and "
             "skel beside its backend)", n, usable);
  else
    step_set(s, ST_OK, "%" PRIu32 " found, each with its own release's stub and skel", n);
  if (usable < shown)
    step_hint(s, "a set whose stub or skel is of another release fails device creation with "
              "14001: keep each release's four files together");
  else if (n > 1)
    step_hint(s, "choose one with --qnn DIR (Elixir :qnn, C qnn_set); one set per OS process "
              "(docs/board.md, \"QNN sets\")");
  free(sets);
  report_end(&d->rep, s);
}
