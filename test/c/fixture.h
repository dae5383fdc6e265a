/* fixture.h - helpers the core tests share: reference runtimes and models made on the fly. */
#ifndef HTPU_TEST_FIXTURE_H
#define HTPU_TEST_FIXTURE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "ref_control.h" /* fx_ref_*: the reference libraries' control API */

/* Runtime options pointing at the reference backend and system library of this build. */
void fx_ref_options(htpu_runtime_options *o);

/* Opens a reference runtime; NULL on failure (message printed). */
htpu_runtime *fx_open_runtime(void);

/* Builds a model from the text description into a temporary file; returns its path (in a
 * static ring) or NULL with the builder's message printed. */
const char *fx_build_model_file(const char *name, const char *text);

/* Builds into a malloc'ed buffer (free()). */
void *fx_build_model(const char *text, size_t *len);

/* Clears every HTPU_REF_* variable the tests set and disarms the fault rules. */
void fx_reset_env(void);

/* Options with the reference FastRPC allocator of this build (the one the backend loads). */
void fx_ref_options_shared(htpu_runtime_options *o);

/* The reference runtime, a context of FX_ADD_F32 and its graph. */
typedef struct fx_rig {
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *g;
} fx_rig;
/* Opens the runtime with `o` (NULL: fx_ref_options), the model from a file named `file`, and
 * the graph unless open_graph is 0. Returns the first failing HTPU_E* code (-1: no model). */
int fx_rig_open(fx_rig *r, const htpu_runtime_options *o, const char *file, int open_graph);
void fx_rig_close(fx_rig *r);
/* One add_f32 execute through g of {a0,2,3,4} + {10,20,30,40}, outputs into y (4 floats);
 * opts NULL: an ordinary call. */
int fx_add(htpu_graph *g, float a0, const htpu_exec_options *opts, htpu_exec_stats *st, float *y);

/* A small model with graphs: add_f32 (a+b, f32 [1,4]). */
extern const char *FX_ADD_F32;

/* Three graphs: first (u8 FC with per-axis weights), second (f16 Relu), third (i8 Relu);
 * used to check introspection of several graphs at every info version. */
extern const char *FX_MULTI_GRAPH;

/* Holds a graph from inside an ordinary call, for deterministic contention without sleeps:
 * pass fx_hold_cancelled as the call's `cancelled` and the fx_hold as its cancel_arg. The core
 * asks it under the graph's execute lock once the call's turn has come; it answers 0 (not
 * cancelled) once fx_hold_release is called. fx_hold_wait returns when it holds the graph. */
typedef struct fx_hold {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int holding, release;
} fx_hold;
void fx_hold_init(fx_hold *h);
int fx_hold_cancelled(void *arg);
void fx_hold_wait(fx_hold *h);
void fx_hold_release(fx_hold *h);
void fx_hold_destroy(fx_hold *h);

/* A thread holding an add_f32 graph through an ordinary call (fx_add with an fx_hold), from
 * fx_holder_start's return until fx_holder_end releases it and joins; rc is the held call's. */
typedef struct fx_holder {
  pthread_t t;
  htpu_graph *g;
  fx_hold h;
  int rc;
} fx_holder;
void fx_holder_start(fx_holder *h, htpu_graph *g);
void fx_holder_end(fx_holder *h);

#endif
