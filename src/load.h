/*
 * load.h - a context's load, step by step (context_load.c), for the single loads of
 * context.c and the lists of context_many.c:
 *
 *   load_prepare   options checked, runtime taken, binary introspected, the context object
 *                  made with the load's choices (graphs, hint, persistent binary); not yet
 *                  known to anyone
 *   load_run       the QNN context, under the execute gate, with the load's profile
 *   load_create    the create itself (inside the gate): compatibility, spill-fill group and
 *                  its fallbacks, a retry after a DSP restart
 *   load_publish   the context becomes a handle
 *   load_discard   a context that never got published, and everything it holds
 */
#ifndef HTPU_LOAD_H
#define HTPU_LOAD_H

#include "internal.h"
#include "profile/profile.h"

/* Room for a load's origin: "file 'x.onnx'" and, for an ONNX EPContext model, the context
 * chosen in it (model_read_binary_info extends it). */
#define LOAD_ORIGIN_LEN 5000

/* Takes *bin (released on failure too): a raw context binary, or an ONNX EPContext model that
 * is unwrapped to the binary it carries (path: the file it came from, or NULL for a buffer;
 * origin, origin_len bytes, is extended to name the context chosen). On success *out holds the
 * runtime reference taken from h. t0: the start of the load (its timeout counts from there). */
int load_prepare(htpu_runtime *h, model_binary *bin, const char *path, char *origin,
                 size_t origin_len, const htpu_load_options *lo, uint64_t t0, context_obj **out);

/* The whole load of a prepared context: 0, or the error (c is then still the caller's). */
int load_run(context_obj *c, const char *origin, const htpu_load_options *lo, uint64_t t0);

/* Under the gate (exclusive): the QNN context of c, bounded by deadline (0: none), with a
 * single load's fallbacks (its spill-fill group's, one more create after a DSP restart).
 * tried: a first create's failure, made already with c's group choice (a list call's: the
 * fallbacks go on from there, compatibility checked before it), or NULL. */
int load_create(context_obj *c, const char *origin, const htpu_load_options *lo,
                uint64_t deadline, qnn_profile_handle_t profile, const qnn_error_t *tried,
                uint64_t mark);

/* After load_run: c listed, counted, and a handle in *out (c's reference is the handle's). */
int load_publish(context_obj *c, uint64_t t0, htpu_context **out);
void load_discard(context_obj *c);

/* Releases an anchor a load chose and left (c->sf_drop), after the gate. */
void load_drop_anchor(context_obj *c);

/* The context object's teardown, registered by load_publish. */
void context_destroy(htpu_object *o);

#endif
