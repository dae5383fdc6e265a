/*
 * htpu-refbuild - builds a reference-backend model from its text description.
 *
 *   htpu-refbuild IN.txt OUT.bin     IN or OUT may be "-" for stdin / stdout
 *
 * data_file= paths in the description are relative to IN's directory (the current directory
 * for stdin). Exit status 0 on success, 1 on any error (message on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "file_open.h"
#include "refmodel.h"

static const char *const k_usage =
    "usage: htpu-refbuild IN.txt OUT.bin\n"
    "  Builds a reference-backend model (docs/reference-format.md) from its text description.\n"
    "  IN may be '-' for stdin and OUT '-' for stdout.\n";

/* Reads a whole stream into a NUL-terminated buffer. */
static char *read_all(FILE *f, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  for (;;) {
    if (n + 1 >= cap) {
      char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        errno = ENOMEM;
        return NULL;
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* The directory part of path ("." when it has none); caller frees. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

static int write_out(const char *path, const void *data, size_t len) {
  int to_stdout = strcmp(path, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "htpu-refbuild: cannot create %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t n = fwrite(data, 1, len, f);
  int rc = to_stdout ? fflush(f) : fclose(f);
  if (n != len || rc != 0) {
    fprintf(stderr, "htpu-refbuild: cannot write %s: %s\n", path, strerror(errno));
    if (!to_stdout) remove(path); /* never leave a partial model behind */
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    fputs(k_usage, stdout);
    return 0;
  }
  if (argc != 3) {
    fputs(k_usage, stderr);
    return 1;
  }
  const char *in = argv[1], *outp = argv[2];
  int from_stdin = strcmp(in, "-") == 0;
  FILE *f = stdin;
  if (!from_stdin) {
    char err[1024];
    uint64_t size = 0;
    /* never blocks on a FIFO or device: refused, saying what it is */
    int fd = file_open_regular(in, &size, err, sizeof err);
    f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
      if (fd >= 0) {
        snprintf(err, sizeof err, "cannot read %s: %s", in, strerror(errno));
        close(fd);
      }
      fprintf(stderr, "htpu-refbuild: %s\n", err);
      return 1;
    }
  }
  size_t len = 0;
  char *text = read_all(f, &len);
  int read_errno = errno;
  if (!from_stdin) fclose(f);
  if (!text) {
    fprintf(stderr, "htpu-refbuild: cannot read %s: %s\n", in, strerror(read_errno));
    return 1;
  }
  if (strlen(text) != len) {
    fprintf(stderr, "htpu-refbuild: %s: contains a NUL byte (not a text description)\n", in);
    free(text);
    return 1;
  }
  char *base = from_stdin ? strdup(".") : dir_of(in);
  void *bin = NULL;
  size_t bin_len = 0;
  char err[1024];
  int rc = 1;
  if (!base) {
    fprintf(stderr, "htpu-refbuild: out of memory\n");
  } else if (ref_build_from_text_at(text, base, &bin, &bin_len, err, sizeof err) != 0) {
    fprintf(stderr, "htpu-refbuild: %s: %s\n", from_stdin ? "<stdin>" : in, err);
  } else if (write_out(outp, bin, bin_len) == 0) {
    rc = 0;
  }
  free(bin);
  free(base);
  free(text);
  return rc;
}
