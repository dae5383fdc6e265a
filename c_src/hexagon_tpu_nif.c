/*
 * hexagon_tpu_nif.c - the NIF: a thin client of include/hexagon_tpu.h for HexagonTpu.NIF.
 *
 * Every function decodes terms, calls the C API once and builds the answer; validation with
 * friendly messages happens in Elixir first, the core checks everything again. Wrong term
 * types raise badarg (they mean a bug in lib/, not a user error). C failures come back as
 * {:error, {reason_atom, message, qnn_code, qnn_name | nil}}; HexagonTpu.Error wraps them.
 *
 * Scheduling: whatever can wait on the DSP (load, graph retrieve, execute, every close) runs
 * on a dirty IO scheduler; short executes may run on a normal one (execute.c); see the table
 * at the bottom for the reasons.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atoms.h"
#include "env.h"
#include "handles.h"
#include "nif.h"
#include "reaper.h"
#include "terms.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static ERL_NIF_TERM ok3(ErlNifEnv *env, ERL_NIF_TERM a, ERL_NIF_TERM b) {
  return enif_make_tuple3(env, ATOMS.ok, a, b);
}

/* Optional map field: 1 found, 0 absent. */
static int map_get(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, ERL_NIF_TERM *val) {
  return enif_get_map_value(env, map, key, val);
}

/* HexagonTpu.Runtime.open/1 checks these first; this is the backstop for any other caller of
 * HexagonTpu.NIF: an :invalid_argument error naming the option and what it takes, never a
 * badarg, which would raise out of a function whose callers expect error tuples. */
static ERL_NIF_TERM bad_runtime_option(ErlNifEnv *env, const char *name, const char *expected) {
  return nif_make_error_msg(env, HTPU_EINVAL, "runtime option %s: expected %s", name, expected);
}

#define U32_EXPECTED "an integer in 0..4294967295"
#define CSTRING_EXPECTED "nil or a string without NUL bytes"

/* ---- runtime ------------------------------------------------------------------------------ */

/* The runtime options of runtime_open's map, and the strings they point to (owned). */
typedef struct runtime_args {
  htpu_runtime_options o;
  char *backend_lib, *system_lib, *dsp_path, *fastrpc_lib, *qnn_set, *npu_lock;
} runtime_args;

static void runtime_args_free(runtime_args *a) {
  if (a->backend_lib) enif_free(a->backend_lib);
  if (a->system_lib) enif_free(a->system_lib);
  if (a->dsp_path) enif_free(a->dsp_path);
  if (a->fastrpc_lib) enif_free(a->fastrpc_lib);
  if (a->qnn_set) enif_free(a->qnn_set);
  if (a->npu_lock) enif_free(a->npu_lock);
}

/* Every option but env into *a (zeroed strings first). 0, or -1 with the error in *ret. */
static int get_runtime_options(ErlNifEnv *env, ERL_NIF_TERM map, runtime_args *a,
                               ERL_NIF_TERM *ret) {
  ERL_NIF_TERM v;
  htpu_runtime_options *o = &a->o;
  htpu_runtime_options_init(o);
  struct {
    ERL_NIF_TERM key;
    const char *name;
    char **out;
  } strs[] = {{ATOMS.backend_lib, "backend_lib", &a->backend_lib},
              {ATOMS.system_lib, "system_lib", &a->system_lib},
              {ATOMS.dsp_library_path, "dsp_library_path", &a->dsp_path},
              {ATOMS.fastrpc_lib, "fastrpc_lib", &a->fastrpc_lib},
              {ATOMS.qnn_set, "qnn_set", &a->qnn_set},
              {ATOMS.npu_lock_path, "npu_lock_path", &a->npu_lock}};
  struct {
    ERL_NIF_TERM key;
    const char *name;
    uint32_t *out;
  } u32s[] = {{ATOMS.backend_id, "backend_id", &o->backend_id},
              {ATOMS.log_level, "log_level", &o->log_level},
              {ATOMS.recovery_retries, "recovery_retries", &o->recovery_retries},
              {ATOMS.startup_retries, "startup_retries", &o->startup_retries},
              {ATOMS.startup_retry_delay_ms, "startup_retry_delay_ms", &o->startup_retry_delay_ms}};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
    if (map_get(env, map, strs[i].key, &v) && nif_get_cstring_or_nil(env, v, strs[i].out)) {
      *ret = bad_runtime_option(env, strs[i].name, CSTRING_EXPECTED);
      return -1;
    }
  }
  for (size_t i = 0; i < sizeof u32s / sizeof u32s[0]; i++) {
    unsigned u; /* 32 bits on every target (ILP32, LP64) */
    if (map_get(env, map, u32s[i].key, &v)) {
      if (!enif_get_uint(env, v, &u)) {
        *ret = bad_runtime_option(env, u32s[i].name, U32_EXPECTED);
        return -1;
      }
      *u32s[i].out = u;
    }
  }
  if (map_get(env, map, ATOMS.perf_profile, &v) && nif_get_perf_profile(env, v, &o->perf_profile)) {
    *ret = bad_runtime_option(env, "perf_profile", "nil or a performance profile name (atom)");
    return -1;
  }
  if (map_get(env, map, ATOMS.skip_device, &v)) o->skip_device = enif_is_identical(v, ATOMS.true_);
  if (map_get(env, map, enif_make_atom(env, "spill_fill_sharing"), &v))
    o->spill_fill_sharing = !enif_is_identical(v, ATOMS.false_);
  ErlNifUInt64 u64;
  if (map_get(env, map, ATOMS.npu_lock_timeout_ns, &v)) {
    if (!enif_get_uint64(env, v, &u64)) {
      *ret = bad_runtime_option(env, "npu_lock_timeout_ns", "a non-negative integer");
      return -1;
    }
    o->npu_lock_timeout_ns = u64;
  }
  if (map_get(env, map, enif_make_atom(env, "open_timeout_ns"), &v)) {
    if (!enif_get_uint64(env, v, &u64)) {
      *ret = bad_runtime_option(env, "open_timeout_ns", "a non-negative integer");
      return -1;
    }
    o->open_timeout_ns = u64;
  }
  if (a->backend_lib) o->backend_lib = a->backend_lib;
  if (a->system_lib) o->system_lib = a->system_lib;
  o->dsp_library_path = a->dsp_path;
  if (a->fastrpc_lib) o->fastrpc_lib = a->fastrpc_lib;
  o->qnn_set = a->qnn_set;
  o->npu_lock_path = a->npu_lock; /* nil: the library's default; "" (an empty binary): none */
  return 0;
}

/* {:ok, ref, info_map} for a runtime just opened (the handle is still only ours), or an error
 * after closing it. */
static ERL_NIF_TERM runtime_result(ErlNifEnv *env, htpu_runtime *rt) {
  htpu_runtime_info info;
  int rc = htpu_runtime_get_info(rt, &info);
  if (rc) {
    ERL_NIF_TERM err = nif_make_error(env, rc);
    htpu_runtime_close(&rt);
    return err;
  }
  /* The info is built now, while no other thread can close the handle (its strings are
   * borrowed from the runtime). */
  ERL_NIF_TERM info_term = nif_make_runtime_info(env, &info);
  nif_runtime *res = enif_alloc_resource(NIF_RT(RUNTIME), sizeof *res);
  if (res) res->link = NULL; /* the destructor may run below: keep it consistent */
  nif_rt_link *link = res ? nif_link_new(rt) : NULL;
  if (!link) {
    if (res) enif_release_resource(res);
    htpu_runtime_close(&rt);
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (runtime resource)");
  }
  res->link = link;
  ERL_NIF_TERM ret = ok3(env, enif_make_resource(env, res), info_term);
  enif_release_resource(res); /* the term owns it now */
  return ret;
}

/* runtime_open(%{backend_lib, system_lib, dsp_library_path, fastrpc_lib: binary | nil,
 * backend_id, log_level, recovery_retries, startup_retries, startup_retry_delay_ms:
 * non_neg_integer, skip_device: boolean, perf_profile: atom | nil, env: [{name, value | nil}]})
 * -> {:ok, ref, info_map} | {:error, reason}. Absent keys keep htpu_runtime_options_init's
 * defaults. */
static ERL_NIF_TERM nif_runtime_open(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ERL_NIF_TERM ret, v;
  runtime_args a = {0};
  env_entry saved[MAX_ENV];
  unsigned n_saved = 0;
  int env_applied = 0;
  if (!enif_is_map(env, argv[0])) return bad_runtime_option(env, "map", "a map of options");
  env_lock();
  if (get_runtime_options(env, argv[0], &a, &ret)) goto out;
  if (map_get(env, argv[0], ATOMS.env, &v)) {
    char why[160];
    env_applied = 1;
    if (env_apply(env, v, saved, MAX_ENV, &n_saved, why, sizeof why)) {
      ret = nif_make_error_msg(env, HTPU_EINVAL, "runtime option env: %s", why);
      goto out;
    }
  }
  htpu_runtime *rt = NULL;
  int rc = htpu_runtime_open(&a.o, &rt);
  ret = rc ? nif_make_error(env, rc) : runtime_result(env, rt);
out:
  /* The libraries read their environment at backend (and device) creation; the reference
   * backend keeps its HTPU_REF_* rules with that backend. So the variables can go back right
   * away and never leak into other runtimes. */
  if (env_applied) env_restore(saved, n_saved);
  env_unlock();
  runtime_args_free(&a);
  return ret;
}

static ERL_NIF_TERM nif_runtime_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_runtime *res;
  /* A purged library's handle is closed by its own destructor at GC: nothing to do here. */
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&res))
    return enif_is_ref(env, argv[0]) ? ATOMS.ok : enif_make_badarg(env);
  nif_handle_close(NIF_KIND_RUNTIME, res->link, 1);
  return ATOMS.ok;
}

/* runtime_info(ref) -> {:ok, info_map} | {:error, reason}: read now (the profile and the shared
 * memory note change after open). */
static ERL_NIF_TERM nif_runtime_info(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_runtime *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&res))
    return nif_bad_handle(env, argv[0], NIF_KIND_RUNTIME);
  ERL_NIF_TERM ret;
  enif_mutex_lock(res->link->lock);
  htpu_runtime *h = atomic_load(&res->link->handle);
  htpu_runtime_info info;
  int rc = h ? htpu_runtime_get_info(h, &info) : HTPU_ECLOSED;
  if (!h)
    ret = nif_closed_error(env, "runtime");
  else if (rc)
    ret = nif_make_error(env, rc);
  else
    ret = enif_make_tuple2(env, ATOMS.ok, nif_make_runtime_info(env, &info));
  enif_mutex_unlock(res->link->lock);
  return ret;
}

/* runtime_set_perf_profile(ref, profile_atom) -> :ok | {:error, reason} */
static ERL_NIF_TERM nif_runtime_set_perf_profile(ErlNifEnv *env, int argc,
                                                 const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_runtime *res;
  htpu_perf_profile p;
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&res))
    return nif_bad_handle(env, argv[0], NIF_KIND_RUNTIME);
  if (nif_get_perf_profile(env, argv[1], &p)) return enif_make_badarg(env);
  htpu_runtime *h = atomic_load(&res->link->handle);
  if (!h) return nif_closed_error(env, "runtime");
  int rc = htpu_runtime_set_perf_profile(h, p);
  return rc ? nif_make_error(env, rc) : ATOMS.ok;
}

/* runtime_usage(ref) -> {:ok, users, idle_ms} | {:error, reason}: the context and graph handles
 * open on the runtime, and for how long there have been none (0 while there are). For retiring
 * idle shared runtimes (HexagonTpu.Runtime.close_idle_shared/1). */
static ERL_NIF_TERM nif_runtime_usage(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_runtime *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(RUNTIME), (void **)&res))
    return nif_bad_handle(env, argv[0], NIF_KIND_RUNTIME);
  if (!atomic_load(&res->link->handle)) return nif_closed_error(env, "runtime");
  unsigned users;
  int64_t idle_ms;
  nif_link_usage(res->link, &users, &idle_ms);
  return enif_make_tuple3(env, ATOMS.ok, enif_make_uint(env, users),
                          enif_make_int64(env, idle_ms));
}

/* ---- context ------------------------------------------------------------------------------ */

static ERL_NIF_TERM nif_context_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_context *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(CONTEXT), (void **)&res))
    return enif_is_ref(env, argv[0]) ? ATOMS.ok : enif_make_badarg(env);
  nif_handle_close(NIF_KIND_CONTEXT, res, 1);
  return ATOMS.ok;
}

/* ---- graph -------------------------------------------------------------------------------- */

/* Deep copies of the graph's tensor infos (inputs, then outputs) into res->tensors. Called
 * before the handle is published: the borrowed infos cannot be freed under us yet. 0 or -1. */
static int copy_tensors(nif_graph *res, const htpu_graph_info *gi) {
  uint32_t n = gi->num_inputs + gi->num_outputs;
  res->tensors = enif_alloc((n ? n : 1) * sizeof *res->tensors);
  if (!res->tensors) return -1;
  memset(res->tensors, 0, (n ? n : 1) * sizeof *res->tensors);
  res->num_inputs = gi->num_inputs;
  res->num_outputs = gi->num_outputs;
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *t =
        i < gi->num_inputs ? &gi->inputs[i] : &gi->outputs[i - gi->num_inputs];
    if (nif_slot_copy(&res->tensors[i], t, 0)) return -1;
  }
  return 0;
}

/* graph_open(context_ref, name | nil) -> {:ok, ref, graph_info_map} | {:error, reason} */
static ERL_NIF_TERM nif_graph_open(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_context *cres;
  char *name = NULL;
  if (!enif_get_resource(env, argv[0], NIF_RT(CONTEXT), (void **)&cres))
    return nif_bad_handle(env, argv[0], NIF_KIND_CONTEXT);
  if (nif_get_cstring_or_nil(env, argv[1], &name)) return enif_make_badarg(env);
  htpu_context *ch = atomic_load(&cres->handle);
  htpu_graph *g = NULL;
  int rc = ch ? htpu_graph_open(ch, name, &g) : HTPU_ECLOSED;
  if (name) enif_free(name);
  if (!ch) return nif_closed_error(env, "context");
  if (rc) return nif_make_error(env, rc);

  const htpu_graph_info *gi = htpu_graph_get_info(g);
  nif_graph *res = gi ? enif_alloc_resource(NIF_RT(GRAPH), sizeof *res) : NULL;
  if (!res) {
    htpu_graph_close(&g);
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (graph resource)");
  }
  atomic_init(&res->handle, NULL); /* the destructor may run below: keep it consistent */
  atomic_init(&res->vision_block, NULL);
  nif_live_init(&res->live);
  res->num_inputs = res->num_outputs = 0;
  res->tensors = NULL;
  nif_link_retain(cres->link);
  res->link = cres->link;
  enif_keep_resource(cres);
  res->parent = cres;
  /* Everything the NIF will ever need from the borrowed infos is copied (or turned into terms)
   * now, while only this thread has the handle; nothing reads htpu_graph_get_info later. */
  if (copy_tensors(res, gi)) {
    enif_release_resource(res); /* destructor frees the copies; the handle is still ours */
    htpu_graph_close(&g);
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (graph descriptors)");
  }
  ERL_NIF_TERM info = nif_make_graph_info(env, gi);
  nif_link_user_opened(res->link); /* before the handle is out: a close then finds it counted */
  atomic_store(&res->handle, g);
  nif_live_add(&res->live, NIF_KIND_GRAPH);
  ERL_NIF_TERM ret = ok3(env, enif_make_resource(env, res), info);
  enif_release_resource(res);
  return ret;
}

static ERL_NIF_TERM nif_graph_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_graph *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&res))
    return enif_is_ref(env, argv[0]) ? ATOMS.ok : enif_make_badarg(env);
  nif_handle_close(NIF_KIND_GRAPH, res, 1);
  return ATOMS.ok;
}

/* handle_alive(ref) -> boolean: an open handle of this library (not closed, not purged). */
static ERL_NIF_TERM nif_handle_alive(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  int alive = nif_handle_is_open(env, argv[0]);
  return alive ? ATOMS.true_ : ATOMS.false_;
}

/* ---- shutdown ---------------------------------------------------------------------------- */

/* close_all(wait_ms) -> {:ok | :timeout, handles_taken}: closes every runtime, context, graph and
 * shared IO buffer still open, as close/1 would (live.c), then waits up to wait_ms for the reaper
 * to have closed everything queued, these and what garbage collection dropped before. For the
 * VM's way down: after it, the QNN libraries are unloaded unless a call still holds them. */
static ERL_NIF_TERM nif_close_all(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  unsigned wait_ms;
  if (!enif_get_uint(env, argv[0], &wait_ms)) return enif_make_badarg(env);
  uint64_t taken = nif_handles_close_all();
  int idle = nif_reaper_wait_idle(wait_ms);
  return enif_make_tuple2(env, idle ? ATOMS.ok : ATOMS.timeout, enif_make_uint64(env, taken));
}

/* ---- counters ----------------------------------------------------------------------------- */

/* set_max_binary_bytes(bytes) -> :ok | {:error, reason}: the process-wide limit on context binary files (0 = the
 * default); max_binary_bytes() -> bytes. An atomic store/load: a normal scheduler. */
static ERL_NIF_TERM nif_set_max_binary_bytes(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifUInt64 bytes;
  if (!enif_get_uint64(env, argv[0], &bytes))
    return nif_make_error_msg(env, HTPU_EINVAL,
                              "max_binary_bytes: expected an integer in "
                              "0..18446744073709551615 (0: the default)");
  htpu_set_max_binary_bytes(bytes);
  return ATOMS.ok;
}

static ERL_NIF_TERM nif_max_binary_bytes(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  return enif_make_uint64(env, htpu_max_binary_bytes());
}

/* ---- load / upgrade / unload ---------------------------------------------------------------- */

/* This library instance's identity, stored as every module instance's priv data. Its address
 * is the same for every module instance that loaded this very .so (dlopen of one path returns
 * one mapping, so statics are shared), and different for any other copy of the library (a
 * release upgrade installs the NIF under a new lib/hexagon_tpu-<vsn>/priv path). */
static const char instance_tag[] = "hexagon_tpu_nif";

#if ERL_NIF_MAJOR_VERSION > 2 || (ERL_NIF_MAJOR_VERSION == 2 && ERL_NIF_MINOR_VERSION >= 17)
#define NIF_HAS_ON_HALT 1
/* erlang:halt/0,1 (flushing) calls this before the process exits, i.e. before the QNN
 * libraries' exit-time destructors run: the reaper must not be inside QNN then. Installed by
 * every module instance (ERTS ties it to the instance), so it may run more than once:
 * nif_reaper_halt acts, and the report (halt.c, when HTPU_HALT_REPORT is set) is written, once.
 * ERL_NIF_OPT_DELAY_HALT is deliberately not set: it would make the halt wait for every
 * running NIF call, and an execute or close stuck on a wedged DSP would then hang the halt
 * forever (on a device, a reboot that never comes); a halt that completes is the safer failure. OTP 25 (NIF 2.16) has neither option: there, as before, the process exits
 * with the reaper possibly mid-close. */
static void nif_on_halt(void *priv) {
  (void)priv;
  nif_halt_info info;
  if (nif_reaper_halt(&info)) nif_halt_report(&info);
}
#endif

static int nif_setup(ErlNifEnv *env, void **priv) {
  *priv = (void *)instance_tag;
  nif_atoms_make(env);
#ifdef NIF_HAS_ON_HALT
  /* Only fails outside load/upgrade or when set twice for one module instance: neither can
   * happen here, and a library without the callback still works (as on OTP 25). */
  (void)enif_set_option(env, ERL_NIF_OPT_ON_HALT, nif_on_halt);
#endif
  if (nif_resources_open(env, nif_exec_call_dtor)) return -1;
  if (nif_profile_open_type(env)) return -1;
  if (nif_submit_open_type(env)) return -1;
  return nif_reaper_start(); /* last: nothing to undo if an earlier step failed */
}

static int nif_load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
  (void)info;
  return nif_setup(env, priv);
}

/* A new version of HexagonTpu.NIF while the old one is still loaded.
 *
 * Same library instance (the same .so, as in a hot code reload from the same path): take the
 * resource types over (nif_resources_open, ERL_NIF_RT_TAKEOVER) and add a user to the shared
 * reaper. The destructors that take over are the same code, acting on the same core registry.
 *
 * Any other library (a release upgrade to a different .so, or an old build whose priv is not
 * our tag): refused, before anything is touched. Each .so links its own copy of the C core, so
 * taking over would hand the old library's resources (its structs, its registry's handles) to
 * destructors of another core, and the old .so could then be unloaded while QNN still holds
 * its log callback. Refusing makes erlang:load_nif/2 return {error, {upgrade, _}}: the new
 * module's on_load fails and the old code (and old library) stays in use, untouched. To move to
 * a new library, restart the application (or the node), or close every handle and delete and
 * purge HexagonTpu.NIF first: a load after a full purge is a fresh load, not an upgrade (the
 * purged library's resources keep their own destructors and types; see docs/elixir.md). */
static int nif_upgrade(ErlNifEnv *env, void **priv, void **old_priv, ERL_NIF_TERM info) {
  (void)info;
  *priv = NULL;
  if (!old_priv || *old_priv != (void *)instance_tag) return 1;
  return nif_setup(env, priv);
}

/* Runs when ERTS unloads a module instance's library: on the thread that purges the old module
 * code (the code purger, on a normal scheduler), or, if resources of that instance were still
 * alive then, later, on whichever thread releases the last one (a resource destructor on a
 * scheduler). Never on the reaper thread: the reaper only calls htpu_*_close and never releases
 * a resource, so joining it here cannot wait on itself. Its last user's nif_reaper_stop waits
 * for the queue to drain (closes that may wait for in-flight executes, which never wait on
 * lifecycle_lock), so it cannot deadlock; it can delay this thread by the length of the queued
 * closes. */
static void nif_unload(ErlNifEnv *env, void *priv) {
  (void)env;
  (void)priv;
  nif_reaper_stop();
}

/* Scheduler per function:
 *  - runtime_open: dlopen + backend/device creation talk to the DSP and can block for long:
 *    dirty IO (it waits, it does not compute).
 *  - context_open_*: reading the file and QnnContext_createFromBinary (a transfer to the DSP,
 *    and a wait for the runtime's in-flight executes): dirty IO; context_open_many too.
 *  - context_load_info: copies a few fields and strings of the context: normal scheduler.
 *  - graph_open: graphRetrieve may round-trip to the DSP: dirty IO.
 *  - graph_execute: dirty IO. On the board the thread mostly waits (for the graph's lock, the
 *    runtime gate and the DSP); (de)quantization is a small linear pass. Waiting on dirty CPU
 *    schedulers would take cores away from CPU work (e.g. Nx pre-processing) while idle, and
 *    there are only as many of them as cores.
 *  - graph_execute_normal: normal scheduler: the same work for graphs whose calls are known
 *    to be short, with small I/O, never waiting on a lock (the core's no-wait execute); any
 *    other call is moved to graph_execute on dirty IO before it has done anything
 *    (c_src/execute.c has the bound).
 *  - graph_timing: lock-free reads of the graph's recent durations: normal scheduler.
 *  - *_close: frees cross to the DSP and wait for in-flight executes: dirty IO.
 *  - runtime_set_perf_profile: setPowerConfig crosses to the DSP: dirty IO.
 *  - graph_alloc_io: rpcmem_alloc is an ioctl into the FastRPC driver: dirty IO.
 *  - graph_execute_shared: as graph_execute.
 *  - shared_write / shared_read: a memcpy or a (de)quantization pass over one tensor: normal
 *    scheduler up to 64 KiB, rescheduled onto a dirty CPU scheduler above (c_src/shared.c). They
 *    never wait: the buffer is kept alive by a reference count, not a lock.
 *  - runtime_info: copies a few strings under the runtime link's lock, which a close holds only
 *    for a pointer swap: normal scheduler.
 *  - stats, handle_alive, runtime_usage: atomic loads only: normal scheduler.
 *  - board_read: a few hundred small sysfs reads, any of which a slow sensor driver can make
 *    wait: dirty IO.
 *  - close_all: waits for the reaper's closes (bounded by its argument): dirty IO.
 *  - vision_preprocess / vision_decode: normal scheduler for small work (bytes, candidates,
 *    NMS pairs), rescheduled onto a dirty CPU scheduler above (c_src/vision.c).
 *  - vision_detect: preprocess, execute, decode in one call: dirty IO (vision_detect.c). */
static ErlNifFunc nif_funcs[] = {
    {"runtime_open", 1, nif_runtime_open, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"runtime_close", 1, nif_runtime_close, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"context_open_file", 2, nif_context_open_file, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"context_open_binary", 2, nif_context_open_binary, ERL_NIF_DIRTY_JOB_IO_BOUND},
    /* with htpu_load_options: priority, timeout_ns, exec_timeout_ns */
    {"context_open_file", 3, nif_context_open_file, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"context_open_binary", 3, nif_context_open_binary, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"context_open_many", 2, nif_context_open_many, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"context_load_info", 1, nif_context_load_info, 0},
    {"context_close", 1, nif_context_close, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"context_memory", 1, nif_context_memory, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"graph_open", 2, nif_graph_open, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"graph_close", 1, nif_graph_close, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"graph_execute", 4, nif_graph_execute, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"graph_execute_normal", 5, nif_graph_execute_normal, 0},
    {"graph_execute_normal", 6, nif_graph_execute_normal, 0},
    {"graph_timing", 1, nif_graph_timing, 0},
    /* decoding and a queue insert; the execute runs on the core's worker (submit.c) */
    {"graph_submit", 5, nif_graph_submit, 0},
    {"call_cancel", 1, nif_call_cancel, 0},
    {"call_claim", 1, nif_call_claim, 0},
    {"call_stats", 1, nif_call_stats, 0},
    {"call_error", 1, nif_call_error, 0},
    {"graph_batch_multiple", 1, nif_graph_batch_multiple, 0},
    {"ref_control", 2, nif_ref_control, 0},
    {"graph_execute_batch", 5, nif_graph_execute_batch, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"runtime_info", 1, nif_runtime_info, 0},
    {"runtime_set_perf_profile", 2, nif_runtime_set_perf_profile, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"runtime_usage", 1, nif_runtime_usage, 0},
    {"graph_alloc_io", 2, nif_graph_alloc_io, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"graph_execute_shared", 4, nif_graph_execute_shared, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"shared_write", 4, nif_shared_write, 0},
    {"shared_read", 3, nif_shared_read, 0},
    {"shared_close", 1, nif_shared_close, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"handle_alive", 1, nif_handle_alive, 0},
    {"stats", 0, nif_stats, 0},
    {"board_read", 1, nif_board_read, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"set_max_binary_bytes", 1, nif_set_max_binary_bytes, 0},
    {"max_binary_bytes", 0, nif_max_binary_bytes, 0},
    {"close_all", 1, nif_close_all, ERL_NIF_DIRTY_JOB_IO_BOUND},
    /* profiles (profile.c): a QNN profile handle and file I/O, so dirty IO */
    {"graph_execute_profiled", 7, nif_graph_execute_profiled, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"runtime_profile_caps", 1, nif_runtime_profile_caps, 0},
    {"profile_write", 4, nif_profile_write, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"profile_events", 1, nif_profile_events, ERL_NIF_DIRTY_JOB_CPU_BOUND},
    /* vision (vision.c): preprocess and decode move to dirty CPU themselves for large work;
     * detect waits for the graph and the DSP like graph_execute */
    {"vision_preprocess", 3, nif_vision_preprocess, 0},
    {"vision_decode", 6, nif_vision_decode, 0},
    {"vision_detect", 8, nif_vision_detect, ERL_NIF_DIRTY_JOB_IO_BOUND},
};

ERL_NIF_INIT(Elixir.HexagonTpu.NIF, nif_funcs, nif_load, NULL, nif_upgrade, nif_unload)
