/* external.c - see external.h. */
#include "external.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_file.h"
#include "base/base.h"
#include "hexagon_tpu.h"

/* The folder of a path ("." when it has none). */
static void folder_of(const char *path, char *out, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(out, len, ".");
  else if (slash == path)
    snprintf(out, len, "/");
  else
    snprintf(out, len, "%.*s", (int)(slash - path), path);
}

int external_read(const char *model_path, const char *name, void **out, size_t *len,
                  char *path_out, size_t path_len) {
  *out = NULL;
  *len = 0;
  char dir[PATH_MAX], joined[PATH_MAX + 8], rdir[PATH_MAX], rfile[PATH_MAX];
  folder_of(model_path, dir, sizeof dir);
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", dir, name) >= sizeof joined)
    return htpu_set_error(HTPU_EMODEL, 0, "the external binary's path '%s/%s' is too long", dir,
                          name);
  snprintf(path_out, path_len, "%s", joined);
  if (!realpath(dir, rdir))
    return htpu_set_error(HTPU_EIO, 0, "the model's folder '%s': %s", dir, strerror(errno));
  if (!realpath(joined, rfile)) {
    int e = errno;
    return htpu_set_error(HTPU_EIO, 0,
                          "the context binary '%s' that the model names (ep_cache_context, "
                          "embed_mode 0) cannot be opened: %s; it must lie beside the model",
                          joined, strerror(e));
  }
  size_t n = strlen(rdir);
  int inside = strncmp(rfile, rdir, n) == 0 && (rdir[n - 1] == '/' || rfile[n] == '/');
  if (!inside)
    return htpu_set_error(HTPU_EMODEL, 0,
                          "the context binary '%s' that the model names resolves to '%s', "
                          "outside the model's folder '%s' (through a symlink); refused",
                          joined, rfile, rdir);
  /* the resolved path: no symlink left to swap between the check and the open */
  return read_whole_file(rfile, out, len);
}
