/*
 * shared.c - zero-copy I/O: one htpu_shared buffer per HexagonTpu.SharedIO (htpu_graph_alloc_io).
 *
 * Inputs are written into the buffer (copied in the tensor's type, or quantized from f32 by
 * htpu_quantize straight into it); executes pass pointers into it, which the core registers
 * with the context (memRegister) on first use, so FastRPC moves nothing per call; outputs are
 * read back as a copy, dequantized, or as a resource binary pointing into the buffer.
 *
 * Memory safety rests on nif_shared.refs (see nif.h): the buffer is freed only when nothing
 * uses it any more: not the SharedIO term (close/1 or GC), not a view binary, not a call in
 * progress. No lock is held across a call, so close/1 never waits and a write or read never
 * blocks a normal scheduler.
 */
#include <string.h>

#include "atoms.h"
#include "env.h"
#include "handles.h"
#include "nif.h"
#include "shapes.h"
#include "terms.h"

/* Above this many bytes a copy or (de)quantization pass goes to a dirty CPU scheduler: a
 * memcpy runs at several GB/s, a quantize pass at a few hundred MB/s, so 64 KiB stays well
 * under the 1 ms a normal-scheduler NIF may take. */
#define NORMAL_SCHEDULER_MAX_BYTES (64u * 1024u)

static ERL_NIF_TERM ok2(ErlNifEnv *env, ERL_NIF_TERM a) { return enif_make_tuple2(env, ATOMS.ok, a); }

static ERL_NIF_TERM shared_closed(ErlNifEnv *env) {
  return nif_make_error_msg(env, HTPU_ECLOSED, "the shared IO buffer is closed");
}

/* ---- alloc ------------------------------------------------------------------------------------ */

/* graph_alloc_io(graph_ref, env_list)
 *   -> {:ok, shared_ref, %{fastrpc: boolean, size: bytes, note: binary | nil,
 *                          first_fallback: boolean}, [offset]} | {:error, reason}
 * `note` (why this buffer is ordinary memory: htpu_shared_note) and `first_fallback` (true the
 * first time a buffer of this runtime fell back to ordinary memory) only matter when fastrpc is
 * false. env_list
 * ([] outside tests) is set around the allocation only, e.g. HTPU_REF_RPCMEM_FAIL=1. */
/* htpu_graph_alloc_io with the `env:` list applied around it only. 0, or -1 with *ret. */
static int alloc_with_env(ErlNifEnv *env, htpu_graph *h, ERL_NIF_TERM env_list, htpu_io *io,
                          uint32_t n_in, htpu_shared **buf, ERL_NIF_TERM *ret) {
  env_entry saved[MAX_ENV];
  unsigned n_saved = 0;
  char why[160];
  env_lock();
  if (env_apply(env, env_list, saved, MAX_ENV, &n_saved, why, sizeof why)) {
    env_restore(saved, n_saved);
    env_unlock();
    *ret = nif_make_error_msg(env, HTPU_EINVAL, "alloc_io option env: %s", why);
    return -1;
  }
  int rc = htpu_graph_alloc_io(h, io, io + n_in, buf);
  env_restore(saved, n_saved);
  env_unlock();
  if (rc) *ret = nif_make_error(env, rc);
  return rc ? -1 : 0;
}

/* The resource for `buf`, laid out as `io` says, set up and linked; NULL without memory (then
 * `buf` is freed and *what says for what). The slots are built from the graph resource's own deep copy of the tensor
 * infos (made at graph_open), never from htpu_graph_get_info: that memory is borrowed from the
 * core and a close of the same graph by another process, right now, may free it. g itself
 * stays valid: the caller's argv holds it, and the buffer keeps it. */
static nif_shared *shared_new(nif_graph *g, htpu_shared *buf, const htpu_io *io,
                              const char **what) {
  uint32_t n = g->num_inputs + g->num_outputs;
  nif_shared *sh = enif_alloc_resource(NIF_RT(SHARED), sizeof *sh);
  *what = "shared IO resource";
  if (!sh) {
    htpu_shared_free(&buf);
    return NULL;
  }
  memset(sh, 0, sizeof *sh); /* also: the live node is not linked */
  nif_live_init(&sh->live);
  atomic_init(&sh->handle, NULL);
  atomic_init(&sh->refs, 0);
  atomic_init(&sh->closed, 1); /* "not set up": the destructor frees only what is there */
  atomic_init(&sh->detect_busy, 0);
  sh->num_inputs = g->num_inputs;
  sh->num_outputs = g->num_outputs;
  sh->base = htpu_shared_data(buf);
  sh->size = htpu_shared_size(buf);
  sh->fastrpc = htpu_shared_is_fastrpc(buf);
  if (!g->tensors) {
    enif_release_resource(sh);
    htpu_shared_free(&buf);
    return NULL;
  }
  *what = "shared IO slots";
  sh->slots = enif_alloc((n ? n : 1) * sizeof *sh->slots);
  int failed = !sh->slots || !sh->base;
  if (sh->slots) memset(sh->slots, 0, (n ? n : 1) * sizeof *sh->slots);
  for (uint32_t i = 0; !failed && i < n; i++)
    failed = nif_slot_copy(&sh->slots[i], &g->tensors[i].info,
                           (size_t)((char *)io[i].data - sh->base));
  if (failed) {
    enif_release_resource(sh); /* frees the slots */
    htpu_shared_free(&buf);
    return NULL;
  }
  enif_keep_resource(g);
  sh->graph = g;
  atomic_store(&sh->handle, buf);
  atomic_store(&sh->refs, 1);
  atomic_store(&sh->closed, 0);
  nif_live_add(&sh->live, NIF_KIND_SHARED);
  return sh;
}

/* {:ok, shared_ref, meta, offsets} */
static ERL_NIF_TERM alloc_io_answer(ErlNifEnv *env, nif_shared *sh, nif_graph *g) {
  ERL_NIF_TERM note = ATOMS.nil, first = ATOMS.false_;
  if (!sh->fastrpc) {
    /* The buffer's own reason (never "" for ordinary memory), whatever became of the runtime's
     * term meanwhile. NULL only for a closed handle, and this one is ours. */
    const char *text = htpu_shared_note(atomic_load(&sh->handle));
    note = nif_make_string(env, text ? text : "");
    if (g->link && !atomic_exchange(&g->link->fallback_warned, 1)) first = ATOMS.true_;
  }
  ERL_NIF_TERM k[] = {ATOMS.fastrpc, ATOMS.size, ATOMS.note, ATOMS.first_fallback};
  ERL_NIF_TERM v[] = {sh->fastrpc ? ATOMS.true_ : ATOMS.false_, enif_make_uint64(env, sh->size),
                      note, first};
  ERL_NIF_TERM meta;
  enif_make_map_from_arrays(env, k, v, 4, &meta);
  ERL_NIF_TERM offsets = enif_make_list(env, 0);
  for (uint32_t i = sh->num_inputs + sh->num_outputs; i-- > 0;)
    offsets = enif_make_list_cell(env, enif_make_uint64(env, sh->slots[i].offset), offsets);
  return enif_make_tuple4(env, ATOMS.ok, enif_make_resource(env, sh), meta, offsets);
}

ERL_NIF_TERM nif_graph_alloc_io(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_graph *g;
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&g))
    return nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
  htpu_graph *h = atomic_load(&g->handle);
  if (!h) return nif_make_error_msg(env, HTPU_ECLOSED, "the graph is closed");
  /* SharedIO.read_outputs reads whole buffers; an output with dynamic dimensions holds only
   * what each execute produced (predict/3 answers it in that shape) */
  int dyn = nif_shapes_dynamic_output(g);
  if (dyn >= 0)
    return nif_make_error_msg(env, HTPU_EUNSUPPORTED,
                              "output '%s' has dynamic dimensions, whose size each execute sets: "
                              "shared IO buffers are read whole; use predict/3, which answers "
                              "in the shape the execute wrote",
                              g->tensors[g->num_inputs + (unsigned)dyn].info.name);
  uint32_t n = g->num_inputs + g->num_outputs;
  htpu_io *io = enif_alloc((n ? n : 1) * sizeof *io);
  if (!io) return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (alloc_io)");
  htpu_shared *buf = NULL;
  ERL_NIF_TERM ret;
  if (alloc_with_env(env, h, argv[1], io, g->num_inputs, &buf, &ret)) {
    enif_free(io);
    return ret;
  }
  const char *what;
  nif_shared *sh = shared_new(g, buf, io, &what);
  enif_free(io);
  if (!sh) return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%s)", what);
  ret = alloc_io_answer(env, sh, g);
  enif_release_resource(sh);
  return ret;
}

/* ---- write / read ------------------------------------------------------------------------------ */

static int get_shared(ErlNifEnv *env, ERL_NIF_TERM term, nif_shared **out) {
  return enif_get_resource(env, term, NIF_RT(SHARED), (void **)out);
}

static ERL_NIF_TERM shared_write_impl(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_shared *sh;
  unsigned idx;
  ErlNifBinary bin;
  if (!get_shared(env, argv[0], &sh)) return nif_bad_handle(env, argv[0], NIF_KIND_SHARED);
  if (!enif_get_uint(env, argv[1], &idx) || !enif_inspect_binary(env, argv[2], &bin))
    return enif_make_badarg(env);
  int quantize = enif_is_identical(argv[3], ATOMS.quantize);
  if (!quantize && !enif_is_identical(argv[3], ATOMS.raw)) return enif_make_badarg(env);
  if (!nif_shared_acquire(sh)) return shared_closed(env);

  ERL_NIF_TERM ret = ATOMS.ok;
  void *aligned = NULL;
  if (idx >= sh->num_inputs + sh->num_outputs) {
    ret = enif_make_badarg(env);
    goto out;
  }
  const nif_slot *s = &sh->slots[idx];
  char *dst = sh->base + s->offset;
  size_t want = quantize ? s->info.num_elements * sizeof(float) : s->size;
  if (bin.size != want) {
    ret = nif_make_error_msg(env, HTPU_EMISMATCH, "tensor '%s': expected %zu bytes (%s), got %zu",
                             s->name, want, quantize ? "f32" : htpu_dtype_name(s->info.dtype),
                             bin.size);
    goto out;
  }
  if (!quantize || s->info.dtype == HTPU_F32) {
    memcpy(dst, bin.data, bin.size);
    goto out;
  }
  const float *src = (const float *)(const void *)bin.data;
  if ((uintptr_t)bin.data % sizeof(float)) { /* a sub-binary at an odd offset */
    if (!(aligned = enif_alloc(bin.size))) {
      ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (aligning input)");
      goto out;
    }
    memcpy(aligned, bin.data, bin.size);
    src = aligned;
  }
  int rc = htpu_quantize(&s->info, src, dst);
  if (rc) ret = nif_make_error(env, rc);
out:
  if (aligned) enif_free(aligned);
  nif_shared_unref(sh, 0);
  return ret;
}

/* shared_write(shared_ref, slot, binary, :raw | :quantize) -> :ok | {:error, reason}
 * :raw copies bytes in the tensor's own type; :quantize takes f32 and quantizes into place. */
ERL_NIF_TERM nif_shared_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ErlNifBinary bin;
  if (argc == 4 && enif_inspect_binary(env, argv[2], &bin) &&
      bin.size > NORMAL_SCHEDULER_MAX_BYTES)
    return enif_schedule_nif(env, "shared_write", ERL_NIF_DIRTY_JOB_CPU_BOUND, shared_write_impl,
                             argc, argv);
  return shared_write_impl(env, argc, argv);
}

static ERL_NIF_TERM make_view(ErlNifEnv *env, nif_shared *sh, const nif_slot *s) {
  nif_view *v = enif_alloc_resource(NIF_RT(VIEW), sizeof *v);
  if (!v) return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (view)");
  atomic_fetch_add(&sh->refs, 1); /* the caller holds one, so refs > 0: no CAS needed */
  enif_keep_resource(sh);
  v->shared = sh;
  ERL_NIF_TERM bin = enif_make_resource_binary(env, v, sh->base + s->offset, s->size);
  enif_release_resource(v); /* the binary owns it now */
  return ok2(env, bin);
}

static ERL_NIF_TERM shared_read_impl(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_shared *sh;
  unsigned idx;
  if (!get_shared(env, argv[0], &sh)) return nif_bad_handle(env, argv[0], NIF_KIND_SHARED);
  if (!enif_get_uint(env, argv[1], &idx)) return enif_make_badarg(env);
  ERL_NIF_TERM mode = argv[2];
  if (!enif_is_identical(mode, ATOMS.copy) && !enif_is_identical(mode, ATOMS.dequantize) &&
      !enif_is_identical(mode, ATOMS.view))
    return enif_make_badarg(env);
  if (!nif_shared_acquire(sh)) return shared_closed(env);

  ERL_NIF_TERM ret;
  if (idx >= sh->num_inputs + sh->num_outputs) {
    ret = enif_make_badarg(env);
    goto out;
  }
  const nif_slot *s = &sh->slots[idx];
  const char *src = sh->base + s->offset;
  if (enif_is_identical(mode, ATOMS.view)) {
    ret = make_view(env, sh, s);
    goto out;
  }
  int deq = enif_is_identical(mode, ATOMS.dequantize) && s->info.dtype != HTPU_F32;
  size_t size = deq ? s->info.num_elements * sizeof(float) : s->size;
  ErlNifBinary out;
  if (!enif_alloc_binary(size, &out)) {
    ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%zu-byte output)", size);
    goto out;
  }
  int rc = 0;
  if (deq)
    rc = htpu_dequantize(&s->info, src, (float *)(void *)out.data);
  else
    memcpy(out.data, src, size);
  if (rc) {
    enif_release_binary(&out);
    ret = nif_make_error(env, rc);
  } else {
    ret = ok2(env, enif_make_binary(env, &out));
  }
out:
  nif_shared_unref(sh, 0);
  return ret;
}

/* shared_read(shared_ref, slot, :copy | :dequantize | :view) -> {:ok, binary} | {:error, _}
 * :copy gives the tensor's own type, :dequantize f32, :view a resource binary pointing into the
 * buffer (no copy; it keeps the buffer alive and shows what the next execute writes there). */
ERL_NIF_TERM nif_shared_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  nif_shared *sh;
  unsigned idx;
  if (argc == 3 && !enif_is_identical(argv[2], ATOMS.view) && get_shared(env, argv[0], &sh) &&
      enif_get_uint(env, argv[1], &idx) && idx < sh->num_inputs + sh->num_outputs &&
      sh->slots && sh->slots[idx].info.num_elements * sizeof(float) > NORMAL_SCHEDULER_MAX_BYTES)
    return enif_schedule_nif(env, "shared_read", ERL_NIF_DIRTY_JOB_CPU_BOUND, shared_read_impl,
                             argc, argv);
  return shared_read_impl(env, argc, argv);
}

/* shared_close(shared_ref) -> :ok. Idempotent. The memory goes now unless a view binary or a
 * call in progress still uses it (then the last of them frees it, through the reaper). */
ERL_NIF_TERM nif_shared_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_shared *sh;
  if (!get_shared(env, argv[0], &sh))
    return enif_is_ref(env, argv[0]) ? ATOMS.ok : enif_make_badarg(env);
  nif_handle_close(NIF_KIND_SHARED, sh, 1);
  return ATOMS.ok;
}

/* graph_execute_shared(graph_ref, shared_ref, perf_profile | nil, nil | {level, max_events})
 *   -> {:ok, stats} | {:ok, stats, profile} | {:error, _}
 * Runs with every input and output pointing into the shared buffer, in the tensors' own types:
 * nothing is converted or copied here; the core binds registered memory handles. With a
 * profile level (a sampled call) the same execute carries a profile (nif_profile_answer). */
ERL_NIF_TERM nif_graph_execute_shared(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_NSEC);
  nif_graph *g;
  nif_shared *sh;
  htpu_exec_options xo;
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&g))
    return nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
  if (!get_shared(env, argv[1], &sh)) return nif_bad_handle(env, argv[1], NIF_KIND_SHARED);
  if (nif_exec_options(env, argv[2], &xo)) return enif_make_badarg(env);
  htpu_profile *p = NULL;
  if (!enif_is_identical(argv[3], ATOMS.nil)) {
    const ERL_NIF_TERM *spec;
    int arity;
    char name[16];
    htpu_profile_level level;
    unsigned max_events;
    if (!enif_get_tuple(env, argv[3], &arity, &spec) || arity != 2 ||
        enif_get_atom(env, spec[0], name, sizeof name, ERL_NIF_LATIN1) <= 0 ||
        htpu_profile_level_from_name(name, &level) != 0 || level == HTPU_PROFILE_OFF ||
        !enif_get_uint(env, spec[1], &max_events))
      return enif_make_badarg(env);
    xo.profile_level = (int)level;
    xo.profile_max_events = max_events;
    xo.profile = &p;
  }
  htpu_graph *h = atomic_load(&g->handle);
  if (!h) return nif_make_error_msg(env, HTPU_ECLOSED, "the graph is closed");
  if (sh->graph != g)
    return nif_make_error_msg(env, HTPU_EINVAL,
                              "the shared IO buffer was allocated for another graph");
  if (!nif_shared_acquire(sh)) return shared_closed(env);

  uint32_t n = sh->num_inputs + sh->num_outputs;
  htpu_io *io = enif_alloc((n ? n : 1) * sizeof *io);
  ERL_NIF_TERM ret;
  if (!io) {
    ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (execute)");
  } else {
    for (uint32_t i = 0; i < n; i++) {
      io[i].data = sh->base + sh->slots[i].offset;
      io[i].size = sh->slots[i].size;
      io[i].dtype = sh->slots[i].info.dtype;
    }
    htpu_exec_stats st;
    int rc = htpu_graph_execute_ex(h, io, sh->num_inputs, io + sh->num_inputs, sh->num_outputs,
                                   &xo, &st);
    if (rc)
      ret = nif_make_error(env, rc);
    else if (xo.profile_level)
      ret = enif_make_tuple3(env, ATOMS.ok, nif_make_exec_stats(env, &st, t0, ATOMS.dirty_io),
                             nif_profile_answer(env, p, 0));
    else
      ret = ok2(env, nif_make_exec_stats(env, &st, t0, ATOMS.dirty_io));
    enif_free(io);
  }
  nif_shared_unref(sh, 1);
  return ret;
}
