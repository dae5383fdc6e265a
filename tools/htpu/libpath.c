/* libpath.c - the "reference" library path shorthand, and which libraries a command opens. */
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

int cli_resolve_libs(const char *backend_opt, const char *system_opt, cli_libs *out) {
  int failed = 0;
  out->backend_lib = cli_resolve_lib(backend_opt, CLI_REFERENCE_BACKEND, out->backend_buf,
                                     sizeof(out->backend_buf), &failed);
  if (failed) return -1;
  /* Only the word: a backend given by path is whatever library the user chose, and its system
   * library is theirs to choose too (as with `backend: path` in Elixir). */
  if (!system_opt && backend_opt && strcmp(backend_opt, "reference") == 0) system_opt = "reference";
  out->system_lib = cli_resolve_lib(system_opt, CLI_REFERENCE_SYSTEM, out->system_buf,
                                    sizeof(out->system_buf), &failed);
  return failed ? -1 : 0;
}
