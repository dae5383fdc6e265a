/*
 * call_options.h - a call's options map, as graph_submit, graph_execute_profiled and
 * vision_detect take it: %{timeout_ns:, priority:, perf_profile:, batch_multiple:,
 * profile_level:, profile_max_events:}, each optional, onto a htpu_exec_options.
 * Layer: below submit.c, profile.c and vision.c, above terms (terms.h).
 */
#ifndef HTPU_NIF_CALL_OPTIONS_H
#define HTPU_NIF_CALL_OPTIONS_H

#include <erl_nif.h>

struct htpu_exec_options;

/* Makes the option keys' atoms (atoms are global): at load and at upgrade, before any NIF
 * runs (nif_submit_open_type calls it, as the load's setup step of the submitted calls). */
void nif_call_options_open(ErlNifEnv *env);

/* The options in map on top of *xo (keys absent leave their field as it was). 0, or -1 for a
 * map that is not one or a value of the wrong type or out of range. */
int nif_get_call_options(ErlNifEnv *env, ERL_NIF_TERM map, struct htpu_exec_options *xo);

#endif
