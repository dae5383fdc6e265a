/*
 * stats.c - the stats NIF: the C core's counters, the reaper's and the execute schedulers' in one
 * map (HexagonTpu.stats/0). On top with the NIF functions: it reads every layer's counters.
 */
#include "atoms.h"
#include "handles.h"
#include "nif.h"
#include "reaper.h"
#include "terms.h"

/* stats() -> map: the core's counters, the reaper's and the execute schedulers'. Atomic loads. */
ERL_NIF_TERM nif_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  htpu_stats s;
  htpu_stats_get(&s);
  uint64_t queued, closed, inline_closed;
  nif_reaper_counts(&queued, &closed, &inline_closed);
  nif_sched_counts sc;
  nif_sched_counts_get(&sc);
  ERL_NIF_TERM k[] = {ATOMS.live_runtimes,     ATOMS.live_contexts,   ATOMS.live_graphs,
                      ATOMS.executes,          ATOMS.execute_errors,  ATOMS.execute_ns_total,
                      ATOMS.execute_ns_last,   ATOMS.loads,           ATOMS.load_ns_total,
                      ATOMS.quantize_ns_total, ATOMS.dequantize_ns_total, ATOMS.recoveries,
                      ATOMS.recovery_failures, ATOMS.live_shared_buffers, ATOMS.mem_registrations,
                      ATOMS.startup_retries,   ATOMS.executes_in_flight, ATOMS.executes_waiting,
                      ATOMS.executes_cancelled, ATOMS.executes_declined,
                      ATOMS.reaper_queued,     ATOMS.reaper_closed,   ATOMS.reaper_inline,
                      ATOMS.executes_normal,   ATOMS.executes_dirty_io,
                      ATOMS.normal_declined_busy, ATOMS.normal_declined_not_short,
                      ATOMS.normal_declined_other, ATOMS.normal_declined_resource,
                      ATOMS.batch_multiple_executes, ATOMS.batch_multiple_refusals};
  ERL_NIF_TERM v[] = {enif_make_uint64(env, s.live_runtimes),
                      enif_make_uint64(env, s.live_contexts),
                      enif_make_uint64(env, s.live_graphs),
                      enif_make_uint64(env, s.executes),
                      enif_make_uint64(env, s.execute_errors),
                      enif_make_uint64(env, s.execute_ns_total),
                      enif_make_uint64(env, s.execute_ns_last),
                      enif_make_uint64(env, s.loads),
                      enif_make_uint64(env, s.load_ns_total),
                      enif_make_uint64(env, s.quantize_ns_total),
                      enif_make_uint64(env, s.dequantize_ns_total),
                      enif_make_uint64(env, s.recoveries),
                      enif_make_uint64(env, s.recovery_failures),
                      enif_make_uint64(env, s.live_shared_buffers),
                      enif_make_uint64(env, s.mem_registrations),
                      enif_make_uint64(env, s.startup_retries),
                      enif_make_uint64(env, s.executes_in_flight),
                      enif_make_uint64(env, s.executes_waiting),
                      enif_make_uint64(env, s.executes_cancelled),
                      enif_make_uint64(env, s.executes_declined),
                      enif_make_uint64(env, queued),
                      enif_make_uint64(env, closed),
                      enif_make_uint64(env, inline_closed),
                      enif_make_uint64(env, sc.executes_normal),
                      enif_make_uint64(env, sc.executes_dirty_io),
                      enif_make_uint64(env, sc.declined_busy),
                      enif_make_uint64(env, sc.declined_not_short),
                      enif_make_uint64(env, sc.declined_other),
                      enif_make_uint64(env, sc.declined_resource),
                      enif_make_uint64(env, s.batch_multiple_executes),
                      enif_make_uint64(env, s.batch_multiple_refusals)};
  ERL_NIF_TERM map = nif_make_map(env, k, v, sizeof k / sizeof k[0]);
  /* the profiling counters (htpu_stats.live_profiles, profiled_calls) */
  enif_make_map_put(env, map, enif_make_atom(env, "live_profiles"),
                    enif_make_uint64(env, s.live_profiles), &map);
  enif_make_map_put(env, map, enif_make_atom(env, "profiled_calls"),
                    enif_make_uint64(env, s.profiled_calls), &map);
  enif_make_map_put(env, map, enif_make_atom(env, "profiles_dropped"),
                    enif_make_uint64(env, s.profiles_dropped), &map);
  /* the cross-process NPU lock (htpu_stats.npu_lock_*) */
  const struct {
    const char *key;
    uint64_t value;
  } lock[] = {{"npu_lock_waits", s.npu_lock_waits},
              {"npu_lock_waiting", s.npu_lock_waiting},
              {"npu_lock_wait_ns_total", s.npu_lock_wait_ns_total},
              {"npu_lock_timeouts", s.npu_lock_timeouts}};
  for (size_t i = 0; i < sizeof lock / sizeof lock[0]; i++)
    enif_make_map_put(env, map, enif_make_atom(env, lock[i].key),
                      enif_make_uint64(env, lock[i].value), &map);
  nif_submit_stats_put(env, &map);
  return map;
}

/* context_memory(ref) -> {:ok, map} | {:error, reason}: what the loaded context reports
 * (htpu_context_get_memory; it may ask the backend, so on a dirty IO scheduler). */
ERL_NIF_TERM nif_context_memory(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  nif_context *res;
  if (!enif_get_resource(env, argv[0], NIF_RT(CONTEXT), (void **)&res))
    return nif_bad_handle(env, argv[0], NIF_KIND_CONTEXT);
  htpu_context *h = atomic_load(&res->handle);
  if (!h) return nif_closed_error(env, "context");
  htpu_context_memory m;
  int rc = htpu_context_get_memory(h, &m);
  if (rc) return nif_make_error(env, rc);
  ERL_NIF_TERM k[] = {ATOMS.reported,         ATOMS.weights_bytes, ATOMS.spill_fill_bytes,
                      ATOMS.buffer_alignment, ATOMS.binary_bytes,  ATOMS.note};
  ERL_NIF_TERM v[] = {m.reported ? ATOMS.true_ : ATOMS.false_,
                      m.reported ? enif_make_uint64(env, m.weights_bytes) : ATOMS.nil,
                      m.reported ? enif_make_uint64(env, m.spill_fill_bytes) : ATOMS.nil,
                      m.reported ? enif_make_uint64(env, m.buffer_alignment) : ATOMS.nil,
                      enif_make_uint64(env, m.binary_bytes),
                      m.reported ? ATOMS.nil : nif_make_string(env, m.note)};
  return enif_make_tuple2(env, ATOMS.ok, nif_make_map(env, k, v, sizeof k / sizeof k[0]));
}
