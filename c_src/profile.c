/*
 * profile.c - profiles in terms (nif_profile_answer: for every path that carries one), the
 * synchronous profiled execute, the writers of a profile kept from one
 * (HexagonTpu.Profile.write_trace/2, write_page/3) and what the backend announces.
 *
 * Most profiled calls are not made here: a sampled call (profile_every) takes the path it
 * would take unsampled, submitted (submit.c, the profile read on the core's worker) or
 * SharedIO (shared.c). graph_execute_profiled is the synchronous one, on a dirty IO scheduler:
 * HexagonTpu.profile/3 (a deliberate measurement) and a sampled call or batch whose caller
 * asked for scheduler: :dirty_io. It takes the same call options as a submitted call
 * (call_options.h), decodes its arguments as graph_execute does (inputs by pointer, an
 * aligned copy only for a misaligned sub-binary; a fresh binary per output), runs `chunks`
 * executes of which the first carries the profile, and answers with the outputs, the stats
 * and the profile as terms. The C profile itself stays in a resource (the term's :ref) for the
 * writers, and is freed by the resource's destructor.
 */
#include <string.h>

#include "atoms.h"
#include "call_options.h"
#include "handles.h"
#include "nif.h"
#include "terms.h"

static ErlNifResourceType *profile_type;

typedef struct nif_profile {
  htpu_profile *p;
} nif_profile;

/* The maps' keys, made once at load (atoms are global): every event would otherwise look its
 * seven keys up in the atom table again. */
enum { EV_KEYS = 7, OP_KEYS = 5 };
static const char *const event_keys[EV_KEYS] = {"type",       "name",      "unit",    "value",
                                                "identifier", "timestamp", "children"};
static const char *const op_keys[OP_KEYS] = {"index", "name", "cycles", "us", "start"};
static ERL_NIF_TERM event_key_atoms[EV_KEYS], op_key_atoms[OP_KEYS], nil_atom;

static void profile_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  htpu_profile_free(((nif_profile *)obj)->p);
}

int nif_profile_open_type(ErlNifEnv *env) {
  ErlNifResourceFlags flags = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  profile_type = enif_open_resource_type(env, NULL, "htpu_profile", profile_dtor, flags, NULL);
  for (int i = 0; i < EV_KEYS; i++) event_key_atoms[i] = enif_make_atom(env, event_keys[i]);
  for (int i = 0; i < OP_KEYS; i++) op_key_atoms[i] = enif_make_atom(env, op_keys[i]);
  nil_atom = enif_make_atom(env, "nil");
  return profile_type ? 0 : -1;
}

static ERL_NIF_TERM atom(ErlNifEnv *env, const char *name) { return enif_make_atom(env, name); }

/* Names and identifiers are short: enif_make_new_binary makes them heap binaries, not one
 * reference-counted allocation each (a 100-op profile has over 200 of them). */
static ERL_NIF_TERM str(ErlNifEnv *env, const char *s) {
  size_t n = strlen(s);
  ERL_NIF_TERM t;
  unsigned char *d = enif_make_new_binary(env, n, &t);
  if (!d) return enif_make_badarg(env);
  memcpy(d, s, n);
  return t;
}

static ERL_NIF_TERM map_with(ErlNifEnv *env, ERL_NIF_TERM *k, ERL_NIF_TERM *v, size_t n) {
  ERL_NIF_TERM m;
  return enif_make_map_from_arrays(env, k, v, n, &m) ? m : enif_make_badarg(env);
}

static ERL_NIF_TERM map_of(ErlNifEnv *env, const char *const *keys, ERL_NIF_TERM *v, size_t n) {
  ERL_NIF_TERM k[16];
  for (size_t i = 0; i < n; i++) k[i] = atom(env, keys[i]);
  return map_with(env, k, v, n);
}

/* An object event's value: %{data: its bytes, file: its file name or nil}. */
static ERL_NIF_TERM object_term(ErlNifEnv *env, const htpu_profile_event *e) {
  ERL_NIF_TERM data;
  unsigned char *d = enif_make_new_binary(env, (size_t)e->object_size, &data);
  if (!d) return enif_make_badarg(env);
  if (e->object_size) memcpy(d, e->object, (size_t)e->object_size);
  static const char *const keys[] = {"data", "file"};
  ERL_NIF_TERM v[] = {data, e->object_file[0] ? str(env, e->object_file) : nil_atom};
  return map_of(env, keys, v, 2);
}

/* Depth-bounded by the core (profile_read.c), so recursion here is bounded too. */
static ERL_NIF_TERM event_term(ErlNifEnv *env, const htpu_profile_event *e) {
  ERL_NIF_TERM kids = enif_make_list(env, 0);
  for (uint32_t i = e->num_children; i-- > 0;)
    kids = enif_make_list_cell(env, event_term(env, &e->children[i]), kids);
  const char *unit = htpu_profile_unit_name(e->unit);
  ERL_NIF_TERM v[] = {enif_make_uint(env, e->type),
                      str(env, e->name),
                      unit[0] ? atom(env, unit) : enif_make_uint(env, e->unit),
                      e->unit == 5 ? object_term(env, e) : enif_make_uint64(env, e->value),
                      str(env, e->identifier),
                      e->has_timestamp ? enif_make_uint64(env, e->timestamp) : nil_atom,
                      kids};
  return map_with(env, event_key_atoms, v, EV_KEYS);
}

static ERL_NIF_TERM profile_term(ErlNifEnv *env, htpu_profile *p);

ERL_NIF_TERM nif_profile_answer(ErlNifEnv *env, htpu_profile *p, int read_rc) {
  if (p) return profile_term(env, p);
  /* a synchronous call's read error is known by its message only (the call returned 0) */
  if (!read_rc) read_rc = htpu_last_qnn_code() ? HTPU_EQNN : HTPU_ENOMEM;
  return enif_make_tuple2(env, atom(env, "dropped"), nif_make_error(env, read_rc));
}

static ERL_NIF_TERM profile_term(ErlNifEnv *env, htpu_profile *p) {
  nif_profile *res = enif_alloc_resource(profile_type, sizeof *res);
  if (!res) {
    htpu_profile_free(p);
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (profile resource)");
  }
  res->p = p; /* the resource frees it */
  ERL_NIF_TERM ref = enif_make_resource(env, res);
  enif_release_resource(res);
  ERL_NIF_TERM ops = enif_make_list(env, 0);
  for (uint32_t k = p->num_ops; k-- > 0;) {
    ERL_NIF_TERM v[] = {enif_make_uint(env, k), str(env, p->ops[k].name),
                        enif_make_uint64(env, p->ops[k].cycles),
                        enif_make_uint64(env, p->ops[k].us),
                        enif_make_uint64(env, p->ops[k].start)};
    ops = enif_make_list_cell(env, map_with(env, op_key_atoms, v, OP_KEYS), ops);
  }
  static const char *const hk[] = {"quantize_ns", "execute_ns", "dequantize_ns", "total_ns"};
  ERL_NIF_TERM hv[] = {enif_make_uint64(env, p->quantize_ns), enif_make_uint64(env, p->execute_ns),
                       enif_make_uint64(env, p->dequantize_ns), enif_make_uint64(env, p->total_ns)};
  static const char *const keys[] = {"level", "graph", "accel_us", "accel_cycles",
                                     "host_rpc_us", "htp_rpc_us", "note", "total_events",
                                     "dropped_events", "extended", "ops", "events", "host", "ref"};
  ERL_NIF_TERM v[] = {atom(env, htpu_profile_level_name(p->level)),
                      str(env, p->graph),
                      enif_make_uint64(env, p->accel_us),
                      enif_make_uint64(env, p->accel_cycles),
                      enif_make_uint64(env, p->host_rpc_us),
                      enif_make_uint64(env, p->htp_rpc_us),
                      str(env, p->note),
                      enif_make_uint(env, p->total_events),
                      enif_make_uint(env, p->dropped_events),
                      p->extended ? ATOMS.true_ : atom(env, "false"),
                      ops,
                      nil_atom, /* events: profile_events/1, when asked for */
                      map_of(env, hk, hv, 4),
                      ref};
  return map_of(env, keys, v, 14);
}

static int level_of(ErlNifEnv *env, ERL_NIF_TERM t, htpu_profile_level *out) {
  char name[16];
  if (enif_get_atom(env, t, name, sizeof name, ERL_NIF_LATIN1) <= 0) return -1;
  return htpu_profile_level_from_name(name, out) == 0 && *out != HTPU_PROFILE_OFF ? 0 : -1;
}

/* One profiled call's buffers: n_in inputs then n_out outputs in io, each `chunks` graph-sized
 * parts long (io[i].size is one part's); aligned copies of misaligned inputs; the output
 * binaries, `made` of them alive until they become terms. */
typedef struct profiled_call {
  unsigned n_in, n_out, chunks, made;
  htpu_io *io;
  void **copies;
  ErlNifBinary *outs;
} profiled_call;

static void profiled_free(profiled_call *pc) {
  for (unsigned i = 0; i < pc->made; i++) enif_release_binary(&pc->outs[i]);
  if (pc->copies)
    for (unsigned i = 0; i < pc->n_in + pc->n_out; i++)
      if (pc->copies[i]) enif_free(pc->copies[i]);
  if (pc->copies) enif_free(pc->copies);
  if (pc->outs) enif_free(pc->outs);
  if (pc->io) enif_free(pc->io);
}

/* The inputs ([{binary, dtype}]) by pointer, an aligned copy only for a misaligned
 * sub-binary. 0, or the error term. */
static ERL_NIF_TERM profiled_inputs(ErlNifEnv *env, profiled_call *pc, ERL_NIF_TERM list) {
  ERL_NIF_TERM head, tail = list;
  htpu_io *io = pc->io;
  for (unsigned i = 0; i < pc->n_in && enif_get_list_cell(env, tail, &head, &tail); i++) {
    const ERL_NIF_TERM *pair;
    int arity;
    ErlNifBinary bin;
    if (!enif_get_tuple(env, head, &arity, &pair) || arity != 2 ||
        !enif_inspect_binary(env, pair[0], &bin) || nif_get_dtype(env, pair[1], &io[i].dtype))
      return enif_make_badarg(env);
    if (bin.size % pc->chunks)
      return nif_make_error_msg(env, HTPU_EMISMATCH, "input %u: %zu bytes are not %u equal chunks",
                                i, bin.size, pc->chunks);
    io[i].data = bin.data;
    io[i].size = bin.size / pc->chunks;
    size_t align = htpu_dtype_size(io[i].dtype);
    if (align > 1 && bin.size && (uintptr_t)bin.data % align) { /* a misaligned sub-binary */
      if (!(pc->copies[i] = enif_alloc(bin.size)))
        return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (aligning input %u)", i);
      memcpy(pc->copies[i], bin.data, bin.size);
      io[i].data = pc->copies[i];
    }
  }
  return 0;
}

/* A fresh binary per output ([dtype]), sized from the graph's own descriptor. 0, or the
 * error term. */
static ERL_NIF_TERM profiled_outputs(ErlNifEnv *env, profiled_call *pc, const nif_graph *g,
                                     ERL_NIF_TERM list) {
  ERL_NIF_TERM head, tail = list;
  for (unsigned i = 0; i < pc->n_out && enif_get_list_cell(env, tail, &head, &tail); i++) {
    htpu_io *o = &pc->io[pc->n_in + i];
    if (nif_get_dtype(env, head, &o->dtype)) return enif_make_badarg(env);
    size_t one = g->tensors[pc->n_in + i].info.num_elements * htpu_dtype_size(o->dtype);
    if (one && pc->chunks > SIZE_MAX / one)
      return nif_make_error_msg(env, HTPU_ENOMEM, "output %u: %u chunks overflow", i, pc->chunks);
    if (!enif_alloc_binary(one * pc->chunks, &pc->outs[i]))
      return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (output %u)", i);
    pc->made++;
    o->data = pc->outs[i].data;
    o->size = one;
  }
  return 0;
}

/* The call's `chunks` executes, the first carrying the profile (one profiled execute per
 * call: the sample), their stats summed into *st and the profile's term into *prof. 0, or the
 * error term of the execute that failed. */
static ERL_NIF_TERM profiled_run(ErlNifEnv *env, profiled_call *pc, htpu_graph *h,
                                 const htpu_exec_options *xo, htpu_profile_level level,
                                 unsigned max_events, htpu_exec_stats *st, ERL_NIF_TERM *prof) {
  htpu_io *io = pc->io;
  htpu_profile *p = NULL;
  for (unsigned k = 0; k < pc->chunks; k++) {
    htpu_exec_options ko = *xo;
    if (k == 0) {
      ko.profile_level = level;
      ko.profile_max_events = max_events;
      ko.profile = &p;
    }
    htpu_exec_stats one = {0};
    int rc = htpu_graph_execute_ex(h, io, pc->n_in, io + pc->n_in, pc->n_out, &ko, &one);
    if (rc) return nif_make_error(env, rc); /* p is NULL (the first failed) or the term's */
    /* made now: a dropped profile's reason is this execute's last error */
    if (k == 0) *prof = nif_profile_answer(env, p, 0);
    st->execute_ns += one.execute_ns;
    st->quantize_ns += one.quantize_ns;
    st->dequantize_ns += one.dequantize_ns;
    st->total_ns += one.total_ns;
    st->executes += one.executes;
    for (unsigned i = 0; i < pc->n_in + pc->n_out; i++)
      io[i].data = (char *)io[i].data + io[i].size;
  }
  return 0;
}

/* graph_execute_profiled(graph_ref, [{binary, dtype}], [dtype], opts_map, level, max_events,
 *                        chunks)
 *   -> {:ok, [binary], stats_map, profile} | {:error, reason}
 * As graph_execute_batch (chunks >= 1; each input holds `chunks` graph inputs one after
 * another), the first execute carrying a profile of `level` (:basic, :detailed, :linting,
 * :optrace) read up to max_events events (0: the default). opts_map holds the call's options
 * as graph_submit's (timeout_ns, priority, perf_profile; nif_get_call_options), so a profiled
 * call has the deadline and priority an unprofiled one would; each execute gets them. profile:
 * nif_profile_answer (a read that failed after a good execute: {:dropped, error}). */
ERL_NIF_TERM nif_graph_execute_profiled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_NSEC);
  nif_graph *g;
  unsigned max_events;
  htpu_profile_level level;
  htpu_exec_options xo;
  profiled_call pc = {0};
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&g))
    return nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
  if (!enif_get_list_length(env, argv[1], &pc.n_in) ||
      !enif_get_list_length(env, argv[2], &pc.n_out) || level_of(env, argv[4], &level) ||
      !enif_get_uint(env, argv[5], &max_events) || !enif_get_uint(env, argv[6], &pc.chunks) ||
      pc.chunks == 0)
    return enif_make_badarg(env);
  /* the caller-gone check of every dirty execute, then the call's own options */
  if (nif_exec_options(env, ATOMS.nil, &xo) || nif_get_call_options(env, argv[3], &xo) ||
      xo.batch_multiple || xo.profile_level)
    return enif_make_badarg(env);
  htpu_graph *h = atomic_load(&g->handle);
  if (!h) return nif_closed_error(env, "graph");
  if (pc.n_in != g->num_inputs || pc.n_out != g->num_outputs)
    return nif_make_error_msg(env, HTPU_EMISMATCH,
                              "the graph has %u inputs and %u outputs; given %u and %u",
                              g->num_inputs, g->num_outputs, pc.n_in, pc.n_out);
  unsigned n = pc.n_in + pc.n_out;
  pc.io = enif_alloc((n ? n : 1) * sizeof *pc.io);
  pc.copies = enif_alloc((n ? n : 1) * sizeof *pc.copies);
  pc.outs = enif_alloc((pc.n_out ? pc.n_out : 1) * sizeof *pc.outs);
  ERL_NIF_TERM ret, prof = 0;
  htpu_exec_stats st = {0};
  if (!pc.io || !pc.copies || !pc.outs) {
    ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (execute)");
  } else {
    memset(pc.copies, 0, (n ? n : 1) * sizeof *pc.copies);
    if (!(ret = profiled_inputs(env, &pc, argv[1])) &&
        !(ret = profiled_outputs(env, &pc, g, argv[2])) &&
        !(ret = profiled_run(env, &pc, h, &xo, level, max_events, &st, &prof))) {
      ERL_NIF_TERM list = enif_make_list(env, 0);
      for (unsigned i = pc.n_out; i-- > 0;)
        list = enif_make_list_cell(env, enif_make_binary(env, &pc.outs[i]), list);
      pc.made = 0; /* moved to the terms */
      ret = enif_make_tuple4(env, ATOMS.ok, list,
                             nif_make_exec_stats(env, &st, t0, ATOMS.dirty_io), prof);
    }
  }
  profiled_free(&pc);
  return ret;
}

/* A profile term's :ref that is not one (a struct made by hand): an error, not a badarg out of
 * a public function. */
static ERL_NIF_TERM not_a_profile(ErlNifEnv *env) {
  return nif_make_error_msg(env, HTPU_EINVAL,
                            "not a profile read by hexagon_tpu (its :ref is not a profile "
                            "handle: a %%HexagonTpu.Profile{} made by hand?)");
}

/* profile_write(profile_ref, :trace | :page, path, title) -> :ok | {:error, reason}: the C
 * writers (file I/O: a dirty IO scheduler). */
ERL_NIF_TERM nif_profile_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_profile *res;
  ErlNifBinary path, title;
  char kind[8];
  if (!enif_get_resource(env, argv[0], profile_type, (void **)&res))
    return not_a_profile(env);
  if (enif_get_atom(env, argv[1], kind, sizeof kind, ERL_NIF_LATIN1) <= 0 ||
      !enif_inspect_binary(env, argv[2], &path) || !enif_inspect_binary(env, argv[3], &title))
    return enif_make_badarg(env);
  if (memchr(path.data, 0, path.size) || memchr(title.data, 0, title.size))
    return nif_make_error_msg(env, HTPU_EINVAL, "the %s holds a NUL byte",
                              memchr(path.data, 0, path.size) ? "path" : "title");
  char *p = enif_alloc(path.size + 1), *t = enif_alloc(title.size + 1);
  ERL_NIF_TERM ret;
  if (!p || !t) {
    ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory");
  } else {
    memcpy(p, path.data, path.size);
    p[path.size] = 0;
    memcpy(t, title.data, title.size);
    t[title.size] = 0;
    int rc = strcmp(kind, "trace") == 0  ? htpu_profile_write_trace(res->p, p)
             : strcmp(kind, "page") == 0 ? htpu_profile_write_html(res->p, t[0] ? t : NULL, p)
                                         : -100;
    ret = rc == -100 ? enif_make_badarg(env) : rc ? nif_make_error(env, rc) : ATOMS.ok;
  }
  if (p) enif_free(p);
  if (t) enif_free(t);
  return ret;
}

/* profile_events(profile_ref) -> {:ok, [event]} | {:error, _}: the raw event tree of a profile
 * kept in its resource.
 * Made when asked for, not with every profile: on a 100-op detailed profile (207 events) the
 * tree's terms cost about as much as the rest of a sampled call's profiling together, and a
 * sampled call's telemetry (and HexagonTpu.profile/3 for every run but the one it shows) never
 * reads it. Dirty CPU: a profile may hold up to HTPU_PROFILE_MAX_EVENTS_LIMIT events. */
ERL_NIF_TERM nif_profile_events(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_profile *res;
  if (!enif_get_resource(env, argv[0], profile_type, (void **)&res))
    return not_a_profile(env);
  ERL_NIF_TERM events = enif_make_list(env, 0);
  for (uint32_t i = res->p->num_events; i-- > 0;)
    events = enif_make_list_cell(env, event_term(env, &res->p->events[i]), events);
  return enif_make_tuple2(env, ATOMS.ok, events);
}

/* runtime_profile_caps(runtime_ref) -> {:ok, %{profiling:, optrace:, extended_events:, ...}} |
 * {:error, reason}: what the backend announces (htpu_runtime_profile_caps), for a load that
 * samples profiles to refuse a level the backend cannot give. */
ERL_NIF_TERM nif_runtime_profile_caps(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_runtime *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&res))
    return nif_bad_handle(env, argv[0], NIF_KIND_RUNTIME);
  htpu_profile_caps caps;
  enif_mutex_lock(res->link->lock);
  htpu_runtime *h = atomic_load(&res->link->handle);
  int rc = h ? htpu_runtime_profile_caps(h, &caps) : HTPU_ECLOSED;
  ERL_NIF_TERM ret;
  if (!h) {
    ret = nif_closed_error(env, "runtime");
  } else if (rc) {
    ret = nif_make_error(env, rc);
  } else {
    static const char *const keys[] = {"profiling",  "custom_config",   "max_events_config",
                                       "extended_events", "optrace",  "continuous",
                                       "profiling_state", "system_serialization", "linting"};
    int on[] = {caps.profiling,  caps.custom_config, caps.max_events_config,
                caps.extended_events, caps.optrace, caps.continuous,
                caps.profiling_state, caps.system_serialization, caps.linting};
    enum { N = sizeof on / sizeof on[0] };
    ERL_NIF_TERM v[N];
    for (int i = 0; i < N; i++) v[i] = on[i] ? ATOMS.true_ : ATOMS.false_;
    ret = enif_make_tuple2(env, ATOMS.ok, map_of(env, keys, v, N));
  }
  enif_mutex_unlock(res->link->lock);
  return ret;
}
