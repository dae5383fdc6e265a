/*
 * resources.c - the handle resources: their types and destructors (one per kind, kinds.h), the
 * runtime link, the shared buffers' reference count, the one function that takes a handle and
 * closes it, and telling a handle term's kind apart.
 */
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "handles.h"
#include "reaper.h"
#include "terms.h"

ErlNifResourceType *nif_resource_types[NIF_KINDS];
ErlNifResourceType *nif_exec_call_type;

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
  nif_live_add(&l->live, NIF_KIND_RUNTIME);
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

/* ---- shared buffers' reference count ---------------------------------------------------------- */

int nif_shared_acquire(nif_shared *sh) {
  unsigned r = atomic_load(&sh->refs);
  do {
    if (r == 0) return 0; /* freed (or never set up) */
  } while (!atomic_compare_exchange_weak(&sh->refs, &r, r + 1));
  if (atomic_load(&sh->closed)) { /* closed, but kept alive by a view or another call */
    nif_shared_unref(sh, 0);
    return 0;
  }
  return 1;
}

void nif_shared_unref(nif_shared *sh, int may_block) {
  if (atomic_fetch_sub(&sh->refs, 1) != 1) return;
  htpu_shared *h = atomic_exchange(&sh->handle, NULL);
  if (may_block)
    htpu_shared_free(&h);
  else
    nif_reaper_push(NIF_KIND_SHARED, h); /* the free waits for in-flight executes: not here */
}

/* ---- take the handle, then close ------------------------------------------------------------- */

int nif_handle_close(nif_kind kind, void *obj, int may_block) {
  void *h = NULL;
  switch (kind) {
    case NIF_KIND_SHARED: {
      nif_shared *sh = obj;
      if (atomic_exchange(&sh->closed, 1)) return 0;
      nif_shared_unref(sh, may_block);
      return 1;
    }
    case NIF_KIND_GRAPH: {
      nif_graph *g = obj;
      h = atomic_exchange(&g->handle, NULL);
      if (h) nif_link_user_left(g->link);
      break;
    }
    case NIF_KIND_CONTEXT: {
      nif_context *c = obj;
      h = atomic_exchange(&c->handle, NULL);
      if (h) nif_link_user_left(c->link);
      break;
    }
    case NIF_KIND_RUNTIME: {
      /* Under the link's lock only for the swap: a concurrent info/1 copying the runtime's
       * strings finishes before the handle (and with it, maybe, the strings) goes. */
      nif_rt_link *l = obj;
      enif_mutex_lock(l->lock);
      h = atomic_exchange(&l->handle, NULL);
      enif_mutex_unlock(l->lock);
      break;
    }
    case NIF_KIND_VIEW:
    case NIF_KINDS:
      return 0;
  }
  if (may_block)
    nif_core_close(kind, h); /* NULL (already closed) is a no-op: close is idempotent */
  else
    nif_reaper_push(kind, h);
  return h != NULL;
}

int nif_handle_is_open(ErlNifEnv *env, ERL_NIF_TERM term) {
  void *obj;
  if (enif_get_resource(env, term, NIF_RT(RUNTIME), &obj))
    return atomic_load(&((nif_runtime *)obj)->link->handle) != NULL;
  if (enif_get_resource(env, term, NIF_RT(CONTEXT), &obj))
    return atomic_load(&((nif_context *)obj)->handle) != NULL;
  if (enif_get_resource(env, term, NIF_RT(GRAPH), &obj))
    return atomic_load(&((nif_graph *)obj)->handle) != NULL;
  if (enif_get_resource(env, term, NIF_RT(SHARED), &obj))
    return !atomic_load(&((nif_shared *)obj)->closed);
  return 0;
}

#define CONTAINER(node, type) ((type *)(void *)((char *)(node) - offsetof(type, live)))

/* The live lists hold nodes: the object each is embedded in (a runtime's is its link's). */
static void *live_object(nif_live *n, nif_kind kind) {
  switch (kind) {
    case NIF_KIND_SHARED: return CONTAINER(n, nif_shared);
    case NIF_KIND_GRAPH: return CONTAINER(n, nif_graph);
    case NIF_KIND_CONTEXT: return CONTAINER(n, nif_context);
    case NIF_KIND_RUNTIME: return CONTAINER(n, nif_rt_link);
    case NIF_KIND_VIEW:
    case NIF_KINDS: break;
  }
  return NULL;
}

/* Through the reaper: the close may wait on the DSP, and destructors on normal schedulers wait
 * for the live lists' lock meanwhile. */
static void close_live(nif_live *n, nif_kind kind, void *arg) {
  uint64_t *taken = arg;
  void *obj = live_object(n, kind);
  if (obj) *taken += (uint64_t)nif_handle_close(kind, obj, 0);
}

uint64_t nif_handles_close_all(void) {
  uint64_t taken = 0;
  nif_live_each(close_live, &taken);
  return taken;
}

/* ---- destructors ----------------------------------------------------------------------------
 * They run on the scheduler that collected the term: they only hand the handle over. */

static void runtime_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_runtime *r = obj;
  if (!r->link) return; /* open failed before the link existed */
  nif_handle_close(NIF_KIND_RUNTIME, r->link, 0);
  nif_link_release(r->link);
  r->link = NULL;
}

static void context_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_context *c = obj;
  nif_live_remove(&c->live);
  nif_handle_close(NIF_KIND_CONTEXT, c, 0);
  nif_link_release(c->link);
  c->link = NULL;
  if (c->parent) enif_release_resource(c->parent);
  c->parent = NULL;
}

static void graph_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_graph *g = obj;
  nif_live_remove(&g->live);
  nif_handle_close(NIF_KIND_GRAPH, g, 0);
  /* Nobody else can reach the resource any more (a shared IO buffer made from it holds a
   * reference), so its copied tensor infos can go now. */
  if (g->tensors) {
    for (uint32_t i = 0; i < g->num_inputs + g->num_outputs; i++) nif_slot_free(&g->tensors[i]);
    enif_free(g->tensors);
  }
  g->tensors = NULL;
  void *vision_block = atomic_exchange(&g->vision_block, NULL); /* vision_detect's, if kept */
  if (vision_block) enif_free(vision_block);
  nif_link_release(g->link);
  g->link = NULL;
  if (g->parent) enif_release_resource(g->parent);
  g->parent = NULL;
}

static void shared_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_shared *sh = obj;
  nif_live_remove(&sh->live);
  /* Views hold the resource, so only the "open" reference can be left: drop it. */
  nif_handle_close(NIF_KIND_SHARED, sh, 0);
  if (sh->slots) {
    for (uint32_t i = 0; i < sh->num_inputs + sh->num_outputs; i++) nif_slot_free(&sh->slots[i]);
    enif_free(sh->slots);
  }
  sh->slots = NULL;
  if (sh->graph) enif_release_resource(sh->graph);
  sh->graph = NULL;
}

static void view_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_view *v = obj;
  if (!v->shared) return;
  nif_shared_unref(v->shared, 0);
  enif_release_resource(v->shared);
  v->shared = NULL;
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

const char *nif_kind_name(nif_kind k) {
  switch (k) {
#define NIF_KIND_NAME_(K, name, type_name, what) \
  case NIF_KIND_##K:                            \
    return what;
    NIF_HANDLE_KINDS(NIF_KIND_NAME_)
#undef NIF_KIND_NAME_
    case NIF_KINDS: break;
  }
  return "handle";
}

nif_kind nif_handle_kind(ErlNifEnv *env, ERL_NIF_TERM term, int *purged) {
  void *obj;
  *purged = 0;
  for (int k = 0; k < NIF_KINDS; k++) {
    ErlNifResourceType *t = nif_resource_types[k];
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

/* A handle term that is not a resource of the kind wanted. After the NIF module is purged (not
 * upgraded), ERTS unlinks the old resource types: handles made before are still references
 * (their destructors still run) but no longer match the reloaded library's types; those of the
 * kind wanted are a :closed error ("closed or invalid", as the C API says). Anything else is
 * not a handle of that kind at all, e.g. a struct built by hand around make_ref(): an
 * :invalid_argument error saying what it is, not a misleading "purged" (resources.c). */
ERL_NIF_TERM nif_bad_handle(ErlNifEnv *env, ERL_NIF_TERM term, nif_kind want) {
  const char *what = nif_kind_name(want);
  if (!enif_is_ref(env, term))
    return nif_make_error_msg(env, HTPU_EINVAL,
                              "not a hexagon_tpu %s handle: expected a reference, got a term "
                              "that is not one",
                              what);
  int purged;
  nif_kind k = nif_handle_kind(env, term, &purged);
  if (k == want && purged)
    return nif_make_error_msg(env, HTPU_ECLOSED,
                              "the %s handle was made by a purged copy of the NIF library; open "
                              "it again",
                              what);
  if (k != NIF_KINDS)
    return nif_make_error_msg(env, HTPU_EINVAL, "not a hexagon_tpu %s handle: it is a %s handle%s",
                              what, nif_kind_name(k),
                              purged ? " (of a purged copy of the NIF library)" : "");
  return nif_make_error_msg(env, HTPU_EINVAL,
                            "not a hexagon_tpu %s handle: the reference was not made by this "
                            "library (a struct built by hand?)",
                            what);
}

int nif_resources_open(ErlNifEnv *env, ErlNifResourceDtor *exec_call_dtor) {
  ErlNifResourceType *before[NIF_KINDS];
  memcpy(before, nif_resource_types, sizeof before);
  /* TAKEOVER: on upgrade the new library instance becomes the owner of live resources (and
   * their destructor), so the old one can be purged while models are still open. */
  ErlNifResourceFlags flags = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  int ok = 1;
#define NIF_KIND_OPEN_(K, name, type_name, what)                                     \
  nif_resource_types[NIF_KIND_##K] =                                                 \
      enif_open_resource_type(env, NULL, type_name, name##_dtor, flags, NULL);       \
  ok = ok && nif_resource_types[NIF_KIND_##K];
  NIF_HANDLE_KINDS(NIF_KIND_OPEN_)
#undef NIF_KIND_OPEN_
  nif_exec_call_type =
      enif_open_resource_type(env, NULL, "htpu_exec_call", exec_call_dtor, flags, NULL);
  /* An upgrade takes the same types over; a load after a purge gets new ones: keep the old. */
  if (before[NIF_KIND_RUNTIME] && before[NIF_KIND_RUNTIME] != NIF_RT(RUNTIME)) {
    unsigned set = retired_next++ % RETIRED_SETS;
    for (int k = 0; k < NIF_KINDS; k++) atomic_store(&retired[set][k], before[k]);
  }
  return ok && nif_exec_call_type ? 0 : -1;
}
