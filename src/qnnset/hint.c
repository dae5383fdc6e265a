/* hint.c - which installed QNN set can load a binary that the runtime refused because a newer
 * QNN release made it (qnnset.h): the first set, other than the one this process uses, whose
 * release, read from its build id, is not older than the release that made the binary. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "qnnset.h"

#define HINT_SETS 16

static int older(htpu_version3 a, htpu_version3 b) {
  if (a.major != b.major) return a.major < b.major;
  if (a.minor != b.minor) return a.minor < b.minor;
  return a.patch < b.patch;
}

static void append_hint(const htpu_qnn_set *s, const char *in_use) {
  if (!in_use[0]) {
    htpu_append_error("; the QNN set in '%s' (QAIRT %u.%u.%u) can load it: open the runtime "
                      "with qnn_set (Elixir :qnn, htpu --qnn)",
                      s->dir, s->release.major, s->release.minor, s->release.patch);
    return;
  }
  htpu_append_error("; the QNN set in '%s' (QAIRT %u.%u.%u) can load it, in a new OS process: "
                    "this one uses the set in '%s' for good (the DSP keeps a process's first "
                    "configuration), so start another with qnn_set (Elixir :qnn, htpu --qnn) "
                    "naming that set (docs/board.md, \"QNN sets\")",
                    s->dir, s->release.major, s->release.minor, s->release.patch, in_use);
}

void qnnset_hint(const htpu_model_info *m, int code) {
  unsigned v[3];
  if (!m || !m->build_id || sscanf(m->build_id, "v%u.%u.%u", &v[0], &v[1], &v[2]) != 3) return;
  htpu_version3 made = {v[0], v[1], v[2]};
  htpu_qnn_set *sets = calloc(HINT_SETS, sizeof *sets);
  if (!sets) return;
  char in_use[PATH_MAX];
  qnnset_claimed(in_use, sizeof in_use);
  /* htpu_qnn_sets_find clears the thread's error: keep the message being written */
  char msg[2048];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  uint32_t qnn = htpu_last_qnn_code();
  uint32_t n = 0;
  htpu_qnn_sets_find(NULL, sets, HINT_SETS, &n);
  htpu_set_error(code, qnn, "%s", msg);
  for (uint32_t i = 0; i < n && i < HINT_SETS; i++) {
    const htpu_qnn_set *s = &sets[i];
    /* the set in use refused it already, whatever its release says */
    if (!s->complete || !s->consistent || !s->release.major || older(s->release, made) ||
        strcmp(s->dir, in_use) == 0)
      continue;
    append_hint(s, in_use);
    break;
  }
  free(sets);
}
