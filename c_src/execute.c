/*
 * execute.c - graph executes from Elixir, on a dirty IO scheduler or on a normal one.
 *
 * graph_execute runs on a dirty IO scheduler: any call may wait (for the graph's turn, for a
 * context load, for the DSP), and there it may. Its round trip through the dirty scheduler
 * costs several microseconds, more than a small graph's whole call, so graph_execute_normal
 * runs the same work on the calling normal scheduler when that cannot block it for long:
 *   - the inputs and outputs together are at most NIF_NORMAL_MAX_IO_BYTES (bounds the
 *     conversions and copies to a few tens of microseconds);
 *   - the core's no-wait execute (htpu_exec_options.no_wait) takes the graph's lock and the
 *     execute gate only if free, votes no per-call profile and leaves DSP-restart recoveries
 *     to dirty calls, so nothing on this path waits for another call;
 *   - it converts only in an idle scratch block of the graph and passes only buffers already
 *     registered with the context: a new block (rpcmem_alloc) or a memRegister is left to the
 *     dirty call (HTPU_DECLINE_RESOURCE), which leaves the block idle and registered;
 *   - the call never drops the graph's last reference: a close meanwhile (close/1, the
 *     reaper, close_all through the reaper) waits in htpu_graph_close for it to end, so the
 *     graph's destroy (FastRPC frees under the exclusive gate, maybe the context's free) runs
 *     on the closing dirty scheduler or reaper thread, never here;
 *   - with :auto, the graph's last HTPU_TIMING_WINDOW calls must all be known and each at most
 *     NIF_SHORT_CALL_NS (checked again under the graph's lock), so after a graph grew only
 *     its first long call (the one that shows it) runs here.
 * What this cannot bound is graphExecute itself: a call that stalls in the DSP (a restart
 * mid-call, a hung FastRPC call) holds the normal scheduler for the stall; the window is a
 * prediction from history, not a limit (docs/elixir.md says so).
 * Anything else is declined before the caller can see a change and the call moves, arguments
 * untouched, to graph_execute on a dirty IO scheduler (enif_schedule_nif); the caller sees one
 * call either way. Counters say which path answered (nif_sched_counts).
 */
#include <stdatomic.h>
#include <string.h>

#include "atoms.h"
#include "nif.h"

/* The BEAM asks NIFs on normal schedulers to return within about 1 ms; a short call must be
 * well under it, leaving room for the conversions and for a scheduler hiccup. */
#define NIF_SHORT_CALL_NS 200000ull
/* As shared_write/shared_read: a memcpy or a (de)quantization pass over 64 KiB stays well
 * under the limit above. */
#define NIF_NORMAL_MAX_IO_BYTES (64u * 1024u)

typedef enum run_mode { RUN_DIRTY, RUN_AUTO, RUN_FORCED } run_mode;

static struct {
  atomic_uint_fast64_t normal, dirty_io, busy, not_short, other, resource;
} counts;

void nif_sched_counts_get(nif_sched_counts *out) {
  out->executes_normal = atomic_load(&counts.normal);
  out->executes_dirty_io = atomic_load(&counts.dirty_io);
  out->declined_busy = atomic_load(&counts.busy);
  out->declined_not_short = atomic_load(&counts.not_short);
  out->declined_other = atomic_load(&counts.other);
  out->declined_resource = atomic_load(&counts.resource);
}

/* graph_execute(graph_ref, [{binary, dtype}], [dtype], perf_profile_atom | nil)
 *   -> {:ok, [binary], stats_map} | {:error, reason}
 * A profile other than nil/:default is voted around this call (htpu_graph_execute_ex).
 * Inputs go to the core by pointer (the core quantizes f32 ones into its scratch); each output
 * is a fresh refc binary the backend (or the core's dequantizer) writes into, handed to Erlang
 * with enif_make_binary: no copy on the way out.
 *
 * graph_execute_batch(graph_ref, [{binary, dtype}], [dtype], perf_profile, chunks)
 *   -> {:ok, [binary], stats_map} | {:error, reason, chunk}
 * The same for `chunks` executes in one call (HexagonTpu.predict_batch/3): each input holds
 * `chunks` graph inputs one after another, and execute c reads the c-th of each and writes the
 * c-th part of each output, whose binary holds all of them. One dirty-scheduler call for a whole
 * batch instead of one per chunk; each execute still takes the graph's lock on its own, so other
 * callers of the graph interleave. The stats are the executes' sums; an error stops at its chunk,
 * which the answer names (errors found before any execute are {:error, reason}).
 *
 * Off RUN_DIRTY (one chunk only), the call may be declined: returns 1 with *why set
 * (HTPU_DECLINE_NONE for the size bound) and nothing made; else 0 with the answer in *ret. */
static int run(ErlNifEnv *env, const ERL_NIF_TERM argv[], run_mode mode, unsigned chunks,
               int batch_call, ErlNifTime t0, ERL_NIF_TERM *ret, htpu_decline *why) {
  nif_graph *res;
  unsigned n_in, n_out;
  int declined = 0;
  size_t io_bytes = 0;
  *why = HTPU_DECLINE_NONE;
  if (!enif_get_resource(env, argv[0], GRAPH_RT, (void **)&res)) {
    *ret = nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
    return 0;
  }
  if (!enif_get_list_length(env, argv[1], &n_in) || !enif_get_list_length(env, argv[2], &n_out)) {
    *ret = enif_make_badarg(env);
    return 0;
  }
  htpu_graph *h = atomic_load(&res->handle);
  if (!h) {
    *ret = nif_closed_error(env, "graph");
    return 0;
  }
  if (n_in != res->num_inputs || n_out != res->num_outputs) {
    *ret = nif_make_error_msg(env, HTPU_EMISMATCH,
                              "the graph has %u inputs and %u outputs; given %u and %u",
                              res->num_inputs, res->num_outputs, n_in, n_out);
    return 0;
  }

  unsigned n = n_in + n_out, made = 0;
  htpu_io *io = enif_alloc((n ? n : 1) * sizeof *io);
  void **copies = enif_alloc((n_in ? n_in : 1) * sizeof *copies);
  ErlNifBinary *outs = enif_alloc((n_out ? n_out : 1) * sizeof *outs);
  if (!io || !copies || !outs) {
    *ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (execute)");
    goto out;
  }
  memset(copies, 0, (n_in ? n_in : 1) * sizeof *copies);

  ERL_NIF_TERM head, tail = argv[1];
  for (unsigned i = 0; i < n_in && enif_get_list_cell(env, tail, &head, &tail); i++) {
    const ERL_NIF_TERM *pair;
    int arity;
    ErlNifBinary bin;
    if (!enif_get_tuple(env, head, &arity, &pair) || arity != 2 ||
        !enif_inspect_binary(env, pair[0], &bin) || nif_get_dtype(env, pair[1], &io[i].dtype)) {
      *ret = enif_make_badarg(env);
      goto out;
    }
    if (bin.size % chunks != 0) {
      *ret = nif_make_error_msg(env, HTPU_EMISMATCH, "input %u: %zu bytes are not %u equal chunks",
                                i, bin.size, chunks);
      goto out;
    }
    io[i].data = bin.data;
    io[i].size = bin.size / chunks;
    io_bytes += bin.size;
  }
  if (mode != RUN_DIRTY && io_bytes > NIF_NORMAL_MAX_IO_BYTES) {
    declined = 1;
    goto out;
  }
  /* A sub-binary (e.g. from binary matching) can start at any byte; the core reads whole
   * elements, so an unaligned buffer is copied once instead of read misaligned. */
  for (unsigned i = 0; i < n_in; i++) {
    size_t align = htpu_dtype_size(io[i].dtype);
    if (align > 1 && io[i].size && ((uintptr_t)io[i].data % align) != 0) {
      size_t all = io[i].size * chunks;
      copies[i] = enif_alloc(all);
      if (!copies[i]) {
        *ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (aligning input %u)", i);
        goto out;
      }
      memcpy(copies[i], io[i].data, all);
      io[i].data = copies[i];
    }
  }

  tail = argv[2];
  for (unsigned i = 0; i < n_out && enif_get_list_cell(env, tail, &head, &tail); i++) {
    htpu_io *o = &io[n_in + i];
    if (nif_get_dtype(env, head, &o->dtype)) {
      *ret = enif_make_badarg(env);
      goto out;
    }
    /* Sized from the graph's own descriptor: a wrong dtype request is the core's to reject
     * (HTPU_EMISMATCH), never an overflow. */
    size_t one = res->tensors[n_in + i].info.num_elements * htpu_dtype_size(o->dtype);
    if (one && chunks > SIZE_MAX / one) {
      *ret = nif_make_error_msg(env, HTPU_ENOMEM, "output %u: %u chunks overflow", i, chunks);
      goto out;
    }
    size_t size = one * chunks;
    io_bytes += size;
    if (mode != RUN_DIRTY && io_bytes > NIF_NORMAL_MAX_IO_BYTES) {
      declined = 1;
      goto out;
    }
    if (!enif_alloc_binary(size, &outs[i])) {
      *ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%zu-byte output %u)", size, i);
      goto out;
    }
    made++;
    o->data = outs[i].data;
    o->size = one;
  }

  htpu_exec_options xo;
  if (nif_exec_options(env, argv[3], &xo)) {
    *ret = enif_make_badarg(env);
    goto out;
  }
  xo.no_wait = mode != RUN_DIRTY;
  xo.short_ns = mode == RUN_AUTO ? NIF_SHORT_CALL_NS : 0;
  htpu_exec_stats st = {0};
  for (unsigned c = 0; c < chunks; c++) {
    htpu_exec_stats one = {0};
    int rc = htpu_graph_execute_ex(h, io, n_in, io + n_in, n_out, &xo, &one);
    if (rc && one.declined) { /* only off RUN_DIRTY, which is one chunk */
      declined = 1;
      *why = one.declined;
      goto out;
    }
    if (rc) {
      *ret = nif_make_error(env, rc);
      const ERL_NIF_TERM *e;
      int arity; /* {:error, reason} -> {:error, reason, chunk} */
      if (batch_call && enif_get_tuple(env, *ret, &arity, &e) && arity == 2)
        *ret = enif_make_tuple3(env, e[0], e[1], enif_make_uint(env, c));
      goto out;
    }
    st.execute_ns += one.execute_ns;
    st.quantize_ns += one.quantize_ns;
    st.dequantize_ns += one.dequantize_ns;
    st.total_ns += one.total_ns;
    for (unsigned i = 0; i < n; i++) io[i].data = (char *)io[i].data + io[i].size;
  }
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (unsigned i = n_out; i-- > 0;)
    list = enif_make_list_cell(env, enif_make_binary(env, &outs[i]), list);
  made = 0; /* ownership moved to the terms */
  *ret = enif_make_tuple3(env, ATOMS.ok, list,
                          nif_make_exec_stats(env, &st, t0,
                                              mode == RUN_DIRTY ? ATOMS.dirty_io : ATOMS.normal));

out:
  for (unsigned i = 0; i < made; i++) enif_release_binary(&outs[i]);
  if (copies)
    for (unsigned i = 0; i < n_in; i++)
      if (copies[i]) enif_free(copies[i]);
  if (outs) enif_free(outs);
  if (copies) enif_free(copies);
  if (io) enif_free(io);
  return declined;
}

ERL_NIF_TERM nif_graph_execute(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_NSEC);
  ERL_NIF_TERM ret;
  htpu_decline why;
  (void)run(env, argv, RUN_DIRTY, 1, 0, t0, &ret, &why);
  atomic_fetch_add(&counts.dirty_io, 1);
  return ret;
}

ERL_NIF_TERM nif_graph_execute_batch(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_NSEC);
  unsigned chunks;
  if (!enif_get_uint(env, argv[4], &chunks) || chunks == 0) return enif_make_badarg(env);
  ERL_NIF_TERM ret;
  htpu_decline why;
  (void)run(env, argv, RUN_DIRTY, chunks, 1, t0, &ret, &why);
  atomic_fetch_add(&counts.dirty_io, 1);
  return ret;
}

/* Reports the time this call has held the normal scheduler since t0, as a share of the 1 ms a
 * NIF may take (at least 1%: the scheduler's reduction budget counts it). */
static void consume_since(ErlNifEnv *env, ErlNifTime t0) {
  ErlNifTime pct = (enif_monotonic_time(ERL_NIF_NSEC) - t0) / 10000;
  (void)enif_consume_timeslice(env, pct < 1 ? 1 : pct > 100 ? 100 : (int)pct);
}

/* graph_execute_normal(graph_ref, inputs, output_dtypes, perf_profile, :auto | :normal): as
 * graph_execute, answered on this normal scheduler when it can be (file comment), else by
 * graph_execute on a dirty IO scheduler. */
ERL_NIF_TERM nif_graph_execute_normal(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_NSEC);
  run_mode mode;
  if (enif_is_identical(argv[4], ATOMS.auto_))
    mode = RUN_AUTO;
  else if (enif_is_identical(argv[4], ATOMS.normal))
    mode = RUN_FORCED;
  else
    return enif_make_badarg(env);
  ERL_NIF_TERM ret;
  htpu_decline why;
  if (!run(env, argv, mode, 1, 0, t0, &ret, &why)) {
    atomic_fetch_add(&counts.normal, 1);
    consume_since(env, t0);
    return ret;
  }
  /* A declined call held the scheduler too (decoding, checks, maybe a conversion): reported
   * before it moves, so the process pays for it like for any other work here. */
  consume_since(env, t0);
  if (why == HTPU_DECLINE_BUSY || why == HTPU_DECLINE_GATE)
    atomic_fetch_add(&counts.busy, 1);
  else if (why == HTPU_DECLINE_UNKNOWN || why == HTPU_DECLINE_LONG)
    atomic_fetch_add(&counts.not_short, 1);
  else if (why == HTPU_DECLINE_RESOURCE)
    atomic_fetch_add(&counts.resource, 1);
  else
    atomic_fetch_add(&counts.other, 1);
  /* Named and sized as graph_execute/4, which it now is: tracing and current_function see
   * that. */
  return enif_schedule_nif(env, "graph_execute", ERL_NIF_DIRTY_JOB_IO_BOUND, nif_graph_execute, 4,
                           argv);
}

/* graph_timing(graph_ref) -> {:ok, %{samples, window, max_ns, last_ns}} | {:error, reason}:
 * lock-free reads (htpu_graph_get_timing), so a normal scheduler. */
ERL_NIF_TERM nif_graph_timing(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_graph *res;
  if (!enif_get_resource(env, argv[0], GRAPH_RT, (void **)&res))
    return nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
  htpu_graph *h = atomic_load(&res->handle);
  if (!h) return nif_closed_error(env, "graph");
  htpu_graph_timing t;
  int rc = htpu_graph_get_timing(h, &t);
  if (rc) return nif_make_error(env, rc);
  ERL_NIF_TERM k[] = {ATOMS.samples, ATOMS.window, ATOMS.max_ns, ATOMS.last_ns};
  ERL_NIF_TERM v[] = {enif_make_uint64(env, t.samples), enif_make_uint(env, t.window),
                      enif_make_uint64(env, t.max_ns), enif_make_uint64(env, t.last_ns)};
  ERL_NIF_TERM map;
  if (!enif_make_map_from_arrays(env, k, v, 4, &map)) return enif_make_badarg(env);
  return enif_make_tuple2(env, ATOMS.ok, map);
}
