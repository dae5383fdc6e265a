/*
 * ref_providers.h - provider lists built from a spec string, shared by the reference backend
 * (QnnInterface_getProviders) and system library (QnnSystemInterface_getProviders). Header-only,
 * like ref_faultrules.h, because each library links its own copy.
 *
 * A spec is a comma-separated list of items; each item becomes one provider block, built by
 * the library's own callback (exactly sized to its version's table). Lists are cached by spec
 * and stay valid until the library is unloaded, as a real library's providers do.
 */
#ifndef HTPU_REF_PROVIDERS_H
#define HTPU_REF_PROVIDERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnn/qnn_abi.h"

typedef struct ref_provider_set {
  struct ref_provider_set *next;
  char *spec;
  uint32_t count; /* providers handed out */
  uint32_t cap;   /* entries allocated (partial builds are freed by cap) */
  void **list;    /* exactly count provider blocks */
  char **names;   /* each block's provider name (its own allocation) */
} ref_provider_set;

/* Builds one provider block from an item of `len` bytes. On success sets *name (malloc'ed, the
 * block points to it) and *block (malloc'ed) and returns 0; else -1 with a message in err. */
typedef int (*ref_provider_build_fn)(const char *item, size_t len, char **name, void **block,
                                     char *err, size_t errlen);

/* "MAJ.MIN.PATCH" of exactly n bytes. */
static inline int ref_parse_version(const char *s, size_t n, qnn_version_t *v) {
  char buf[40], tail;
  if (n == 0 || n >= sizeof(buf)) return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  return sscanf(buf, "%u.%u.%u%c", &v->major, &v->minor, &v->patch, &tail) == 3 ? 0 : -1;
}

static inline void ref_provider_set_free(ref_provider_set *s) {
  for (uint32_t i = 0; i < s->cap; i++) {
    free(s->list[i]);
    free(s->names[i]);
  }
  free(s->list);
  free(s->names);
  free(s->spec);
  free(s);
}

static inline ref_provider_set *ref_provider_set_build(const char *spec,
                                                       ref_provider_build_fn build, char *err,
                                                       size_t errlen) {
  ref_provider_set *s = calloc(1, sizeof(*s));
  if (!s || !(s->spec = strdup(spec))) goto oom;
  uint32_t n = *spec ? 1 : 0;
  for (const char *p = spec; *p; p++) n += *p == ',';
  if (n) {
    s->list = calloc(n, sizeof(*s->list));
    s->names = calloc(n, sizeof(*s->names));
    if (!s->list || !s->names) goto oom;
    s->cap = n;
  }
  const char *p = spec;
  for (uint32_t i = 0; i < n; i++) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (build(p, len, &s->names[i], &s->list[i], err, errlen) != 0) {
      ref_provider_set_free(s);
      return NULL;
    }
    s->count = i + 1;
    p = end ? end + 1 : p + len;
  }
  return s;
oom:
  snprintf(err, errlen, "out of memory");
  if (s) ref_provider_set_free(s);
  return NULL;
}

/* The cached set for spec, built on first use. The caller holds the lock guarding *sets.
 * NULL on a syntax error (message in err). */
static inline ref_provider_set *ref_provider_set_get(ref_provider_set **sets, const char *spec,
                                                     ref_provider_build_fn build, char *err,
                                                     size_t errlen) {
  ref_provider_set *s = *sets;
  while (s && strcmp(s->spec, spec) != 0) s = s->next;
  if (!s && (s = ref_provider_set_build(spec, build, err, errlen))) {
    s->next = *sets;
    *sets = s;
  }
  return s;
}

static inline void ref_provider_sets_free(ref_provider_set **sets) {
  while (*sets) {
    ref_provider_set *s = *sets;
    *sets = s->next;
    ref_provider_set_free(s);
  }
}

#endif
