/* libpath.c - the "reference" library path shorthand. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

const char *cli_resolve_lib(const char *value, const char *refname, char *buf, size_t len,
                            int *failed) {
  *failed = 0;
  if (!value || strcmp(value, "reference") != 0) return value;

  char dir[4096];
  const char *env = getenv("HTPU_REFERENCE_DIR");
  if (env && env[0]) {
    if (strlen(env) >= sizeof(dir)) goto too_long;
    strcpy(dir, env);
  } else {
    /* /proc/self/exe rather than argv[0]: it is right however htpu was started (PATH lookup,
     * symlink, relative path from another directory). */
    ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
    if (n < 0) {
      fprintf(stderr, "htpu: cannot locate the reference libraries: readlink /proc/self/exe: %s\n",
              strerror(errno));
      *failed = 1;
      return NULL;
    }
    if ((size_t)n >= sizeof(dir) - 1) goto too_long;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash == dir)
      dir[1] = '\0';
    else if (slash)
      *slash = '\0';
  }
  int w = snprintf(buf, len, "%s/%s", dir, refname);
  if (w < 0 || (size_t)w >= len) goto too_long;
  return buf;

too_long:
  fprintf(stderr, "htpu: path of the reference library %s is too long\n", refname);
  *failed = 1;
  return NULL;
}
