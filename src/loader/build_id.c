/* build_id.c - the QAIRT release named by a QNN build id. */
#include <string.h>

#include "base/base.h"
#include "hexagon_tpu.h"

/* One decimal number of at most 9 digits (no overflow); advances *p. */
static int read_number(const char **p, uint32_t *out) {
  const char *s = *p;
  uint32_t v = 0;
  size_t n = 0;
  while (s[n] >= '0' && s[n] <= '9') {
    if (n == 9) return -1;
    v = v * 10u + (uint32_t)(s[n] - '0');
    n++;
  }
  if (n == 0) return -1;
  *out = v;
  *p = s + n;
  return 0;
}

/* QAIRT's form is "v2.25.0.240728104910_97711": release, then a build timestamp and number. */
int htpu_qairt_version_from_build_id(const char *build_id, htpu_version3 *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_qairt_version_from_build_id: out is NULL");
  memset(out, 0, sizeof *out);
  if (!build_id)
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_qairt_version_from_build_id: build_id is NULL");
  const char *p = build_id + (build_id[0] == 'v');
  uint32_t v[3];
  for (int i = 0; i < 3; i++) {
    if (read_number(&p, &v[i]) != 0 || (i < 2 && *p++ != '.')) goto malformed;
  }
  if (*p && !strchr("._-+", *p)) goto malformed;
  *out = (htpu_version3){v[0], v[1], v[2]};
  return 0;

malformed:
  return htpu_set_error(HTPU_EINVAL, 0,
                        "build id '%s' names no QAIRT release (expected the form "
                        "v2.25.0.240728104910_97711)",
                        build_id);
}
