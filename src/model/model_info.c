/* model_info.c - ownership of copied metadata. */
#include <stdio.h>
#include "model_info.h"

#include <stdlib.h>
#include <string.h>

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

void model_info_adopt(model_info *m, model_info *from) {
  alloc_node **tail = &m->allocations;
  while (*tail) tail = &(*tail)->next;
  *tail = from->allocations;
  from->allocations = NULL;
  free(from);
}

void htpu_model_info_free(htpu_model_info *info) { model_info_free((model_info *)info); }

void model_info_graph_names(const htpu_model_info *info, const uint8_t *only, char *buf,
                            size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0, k = 0; i < info->num_graphs && used + 1 < len; i++) {
    if (only && !only[i]) continue;
    int w = snprintf(buf + used, len - used, "%s'%s'", k++ ? ", " : "", info->graphs[i].name);
    if (w < 0) break;
    used += (size_t)w;
  }
}
