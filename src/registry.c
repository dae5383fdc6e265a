/* registry.c - the non-owning lists a runtime keeps of its contexts (for shared-buffer
 * deregistration) and a context of its open graphs' states (for DSP-restart recovery, and so
 * that every handle of one graph shares one). */
#include "exec/exec.h"
#include "internal.h"
#include "base/base.h"

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
  int rc = vec_reserve(&rt->contexts, &rt->cap_contexts, rt->num_contexts, sizeof *rt->contexts, 8);
  if (rc == 0) rt->contexts[rt->num_contexts++] = c;
  pthread_mutex_unlock(&rt->contexts_lock);
  return rc;
}

void runtime_remove_context(runtime_obj *rt, context_obj *c) {
  pthread_mutex_lock(&rt->contexts_lock);
  list_remove((void **)rt->contexts, &rt->num_contexts, c);
  pthread_mutex_unlock(&rt->contexts_lock);
}

void runtime_release_registrations(runtime_obj *rt, int fd) {
  pthread_mutex_lock(&rt->contexts_lock);
  for (size_t i = 0; i < rt->num_contexts; i++)
    mem_cache_release(&rt->contexts[i]->mem, &rt->backend_lib, fd);
  pthread_mutex_unlock(&rt->contexts_lock);
}

graph_state *context_attach_graph(context_obj *c, uint32_t index, qnn_graph_handle_t qnn,
                                  graph_state **fresh) {
  graph_state *s = NULL;
  pthread_mutex_lock(&c->graphs_lock);
  for (size_t i = 0; !s && i < c->num_graphs; i++)
    if (c->graphs[i]->index == index) s = c->graphs[i];
  if (!s && vec_reserve(&c->graphs, &c->cap_graphs, c->num_graphs, sizeof *c->graphs, 8) == 0) {
    s = c->graphs[c->num_graphs++] = *fresh;
    *fresh = NULL;
    s->index = index;
    s->qnn = qnn;
  }
  if (s) s->handles++;
  pthread_mutex_unlock(&c->graphs_lock);
  return s;
}

int context_detach_graph(context_obj *c, graph_state *s) {
  pthread_mutex_lock(&c->graphs_lock);
  int last = --s->handles == 0;
  if (last) list_remove((void **)c->graphs, &c->num_graphs, s);
  pthread_mutex_unlock(&c->graphs_lock);
  return last;
}
