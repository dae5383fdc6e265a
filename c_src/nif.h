/*
 * nif.h - the NIF functions that live outside hexagon_tpu_nif.c (which registers them all), and
 * the execute counters its stats read. The glue is a client of include/hexagon_tpu.h only:
 * argument decoding, resources, binaries, scheduling. No QNN.
 *
 * Layers, each calling only those below it (docs/architecture.md):
 *   hexagon_tpu_nif.c              runtime, context, graph NIFs; load; the table
 *   vision.c  vision_detect.c      HexagonTpu.Vision's NIFs                (nif.h)
 *   vision_terms.c  stats.c        vision's frames, options, detections;   (vision_terms.h)
 *                                  the stats map                           (nif.h)
 *   ref_control.c                  the reference backend's control, tests  (nif.h)
 *   load.c                         context loads: one, several, their info (nif.h)
 *   execute.c  shared.c  board.c   execute, shared IO, board reading NIFs  (nif.h)
 *   submit.c                       submitted calls, answered as messages   (nif.h)
 *   profile.c                      profiles as terms; the profiled execute (nif.h)
 *   shapes.c                       dynamic output shapes in answers        (shapes.h)
 *   call_options.c                 a call's options map                    (call_options.h)
 *   resources.c                    handle resources, closing, kinds        (handles.h)
 *   live.c  reaper.c  halt.c       live lists; core closes off-scheduler   (live.h, reaper.h)
 *   env.c  convert.c  model_source.c   env option; terms                   (env.h, terms.h)
 *   kinds.h  atoms.h               the lists everything is derived from
 */
#ifndef HTPU_NIF_H
#define HTPU_NIF_H

#include <erl_nif.h>
#include <stdint.h>

#include "call_options.h" /* a call's options map: submit.c, profile.c and vision.c decode it */

/* ---- execute (execute.c) -------------------------------------------------------------------
 * graph_execute on a dirty IO scheduler, graph_execute_normal on a normal one (declining to
 * the dirty one wherever it would wait or run long), graph_timing. */
ERL_NIF_TERM nif_graph_execute(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_execute_normal(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_execute_batch(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_timing(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* The destructor of the carried-call resource type (nif_resources_open registers it). */
void nif_exec_call_dtor(ErlNifEnv *env, void *obj);

/* Which scheduler graph executes were answered on, and why normal ones were declined. */
typedef struct nif_sched_counts {
  uint64_t executes_normal, executes_dirty_io;
  uint64_t declined_busy;      /* graph or execute gate held: it would have waited */
  uint64_t declined_not_short; /* :auto, and the graph's recent calls unknown or long */
  uint64_t declined_other;     /* I/O over the size bound, a per-call perf vote, a recovery */
  uint64_t declined_resource;  /* a scratch block to allocate or a buffer to register */
} nif_sched_counts;
void nif_sched_counts_get(nif_sched_counts *out);

/* ---- submitted calls (submit.c) -----------------------------------------------------------
 * graph_submit on a normal scheduler, the answer a message from the core's done callback;
 * call_cancel, call_claim. The call resource type is opened at load/upgrade. */
ERL_NIF_TERM nif_graph_submit(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_call_cancel(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_call_claim(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_call_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_call_error(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_batch_multiple(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
int nif_submit_open_type(ErlNifEnv *env);
/* Adds the submitted-call counters (the core's live_calls, executes_timed_out; the NIF's). */
void nif_submit_stats_put(ErlNifEnv *env, ERL_NIF_TERM *map);
/* ref_control(op, args): the reference backend's control API, for tests (ref_control.c). */
ERL_NIF_TERM nif_ref_control(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* ---- shared buffers (shared.c) ----------------------------------------------------------- */
ERL_NIF_TERM nif_graph_alloc_io(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_shared_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_shared_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_shared_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_graph_execute_shared(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* ---- context loads (load.c) ----------------------------------------------------------------
 * context_open_file/2,3 and context_open_binary/2,3 (the binary lent to the core),
 * context_open_many/2, context_load_info/1. */
ERL_NIF_TERM nif_context_open_file(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_context_open_binary(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_context_open_many(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_context_load_info(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* ---- vision (vision.c, vision_detect.c) ------------------------------------------------------
 * vision_preprocess / vision_decode on the caller's scheduler (a dirty CPU one when their work
 * is not small), vision_detect on dirty IO: a frame into the input, the execute and the
 * detections in one call, the input and outputs never crossing into Erlang terms. */
ERL_NIF_TERM nif_vision_preprocess(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_vision_decode(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_vision_detect(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* ---- stats (stats.c), the board (board.c) ------------------------------------------------- */
ERL_NIF_TERM nif_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* context_memory(ref): the loaded context's memory figures (htpu_context_get_memory). */
ERL_NIF_TERM nif_context_memory(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* board_read(root | nil) -> {:ok, map} | {:error, reason}: htpu_board_read as a map. */
ERL_NIF_TERM nif_board_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* profile.c: profiled executes and the profile writers; the profile resource type, opened at
 * load/upgrade. */
ERL_NIF_TERM nif_graph_execute_profiled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_profile_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_profile_events(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_runtime_profile_caps(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
int nif_profile_open_type(ErlNifEnv *env);
struct htpu_profile;
struct htpu_exec_options;
/* A profile read back (the map HexagonTpu.Profile summarizes; the resource in it owns p from
 * here), or, for p NULL after a call that succeeded, {:dropped, {:error, reason}} from the
 * last error (the read's; read_rc its code, 0 when unknown). Any environment, process-
 * independent ones included. */
ERL_NIF_TERM nif_profile_answer(ErlNifEnv *env, struct htpu_profile *p, int read_rc);

#endif
