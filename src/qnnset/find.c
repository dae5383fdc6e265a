/* find.c - htpu_qnn_sets_find: the QNN sets installed on an image. Where the board's image puts
 * them (/usr/lib with /usr/lib/dsp, /usr/lib/onnxruntime-qnn) and where a system may add one
 * (/usr/local/lib, /opt), plus the folders of HTPU_QNN_SET_PATH. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "qnnset.h"

typedef struct finder {
  htpu_qnn_set *sets;
  uint32_t max, count;
  htpu_qnn_set scratch;
} finder;

static void consider(finder *f, const char *dir) {
  if (qnnset_read(dir, &f->scratch) != 0) return;
  for (uint32_t i = 0; i < f->count && i < f->max; i++)
    if (strcmp(f->sets[i].dir, f->scratch.dir) == 0) return; /* found twice (a symlink) */
  if (f->count < f->max) f->sets[f->count] = f->scratch;
  f->count++;
}

/* dir itself, then each folder directly in it (sorted by name, so the order is stable). */
static void consider_tree(finder *f, const char *dir, int children) {
  consider(f, dir);
  if (!children) return;
  struct dirent **list = NULL;
  int n = scandir(dir, &list, NULL, alphasort);
  for (int i = 0; i < n; i++) {
    char path[PATH_MAX];
    if (list[i]->d_name[0] != '.' &&
        (size_t)snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name) < sizeof path)
      consider(f, path);
    free(list[i]);
  }
  free(list);
}

static void consider_opt(finder *f, const char *root) {
  char opt[PATH_MAX];
  snprintf(opt, sizeof opt, "%s/opt", root);
  struct dirent **list = NULL;
  int n = scandir(opt, &list, NULL, alphasort);
  for (int i = 0; i < n; i++) {
    char path[PATH_MAX];
    if (list[i]->d_name[0] != '.' &&
        (size_t)snprintf(path, sizeof path, "%s/%s", opt, list[i]->d_name) < sizeof path - 8) {
      consider(f, path);
      strcat(path, "/lib");
      consider(f, path);
    }
    free(list[i]);
  }
  free(list);
}

int htpu_qnn_sets_find(const char *root, htpu_qnn_set *sets, uint32_t max, uint32_t *count) {
  htpu_clear_error();
  if (!count || (max && !sets))
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_qnn_sets_find: NULL argument");
  finder *f = calloc(1, sizeof *f);
  if (!f) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  f->sets = sets;
  f->max = max;
  const char *r = root && root[0] && strcmp(root, "/") != 0 ? root : "";
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/usr/lib", r);
  consider_tree(f, dir, 1);
  snprintf(dir, sizeof dir, "%s/usr/local/lib", r);
  consider_tree(f, dir, 1);
  consider_opt(f, r);
  const char *env = getenv("HTPU_QNN_SET_PATH");
  while (env && *env) {
    size_t n = strcspn(env, ":");
    if (n && n < sizeof dir) {
      snprintf(dir, sizeof dir, "%.*s", (int)n, env);
      consider(f, dir);
    }
    env += n + (env[n] == ':');
  }
  *count = f->count;
  free(f);
  return 0;
}
