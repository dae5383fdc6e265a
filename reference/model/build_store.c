/*
 * build_store.c - the text builder's state (build_text.h): errors that name their line, the
 * allocations a build keeps until it is freed, the graph being described and its tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_text.h"

int bt_oom(builder *b) { return refm_err(b->err, b->errlen, "out of memory"); }

int bt_line_err(builder *b, int line, const char *fmt, ...) {
  if (b->err && b->errlen) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(b->err, b->errlen, "line %d: %s", line, msg);
  }
  return -1;
}

/* Returns arr with room for element n (growing *cap), or NULL (arr is then still valid). */
void *bt_room_for(void *arr, uint32_t n, uint32_t *cap, size_t elem) {
  if (n < *cap) return arr;
  if (*cap > UINT32_MAX / 2) return NULL;
  uint32_t nc = *cap ? *cap * 2 : 8;
  void *np = realloc(arr, (size_t)nc * elem);
  if (np) *cap = nc;
  return np;
}

/* Takes ownership of p (freed with the builder); returns p, or NULL after freeing it. */
void *bt_keep(builder *b, void *p) {
  if (!p) return NULL;
  void **na = bt_room_for(b->allocs, b->nallocs, &b->cap_allocs, sizeof *na);
  if (!na) {
    free(p);
    return NULL;
  }
  b->allocs = na;
  b->allocs[b->nallocs++] = p;
  return p;
}

char *bt_keep_str(builder *b, const char *s) { return bt_keep(b, strdup(s)); }

bgraph *bt_current_graph(builder *b, const refm_tok *kw) {
  if (b->ng == 0) {
    bt_line_err(b, kw->line, "'%s' outside a graph (start one with 'graph NAME')", kw->text);
    return NULL;
  }
  return &b->graphs[b->ng - 1];
}

/* Index of the tensor called name in graph g, or -1. */
int64_t bt_find_tensor(const builder *b, uint32_t g, const char *name) {
  for (uint32_t i = b->nt; i-- > 0;)
    if (b->tensors[i].graph == g && strcmp(b->tensors[i].t.name, name) == 0) return i;
  return -1;
}

int bt_add_index(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v) {
  uint32_t *na = bt_room_for(*arr, *n, cap, sizeof *na);
  if (!na) return -1;
  *arr = na;
  na[(*n)++] = v;
  return 0;
}
