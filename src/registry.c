/* registry.c - the non-owning lists a runtime keeps of its contexts and a context of its
 * graphs (for shared-buffer deregistration and DSP-restart recovery). */
#include <stdlib.h>

#include "internal.h"

static int list_add(void ***items, size_t *n, size_t *cap, void *item) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 8;
    void **grown = realloc(*items, c * sizeof *grown);
    if (!grown) return -1;
    *items = grown;
    *cap = c;
  }
  (*items)[(*n)++] = item;
  return 0;
}

static void list_remove(void **items, size_t *n, const void *item) {
  for (size_t i = 0; i < *n; i++) {
    if (items[i] == item) {
      items[i] = items[--*n];
      return;
    }
  }
}

int runtime_add_context(runtime_obj *rt, context_obj *c) {
  pthread_mutex_lock(&rt->contexts_lock);
  int rc = list_add((void ***)&rt->contexts, &rt->num_contexts, &rt->cap_contexts, c);
  pthread_mutex_unlock(&rt->contexts_lock);
  return rc;
}

void runtime_remove_context(runtime_obj *rt, context_obj *c) {
  pthread_mutex_lock(&rt->contexts_lock);
  list_remove((void **)rt->contexts, &rt->num_contexts, c);
  pthread_mutex_unlock(&rt->contexts_lock);
}

int context_add_graph(context_obj *c, graph_obj *g) {
  pthread_mutex_lock(&c->graphs_lock);
  int rc = list_add((void ***)&c->graphs, &c->num_graphs, &c->cap_graphs, g);
  pthread_mutex_unlock(&c->graphs_lock);
  return rc;
}

void context_remove_graph(context_obj *c, graph_obj *g) {
  pthread_mutex_lock(&c->graphs_lock);
  list_remove((void **)c->graphs, &c->num_graphs, g);
  pthread_mutex_unlock(&c->graphs_lock);
}
