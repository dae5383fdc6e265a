/*
 * ref_control.c - the reference backend's control API (reference/backend/htpu_ref_control.h)
 * for ExUnit tests and benches: a DSP-wide stall injected at runtime, capability switches.
 * Not part of the public API (HexagonTpu.NIF is @moduledoc false); docs/reference-backend.md,
 * "Control API", describes it.
 *
 * ref_control(backend_lib_path, op) with op one of
 *   {:set_latency, api, usec}  {:set_graph_latency, graph_name, usec}
 *   {:set_capability, key, answer}  :reset_capabilities  :disarm
 *   {:graph_state, graph_name} (-> {:ok, map}: the context priority the backend was given, ...)
 *   :stats (-> {:ok, map}: violations, live contexts, graphs deserialized, spill-fill and
 *   binary copies held, list loads)
 * -> :ok | {:error, reason}. The library is opened by path (the same file the runtime loads,
 * so the same instance) and kept open: closing it could unload the settings just made.
 */
#include <dlfcn.h>
#include <string.h>

#include "atoms.h"
#include "../reference/backend/htpu_ref_control.h"
#include "nif.h"
#include "terms.h"

static int get_str(ErlNifEnv *env, ERL_NIF_TERM t, char *buf, size_t len) {
  ErlNifBinary b;
  if (!enif_inspect_binary(env, t, &b) || b.size >= len || memchr(b.data, 0, b.size)) return -1;
  memcpy(buf, b.data, b.size);
  buf[b.size] = '\0';
  return 0;
}

/* :stats -> {:ok, %{violations:, graphs_deserialized:, spill_fill_bytes:, ...}} */
static ERL_NIF_TERM ref_stats(ErlNifEnv *env, void *lib) {
  htpu_ref_stats st;
  htpu_ref_get_stats_fn fn = (htpu_ref_get_stats_fn)dlsym(lib, "htpu_ref_get_stats");
  if (!fn) return enif_make_badarg(env);
  fn(&st);
  const struct {
    const char *k;
    uint64_t v;
  } kv[] = {{"violations", st.violations},
            {"live_contexts", st.live_contexts},
            {"graphs_deserialized", st.graphs_deserialized},
            {"spill_fill_bytes", st.spill_fill_bytes},
            {"binary_copy_bytes", st.binary_copy_bytes},
            {"list_async_calls", st.list_async_calls},
            {"unknown_behaviours", st.unknown_behaviours}};
  ERL_NIF_TERM map = enif_make_new_map(env);
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    enif_make_map_put(env, map, enif_make_atom(env, kv[i].k), enif_make_uint64(env, kv[i].v),
                      &map);
  return enif_make_tuple2(env, ATOMS.ok, map);
}

ERL_NIF_TERM nif_ref_control(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char path[4096], name[64];
  if (get_str(env, argv[0], path, sizeof path)) return enif_make_badarg(env);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return nif_make_error_msg(env, HTPU_ELOAD_BACKEND, "ref_control: %s", dlerror());
  const ERL_NIF_TERM *t;
  int arity;
  unsigned a, b;
  if (enif_get_tuple(env, argv[1], &arity, &t) && arity == 3 &&
      enif_get_atom(env, t[0], name, sizeof name, ERL_NIF_LATIN1) > 0) {
    if (strcmp(name, "set_latency") == 0 || strcmp(name, "set_graph_latency") == 0) {
      int graph = name[4] == 'g';
      char what[128];
      int (*fn)(const char *, unsigned) = (int (*)(const char *, unsigned))dlsym(
          lib, graph ? "htpu_ref_set_graph_latency" : "htpu_ref_set_latency");
      if (!fn || get_str(env, t[1], what, sizeof what) || !enif_get_uint(env, t[2], &a))
        return enif_make_badarg(env);
      if (!fn(what, a)) return ATOMS.ok;
      return nif_make_error_msg(env, HTPU_EINVAL, graph ? "graph latency table full (%s)"
                                                        : "unknown api %s", what);
    }
    if (strcmp(name, "set_capability") == 0) {
      int (*fn)(uint32_t, uint32_t) =
          (int (*)(uint32_t, uint32_t))dlsym(lib, "htpu_ref_set_capability");
      if (!fn || !enif_get_uint(env, t[1], &a) || !enif_get_uint(env, t[2], &b))
        return enif_make_badarg(env);
      return fn(a, b) ? nif_make_error_msg(env, HTPU_EINVAL, "unswitchable key %u", a) : ATOMS.ok;
    }
  } else if (enif_get_tuple(env, argv[1], &arity, &t) && arity == 2 &&
             enif_get_atom(env, t[0], name, sizeof name, ERL_NIF_LATIN1) > 0 &&
             strcmp(name, "graph_state") == 0) {
    /* {:graph_state, graph_name} -> {:ok, %{context_priority:, graph_priority:, ...}} */
    char graph[256];
    htpu_ref_graph_state st;
    htpu_ref_get_graph_state_fn fn =
        (htpu_ref_get_graph_state_fn)dlsym(lib, "htpu_ref_get_graph_state");
    if (!fn || get_str(env, t[1], graph, sizeof graph)) return enif_make_badarg(env);
    if (fn(graph, &st))
      return nif_make_error_msg(env, HTPU_ENOT_FOUND, "no live context has a graph '%s'", graph);
    ERL_NIF_TERM map = enif_make_new_map(env);
    const struct {
      const char *k;
      uint64_t v;
    } kv[] = {{"context_priority", st.context_priority},
              {"graph_priority", st.graph_priority},
              {"graph_priority_set", st.graph_priority_set},
              {"last_batch_multiple", st.last_batch_multiple},
              {"executes_done", st.executes_done}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
      enif_make_map_put(env, map, enif_make_atom(env, kv[i].k), enif_make_uint64(env, kv[i].v),
                        &map);
    return enif_make_tuple2(env, ATOMS.ok, map);
  } else if (enif_get_atom(env, argv[1], name, sizeof name, ERL_NIF_LATIN1) > 0 &&
             strcmp(name, "stats") == 0) {
    return ref_stats(env, lib);
  } else if (enif_get_atom(env, argv[1], name, sizeof name, ERL_NIF_LATIN1) > 0) {
    const char *sym = strcmp(name, "reset_capabilities") == 0 ? "htpu_ref_reset_capabilities"
                      : strcmp(name, "disarm") == 0             ? "htpu_ref_disarm"
                                                                : NULL;
    void (*fn)(void) = sym ? (void (*)(void))dlsym(lib, sym) : NULL;
    if (!fn) return enif_make_badarg(env);
    fn();
    return ATOMS.ok;
  }
  return enif_make_badarg(env);
}
