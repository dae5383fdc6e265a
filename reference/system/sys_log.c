/* sys_log.c - the system library's diagnostics: the bottom of reference/system (rs_internal.h),
 * used by the binary-info builder, the profile serializer and the context calls alike. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rs_internal.h"

void rs_log(const char *fmt, ...) {
  if (!getenv("HTPU_REF_SYSTEM_LOG")) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "htpu_refsystem: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
