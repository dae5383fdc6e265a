/* qnn_sets.c - see qnn_sets.h. */
#include "qnn_sets.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define VERDICT_SETS 16

static int older(htpu_version3 a, htpu_version3 b) {
  if (a.major != b.major) return a.major < b.major;
  if (a.minor != b.minor) return a.minor < b.minor;
  return a.patch < b.patch;
}

/* 1 can load, 0 cannot, -1 unknown; why says so. */
static int verdict(const htpu_model_info *m, const htpu_qnn_set *s, char *why, size_t len) {
  htpu_version3 made;
  if (!s->complete || !s->consistent) {
    snprintf(why, len, "not usable: %s", s->note);
    return 0;
  }
  if (!s->release.major) {
    snprintf(why, len, "its backend carries no QAIRT build id");
    return -1;
  }
  if (!m->build_id || htpu_qairt_version_from_build_id(m->build_id, &made) != 0) {
    snprintf(why, len, "the binary's build id '%s' names no QAIRT release",
             m->build_id ? m->build_id : "");
    return -1;
  }
  if (older(s->release, made)) {
    snprintf(why, len, "the binary was made by QAIRT %" PRIu32 ".%" PRIu32 ".%" PRIu32
             ", newer than this set's %" PRIu32 ".%" PRIu32 ".%" PRIu32, made.major, made.minor,
             made.patch, s->release.major, s->release.minor, s->release.patch);
    return 0;
  }
  snprintf(why, len, "made by QAIRT %" PRIu32 ".%" PRIu32 ".%" PRIu32 ", not newer than the set",
           made.major, made.minor, made.patch);
  return 1;
}

static htpu_qnn_set *find_sets(uint32_t *n) {
  htpu_qnn_set *sets = calloc(VERDICT_SETS, sizeof *sets);
  if (!sets || htpu_qnn_sets_find(NULL, sets, VERDICT_SETS, n) != 0) *n = 0;
  if (*n > VERDICT_SETS) *n = VERDICT_SETS;
  return sets;
}

int cli_qnn_verdict_print(const htpu_model_info *m) {
  uint32_t n = 0;
  htpu_qnn_set *sets = find_sets(&n);
  printf("\nQNN sets on this machine:%s\n", n ? "" : " none found");
  cli_table t;
  cli_table_init(&t, 3);
  for (uint32_t i = 0; i < n; i++) {
    char why[700];
    int v = verdict(m, &sets[i], why, sizeof why);
    const char *row[] = {sets[i].dir, v > 0 ? "can load it" : v == 0 ? "cannot" : "unknown", why};
    cli_table_add(&t, row);
  }
  int rc = n ? cli_table_print(&t, stdout, 2) : 0;
  cli_table_free(&t);
  free(sets);
  return rc;
}

void cli_qnn_verdict_json(cli_json *j, const htpu_model_info *m) {
  uint32_t n = 0;
  htpu_qnn_set *sets = find_sets(&n);
  cli_json_array_begin(j, "qnn_sets", 0);
  for (uint32_t i = 0; i < n; i++) {
    char why[700], release[48];
    int v = verdict(m, &sets[i], why, sizeof why);
    cli_format_version(sets[i].release, release, sizeof release);
    cli_json_object_begin(j, NULL);
    cli_json_string(j, "dir", sets[i].dir);
    cli_json_string(j, "release", sets[i].release.major ? release : NULL);
    if (v < 0) cli_json_null(j, "can_load");
    else cli_json_bool(j, "can_load", v);
    cli_json_string(j, "why", why);
    cli_json_object_end(j);
  }
  cli_json_array_end(j);
  free(sets);
}
