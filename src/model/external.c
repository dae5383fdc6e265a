/* external.c - see external.h. */
#include "external.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "binary_file.h"
#include "file_open.h"
#include "hexagon_tpu.h"
#include "printable.h"

#define SHOWN_MAX 1024

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

/* The resolved file: inside the folder, not the folder itself, a regular file; its identity. */
static int check_resolved(const char *shown, const char *rdir, const char *rfile,
                          external_file *f) {
  char sd[SHOWN_MAX], sf[SHOWN_MAX];
  size_t n = strlen(rdir);
  if (strcmp(rfile, rdir) == 0)
    return htpu_set_error(HTPU_EMODEL, 0,
                          "the context binary '%s' that the model names is the model's folder "
                          "itself; expected the name of a file in it",
                          shown);
  int inside = strncmp(rfile, rdir, n) == 0 && (rdir[n - 1] == '/' || rfile[n] == '/');
  if (!inside)
    return htpu_set_error(HTPU_EMODEL, 0,
                          "the context binary '%s' that the model names resolves to '%s', "
                          "outside the model's folder '%s' (through a symlink); refused",
                          shown, printable_str(rfile, sf, sizeof sf),
                          printable_str(rdir, sd, sizeof sd));
  char err[1200];
  uint64_t size = 0;
  /* opened to learn what it is, never blocking on a FIFO or device; nothing is read */
  int fd = file_open_regular(rfile, &size, err, sizeof err);
  if (fd < 0)
    return htpu_set_error(HTPU_EIO, 0, "the context binary that the model names: %s", err);
  struct stat st;
  int ok = fstat(fd, &st) == 0;
  close(fd);
  if (!ok)
    return htpu_set_error(HTPU_EIO, 0, "the context binary '%s': %s", shown, strerror(errno));
  f->dev = (uint64_t)st.st_dev;
  f->ino = (uint64_t)st.st_ino;
  f->size = size;
  return 0;
}

int external_locate(const char *model_path, const char *name, external_file *f) {
  memset(f, 0, sizeof *f);
  char dir[PATH_MAX], joined[PATH_MAX + 8], rdir[PATH_MAX], rfile[PATH_MAX], shown[SHOWN_MAX];
  folder_of(model_path, dir, sizeof dir);
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", dir, name) >= sizeof joined)
    return htpu_set_error(HTPU_EMODEL, 0, "the external binary's path '%s/%s' is too long",
                          printable_str(dir, (char[SHOWN_MAX]){0}, SHOWN_MAX),
                          printable_str(name, shown, sizeof shown));
  printable_str(joined, shown, sizeof shown);
  if (!realpath(dir, rdir))
    return htpu_set_error(HTPU_EIO, 0, "the model's folder '%s': %s",
                          printable_str(dir, (char[SHOWN_MAX]){0}, SHOWN_MAX), strerror(errno));
  if (!realpath(joined, rfile)) {
    int e = errno;
    return htpu_set_error(HTPU_EIO, 0,
                          "the context binary '%s' that the model names (ep_cache_context, "
                          "embed_mode 0) cannot be opened: %s; it must lie beside the model",
                          shown, strerror(e));
  }
  int rc = check_resolved(shown, rdir, rfile, f);
  if (!rc) {
    f->shown = strdup(shown);
    f->real = strdup(rfile);
    if (!f->shown || !f->real) rc = htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  if (rc) external_file_clear(f);
  return rc;
}

int external_open(const external_file *f, int allow_map, model_binary *out) {
  memset(out, 0, sizeof *out);
  uint64_t size = 0;
  /* the resolved path, checked again to be the file located: a file swapped for another (or
   * for a symlink out of the folder) since is refused rather than mapped or read */
  int fd = binary_file_open(f->real, &size);
  if (fd < 0) return fd;
  struct stat st;
  if (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino) {
    close(fd);
    return htpu_set_error(HTPU_EMODEL, 0,
                          "the context binary '%s' was replaced by another file while the "
                          "model was being read; refused",
                          f->shown);
  }
  int rc = binary_open_fd(fd, f->real, size, allow_map, out);
  close(fd); /* a mapping stays valid without the descriptor */
  return rc;
}

void external_file_clear(external_file *f) {
  free(f->shown);
  free(f->real);
  memset(f, 0, sizeof *f);
}
