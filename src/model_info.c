/* model_info.c - ownership of copied metadata, and file reading. */
#include "model_info.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errors.h"

typedef struct alloc_node {
  struct alloc_node *next;
  max_align_t align_; /* the payload follows, suitably aligned */
} alloc_node;

void *model_info_alloc(model_info *m, size_t size) {
  if (size > SIZE_MAX - sizeof(alloc_node)) return NULL;
  alloc_node *n = calloc(1, sizeof(alloc_node) + size);
  if (!n) return NULL;
  n->next = m->allocations;
  m->allocations = n;
  return (void *)(n + 1);
}

char *model_info_strdup(model_info *m, const char *s) {
  size_t n = strlen(s);
  char *d = model_info_alloc(m, n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

void model_info_free(model_info *m) {
  if (!m) return;
  alloc_node *n = m->allocations;
  while (n) {
    alloc_node *next = n->next;
    free(n);
    n = next;
  }
  free(m);
}

void htpu_model_info_free(htpu_model_info *info) { model_info_free((model_info *)info); }

int read_whole_file(const char *path, void **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return htpu_set_error(HTPU_EIO, 0, "cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return htpu_set_error(HTPU_EIO, 0, "'%s' is not a regular file", path);
  }
  if (st.st_size == 0) {
    fclose(f);
    return htpu_set_error(HTPU_EMODEL, 0, "'%s' is empty; expected a QNN context binary", path);
  }
  size_t len = (size_t)st.st_size;
  void *buf = malloc(len);
  if (!buf) {
    fclose(f);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory reading '%s' (%zu bytes)", path, len);
  }
  size_t got = fread(buf, 1, len, f);
  int err = ferror(f) ? errno : 0;
  fclose(f);
  if (got != len) {
    free(buf);
    return htpu_set_error(HTPU_EIO, 0, "reading '%s' failed after %zu of %zu bytes: %s", path,
                          got, len, err ? strerror(err) : "file changed while reading");
  }
  *out = buf;
  *out_len = len;
  return 0;
}
