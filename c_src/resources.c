/* resources.c - the resource types, their destructors, and the runtime link. */
#include <string.h>
#include <time.h>

#include "nif.h"

ErlNifResourceType *RUNTIME_RT;
ErlNifResourceType *CONTEXT_RT;
ErlNifResourceType *GRAPH_RT;
ErlNifResourceType *SHARED_RT;
ErlNifResourceType *VIEW_RT;

/* ---- runtime link -------------------------------------------------------------------------- */

/* CLOCK_MONOTONIC, not enif_monotonic_time: the destructors that call it may run on any thread
 * that releases a resource, and only durations are compared. */
static int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
  atomic_init(&l->users, 0);
  atomic_init(&l->idle_since_ms, monotonic_ms());
  nif_live_init(&l->live);
  nif_live_add(&l->live, NIF_LIVE_RUNTIME);
  return l;
}

void nif_link_retain(nif_rt_link *l) {
  if (l) atomic_fetch_add(&l->refs, 1);
}

void nif_link_release(nif_rt_link *l) {
  if (!l || atomic_fetch_sub(&l->refs, 1) != 1) return;
  nif_live_remove(&l->live);
  enif_mutex_destroy(l->lock);
  enif_free(l);
}

void nif_link_user_opened(nif_rt_link *l) {
  if (l) atomic_fetch_add(&l->users, 1);
}

void nif_link_user_left(nif_rt_link *l) {
  /* A user opened right after the count reached 0 makes the stamp moot: only a count of 0 is
   * ever read together with it. */
  if (l && atomic_fetch_sub(&l->users, 1) == 1) atomic_store(&l->idle_since_ms, monotonic_ms());
}

void nif_link_usage(nif_rt_link *l, unsigned *users, int64_t *idle_ms) {
  *users = atomic_load(&l->users);
  int64_t since = atomic_load(&l->idle_since_ms), now = monotonic_ms();
  *idle_ms = *users || now < since ? 0 : now - since;
}

/* ---- tensor info copies ---------------------------------------------------------------------- */

int nif_slot_copy(nif_slot *s, const htpu_tensor_info *t, size_t offset) {
  memset(s, 0, sizeof *s);
  s->offset = offset;
  s->size = t->byte_size;
  s->info = *t;
  s->info.name = "";
  s->info.quant.scales = NULL;
  s->info.quant.zero_points = NULL;
  size_t n = strlen(t->name ? t->name : "") + 1;
  if (!(s->name = enif_alloc(n))) return -1;
  memcpy(s->name, t->name ? t->name : "", n);
  s->info.name = s->name;
  if (t->quant.kind == HTPU_QUANT_PER_AXIS && t->quant.num_channels) {
    size_t c = t->quant.num_channels;
    s->scales = enif_alloc(c * sizeof *s->scales);
    s->zero_points = enif_alloc(c * sizeof *s->zero_points);
    if (!s->scales || !s->zero_points) return -1;
    memcpy(s->scales, t->quant.scales, c * sizeof *s->scales);
    memcpy(s->zero_points, t->quant.zero_points, c * sizeof *s->zero_points);
    s->info.quant.scales = s->scales;
    s->info.quant.zero_points = s->zero_points;
  }
  return 0;
}

void nif_slot_free(nif_slot *s) {
  if (s->name) enif_free(s->name);
  if (s->scales) enif_free(s->scales);
  if (s->zero_points) enif_free(s->zero_points);
  s->name = NULL;
  s->scales = NULL;
  s->zero_points = NULL;
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
  nif_live_remove(&c->live);
  htpu_context *h = atomic_exchange(&c->handle, NULL);
  if (h) nif_link_user_left(c->link);
  nif_reaper_push(REAP_CONTEXT, h);
  nif_link_release(c->link);
  c->link = NULL;
}

static void graph_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_graph *g = obj;
  nif_live_remove(&g->live);
  htpu_graph *h = atomic_exchange(&g->handle, NULL);
  if (h) nif_link_user_left(g->link);
  nif_reaper_push(REAP_GRAPH, h);
  /* Nobody else can reach the resource any more (a shared IO buffer made from it holds a
   * reference), so its copied tensor infos can go now. */
  if (g->tensors) {
    for (uint32_t i = 0; i < g->num_inputs + g->num_outputs; i++) nif_slot_free(&g->tensors[i]);
    enif_free(g->tensors);
  }
  g->tensors = NULL;
  nif_link_release(g->link);
  g->link = NULL;
}

/* ---- telling handles apart -------------------------------------------------------------------
 * After a full purge of HexagonTpu.NIF and a fresh load from the same path, ERTS unlinks the old
 * resource types but keeps each alive while resources of it are (their destructors still run),
 * and this library's statics are the same mapping: so the types of earlier instances are kept
 * here, and a term that matches one of them is a handle of a purged copy. A reference that
 * matches no type, current or retired, was not made by this library at all. (A copy loaded from
 * another path has statics of its own: its purged handles read as foreign ones.) A bounded
 * ring: each purge-and-reload retires one set. Written only while the module is loaded (by
 * ERTS, one load at a time), read by any scheduler: atomics. */
#define RETIRED_SETS 8
static ErlNifResourceType *_Atomic retired[RETIRED_SETS][NIF_KINDS];
static unsigned retired_next; /* only touched by load */

static ErlNifResourceType *current_type(nif_kind k) {
  switch (k) {
    case NIF_KIND_RUNTIME: return RUNTIME_RT;
    case NIF_KIND_CONTEXT: return CONTEXT_RT;
    case NIF_KIND_GRAPH: return GRAPH_RT;
    case NIF_KIND_SHARED: return SHARED_RT;
    case NIF_KIND_VIEW: return VIEW_RT;
    case NIF_KINDS: break;
  }
  return NULL;
}

const char *nif_kind_name(nif_kind k) {
  switch (k) {
    case NIF_KIND_RUNTIME: return "runtime";
    case NIF_KIND_CONTEXT: return "context";
    case NIF_KIND_GRAPH: return "graph";
    case NIF_KIND_SHARED: return "shared IO buffer";
    case NIF_KIND_VIEW: return "shared IO view";
    case NIF_KINDS: break;
  }
  return "handle";
}

nif_kind nif_handle_kind(ErlNifEnv *env, ERL_NIF_TERM term, int *purged) {
  void *obj;
  *purged = 0;
  for (int k = 0; k < NIF_KINDS; k++) {
    ErlNifResourceType *t = current_type((nif_kind)k);
    if (t && enif_get_resource(env, term, t, &obj)) return (nif_kind)k;
  }
  /* Only compared with the term's own type, never followed: a retired type that has been freed
   * meanwhile cannot be the type of a live resource of ours. */
  for (int set = 0; set < RETIRED_SETS; set++) {
    for (int k = 0; k < NIF_KINDS; k++) {
      ErlNifResourceType *t = atomic_load(&retired[set][k]);
      if (t && enif_get_resource(env, term, t, &obj)) {
        *purged = 1;
        return (nif_kind)k;
      }
    }
  }
  return NIF_KINDS;
}

int nif_resources_open(ErlNifEnv *env) {
  ErlNifResourceType *before[NIF_KINDS];
  for (int k = 0; k < NIF_KINDS; k++) before[k] = current_type((nif_kind)k);
  /* TAKEOVER: on upgrade the new library instance becomes the owner of live resources (and
   * their destructor), so the old one can be purged while models are still open. */
  ErlNifResourceFlags flags = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  RUNTIME_RT = enif_open_resource_type(env, NULL, "htpu_runtime", runtime_dtor, flags, NULL);
  CONTEXT_RT = enif_open_resource_type(env, NULL, "htpu_context", context_dtor, flags, NULL);
  GRAPH_RT = enif_open_resource_type(env, NULL, "htpu_graph", graph_dtor, flags, NULL);
  SHARED_RT = enif_open_resource_type(env, NULL, "htpu_shared", nif_shared_dtor, flags, NULL);
  VIEW_RT = enif_open_resource_type(env, NULL, "htpu_shared_view", nif_view_dtor, flags, NULL);
  /* An upgrade takes the same types over; a load after a purge gets new ones: keep the old. */
  if (before[NIF_KIND_RUNTIME] && before[NIF_KIND_RUNTIME] != RUNTIME_RT) {
    unsigned set = retired_next++ % RETIRED_SETS;
    for (int k = 0; k < NIF_KINDS; k++) atomic_store(&retired[set][k], before[k]);
  }
  return (RUNTIME_RT && CONTEXT_RT && GRAPH_RT && SHARED_RT && VIEW_RT) ? 0 : -1;
}
