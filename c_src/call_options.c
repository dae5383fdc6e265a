/*
 * call_options.c - a call's options map onto htpu_exec_options (call_options.h): shared by the
 * submitted call (submit.c), the profiled execute (profile.c) and vision_detect (vision.c), so
 * each takes the same deadline, priority and profile options in the same words.
 */
#include "call_options.h"

#include "atoms.h"
#include "terms.h"

static ERL_NIF_TERM atom_priority, atom_timeout_ns, atom_batch_multiple, atom_profile_level,
    atom_profile_max_events;

void nif_call_options_open(ErlNifEnv *env) {
  atom_priority = enif_make_atom(env, "priority");
  atom_timeout_ns = enif_make_atom(env, "timeout_ns");
  atom_batch_multiple = enif_make_atom(env, "batch_multiple");
  atom_profile_level = enif_make_atom(env, "profile_level");
  atom_profile_max_events = enif_make_atom(env, "profile_max_events");
}

/* %{timeout_ns: non_neg_integer, priority: :default | :low | ..., perf_profile:,
 * batch_multiple:, profile_level: :basic | ..., profile_max_events:} -> *xo. 0, or -1. */
int nif_get_call_options(ErlNifEnv *env, ERL_NIF_TERM map, htpu_exec_options *xo) {
  ERL_NIF_TERM v;
  if (!enif_is_map(env, map)) return -1;
  if (enif_get_map_value(env, map, atom_timeout_ns, &v)) {
    ErlNifUInt64 ns;
    if (!enif_get_uint64(env, v, &ns)) return -1;
    xo->timeout_ns = ns;
  }
  if (enif_get_map_value(env, map, atom_priority, &v)) {
    char name[32];
    htpu_priority p;
    if (enif_get_atom(env, v, name, sizeof name, ERL_NIF_LATIN1) <= 0) return -1;
    if (htpu_priority_from_name(name, &p)) return -1;
    xo->priority = (int)p;
  }
  if (enif_get_map_value(env, map, atom_batch_multiple, &v)) {
    unsigned k;
    if (!enif_get_uint(env, v, &k) || k == 0) return -1;
    xo->batch_multiple = k > 1 ? k : 0;
  }
  if (enif_get_map_value(env, map, ATOMS.perf_profile, &v) &&
      nif_get_perf_profile(env, v, &xo->perf_profile))
    return -1;
  if (enif_get_map_value(env, map, atom_profile_level, &v) && !enif_is_identical(v, ATOMS.nil)) {
    char name[16];
    htpu_profile_level l;
    if (enif_get_atom(env, v, name, sizeof name, ERL_NIF_LATIN1) <= 0 ||
        htpu_profile_level_from_name(name, &l) != 0)
      return -1;
    xo->profile_level = (int)l;
  }
  if (enif_get_map_value(env, map, atom_profile_max_events, &v)) {
    unsigned n;
    if (!enif_get_uint(env, v, &n)) return -1;
    xo->profile_max_events = n;
  }
  return 0;
}
