/* resources.c - the three resource types and their destructors. */
#include "nif.h"

ErlNifResourceType *RUNTIME_RT;
ErlNifResourceType *CONTEXT_RT;
ErlNifResourceType *GRAPH_RT;

/* Destructors run on the scheduler that collected the term: they only hand the handle over. */
static void runtime_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_runtime *r = obj;
  nif_reaper_push(REAP_RUNTIME, atomic_exchange(&r->handle, NULL));
}

static void context_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_context *c = obj;
  nif_reaper_push(REAP_CONTEXT, atomic_exchange(&c->handle, NULL));
}

static void graph_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_graph *g = obj;
  nif_reaper_push(REAP_GRAPH, atomic_exchange(&g->handle, NULL));
  /* Nobody else can reach the resource any more, so its copied descriptors can go now. */
  if (g->inputs) enif_free(g->inputs);
  if (g->outputs) enif_free(g->outputs);
  g->inputs = g->outputs = NULL;
}

int nif_resources_open(ErlNifEnv *env) {
  /* TAKEOVER: on upgrade the new library instance becomes the owner of live resources (and
   * their destructor), so the old one can be purged while models are still open. */
  ErlNifResourceFlags flags = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  RUNTIME_RT = enif_open_resource_type(env, NULL, "htpu_runtime", runtime_dtor, flags, NULL);
  CONTEXT_RT = enif_open_resource_type(env, NULL, "htpu_context", context_dtor, flags, NULL);
  GRAPH_RT = enif_open_resource_type(env, NULL, "htpu_graph", graph_dtor, flags, NULL);
  return (RUNTIME_RT && CONTEXT_RT && GRAPH_RT) ? 0 : -1;
}
