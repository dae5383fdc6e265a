/*
 * load.c - context loads: one model from a file or a binary, several in one call, and what a
 * loaded context holds (nif.h). An Erlang binary is lent to the core, not copied: it never
 * changes, and a process-independent environment keeps it alive until the core releases it
 * (when the context is freed, on whatever thread that happens).
 */
#include <string.h>

#include "atoms.h"
#include "handles.h"
#include "nif.h"
#include "terms.h"

/* A binary term kept alive for the core (htpu_load_options.buffer_release). */
typedef struct lent_binary {
  ErlNifEnv *env;
  ErlNifBinary bin;
} lent_binary;

static void lent_release(void *arg) {
  lent_binary *l = arg;
  enif_free_env(l->env);
  enif_free(l);
}

/* The binary `term` in an environment of its own (a refc binary is shared, not copied). NULL
 * when out of memory or not a binary. */
static lent_binary *lend(ERL_NIF_TERM term) {
  lent_binary *l = enif_alloc(sizeof *l);
  ErlNifEnv *keep = l ? enif_alloc_env() : NULL;
  if (!keep) {
    if (l) enif_free(l);
    return NULL;
  }
  l->env = keep;
  if (!enif_inspect_binary(keep, enif_make_copy(keep, term), &l->bin)) {
    lent_release(l);
    return NULL;
  }
  return l;
}

/* Decoded load options and the graph names they point to (owned). */
typedef struct nif_load_opts {
  htpu_load_options lo;
  char **names;
  unsigned num_names;
  char *graph; /* :graph, the context of an ONNX model holding several */
} nif_load_opts;

static void load_opts_free(nif_load_opts *o) {
  for (unsigned i = 0; i < o->num_names; i++) enif_free(o->names[i]);
  if (o->names) enif_free(o->names);
  if (o->graph) enif_free(o->graph);
  memset(o, 0, sizeof *o);
}

/* :graphs, a list of binaries, into o->names. 0 or -1. */
static int get_graphs(ErlNifEnv *env, ERL_NIF_TERM list, nif_load_opts *o) {
  unsigned n = 0;
  if (!enif_get_list_length(env, list, &n) || n == 0) return -1;
  o->names = enif_alloc(n * sizeof *o->names);
  if (!o->names) return -1;
  ERL_NIF_TERM head, tail = list;
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    char *name = NULL;
    if (nif_get_cstring_or_nil(env, head, &name) || !name) return -1;
    o->names[o->num_names++] = name;
  }
  o->lo.graphs = (const char *const *)o->names;
  o->lo.num_graphs = o->num_names;
  return 0;
}

static int get_u64(ErlNifEnv *env, ERL_NIF_TERM map, const char *key, uint64_t *out) {
  ERL_NIF_TERM v;
  ErlNifUInt64 n;
  if (!enif_get_map_value(env, map, enif_make_atom(env, key), &v)) return 0;
  if (!enif_get_uint64(env, v, &n)) return -1;
  *out = n;
  return 0;
}

/* The load options map: %{priority: :default | :low | ..., timeout_ns:, exec_timeout_ns:,
 * queue_limit: 0..2^32-1, graph: binary | nil, graphs: [binary] | nil, memory_limit_mb:,
 * copy_binary: boolean}, each optional. 0, or -1 for a bad map (the public modules check the values first; o freed). */
static int get_load_options(ErlNifEnv *env, ERL_NIF_TERM map, nif_load_opts *o) {
  memset(o, 0, sizeof *o);
  htpu_load_options *lo = &o->lo;
  ERL_NIF_TERM v;
  char name[32];
  uint64_t limit = 0;
  if (!enif_is_map(env, map)) return -1;
  if (enif_get_map_value(env, map, enif_make_atom(env, "priority"), &v)) {
    htpu_priority p = HTPU_PRIORITY_DEFAULT;
    if (enif_get_atom(env, v, name, sizeof name, ERL_NIF_LATIN1) <= 0) return -1;
    if (strcmp(name, "default") != 0 && htpu_priority_from_name(name, &p)) return -1;
    lo->priority = (int)p;
  }
  if (get_u64(env, map, "timeout_ns", &lo->timeout_ns) ||
      get_u64(env, map, "exec_timeout_ns", &lo->exec_timeout_ns) ||
      get_u64(env, map, "queue_limit", &limit) || limit > UINT32_MAX ||
      get_u64(env, map, "memory_limit_mb", &lo->memory_limit_mb))
    return -1;
  lo->queue_limit = (uint32_t)limit;
  if (enif_get_map_value(env, map, enif_make_atom(env, "copy_binary"), &v))
    lo->copy_binary = enif_is_identical(v, ATOMS.true_);
  if (enif_get_map_value(env, map, enif_make_atom(env, "graphs"), &v) &&
      !enif_is_identical(v, ATOMS.nil) && get_graphs(env, v, o)) {
    load_opts_free(o);
    return -1;
  }
  if (enif_get_map_value(env, map, enif_make_atom(env, "graph"), &v) &&
      nif_get_cstring_or_nil(env, v, &o->graph)) {
    load_opts_free(o);
    return -1;
  }
  lo->graph = o->graph;
  return 0;
}

/* {:ok, ref, info} for a context just opened (closed again on failure), or the error. */
static ERL_NIF_TERM context_result(ErlNifEnv *env, int rc, htpu_context *ctx,
                                   nif_rt_link *link, nif_runtime *parent) {
  if (rc) return nif_make_error(env, rc);
  const htpu_model_info *mi = htpu_context_model_info(ctx);
  if (!mi) {
    ERL_NIF_TERM err = nif_make_error_msg(env, HTPU_EMODEL, "the context has no model info");
    htpu_context_close(&ctx);
    return err;
  }
  ERL_NIF_TERM info = nif_make_model_info(env, mi); /* borrowed from ctx: build it now */
  nif_context *res = enif_alloc_resource(NIF_RT(CONTEXT), sizeof *res);
  if (!res) {
    htpu_context_close(&ctx);
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (context resource)");
  }
  atomic_init(&res->handle, ctx);
  nif_link_retain(link);
  res->link = link;
  enif_keep_resource(parent);
  res->parent = parent;
  nif_link_user_opened(link);
  nif_live_init(&res->live);
  nif_live_add(&res->live, NIF_KIND_CONTEXT);
  ERL_NIF_TERM ret = enif_make_tuple3(env, ATOMS.ok, enif_make_resource(env, res), info);
  enif_release_resource(res);
  return ret;
}

/* context_open_file(runtime, path[, load_opts]) -> {:ok, ref, model_info} | {:error, _} */
ERL_NIF_TERM nif_context_open_file(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  nif_runtime *rt;
  char *path = NULL;
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&rt))
    return nif_bad_handle(env, argv[0], NIF_KIND_RUNTIME);
  if (nif_get_cstring_or_nil(env, argv[1], &path) || !path) {
    if (path) enif_free(path);
    return enif_make_badarg(env);
  }
  nif_load_opts o;
  if (argc > 2 && get_load_options(env, argv[2], &o)) {
    enif_free(path);
    return enif_make_badarg(env);
  }
  htpu_runtime *h = atomic_load(&rt->link->handle);
  htpu_context *ctx = NULL;
  int rc = !h         ? HTPU_ECLOSED
           : argc > 2 ? htpu_context_open_file_ex(h, path, &o.lo, &ctx)
                      : htpu_context_open_file(h, path, &ctx);
  enif_free(path);
  if (argc > 2) load_opts_free(&o);
  if (!h) return nif_closed_error(env, "runtime");
  return context_result(env, rc, ctx, rt->link, rt);
}

/* context_open_binary(runtime, binary[, load_opts]): the binary is lent, not copied. */
ERL_NIF_TERM nif_context_open_binary(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  nif_runtime *rt;
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&rt))
    return nif_bad_handle(env, argv[0], NIF_KIND_RUNTIME);
  if (!enif_is_binary(env, argv[1])) return enif_make_badarg(env);
  nif_load_opts o;
  memset(&o, 0, sizeof o);
  if (argc > 2 && get_load_options(env, argv[2], &o)) return enif_make_badarg(env);
  htpu_runtime *h = atomic_load(&rt->link->handle);
  lent_binary *l = h ? lend(argv[1]) : NULL;
  htpu_context *ctx = NULL;
  int rc = HTPU_ECLOSED;
  if (h && !l) rc = HTPU_ENOMEM;
  if (l) {
    o.lo.buffer_release = lent_release; /* the core calls it, also when the load fails */
    o.lo.buffer_release_arg = l;
    rc = htpu_context_open_buffer_ex(h, l->bin.data, l->bin.size, &o.lo, &ctx);
  }
  load_opts_free(&o);
  if (!h) return nif_closed_error(env, "runtime");
  if (rc == HTPU_ENOMEM && !l) return nif_make_error_msg(env, rc, "out of memory (lent binary)");
  return context_result(env, rc, ctx, rt->link, rt);
}

/* One request of context_open_many: {{:file, path} | {:binary, bin}, load_opts | nil}. */
static int get_request(ErlNifEnv *env, ERL_NIF_TERM term, htpu_load_request *r,
                       nif_load_opts *o, char **path) {
  const ERL_NIF_TERM *pair, *src;
  int n;
  char kind[8];
  memset(o, 0, sizeof *o);
  if (!enif_get_tuple(env, term, &n, &pair) || n != 2 || !enif_get_tuple(env, pair[0], &n, &src) ||
      n != 2 || enif_get_atom(env, src[0], kind, sizeof kind, ERL_NIF_LATIN1) <= 0)
    return -1;
  if (!enif_is_identical(pair[1], ATOMS.nil) && get_load_options(env, pair[1], o)) return -1;
  r->opts = &o->lo;
  if (strcmp(kind, "file") == 0) {
    if (nif_get_cstring_or_nil(env, src[1], path) || !*path) return -1;
    r->path = *path;
    return 0;
  }
  if (strcmp(kind, "binary") != 0 || !enif_is_binary(env, src[1])) return -1;
  lent_binary *l = lend(src[1]);
  if (!l) return -1;
  o->lo.buffer_release = lent_release;
  o->lo.buffer_release_arg = l;
  r->buf = l->bin.data;
  r->len = l->bin.size;
  return 0;
}

/* Everything the requests hold that the core did not take over. */
static void requests_free(htpu_load_request *r, nif_load_opts *o, char **paths, unsigned n,
                          int called) {
  for (unsigned i = 0; i < n; i++) {
    /* a lent binary is the core's once the call is made (it releases it, loaded or not) */
    if (!called && o[i].lo.buffer_release) o[i].lo.buffer_release(o[i].lo.buffer_release_arg);
    load_opts_free(&o[i]);
    if (paths[i]) enif_free(paths[i]);
  }
  enif_free(r);
  enif_free(o);
  enif_free(paths);
}

/* A list of each request's {:ok, ref, info} or {:error, _}, in order. */
static ERL_NIF_TERM many_results(ErlNifEnv *env, htpu_load_request *r,
                                 char (*err)[HTPU_ERROR_MAX], unsigned n, nif_runtime *rt) {
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (unsigned i = n; i-- > 0;) {
    ERL_NIF_TERM one = r[i].rc ? nif_make_error_qnn(env, r[i].rc, r[i].qnn_code, err[i])
                               : context_result(env, 0, r[i].ctx, rt->link, rt);
    list = enif_make_list_cell(env, one, list);
  }
  return list;
}

/* context_open_many(runtime, [{source, load_opts | nil}]) -> {:ok, [result]} | {:error, _} */
ERL_NIF_TERM nif_context_open_many(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_runtime *rt;
  unsigned n = 0;
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&rt))
    return nif_bad_handle(env, argv[0], NIF_KIND_RUNTIME);
  if (!enif_get_list_length(env, argv[1], &n) || n == 0) return enif_make_badarg(env);
  htpu_load_request *r = enif_alloc(n * sizeof *r);
  nif_load_opts *o = enif_alloc(n * sizeof *o);
  char **paths = enif_alloc(n * sizeof *paths);
  char(*err)[HTPU_ERROR_MAX] = enif_alloc(n * sizeof *err); /* each message whole */
  if (!r || !o || !paths || !err) {
    if (r) enif_free(r);
    if (o) enif_free(o);
    if (paths) enif_free(paths);
    if (err) enif_free(err);
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%u load requests)", n);
  }
  memset(r, 0, n * sizeof *r);
  memset(o, 0, n * sizeof *o);
  memset(paths, 0, n * sizeof *paths);
  ERL_NIF_TERM head, tail = argv[1];
  unsigned got = 0;
  while (enif_get_list_cell(env, tail, &head, &tail) &&
         get_request(env, head, &r[got], &o[got], &paths[got]) == 0) {
    r[got].error = err[got];
    r[got].error_len = sizeof err[got];
    got++;
  }
  if (got < n) {
    /* the one that failed may hold graph names or a lent binary already */
    requests_free(r, o, paths, got + 1, 0);
    enif_free(err);
    return enif_make_badarg(env);
  }
  htpu_runtime *h = atomic_load(&rt->link->handle);
  ERL_NIF_TERM ret;
  if (!h) {
    requests_free(r, o, paths, n, 0);
    ret = nif_closed_error(env, "runtime");
  } else {
    htpu_context_open_many(h, r, n);
    ret = enif_make_tuple2(env, ATOMS.ok, many_results(env, r, err, n, rt));
    requests_free(r, o, paths, n, 1);
  }
  enif_free(err);
  return ret;
}

/* context_load_info(context) -> {:ok, map} | {:error, _}: how its binary is held and what its
 * load passed to QNN (htpu_context_load_info). */
ERL_NIF_TERM nif_context_load_info(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_context *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(CONTEXT), (void **)&res))
    return nif_bad_handle(env, argv[0], NIF_KIND_CONTEXT);
  htpu_context *h = atomic_load(&res->handle);
  htpu_context_load_info li;
  if (!h) return nif_closed_error(env, "context");
  int rc = htpu_context_get_load_info(h, &li);
  if (rc) return nif_make_error(env, rc);
  /* the strings are borrowed from the context: copied now */
  static const char *const names[] = {
      "binary", "binary_note", "binary_bytes", "binary_copy_bytes", "persistent_binary",
      "graphs_enabled", "enable_graphs_passed", "memory_limit_mb", "memory_limit_passed",
      "spill_fill_bytes", "spill_fill_group", "spill_fill_group_bytes", "spill_fill_note",
      "list_loaded", "load_ns"};
  ERL_NIF_TERM k[sizeof names / sizeof names[0]];
  ERL_NIF_TERM v[] = {enif_make_atom(env, li.binary),
                      nif_make_string(env, li.binary_note),
                      enif_make_uint64(env, li.binary_bytes),
                      enif_make_uint64(env, li.binary_copy_bytes),
                      li.persistent_binary ? ATOMS.true_ : ATOMS.false_,
                      enif_make_uint(env, li.graphs_enabled),
                      li.enable_graphs_passed ? ATOMS.true_ : ATOMS.false_,
                      enif_make_uint64(env, li.memory_limit_mb),
                      li.memory_limit_passed ? ATOMS.true_ : ATOMS.false_,
                      enif_make_uint64(env, li.spill_fill_bytes),
                      li.spill_fill_group ? enif_make_uint64(env, li.spill_fill_group) : ATOMS.nil,
                      enif_make_uint64(env, li.spill_fill_group_bytes),
                      nif_make_spill_fill_note(env, li.spill_fill_note),
                      li.list_loaded ? ATOMS.true_ : ATOMS.false_,
                      enif_make_uint64(env, li.load_ns)};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) k[i] = enif_make_atom(env, names[i]);
  return enif_make_tuple2(env, ATOMS.ok, nif_make_map(env, k, v, sizeof k / sizeof k[0]));
}
