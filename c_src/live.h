/*
 * live.h - every open runtime, context, graph and shared IO buffer (live.c), so that close_all
 * can close what is left when the VM stops. A node is embedded in its object: linked when the
 * object is set up, unlinked first thing in its destructor. Only lists: what closing means is
 * the handles layer's (resources.c), which walks them with nif_live_each.
 */
#ifndef HTPU_NIF_LIVE_H
#define HTPU_NIF_LIVE_H

#include "kinds.h"

typedef struct nif_live {
  struct nif_live *next, **pprev; /* pprev NULL: not linked */
} nif_live;

void nif_live_init(nif_live *n); /* not linked; call before anything can destroy the object */
void nif_live_add(nif_live *n, nif_kind kind);
void nif_live_remove(nif_live *n); /* a node never linked is fine */
/* Calls fn on every linked node, kinds in list order (kinds.h: children first), under the lists'
 * lock: every node stays linked and its object allocated during the call. fn must not wait on
 * the DSP nor add or remove nodes. */
void nif_live_each(void (*fn)(nif_live *n, nif_kind kind, void *arg), void *arg);

#endif
