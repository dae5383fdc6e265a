/* priority.c - the names of htpu_priority (htpu --priority, the NIF's atoms). */
#include <string.h>

#include "errors.h"
#include "hexagon_tpu.h"

static const char *const names[HTPU_PRIORITY_COUNT] = {
    [HTPU_PRIORITY_DEFAULT] = "default",
    [HTPU_PRIORITY_LOW] = "low",
    [HTPU_PRIORITY_NORMAL] = "normal",
    [HTPU_PRIORITY_NORMAL_HIGH] = "normal_high",
    [HTPU_PRIORITY_HIGH] = "high",
};

const char *htpu_priority_name(htpu_priority p) {
  return (unsigned)p < HTPU_PRIORITY_COUNT ? names[p] : NULL;
}

int htpu_priority_from_name(const char *name, htpu_priority *out) {
  for (unsigned i = 0; name && i < HTPU_PRIORITY_COUNT; i++) {
    if (strcmp(name, names[i]) == 0) {
      if (out) *out = (htpu_priority)i;
      return 0;
    }
  }
  return htpu_set_error(HTPU_EINVAL, 0,
                        "unknown priority '%s': expected low, normal, normal_high, high (or "
                        "default)",
                        name ? name : "(null)");
}
