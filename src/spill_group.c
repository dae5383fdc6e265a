/*
 * spill_group.c - which contexts of a runtime share one spill-fill buffer (HTP's custom context
 * config REGISTER_MULTI_CONTEXTS, htpu_runtime_options.spill_fill_sharing).
 *
 * A group is its first context (the anchor) and the contexts that joined it: the anchor
 * registers a new group with the buffer's size, the others name the anchor's QNN handle.
 * Loads join the runtime's current group when their graphs fit its buffer, else they start a
 * new one (which becomes current): the size is fixed by the group's first context (QNN
 * disregards the later members' values), so a list load (htpu_context_open_many) sizes its
 * group by the largest of its models. The anchor stays alive while its group has members
 * (each holds a reference on it), so its QNN handle stays valid for them; a member's
 * recovery after a DSP restart recreates the anchor first if it went too (exec/recover.c).
 * The group's graphs execute one at a time (the anchor's gate lane): their activations share
 * the buffer, which Qualcomm supports for sequential execution only.
 *
 * Everything here runs under the execute gate, exclusively (loads, frees, recoveries).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "internal.h"

static atomic_uint_fast64_t next_group_id = 1;

/* Why c cannot share, or NULL. */
static const char *no_share(const context_obj *c) {
  const runtime_obj *rt = c->rt;
  if (!atomic_load(&rt->sf_sharing)) return rt->sf_note;
  if (rt->backend_lib.backend_id != QNN_BACKEND_ID_HTP)
    return "spill-fill groups are an HTP config: the backend is not HTP";
  if (!rt->context_configs) return "the backend takes no context configs (capability 205)";
  if (!c->spill_fill)
    return "the binary reports no spill-fill size for its graphs (graph blob info V1 carries "
           "it; version 2, and binaries before QAIRT 2.28, carry none)";
  return NULL;
}

static void make_first(context_obj *c, uint64_t bytes) {
  c->sf_anchor = c;
  c->sf_bytes = bytes > c->spill_fill ? bytes : c->spill_fill;
  c->sf_id = atomic_fetch_add(&next_group_id, 1);
}

void sf_choose(context_obj *c, uint64_t bytes) {
  runtime_obj *rt = c->rt;
  const char *why = no_share(c);
  c->sf_anchor = NULL;
  if (why) {
    snprintf(c->sf_note, sizeof c->sf_note, "%s", why);
    return;
  }
  c->sf_note[0] = '\0';
  context_obj *a = rt->sf_anchor;
  /* The current group, if its buffer holds this binary's graphs and it is still alive. */
  if (a && !a->dead && a->sf_bytes >= c->spill_fill && a->sf_bytes >= bytes &&
      obj_retain_live(&a->base)) {
    c->sf_anchor = a;
    c->sf_bytes = a->sf_bytes;
    c->sf_id = a->sf_id;
    return;
  }
  make_first(c, bytes);
}

/* c drops its reference on the anchor it had chosen: after the gate (sf_drop), as the last
 * reference runs the anchor's destroy, which takes the gate itself. */
static void drop_anchor(context_obj *c) {
  if (c->sf_anchor && c->sf_anchor != c) c->sf_drop = c->sf_anchor;
  c->sf_anchor = NULL;
}

void sf_make_first(context_obj *c) {
  if (!c->sf_anchor || c->sf_anchor == c) return;
  drop_anchor(c);
  make_first(c, 0);
}

void sf_refused(context_obj *c, uint32_t code) {
  runtime_obj *rt = c->rt;
  if (atomic_load(&rt->sf_sharing)) {
    snprintf(rt->sf_note, sizeof rt->sf_note, "the backend refused the spill-fill group "
             "config (REGISTER_MULTI_CONTEXTS: QNN error %u, %s): each context has its own "
             "buffer", code, htpu_qnn_error_name(code));
    atomic_store(&rt->sf_sharing, 0);
  }
  snprintf(c->sf_note, sizeof c->sf_note, "%s", rt->sf_note);
  drop_anchor(c);
}

void sf_loaded(context_obj *c) {
  if (!c->sf_anchor) return;
  atomic_store(&c->sf_joined, 1);
  if (c->sf_anchor == c) c->rt->sf_anchor = c; /* later loads join it */
}

context_obj *sf_leave(context_obj *c) {
  runtime_obj *rt = c->rt;
  if (rt->sf_anchor == c) rt->sf_anchor = NULL;
  return c->sf_anchor && c->sf_anchor != c ? c->sf_anchor : NULL;
}
