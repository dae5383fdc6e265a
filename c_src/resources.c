/* resources.c - the resource types, their destructors, and the runtime link. */
#include <string.h>

#include "nif.h"

ErlNifResourceType *RUNTIME_RT;
ErlNifResourceType *CONTEXT_RT;
ErlNifResourceType *GRAPH_RT;
ErlNifResourceType *SHARED_RT;
ErlNifResourceType *VIEW_RT;

/* ---- runtime link -------------------------------------------------------------------------- */

nif_rt_link *nif_link_new(htpu_runtime *h) {
  nif_rt_link *l = enif_alloc(sizeof *l);
  if (!l) return NULL;
  l->lock = enif_mutex_create("htpu_runtime_link");
  if (!l->lock) {
    enif_free(l);
    return NULL;
  }
  atomic_init(&l->refs, 1);
  atomic_init(&l->handle, h);
  atomic_init(&l->fallback_warned, 0);
  return l;
}

void nif_link_retain(nif_rt_link *l) {
  if (l) atomic_fetch_add(&l->refs, 1);
}

void nif_link_release(nif_rt_link *l) {
  if (!l || atomic_fetch_sub(&l->refs, 1) != 1) return;
  enif_mutex_destroy(l->lock);
  enif_free(l);
}

void nif_link_shared_note(nif_rt_link *l, char *buf, size_t len) {
  buf[0] = '\0';
  if (!l || len == 0) return;
  enif_mutex_lock(l->lock);
  htpu_runtime *h = atomic_load(&l->handle);
  htpu_runtime_info ri;
  if (h && htpu_runtime_get_info(h, &ri) == 0 && ri.shared_memory_note) {
    strncpy(buf, ri.shared_memory_note, len - 1);
    buf[len - 1] = '\0';
  }
  enif_mutex_unlock(l->lock);
}

/* ---- destructors ----------------------------------------------------------------------------
 * They run on the scheduler that collected the term: they only hand the handle over. */

static void runtime_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_runtime *r = obj;
  if (!r->link) return; /* open failed before the link existed */
  enif_mutex_lock(r->link->lock);
  htpu_runtime *h = atomic_exchange(&r->link->handle, NULL);
  enif_mutex_unlock(r->link->lock);
  nif_reaper_push(REAP_RUNTIME, h);
  nif_link_release(r->link);
  r->link = NULL;
}

static void context_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_context *c = obj;
  nif_reaper_push(REAP_CONTEXT, atomic_exchange(&c->handle, NULL));
  nif_link_release(c->link);
  c->link = NULL;
}

static void graph_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_graph *g = obj;
  nif_reaper_push(REAP_GRAPH, atomic_exchange(&g->handle, NULL));
  /* Nobody else can reach the resource any more, so its copied descriptors can go now. */
  if (g->inputs) enif_free(g->inputs);
  if (g->outputs) enif_free(g->outputs);
  g->inputs = g->outputs = NULL;
  nif_link_release(g->link);
  g->link = NULL;
}

int nif_resources_open(ErlNifEnv *env) {
  /* TAKEOVER: on upgrade the new library instance becomes the owner of live resources (and
   * their destructor), so the old one can be purged while models are still open. */
  ErlNifResourceFlags flags = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  RUNTIME_RT = enif_open_resource_type(env, NULL, "htpu_runtime", runtime_dtor, flags, NULL);
  CONTEXT_RT = enif_open_resource_type(env, NULL, "htpu_context", context_dtor, flags, NULL);
  GRAPH_RT = enif_open_resource_type(env, NULL, "htpu_graph", graph_dtor, flags, NULL);
  SHARED_RT = enif_open_resource_type(env, NULL, "htpu_shared", nif_shared_dtor, flags, NULL);
  VIEW_RT = enif_open_resource_type(env, NULL, "htpu_shared_view", nif_view_dtor, flags, NULL);
  return (RUNTIME_RT && CONTEXT_RT && GRAPH_RT && SHARED_RT && VIEW_RT) ? 0 : -1;
}
