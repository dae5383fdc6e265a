/* vtcm.c - see vtcm.h. */
#include "vtcm.h"

#include <inttypes.h>
#include <stdio.h>

uint64_t vtcm_reported_to_bytes(uint64_t reported) {
  return reported < VTCM_MIB ? reported * VTCM_MIB : reported;
}

void vtcm_format(uint64_t bytes, char *buf, size_t len) {
  if (bytes % VTCM_MIB == 0)
    snprintf(buf, len, "%" PRIu64 " MB", bytes / VTCM_MIB);
  else
    snprintf(buf, len, "%" PRIu64 " bytes", bytes);
}
