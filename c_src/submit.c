/*
 * submit.c - submitted calls: the answer comes back as a message, no scheduler waits.
 *
 * graph_submit runs on the caller's normal scheduler: it decodes the inputs, makes the output
 * binaries and hands the call to the core (htpu_graph_submit), which queues it on the graph's
 * waiting list and runs it on the graph's worker threads. The core converts a call's inputs at
 * submit, so on this scheduler (f32 to a quantized type: a pass over the inputs; without
 * execute signals also a copy) up to NIF_SUBMIT_NORMAL_MAX_BYTES of inputs; a larger submit
 * moves to a dirty CPU scheduler for that conversion (never for the execute). The core's done
 * callback, on a core thread, builds the answer in the call's own environment and sends it with enif_send to the submitting process
 * only: {:hexagon_tpu, tag, {:ok, outputs, stats} | {:error, reason}} ({:ok, outputs, stats,
 * profile} for a profiled call: its events read on the worker, before the reply).
 *
 * Ownership: the call resource (nif_call) holds the input terms (copied into its environment:
 * a refc binary is referenced, not copied), aligned copies where needed, the output binaries
 * and a reference on the graph resource until done has run; the core holds a reference on the
 * call resource until then (enif_keep_resource), so an Elixir term dropped early changes
 * nothing. The caller is monitored: when it dies its call is cancelled (htpu_call_cancel) and
 * its answer discarded.
 *
 * No stray message: call_cancel sets `discard` under the call's lock and returns :sent when
 * done had already sent the answer (the message is then in the caller's queue: it was sent
 * before the lock was taken), else :ok (no answer will ever be sent). HexagonTpu.await/2 thus
 * knows whether to flush.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atoms.h"
#include "call_options.h"
#include "handles.h"
#include "nif.h"
#include "shapes.h"
#include "terms.h"

typedef struct nif_call {
  ErlNifMutex *lock;
  htpu_call *call; /* the core's call, once submitted; released by the destructor */
  ErlNifPid pid;
  ErlNifMonitor mon;
  int monitored;
  int sent;        /* done sent the answer */
  int ended;       /* done has run */
  int discard;     /* cancelled by the caller or its death: send nothing */
  atomic_int claimed; /* HexagonTpu.await/2 took the answer (call_claim) */
  ErlNifEnv *env;  /* the tag and the input terms until done */
  ERL_NIF_TERM tag;
  nif_graph *graph; /* kept until done */
  unsigned n_in, n_out, made;
  unsigned rows; /* batch multiple (1: none): inputs and outputs hold `rows` graph-sized parts */
  int profiled;  /* the call carries a profile: its answer has a fourth element */
  htpu_io *io;
  void **copies;
  ErlNifBinary *outs;
  uint32_t *dims; /* outputs with dynamic dimensions: the shapes the execute wrote (shapes.h) */
  uint64_t t0, done_ns; /* CLOCK_MONOTONIC ns at submit and at done: :nif_ns between */
} nif_call;

static ErlNifResourceType *call_type;

/* enif_monotonic_time is the VM's clock, read here from threads the VM did not make too. */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static ERL_NIF_TERM atom_pending, atom_hexagon_tpu, atom_async, atom_sent, atom_claimed,
    atom_untried, atom_one_execute, atom_chunked;
static atomic_uint_fast64_t live_calls, calls_submitted, calls_discarded, calls_finish_waits,
    calls_finish_dirty, submits_dirty_cpu;

/* The core converts a submitted call's f32 inputs in htpu_graph_submit, on the caller's thread.
 * Up to this many input bytes that stays well under the ~1 ms a NIF may hold a normal
 * scheduler (as the short path's bound, execute.c); above it the submit moves to a dirty CPU
 * scheduler, for the conversion only: the execute still runs on the core's worker. */
#define NIF_SUBMIT_NORMAL_MAX_BYTES (64u * 1024u)

/* The inputs' bytes ([{binary, dtype}]); 0 for anything else (graph_submit rejects it). */
static size_t submit_input_bytes(ErlNifEnv *env, ERL_NIF_TERM list) {
  size_t total = 0;
  ERL_NIF_TERM head, tail = list;
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    const ERL_NIF_TERM *pair;
    int arity;
    ErlNifBinary bin;
    if (enif_get_tuple(env, head, &arity, &pair) && arity == 2 &&
        enif_inspect_binary(env, pair[0], &bin))
      total += bin.size;
  }
  return total;
}

/* Everything but the lock and the core's call: inputs, copies, binaries, the environment. */
static void call_free_io(nif_call *c) {
  for (unsigned i = 0; i < c->made; i++) enif_release_binary(&c->outs[i]);
  c->made = 0;
  if (c->copies)
    for (unsigned i = 0; i < c->n_in; i++)
      if (c->copies[i]) enif_free(c->copies[i]);
  if (c->copies) enif_free(c->copies);
  if (c->outs) enif_free(c->outs);
  if (c->io) enif_free(c->io);
  if (c->dims) enif_free(c->dims);
  c->copies = NULL;
  c->outs = NULL;
  c->io = NULL;
  c->dims = NULL;
  if (c->env) enif_free_env(c->env);
  c->env = NULL;
}

static void call_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  nif_call *c = obj;
  if (c->call) htpu_call_release(&c->call);
  call_free_io(c);
  if (c->graph) enif_release_resource(c->graph);
  if (c->lock) enif_mutex_destroy(c->lock);
  atomic_fetch_sub(&live_calls, 1);
}

/* Stops the call if it has not ended (a no-op for one that has). The core's call stays valid
 * while the resource lives (released only by the destructor), so no lock is held across the
 * core's. */
static void call_stop(nif_call *c, int *was_sent) {
  enif_mutex_lock(c->lock);
  c->discard = 1;
  htpu_call *h = c->ended ? NULL : c->call;
  if (was_sent) *was_sent = c->sent;
  enif_mutex_unlock(c->lock);
  if (h) htpu_call_cancel(h);
}

/* The submitting process died: cancel, send nothing. */
static void call_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
  (void)env;
  (void)pid;
  (void)mon;
  nif_call *c = obj;
  enif_mutex_lock(c->lock);
  c->monitored = 0;
  enif_mutex_unlock(c->lock);
  call_stop(c, NULL);
}

int nif_submit_open_type(ErlNifEnv *env) {
  ErlNifResourceTypeInit init = {.dtor = call_dtor, .stop = NULL, .down = call_down};
  ErlNifResourceFlags flags = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
  call_type = enif_open_resource_type_x(env, "htpu_submitted_call", &init, flags, NULL);
  atom_hexagon_tpu = enif_make_atom(env, "hexagon_tpu");
  atom_async = enif_make_atom(env, "async");
  atom_pending = enif_make_atom(env, "pending");
  atom_sent = enif_make_atom(env, "sent");
  atom_claimed = enif_make_atom(env, "claimed");
  atom_untried = enif_make_atom(env, "untried");
  atom_one_execute = enif_make_atom(env, "one_execute");
  atom_chunked = enif_make_atom(env, "chunked");
  /* the options' atoms too (call_options.c): at load and upgrade, before any NIF runs */
  nif_call_options_open(env);
  return call_type ? 0 : -1;
}

/* The stats map of a finished call: the core's figures, :nif_ns from submit to done. */
static ERL_NIF_TERM stats_term(ErlNifEnv *env, nif_call *c, const htpu_exec_stats *st) {
  ERL_NIF_TERM stats = nif_make_exec_stats(env, st, 0, atom_async);
  enif_make_map_put(env, stats, ATOMS.nif_ns, enif_make_uint64(env, c->done_ns - c->t0), &stats);
  return stats;
}

/* The core's done, on a core thread (the graph's worker or the timer): the answer, built in the
 * call's environment and sent; then the inputs and the graph go. */
static void on_done(htpu_call *call, int rc, void *arg) {
  nif_call *c = arg;
  htpu_exec_stats st;
  enif_mutex_lock(c->lock);
  /* The call's message and QNN code: the core makes them this thread's last error while done
   * runs (htpu_call_done_fn); read before htpu_call_result clears it. Where that is empty (a
   * core that did not), and for a batch, whose answer names the chunk it stopped at (in the
   * call's stats), the answer is {:error, :pending} and call_error/1 reads it afterwards. */
  const char *last = htpu_last_error();
  ERL_NIF_TERM error = 0;
  /* A batch's error is always read later: the chunk it stopped at is in the call's stats. */
  if (rc && !c->discard)
    error = last[0] && c->rows == 1 ? nif_make_error(c->env, rc)
                                    : enif_make_tuple2(c->env, ATOMS.error, atom_pending);
  /* The core answers here (test_core_call_done.c); should it not, the stats are :pending and
   * call_stats reads them after done. */
  int have_stats = htpu_call_result(call, &st, NULL, 0) == rc;
  c->done_ns = now_ns();
  if (!c->discard) {
    ErlNifEnv *e = c->env;
    ERL_NIF_TERM result;
    if (rc == 0) {
      /* outputs with dynamic dimensions: cut to what was produced, their shapes in the stats
       * (which a graph with them always carries) */
      if (!have_stats) memset(&st, 0, sizeof st);
      ERL_NIF_TERM stats = have_stats || c->dims ? stats_term(e, c, &st) : atom_pending;
      if (nif_shapes_apply(e, c->graph, c->dims, c->io + c->n_in, c->outs, &stats))
        stats = atom_pending; /* out of memory: the outputs whole, as declared */
      ERL_NIF_TERM list = enif_make_list(e, 0);
      for (unsigned i = c->n_out; i-- > 0;)
        list = enif_make_list_cell(e, enif_make_binary(e, &c->outs[i]), list);
      c->made = 0; /* the terms own them now */
      if (c->profiled) {
        /* Read on the worker before this done (htpu_call_take_profile); made into terms here,
         * before the reply: {:ok, outputs, stats, profile | {:dropped, error}}. */
        htpu_profile *p = NULL;
        int read_rc = htpu_call_take_profile(call, &p);
        result = enif_make_tuple4(e, ATOMS.ok, list, stats, nif_profile_answer(e, p, read_rc));
      } else {
        result = enif_make_tuple3(e, ATOMS.ok, list, stats);
      }
    } else {
      result = error;
    }
    /* From a thread the runtime did not make: no caller env. */
    c->sent = enif_send(NULL, &c->pid, e, enif_make_tuple3(e, atom_hexagon_tpu, c->tag, result));
  } else {
    atomic_fetch_add(&calls_discarded, 1);
  }
  if (c->monitored) {
    enif_demonitor_process(NULL, c, &c->mon);
    c->monitored = 0;
  }
  c->ended = 1;
  call_free_io(c);
  nif_graph *g = c->graph;
  c->graph = NULL;
  enif_mutex_unlock(c->lock);
  if (g) enif_release_resource(g);
  enif_release_resource(c); /* the core's reference */
}

/* {:error, ...} for a bad argument the public modules should have caught: never a badarg out of
 * a function whose callers expect error tuples. */
static ERL_NIF_TERM bad(ErlNifEnv *env, const char *what) {
  return nif_make_error_msg(env, HTPU_EINVAL, "graph_submit: %s", what);
}

/* Inputs ([{binary, dtype}], held in c->env) and outputs ([dtype], fresh binaries) of c. */
static ERL_NIF_TERM take_io(ErlNifEnv *env, nif_call *c, ERL_NIF_TERM ins, ERL_NIF_TERM outs) {
  ERL_NIF_TERM head, tail = ins;
  for (unsigned i = 0; i < c->n_in && enif_get_list_cell(env, tail, &head, &tail); i++) {
    const ERL_NIF_TERM *pair;
    int arity;
    ErlNifBinary bin;
    if (!enif_get_tuple(env, head, &arity, &pair) || arity != 2 ||
        nif_get_dtype(env, pair[1], &c->io[i].dtype))
      return bad(env, "expected each input to be {binary, dtype}");
    ERL_NIF_TERM held = enif_make_copy(c->env, pair[0]);
    if (!enif_inspect_binary(c->env, held, &bin))
      return bad(env, "expected each input to be {binary, dtype}");
    c->io[i].data = bin.data;
    c->io[i].size = bin.size;
    /* A sub-binary can start at any byte; the core reads whole elements. */
    size_t align = htpu_dtype_size(c->io[i].dtype);
    if (align > 1 && bin.size && ((uintptr_t)bin.data % align) != 0) {
      if (!(c->copies[i] = enif_alloc(bin.size)))
        return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (aligning input %u)", i);
      memcpy(c->copies[i], bin.data, bin.size);
      c->io[i].data = c->copies[i];
    }
  }
  tail = outs;
  for (unsigned i = 0; i < c->n_out && enif_get_list_cell(env, tail, &head, &tail); i++) {
    htpu_io *o = &c->io[c->n_in + i];
    if (nif_get_dtype(env, head, &o->dtype)) return bad(env, "expected output dtypes");
    /* Sized from the graph's own descriptor: a wrong dtype is the core's to reject. */
    size_t one = c->graph->tensors[c->n_in + i].info.num_elements * htpu_dtype_size(o->dtype);
    if (one && c->rows > SIZE_MAX / one)
      return nif_make_error_msg(env, HTPU_ENOMEM, "output %u: %u row groups overflow", i, c->rows);
    size_t size = one * c->rows;
    if (!enif_alloc_binary(size, &c->outs[i]))
      return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%zu-byte output %u)", size, i);
    c->made++;
    o->data = c->outs[i].data;
    o->size = size;
  }
  /* outputs with dynamic dimensions: where the execute writes their shapes (shapes.h) */
  ERL_NIF_TERM refused;
  if (!nif_shapes_rows_ok(env, c->graph, c->rows, &refused)) return refused;
  int oom = 0;
  if (!(c->dims = nif_shapes_alloc(c->graph, &oom)) && oom)
    return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (submit)");
  return 0;
}

/* A new call resource for n_in inputs and n_out outputs of g (kept until done), its buffers
 * allocated and the tag copied into its environment; NULL out of memory (anything taken then
 * freed by the destructor). */
static nif_call *call_new(nif_graph *g, unsigned n_in, unsigned n_out,
                          const htpu_exec_options *xo, uint64_t t0, ERL_NIF_TERM tag) {
  nif_call *c = enif_alloc_resource(call_type, sizeof *c);
  if (!c) return NULL;
  memset(c, 0, sizeof *c);
  atomic_fetch_add(&live_calls, 1);
  atomic_init(&c->claimed, 0);
  c->t0 = t0;
  c->rows = xo->batch_multiple > 1 ? xo->batch_multiple : 1;
  c->profiled = xo->profile_level != HTPU_PROFILE_OFF;
  c->n_in = n_in;
  c->n_out = n_out;
  c->lock = enif_mutex_create("htpu_submitted_call");
  c->env = enif_alloc_env();
  c->io = enif_alloc((n_in + n_out + 1) * sizeof *c->io);
  c->copies = enif_alloc((n_in + 1) * sizeof *c->copies);
  c->outs = enif_alloc((n_out + 1) * sizeof *c->outs);
  /* the destructor frees the copies it finds: none yet, even when an allocation failed */
  if (c->copies) memset(c->copies, 0, (n_in + 1) * sizeof *c->copies);
  if (!c->lock || !c->env || !c->io || !c->copies || !c->outs) {
    enif_release_resource(c);
    return NULL;
  }
  c->graph = g;
  enif_keep_resource(g);
  c->tag = enif_make_copy(c->env, tag);
  return c;
}

/* The core refused the call (rc): its error term, and the core's reference and the monitor
 * given back. A batch's conversion error (at submit: the core converts the inputs there) names
 * its row group in the message only: {:error, reason, chunk} as a failed chunk's. */
static ERL_NIF_TERM submit_refused(ErlNifEnv *env, nif_call *c, int rc) {
  ERL_NIF_TERM ret = nif_make_error(env, rc);
  const char *rg = c->rows > 1 ? strstr(htpu_last_error(), "(row group ") : NULL;
  const ERL_NIF_TERM *e;
  int arity;
  if (rg && enif_get_tuple(env, ret, &arity, &e) && arity == 2)
    ret = enif_make_tuple3(env, e[0], e[1],
                           enif_make_uint(env, (unsigned)strtoul(rg + 11, NULL, 10)));
  if (c->monitored) enif_demonitor_process(env, c, &c->mon);
  c->monitored = 0;
  enif_release_resource(c); /* the core's, which it did not take */
  return ret;
}

/* Hands c to the core, the caller monitored: {:ok, call_ref} or the error term. */
static ERL_NIF_TERM submit_to_core(ErlNifEnv *env, nif_call *c, htpu_graph *h,
                                   htpu_exec_options *xo) {
  xo->output_dims = c->dims;
  if (!enif_self(env, &c->pid)) return bad(env, "not called from a process");
  c->monitored = enif_monitor_process(env, c, &c->pid, &c->mon) == 0;
  enif_keep_resource(c); /* the core's, until done */
  htpu_call *call = NULL;
  int rc = htpu_graph_submit(h, c->io, c->n_in, c->io + c->n_in, c->n_out, xo, on_done, c, &call);
  if (rc) return submit_refused(env, c, rc);
  enif_mutex_lock(c->lock);
  c->call = call;
  int stop = c->discard && !c->ended; /* the caller died before the call was known */
  enif_mutex_unlock(c->lock);
  if (stop) htpu_call_cancel(call);
  atomic_fetch_add(&calls_submitted, 1);
  return enif_make_tuple2(env, ATOMS.ok, enif_make_resource(env, c));
}

/* graph_submit(graph_ref, [{binary, dtype}], [dtype], opts_map, tag)
 *   -> {:ok, call_ref} | {:error, reason}
 * opts_map: nif_get_call_options (call_options.h). With a profile_level the call carries a
 * profile (the core reads it on its worker) and its answer is {:ok, outputs, stats, profile}
 * (nif_profile_answer: the profile's map, or {:dropped, error} when it could not be read).
 * Normal scheduler: decoding, a memcpy at most (alignment, or the core's copy mode), the
 * core's checks and a queue insert; the execute and its conversions run on the core's worker. */
ERL_NIF_TERM nif_graph_submit(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  if (enif_thread_type() == ERL_NIF_THR_NORMAL_SCHEDULER &&
      submit_input_bytes(env, argv[1]) > NIF_SUBMIT_NORMAL_MAX_BYTES) {
    atomic_fetch_add(&submits_dirty_cpu, 1);
    return enif_schedule_nif(env, "graph_submit", ERL_NIF_DIRTY_JOB_CPU_BOUND, nif_graph_submit,
                             argc, argv);
  }
  uint64_t t0 = now_ns();
  nif_graph *g;
  unsigned n_in, n_out;
  htpu_exec_options xo;
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&g))
    return nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
  if (!enif_get_list_length(env, argv[1], &n_in) || !enif_get_list_length(env, argv[2], &n_out))
    return bad(env, "expected lists of inputs and output dtypes");
  memset(&xo, 0, sizeof xo);
  if (nif_get_call_options(env, argv[3], &xo))
    return bad(env, "expected options %{timeout_ns: integer, priority: atom, perf_profile: atom, "
                    "batch_multiple: pos_integer, profile_level: atom | nil, "
                    "profile_max_events: integer}");
  htpu_graph *h = atomic_load(&g->handle);
  if (!h) return nif_closed_error(env, "graph");
  if (n_in != g->num_inputs || n_out != g->num_outputs)
    return nif_make_error_msg(env, HTPU_EMISMATCH,
                              "the graph has %u inputs and %u outputs; given %u and %u",
                              g->num_inputs, g->num_outputs, n_in, n_out);
  nif_call *c = call_new(g, n_in, n_out, &xo, t0, argv[4]);
  if (!c) return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (submit)");
  ERL_NIF_TERM ret = take_io(env, c, argv[1], argv[2]);
  if (!ret) ret = submit_to_core(env, c, h, &xo);
  enif_release_resource(c); /* the term's (or nobody's: then the destructor frees all) */
  return ret;
}

/* call_cancel(call_ref) -> :ok (no answer will be sent) | :sent (the answer was sent already:
 * it is in the caller's queue). Normal scheduler: sets a flag, triggers the call's signal. */
ERL_NIF_TERM nif_call_cancel(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_call *c;
  if (!enif_get_resource(env, argv[0], call_type, (void **)&c)) return enif_make_badarg(env);
  int sent = 0;
  call_stop(c, &sent);
  return sent ? atom_sent : ATOMS.ok;
}

/* call_claim(call_ref) -> :ok the first time, :claimed after: HexagonTpu.await/2 refuses a
 * second await of one call. */
ERL_NIF_TERM nif_call_claim(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_call *c;
  if (!enif_get_resource(env, argv[0], call_type, (void **)&c)) return enif_make_badarg(env);
  return atomic_exchange(&c->claimed, 1) ? atom_claimed : ATOMS.ok;
}

/* Waits until the core has finished the call (done returned), which it does just after
 * sending the answer: microseconds, but a loaded machine can deschedule the core's thread in
 * between. A normal scheduler waits NIF_FINISH_NORMAL_NS at most; then the NIF moves to a dirty
 * IO scheduler (finish_dirty) and waits there, up to NIF_FINISH_DIRTY_NS. 0: finished. */
#define NIF_FINISH_NORMAL_NS 50000ull
#define NIF_FINISH_DIRTY_NS 1000000000ull

static nif_call *finish_call_arg(ErlNifEnv *env, ERL_NIF_TERM t, htpu_call **h) {
  nif_call *c;
  if (!enif_get_resource(env, t, call_type, (void **)&c)) return NULL;
  enif_mutex_lock(c->lock);
  *h = c->call;
  enif_mutex_unlock(c->lock);
  return c;
}

/* The rest of an answer once the call is finished: its stats (which = 0) or its error
 * (which = 1); nil while it is not (htpu_call_result's HTPU_EBUSY: htpu_call_wait's answer is
 * the call's rc, which can itself be HTPU_ETIMEDOUT, so it cannot tell). */
static ERL_NIF_TERM finish_rest(ErlNifEnv *env, nif_call *c, htpu_call *h, int which) {
  htpu_exec_stats st;
  char msg[1024];
  int rc = htpu_call_result(h, &st, msg, sizeof msg);
  if (rc == HTPU_EBUSY && !msg[0]) return ATOMS.nil; /* not ended: no message of its own */
  if (which == 0) return stats_term(env, c, &st);
  if (rc == 0) return nif_make_error_msg(env, HTPU_EINVAL, "call_error: the call succeeded");
  const char *q = strstr(msg, "QNN error ");
  uint32_t qnn = q ? (uint32_t)strtoul(q + 10, NULL, 10) : 0;
  ERL_NIF_TERM error = nif_make_error_qnn(env, rc, qnn, msg[0] ? msg : htpu_strerror(rc));
  const ERL_NIF_TERM *e;
  int arity;
  /* A chunked batch's error names its row group: {:error, reason, chunk} (0-based). */
  if (st.failed_chunk && enif_get_tuple(env, error, &arity, &e) && arity == 2)
    error = enif_make_tuple3(env, e[0], e[1], enif_make_uint(env, st.failed_chunk - 1));
  return error;
}

static ERL_NIF_TERM finish_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  htpu_call *h;
  nif_call *c = finish_call_arg(env, argv[0], &h);
  if (!c || !h) return enif_make_badarg(env);
  (void)htpu_call_wait(h, NIF_FINISH_DIRTY_NS);
  return finish_rest(env, c, h, enif_is_identical(argv[1], ATOMS.error));
}

static ERL_NIF_TERM finish_normal(ErlNifEnv *env, ERL_NIF_TERM ref, int which) {
  htpu_call *h;
  nif_call *c = finish_call_arg(env, ref, &h);
  if (!c) return enif_make_badarg(env);
  if (!h) return ATOMS.nil;
  atomic_fetch_add(&calls_finish_waits, 1);
  (void)htpu_call_wait(h, NIF_FINISH_NORMAL_NS);
  ERL_NIF_TERM rest = finish_rest(env, c, h, which);
  if (!enif_is_identical(rest, ATOMS.nil)) return rest;
  atomic_fetch_add(&calls_finish_dirty, 1);
  ERL_NIF_TERM args[2] = {ref, which ? ATOMS.error : ATOMS.ok};
  return enif_schedule_nif(env, which ? "call_error" : "call_stats", ERL_NIF_DIRTY_JOB_IO_BOUND,
                           finish_dirty, 2, args);
}

/* call_stats(call_ref) -> stats map | nil: for an answer whose stats came :pending. */
ERL_NIF_TERM nif_call_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return finish_normal(env, argv[0], 0);
}

/* call_error(call_ref) -> {:error, reason} | nil: for an answer that came {:error, :pending}. */
ERL_NIF_TERM nif_call_error(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return finish_normal(env, argv[0], 1);
}

/* graph_batch_multiple(graph_ref) -> :untried | :one_execute | :chunked | {:error, reason}:
 * whether a batch of k row groups may go as one execute (htpu_graph_get_batch_multiple). */
ERL_NIF_TERM nif_graph_batch_multiple(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_graph *g;
  if (!enif_get_resource(env, argv[0], NIF_RT(GRAPH), (void **)&g))
    return nif_bad_handle(env, argv[0], NIF_KIND_GRAPH);
  htpu_graph *h = atomic_load(&g->handle);
  if (!h) return nif_closed_error(env, "graph");
  htpu_batch_multiple_state bm;
  int rc = htpu_graph_get_batch_multiple(h, &bm);
  if (rc) return nif_make_error(env, rc);
  return bm == HTPU_BATCH_MULTIPLE_ONE_EXECUTE ? atom_one_execute
         : bm == HTPU_BATCH_MULTIPLE_CHUNKED   ? atom_chunked
                                               : atom_untried;
}

void nif_submit_stats_put(ErlNifEnv *env, ERL_NIF_TERM *map) {
  htpu_stats s;
  htpu_stats_get(&s);
  struct {
    const char *name;
    uint64_t v;
  } kv[] = {{"live_calls", s.live_calls},
            {"executes_timed_out", s.executes_timed_out},
            {"worker_threads", s.worker_threads},
            {"gate_writers", s.gate_writers},
            {"frees_deferred", s.frees_deferred},
            {"nif_live_calls", atomic_load(&live_calls)},
            {"calls_submitted", atomic_load(&calls_submitted)},
            {"calls_discarded", atomic_load(&calls_discarded)},
            {"calls_finish_waits", atomic_load(&calls_finish_waits)},
            {"calls_finish_dirty", atomic_load(&calls_finish_dirty)},
            {"submits_dirty_cpu", atomic_load(&submits_dirty_cpu)}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    enif_make_map_put(env, *map, enif_make_atom(env, kv[i].name), enif_make_uint64(env, kv[i].v),
                      map);
}
