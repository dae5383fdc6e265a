/*
 * terms.h - C values <-> Erlang terms (convert.c; model_source.c: an ONNX model's facts): errors,
 * dtypes, strings, the info maps, execute options and stats. The bottom of the NIF: it calls only the C core and erl_nif.
 */
#ifndef HTPU_NIF_TERMS_H
#define HTPU_NIF_TERMS_H

#include <erl_nif.h>

#include "hexagon_tpu.h"

/* {:error, {reason_atom, message, qnn_code, qnn_name}} from an HTPU_E* code and the calling
 * thread's htpu_last_error() / htpu_last_qnn_code(). */
ERL_NIF_TERM nif_make_error(ErlNifEnv *env, int code);
/* The same shape for a failure found by the glue itself. */
/* {:error, {reason, message, qnn_code, qnn_name}} from parts (a call's kept message). */
ERL_NIF_TERM nif_make_error_qnn(ErlNifEnv *env, int code, uint32_t qnn, const char *msg);
ERL_NIF_TERM nif_make_error_msg(ErlNifEnv *env, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* {:error, {:closed, "the <what> is closed", ...}}. */
ERL_NIF_TERM nif_closed_error(ErlNifEnv *env, const char *what);

ERL_NIF_TERM nif_make_string(ErlNifEnv *env, const char *s);
/* A spill-fill note (htpu_runtime_info / htpu_context_load_info) naming Elixir's runtime
 * option where the core names its C one; nil for "". */
ERL_NIF_TERM nif_make_spill_fill_note(ErlNifEnv *env, const char *note);
ERL_NIF_TERM nif_make_version(ErlNifEnv *env, htpu_version3 v);
ERL_NIF_TERM nif_make_tensor_info(ErlNifEnv *env, const htpu_tensor_info *t);
ERL_NIF_TERM nif_make_graph_info(ErlNifEnv *env, const htpu_graph_info *g);
/* The model info map (model_source.c, with the two below). */
ERL_NIF_TERM nif_make_model_info(ErlNifEnv *env, const htpu_model_info *m);
/* An ONNX EPContext model's facts (model_source.c); nil for NULL (a raw context binary). */
ERL_NIF_TERM nif_make_model_source(ErlNifEnv *env, const htpu_model_source *s);
/* One graph's memory figures (model_source.c). */
ERL_NIF_TERM nif_make_graph_memory(ErlNifEnv *env, const htpu_graph_memory *m);
ERL_NIF_TERM nif_make_runtime_info(ErlNifEnv *env, const htpu_runtime_info *ri);

/* dtype atom (:f32, :u8, ...) <-> htpu_dtype. */
ERL_NIF_TERM nif_dtype_atom(htpu_dtype t);
int nif_get_dtype(ErlNifEnv *env, ERL_NIF_TERM term, htpu_dtype *out);

/* A NUL-terminated copy of a binary or nil (-> *out = NULL). Caller enif_free()s. 0 or -1. */
int nif_get_cstring_or_nil(ErlNifEnv *env, ERL_NIF_TERM term, char **out);

/* nil -> HTPU_PERF_DEFAULT, an atom -> htpu_perf_profile_from_name. 0 or -1. */
int nif_get_perf_profile(ErlNifEnv *env, ERL_NIF_TERM term, htpu_perf_profile *out);
/* Execute options for the calling process: the profile (as nif_get_perf_profile) and a cancel
 * callback, so an execute whose caller was killed while it queued on the graph is skipped
 * (HTPU_ECANCELLED) instead of run for nobody. `env` must be the NIF call's own. 0 or -1. */
int nif_exec_options(ErlNifEnv *env, ERL_NIF_TERM profile, htpu_exec_options *xo);
/* The stats map of one execute: the core's figures, :nif_ns since t0, :scheduler. */
ERL_NIF_TERM nif_make_exec_stats(ErlNifEnv *env, const htpu_exec_stats *st, ErlNifTime t0,
                                 ERL_NIF_TERM scheduler);
/* A map from parallel key and value arrays (keys distinct). */
ERL_NIF_TERM nif_make_map(ErlNifEnv *env, ERL_NIF_TERM *keys, ERL_NIF_TERM *vals, size_t n);

#endif
