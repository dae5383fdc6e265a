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
 * graphExecute itself is bounded by the core's no-wait abort deadline (short_ns x 4, or 1 ms)
 * where the backend has execute signals (without them the core declines every no-wait call):
 * a call that stalls in the DSP is stopped there and made again on the graph's queue; the
 * window is a prediction from history, the signal the limit (docs/elixir.md).
 * Anything else is declined before the caller can see a change and the call moves to
 * graph_execute on a dirty IO scheduler (enif_schedule_nif); the caller sees one call either
 * way. A call the core declined carries its output binaries over (exec_carry), so the dirty
 * call does not decode and allocate them again. Counters say which path answered
 * (nif_sched_counts).
 *
 * A call goes through small steps on an exec_call: open_call (the graph and the counts),
 * take_inputs, make_outputs, then execute_and_answer.
 */
#include <stdatomic.h>
#include <string.h>

#include "atoms.h"
#include "handles.h"
#include "nif.h"
#include "shapes.h"
#include "terms.h"

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
 * Where the graph may take a batch multiple (htpu_graph_get_batch_multiple: the runtime
 * announces it and the graph has not refused one), the whole batch is ONE core call with
 * batch_multiple = chunks: one graphExecute of every chunk (one DSP round trip instead of
 * `chunks`), or, if the graph refuses it now, the core's chunked executes in one turn on the
 * graph. An error there names its chunk as above; one of the single execute is the whole
 * batch's ({:error, reason}, the message saying so). The stats' :executes says which ran.
 */

typedef enum step { STEP_OK, STEP_ANSWERED, STEP_DECLINED } step;

/* One execute call, decoded. It owns its arrays, the aligned copies and the output binaries
 * until the answer (or call_close). */
typedef struct exec_call {
  run_mode mode;
  unsigned chunks;
  nif_graph *graph;
  htpu_graph *h;
  unsigned n_in, n_out;
  unsigned made;   /* output binaries allocated so far */
  size_t io_bytes; /* inputs and outputs, all chunks */
  htpu_io *io;     /* inputs then outputs, each the current chunk's part */
  void **copies;   /* per input: an aligned copy, or NULL where the binary is used in place */
  ErlNifBinary *outs;
  htpu_profile_level prof_level; /* a sampled short call (graph_execute_normal/6): its profile */
  unsigned prof_max_events;
  uint32_t *dims; /* outputs with dynamic dimensions: the shapes the execute wrote (shapes.h) */
} exec_call;

static void call_close(exec_call *c) {
  for (unsigned i = 0; i < c->made; i++) enif_release_binary(&c->outs[i]);
  c->made = 0;
  if (c->copies)
    for (unsigned i = 0; i < c->n_in; i++)
      if (c->copies[i]) enif_free(c->copies[i]);
  if (c->outs) enif_free(c->outs);
  if (c->copies) enif_free(c->copies);
  if (c->io) enif_free(c->io);
  if (c->dims) enif_free(c->dims);
  c->io = NULL;
  c->dims = NULL;
  c->copies = NULL;
  c->outs = NULL;
}

/* The graph, its open handle, the counts checked against it, the arrays. */
static step open_call(ErlNifEnv *env, const ERL_NIF_TERM argv[], exec_call *c, ERL_NIF_TERM *ret) {
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&c->graph)) {
    *ret = nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
    return STEP_ANSWERED;
  }
  if (!enif_get_list_length(env, argv[1], &c->n_in) ||
      !enif_get_list_length(env, argv[2], &c->n_out)) {
    *ret = enif_make_badarg(env);
    return STEP_ANSWERED;
  }
  if (!(c->h = atomic_load(&c->graph->handle))) {
    *ret = nif_closed_error(env, "graph");
    return STEP_ANSWERED;
  }
  if (c->n_in != c->graph->num_inputs || c->n_out != c->graph->num_outputs) {
    *ret = nif_make_error_msg(env, HTPU_EMISMATCH,
                              "the graph has %u inputs and %u outputs; given %u and %u",
                              c->graph->num_inputs, c->graph->num_outputs, c->n_in, c->n_out);
    return STEP_ANSWERED;
  }
  unsigned n = c->n_in + c->n_out;
  c->io = enif_alloc((n ? n : 1) * sizeof *c->io);
  c->copies = enif_alloc((c->n_in ? c->n_in : 1) * sizeof *c->copies);
  c->outs = enif_alloc((c->n_out ? c->n_out : 1) * sizeof *c->outs);
  if (!c->io || !c->copies || !c->outs) {
    *ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (execute)");
    return STEP_ANSWERED;
  }
  memset(c->copies, 0, (c->n_in ? c->n_in : 1) * sizeof *c->copies);
  int oom = 0;
  c->dims = nif_shapes_alloc(c->graph, &oom);
  if (oom) {
    *ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (execute)");
    return STEP_ANSWERED;
  }
  return STEP_OK;
}

/* A sub-binary (e.g. from binary matching) can start at any byte; the core reads whole
 * elements, so an unaligned buffer is copied once instead of read misaligned. */
static step align_inputs(ErlNifEnv *env, exec_call *c, ERL_NIF_TERM *ret) {
  for (unsigned i = 0; i < c->n_in; i++) {
    htpu_io *in = &c->io[i];
    size_t align = htpu_dtype_size(in->dtype);
    if (align > 1 && in->size && ((uintptr_t)in->data % align) != 0) {
      size_t all = in->size * c->chunks;
      if (!(c->copies[i] = enif_alloc(all))) {
        *ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (aligning input %u)", i);
        return STEP_ANSWERED;
      }
      memcpy(c->copies[i], in->data, all);
      in->data = c->copies[i];
    }
  }
  return STEP_OK;
}

/* [{binary, dtype}] -> the inputs, one chunk's part each; declines above the normal bound. */
static step take_inputs(ErlNifEnv *env, ERL_NIF_TERM list, exec_call *c, ERL_NIF_TERM *ret) {
  ERL_NIF_TERM head, tail = list;
  for (unsigned i = 0; i < c->n_in && enif_get_list_cell(env, tail, &head, &tail); i++) {
    const ERL_NIF_TERM *pair;
    int arity;
    ErlNifBinary bin;
    if (!enif_get_tuple(env, head, &arity, &pair) || arity != 2 ||
        !enif_inspect_binary(env, pair[0], &bin) || nif_get_dtype(env, pair[1], &c->io[i].dtype)) {
      *ret = enif_make_badarg(env);
      return STEP_ANSWERED;
    }
    if (bin.size % c->chunks != 0) {
      *ret = nif_make_error_msg(env, HTPU_EMISMATCH, "input %u: %zu bytes are not %u equal chunks",
                                i, bin.size, c->chunks);
      return STEP_ANSWERED;
    }
    c->io[i].data = bin.data;
    c->io[i].size = bin.size / c->chunks;
    c->io_bytes += bin.size;
  }
  if (c->mode != RUN_DIRTY && c->io_bytes > NIF_NORMAL_MAX_IO_BYTES) return STEP_DECLINED;
  return align_inputs(env, c, ret);
}

/* [dtype] -> a fresh binary per output, for every chunk; declines above the normal bound. */
static step make_outputs(ErlNifEnv *env, ERL_NIF_TERM list, exec_call *c, ERL_NIF_TERM *ret) {
  ERL_NIF_TERM head, tail = list;
  for (unsigned i = 0; i < c->n_out && enif_get_list_cell(env, tail, &head, &tail); i++) {
    htpu_io *o = &c->io[c->n_in + i];
    if (nif_get_dtype(env, head, &o->dtype)) {
      *ret = enif_make_badarg(env);
      return STEP_ANSWERED;
    }
    /* Sized from the graph's own descriptor: a wrong dtype request is the core's to reject
     * (HTPU_EMISMATCH), never an overflow. */
    size_t one = c->graph->tensors[c->n_in + i].info.num_elements * htpu_dtype_size(o->dtype);
    if (one && c->chunks > SIZE_MAX / one) {
      *ret = nif_make_error_msg(env, HTPU_ENOMEM, "output %u: %u chunks overflow", i, c->chunks);
      return STEP_ANSWERED;
    }
    size_t size = one * c->chunks;
    c->io_bytes += size;
    if (c->mode != RUN_DIRTY && c->io_bytes > NIF_NORMAL_MAX_IO_BYTES) return STEP_DECLINED;
    if (!enif_alloc_binary(size, &c->outs[i])) {
      *ret = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%zu-byte output %u)", size, i);
      return STEP_ANSWERED;
    }
    c->made++;
    o->data = c->outs[i].data;
    o->size = one;
  }
  return STEP_OK;
}

/* {:ok, [binary], stats}, or with a profile {:ok, [binary], stats, profile}: the output
 * binaries move to the terms. */
static ERL_NIF_TERM answer(ErlNifEnv *env, exec_call *c, const htpu_exec_stats *st,
                           ErlNifTime t0, htpu_profile *p) {
  ERL_NIF_TERM sched = c->mode == RUN_DIRTY ? ATOMS.dirty_io : ATOMS.normal;
  ERL_NIF_TERM stats = nif_make_exec_stats(env, st, t0, sched);
  if (nif_shapes_apply(env, c->graph, c->dims, c->io + c->n_in, c->outs, &stats)) {
    htpu_profile_free(p);
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (output shapes)");
  }
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (unsigned i = c->n_out; i-- > 0;)
    list = enif_make_list_cell(env, enif_make_binary(env, &c->outs[i]), list);
  c->made = 0; /* ownership moved to the terms */
  /* a read that failed after a good execute: its reason is this call's last error */
  if (c->prof_level) return enif_make_tuple4(env, ATOMS.ok, list, stats, nif_profile_answer(env, p, 0));
  return enif_make_tuple3(env, ATOMS.ok, list, stats);
}

/* A batch of chunks the graph may run as one execute (see graph_execute_batch). */
static int use_batch_multiple(const exec_call *c, int batch_call) {
  htpu_batch_multiple_state bm;
  return batch_call && c->chunks > 1 && c->mode == RUN_DIRTY &&
         htpu_graph_get_batch_multiple(c->h, &bm) == 0 && bm != HTPU_BATCH_MULTIPLE_CHUNKED;
}

/* {:error, reason} -> {:error, reason, chunk} */
static ERL_NIF_TERM chunk_error(ErlNifEnv *env, int rc, unsigned chunk) {
  ERL_NIF_TERM ret = nif_make_error(env, rc);
  const ERL_NIF_TERM *e;
  int arity;
  if (enif_get_tuple(env, ret, &arity, &e) && arity == 2)
    ret = enif_make_tuple3(env, e[0], e[1], enif_make_uint(env, chunk));
  return ret;
}

/* Runs the call's chunks (perf profile argv[3]) and answers. Off RUN_DIRTY (one chunk only),
 * the core may decline: STEP_DECLINED with *why set, nothing answered. */
static step execute_and_answer(ErlNifEnv *env, ERL_NIF_TERM profile, exec_call *c,
                               int batch_call, ErlNifTime t0, ERL_NIF_TERM *ret,
                               htpu_decline *why) {
  htpu_exec_options xo;
  if (nif_exec_options(env, profile, &xo)) {
    *ret = enif_make_badarg(env);
    return STEP_ANSWERED;
  }
  xo.no_wait = c->mode != RUN_DIRTY;
  xo.short_ns = c->mode == RUN_AUTO ? NIF_SHORT_CALL_NS : 0;
  if (!nif_shapes_rows_ok(env, c->graph, c->chunks, ret)) return STEP_ANSWERED;
  xo.output_dims = c->dims;
  htpu_exec_stats st = {0};
  if (use_batch_multiple(c, batch_call)) {
    xo.batch_multiple = c->chunks;
    for (unsigned i = 0; i < c->n_in + c->n_out; i++) c->io[i].size *= c->chunks;
    int rc = htpu_graph_execute_ex(c->h, c->io, c->n_in, c->io + c->n_in, c->n_out, &xo, &st);
    if (rc) {
      *ret = st.failed_chunk ? chunk_error(env, rc, st.failed_chunk - 1) : nif_make_error(env, rc);
      return STEP_ANSWERED;
    }
    *ret = answer(env, c, &st, t0, NULL);
    return STEP_ANSWERED;
  }
  htpu_profile *p = NULL;
  if (c->prof_level) { /* one chunk: graph_execute_normal/6 only */
    xo.profile_level = (int)c->prof_level;
    xo.profile_max_events = c->prof_max_events;
    xo.profile = &p;
  }
  for (unsigned k = 0; k < c->chunks; k++) {
    htpu_exec_stats one = {0};
    int rc = htpu_graph_execute_ex(c->h, c->io, c->n_in, c->io + c->n_in, c->n_out, &xo, &one);
    if (rc && one.declined) { /* only off RUN_DIRTY, which is one chunk */
      *why = one.declined;
      return STEP_DECLINED;
    }
    if (rc) {
      *ret = batch_call ? chunk_error(env, rc, k) : nif_make_error(env, rc);
      return STEP_ANSWERED;
    }
    st.execute_ns += one.execute_ns;
    st.quantize_ns += one.quantize_ns;
    st.dequantize_ns += one.dequantize_ns;
    st.total_ns += one.total_ns;
    st.executes += one.executes;
    for (unsigned i = 0; i < c->n_in + c->n_out; i++)
      c->io[i].data = (char *)c->io[i].data + c->io[i].size;
  }
  *ret = answer(env, c, &st, t0, p);
  return STEP_ANSWERED;
}

/* The whole call on `c` (mode and chunks set, the rest zero). STEP_DECLINED (only off
 * RUN_DIRTY) leaves c open for the caller: *why is HTPU_DECLINE_NONE for the size bound (some
 * outputs may be missing), else the core's reason (every output made). Else c is closed and
 * the answer is in *ret. */
static step run(ErlNifEnv *env, const ERL_NIF_TERM argv[], exec_call *c, int batch_call,
                ErlNifTime t0, ERL_NIF_TERM *ret, htpu_decline *why) {
  *why = HTPU_DECLINE_NONE;
  step s = open_call(env, argv, c, ret);
  if (s == STEP_OK) s = take_inputs(env, argv[1], c, ret);
  if (s == STEP_OK) s = make_outputs(env, argv[2], c, ret);
  if (s == STEP_OK) s = execute_and_answer(env, argv[3], c, batch_call, t0, ret, why);
  if (s != STEP_DECLINED) call_close(c);
  return s;
}

/* ---- a declined call carried to the dirty scheduler ----------------------------------------
 * The rescheduled graph_execute gets the carry in place of its output dtypes (argv[2]): the
 * graph, the output binaries and their dtypes, made once. The inputs are taken again from
 * argv[1] (the same terms: enif_schedule_nif passes them on), because their bytes may live on
 * the process heap, which can move between the two calls; the handle is loaded again, as a close
 * may come between. A resource, so a carry that never runs (the process killed meanwhile) is
 * freed by its destructor. */
typedef struct exec_carry {
  atomic_int taken; /* set by the one call that uses it */
  exec_call call;   /* inputs not taken; outputs all made */
} exec_carry;

void nif_exec_call_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  exec_carry *k = obj;
  if (!atomic_exchange(&k->taken, 1)) call_close(&k->call);
}

/* The declined call `c` (every output made) moved into a carry term; 0 without memory (then c
 * is still the caller's). */
static int carry(ErlNifEnv *env, exec_call *c, ERL_NIF_TERM *term) {
  exec_carry *k = enif_alloc_resource(nif_exec_call_type, sizeof *k);
  if (!k) return 0;
  for (unsigned i = 0; i < c->n_in; i++) /* taken again on the dirty side */
    if (c->copies[i]) {
      enif_free(c->copies[i]);
      c->copies[i] = NULL;
    }
  c->io_bytes = 0;
  c->mode = RUN_DIRTY;
  k->call = *c;
  atomic_init(&k->taken, 0);
  *term = enif_make_resource(env, k);
  enif_release_resource(k); /* the term owns it now */
  return 1;
}

/* graph_execute with a carry in argv[2]. */
static ERL_NIF_TERM run_carried(ErlNifEnv *env, const ERL_NIF_TERM argv[], exec_carry *k,
                                ErlNifTime t0) {
  nif_graph *g;
  unsigned n_in;
  if (atomic_exchange(&k->taken, 1)) return enif_make_badarg(env); /* a replayed term */
  exec_call *c = &k->call;
  ERL_NIF_TERM ret;
  htpu_decline why;
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&g) || g != c->graph ||
      !enif_get_list_length(env, argv[1], &n_in) || n_in != c->n_in)
    ret = enif_make_badarg(env);
  else if (!(c->h = atomic_load(&g->handle)))
    ret = nif_closed_error(env, "graph");
  else if (take_inputs(env, argv[1], c, &ret) == STEP_OK)
    (void)execute_and_answer(env, argv[3], c, 0, t0, &ret, &why);
  call_close(c);
  return ret;
}

ERL_NIF_TERM nif_graph_execute(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_NSEC);
  ERL_NIF_TERM ret;
  htpu_decline why;
  exec_carry *k;
  if (enif_get_resource(env, argv[2], nif_exec_call_type, (void **)&k)) {
    ret = run_carried(env, argv, k, t0);
  } else {
    exec_call c = {.mode = RUN_DIRTY, .chunks = 1};
    (void)run(env, argv, &c, 0, t0, &ret, &why);
  }
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
  exec_call c = {.mode = RUN_DIRTY, .chunks = chunks};
  (void)run(env, argv, &c, 1, t0, &ret, &why);
  atomic_fetch_add(&counts.dirty_io, 1);
  return ret;
}

/* Reports the time this call has held the normal scheduler since t0, as a share of the 1 ms a
 * NIF may take (at least 1%: the scheduler's reduction budget counts it). */
static void consume_since(ErlNifEnv *env, ErlNifTime t0) {
  ErlNifTime pct = (enif_monotonic_time(ERL_NIF_NSEC) - t0) / 10000;
  (void)enif_consume_timeslice(env, pct < 1 ? 1 : pct > 100 ? 100 : (int)pct);
}

/* graph_execute_normal(graph_ref, inputs, output_dtypes, perf_profile, mode): as
 * graph_execute, answered on this normal scheduler when it can be (file comment), else by
 * graph_execute on a dirty IO scheduler (mode :auto | :normal) or answered :declined
 * (:auto_submit | :normal_submit), for the caller to submit the call (submit.c) instead.
 *
 * graph_execute_normal(..., mode, {level, max_events}): a sampled call (profile_every) on the
 * short path like its unsampled neighbours: the same execute carries a profile and answers
 * {:ok, [binary], stats, profile}; only the submitting modes (a declined sampled call is
 * submitted with its profile). Reading back and making terms of a detailed 100-op profile
 * (its ops, not its event tree) takes a few tens of microseconds, within what this path
 * allows; the call stays out of the graph's timing window, as every profiled call. */
ERL_NIF_TERM nif_graph_execute_normal(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_NSEC);
  run_mode mode;
  int submit = 0;
  htpu_profile_level level = HTPU_PROFILE_OFF;
  unsigned max_events = 0;
  if (argc == 6) {
    const ERL_NIF_TERM *spec;
    int arity;
    char name[16];
    if (!enif_get_tuple(env, argv[5], &arity, &spec) || arity != 2 ||
        enif_get_atom(env, spec[0], name, sizeof name, ERL_NIF_LATIN1) <= 0 ||
        htpu_profile_level_from_name(name, &level) != 0 || level == HTPU_PROFILE_OFF ||
        !enif_get_uint(env, spec[1], &max_events) ||
        !(enif_is_identical(argv[4], ATOMS.auto_submit) ||
          enif_is_identical(argv[4], ATOMS.normal_submit)))
      return enif_make_badarg(env);
  }
  if (enif_is_identical(argv[4], ATOMS.auto_submit))
    mode = RUN_AUTO, submit = 1;
  else if (enif_is_identical(argv[4], ATOMS.normal_submit))
    mode = RUN_FORCED, submit = 1;
  else if (enif_is_identical(argv[4], ATOMS.auto_))
    mode = RUN_AUTO;
  else if (enif_is_identical(argv[4], ATOMS.normal))
    mode = RUN_FORCED;
  else
    return enif_make_badarg(env);
  ERL_NIF_TERM ret;
  htpu_decline why;
  exec_call c = {.mode = mode, .chunks = 1, .prof_level = level, .prof_max_events = max_events};
  if (run(env, argv, &c, 0, t0, &ret, &why) != STEP_DECLINED) {
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
  if (submit) {
    call_close(&c);
    return ATOMS.declined;
  }
  /* Named and sized as graph_execute/4, which it now is: tracing and current_function see
   * that (with the carry, when there is one, in place of the output dtypes). */
  ERL_NIF_TERM args[4] = {argv[0], argv[1], argv[2], argv[3]};
  if (why == HTPU_DECLINE_NONE || !carry(env, &c, &args[2])) call_close(&c);
  return enif_schedule_nif(env, "graph_execute", ERL_NIF_DIRTY_JOB_IO_BOUND, nif_graph_execute, 4,
                           args);
}

/* graph_timing(graph_ref) -> {:ok, %{samples, window, max_ns, last_ns}} | {:error, reason}:
 * lock-free reads (htpu_graph_get_timing), so a normal scheduler. */
ERL_NIF_TERM nif_graph_timing(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_graph *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&res))
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
