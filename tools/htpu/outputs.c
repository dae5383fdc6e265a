/* outputs.c - the output directory and the .npy files of `htpu run` (see outputs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"
#include "outputs.h"

#define NAME_MAX_BYTES 200

int cli_output_dir_prepare(const cli_command *cmd, const char *dir) {
  struct stat st;
  if (!dir[0]) return cli_usage_error(cmd, "--output-dir is empty");
  if (stat(dir, &st) != 0) {
    if (errno != ENOENT)
      return cli_fail(cmd, "output directory %s: %s", dir, strerror(errno));
    if (mkdir(dir, 0777) != 0)
      return cli_fail(cmd, "cannot create the output directory %s: %s", dir, strerror(errno));
    return CLI_EXIT_OK;
  }
  if (!S_ISDIR(st.st_mode)) return cli_fail(cmd, "output directory %s is not a directory", dir);
  if (access(dir, W_OK | X_OK) != 0)
    return cli_fail(cmd, "output directory %s is not writable: %s", dir, strerror(errno));
  return CLI_EXIT_OK;
}

static char *sanitized(const char *name, size_t index) {
  char base[NAME_MAX_BYTES + 1];
  size_t n = 0;
  for (const char *p = name ? name : ""; *p && n < NAME_MAX_BYTES; p++) {
    char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    base[n++] = ok ? c : '_';
  }
  base[n] = '\0';
  if (base[0] == '.') base[0] = '_';
  char *out = malloc(NAME_MAX_BYTES + 32);
  if (!out) return NULL;
  if (n == 0)
    snprintf(out, NAME_MAX_BYTES + 32, "output_%zu", index);
  else
    snprintf(out, NAME_MAX_BYTES + 32, "%s", base);
  return out;
}

static int taken(char **names, size_t n, const char *candidate) {
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(names[i], candidate) == 0) return 1;
  return 0;
}

int cli_output_names(const htpu_graph_info *gi, char ***names) {
  size_t n = gi->num_outputs;
  char **v = calloc(n ? n : 1, sizeof(*v));
  if (!v) return -1;
  for (size_t i = 0; i < n; i++) {
    char *base = sanitized(gi->outputs[i].name, i);
    if (!base) {
      cli_output_names_free(v, i);
      return -1;
    }
    size_t cap = strlen(base) + 32;
    v[i] = malloc(cap);
    if (!v[i]) {
      free(base);
      cli_output_names_free(v, i);
      return -1;
    }
    snprintf(v[i], cap, "%s.npy", base);
    /* the counter is bounded by n: at most n - 1 names can be in the way */
    for (size_t k = 2; taken(v, i, v[i]); k++) snprintf(v[i], cap, "%s_%zu.npy", base, k);
    free(base);
  }
  *names = v;
  return 0;
}

void cli_output_names_free(char **names, size_t n) {
  for (size_t i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

/* The file is written under a temporary name in the same directory and renamed over `path`:
 * rename replaces whatever entry is there, so a symlink planted at OUTDIR/NAME.npy is replaced,
 * never followed (opening the path itself would overwrite the link's target), and a reader never
 * sees a half-written file. mkstemp's O_EXCL creates the temporary name without following a
 * link either. */
int cli_write_npy(const cli_command *cmd, const char *path, htpu_dtype dtype,
                  const htpu_tensor_info *t, const void *data, size_t size) {
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
  size_t tmp_len = strlen(path) + 16;
  char *tmp = malloc(tmp_len);
  if (!tmp) return cli_fail(cmd, "out of memory");
  snprintf(tmp, tmp_len, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int err = errno;
    free(tmp);
    return cli_fail(cmd, "cannot create a file in the directory of %s: %s", path, strerror(err));
  }
  /* mkstemp makes the file 0600; give it the mode fopen would have (0666 less the umask) */
  mode_t mask = umask(0);
  umask(mask);
  FILE *f = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
  if (!f) {
    int err = errno;
    close(fd);
    unlink(tmp);
    free(tmp);
    return cli_fail(cmd, "cannot create %s: %s", path, strerror(err));
  }
  int bad = npy_write_header(f, dtype, t->dims, t->rank) != 0;
  if (!bad && size) bad = fwrite(data, 1, size, f) != size;
  /* fclose reports a delayed write error (NFS, full disk) */
  int err = bad ? errno : 0;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (bad) {
    unlink(tmp);
    free(tmp);
    return cli_fail(cmd, "writing %s failed: %s", path, err ? strerror(err) : "write error");
  }
  if (rename(tmp, path) != 0) {
    err = errno;
    unlink(tmp);
    free(tmp);
    return cli_fail(cmd, "cannot write %s: %s", path, strerror(err));
  }
  free(tmp);
  return CLI_EXIT_OK;
}
