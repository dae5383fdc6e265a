/*
 * spill_fill.c - what a context's activations cost: its spill-fill buffer, its own or shared
 * by a group of contexts (the HTP custom context config REGISTER_MULTI_CONTEXTS).
 *
 * A context's need is the largest spill-fill of its deserialized graphs (ref_graph_spill_fill_
 * bytes, the figure the system library reports in the graph blob info). Outside a group each
 * context holds a buffer of that size; a group holds one buffer of the size its first context
 * registered (maxSpillFillBuffer, > 0; later members' values are disregarded: HTP/QnnHtpContext.h),
 * from its first context's creation until its last member is freed. The accounting is what
 * htpu_ref_stats.spill_fill_bytes reports: sum against largest.
 *
 * Rules (docs/reference-backend.md): a new group needs a size > 0; a member joins through the
 * handle of a live context of this backend that is in a group (unknown 5002, lost in a DSP
 * restart 1007, in no group 5010); a context whose own need exceeds its group's buffer is
 * refused (5010). The contexts of one group run one at a time: their activations share the
 * buffer (Qualcomm's shared spill-fill buffers are "supported only with sequential
 * execution"), so executes of two contexts of one group at once are a rule violation (a
 * context's own graphs may overlap, as they may without a group). Freeing a group's first
 * context while other members live is counted as an unknown behaviour (rb_sf_check_free).
 *
 * The groups are this file's own (their list and lock): it needs nothing of the registry, and
 * its callers resolve handles and report violations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"

/* g_groups: attach/detach (under the registry lock too); `running` and `executing`: enter and
 * leave. */
static pthread_mutex_t g_sf_lock = PTHREAD_MUTEX_INITIALIZER;
static rb_sf_group *g_groups;

static uint64_t context_need(const rb_context *c) {
  uint64_t need = 0;
  for (uint32_t g = 0; g < c->num_graphs; g++) {
    if (!c->graphs[g].enabled) continue;
    uint64_t n = ref_graph_spill_fill_bytes(c->model, g);
    if (n > need) need = n;
  }
  return need;
}

/* The group of `first` (the context behind handle h, NULL when none is live), for a member
 * joining it; logs why not. */
static qnn_error_t find_group(rb_backend *b, const char *api, const void *h,
                              const rb_context *first, rb_sf_group **out) {
  if (!first || first->backend != b) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: REGISTER_MULTI_CONTEXTS: firstGroupHandle 0x%lx "
            "is not a live context of this backend", api, (unsigned long)(uintptr_t)h);
    return QNN_CONTEXT_ERROR_INVALID_HANDLE;
  }
  if (atomic_load(&first->stale)) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: REGISTER_MULTI_CONTEXTS: firstGroupHandle 0x%lx "
            "was lost in a DSP subsystem restart (its group's buffer with it)", api,
            (unsigned long)first->handle);
    return QNN_COMMON_ERROR_SYSTEM_COMMUNICATION;
  }
  if (!first->group) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: REGISTER_MULTI_CONTEXTS: context 0x%lx "
            "(firstGroupHandle) registered no spill-fill group", api,
            (unsigned long)first->handle);
    return QNN_CONTEXT_ERROR_INVALID_CONFIG;
  }
  *out = first->group;
  return QNN_SUCCESS;
}

qnn_error_t rb_sf_attach(rb_backend *b, const char *api, rb_context *c, const rb_ctx_cfg *cfg,
                         const rb_context *first) {
  c->spill_fill = context_need(c);
  if (!cfg->group) return QNN_SUCCESS;
  rb_sf_group *g = NULL;
  if (cfg->group_first) {
    qnn_error_t rc = find_group(b, api, cfg->group_first, first, &g);
    if (rc != QNN_SUCCESS) return rc;
  } else if (cfg->group_max == 0) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: REGISTER_MULTI_CONTEXTS: a new group needs a "
            "maxSpillFillBuffer > 0", api);
    return QNN_CONTEXT_ERROR_INVALID_CONFIG;
  }
  uint64_t size = g ? g->bytes : cfg->group_max;
  if (c->spill_fill > size) {
    rb_logf(b->log, QNN_LOG_LEVEL_ERROR, "%s: REGISTER_MULTI_CONTEXTS: the binary's graphs need "
            "a %llu-byte spill-fill buffer, more than the group's %llu bytes", api,
            (unsigned long long)c->spill_fill, (unsigned long long)size);
    return QNN_CONTEXT_ERROR_INVALID_CONFIG;
  }
  if (!g) {
    g = calloc(1, sizeof(*g));
    if (!g) return QNN_COMMON_ERROR_MEM_ALLOC;
    g->id = c->handle;
    g->backend = b;
    g->bytes = cfg->group_max;
    pthread_mutex_lock(&g_sf_lock);
    g->next = g_groups;
    g_groups = g;
    pthread_mutex_unlock(&g_sf_lock);
  }
  g->members++;
  c->group = g;
  return QNN_SUCCESS;
}

void rb_sf_detach(rb_context *c) {
  rb_sf_group *g = c->group;
  c->group = NULL;
  if (!g || --g->members > 0) return;
  pthread_mutex_lock(&g_sf_lock);
  for (rb_sf_group **pp = &g_groups; *pp; pp = &(*pp)->next)
    if (*pp == g) {
      *pp = g->next;
      break;
    }
  pthread_mutex_unlock(&g_sf_lock);
  free(g);
}

/* The headers name the group's first context only as the handle later members give
 * (firstGroupHandle); none says whether the group and its buffer outlive it, nor that freeing
 * it first is wrong. So it is no violation here but an unknown behaviour, counted: a careful
 * caller keeps the first context until its members are freed. This backend keeps the group
 * (and its buffer) with its members; a later member naming the freed handle is refused (5002).
 * A context lost in a DSP restart is left out: its group went with the DSP process. */
void rb_sf_check_free(rb_backend *b, const rb_context *c) {
  const rb_sf_group *g = c->group;
  if (!g || g->id != c->handle || g->members < 2 || atomic_load(&c->stale)) return;
  rb_unknown_behaviour(b->log, "contextFree of context 0x%lx, the first of a spill-fill group "
                       "(REGISTER_MULTI_CONTEXTS), while %u other member(s) of it live: the "
                       "API does not say whether the group outlives its first context",
                       (unsigned long)c->handle, g->members - 1);
}

int rb_sf_enter(rb_context *c, char *msg, size_t len) {
  rb_sf_group *g = c->group;
  if (!g) return 0;
  pthread_mutex_lock(&g_sf_lock);
  const rb_context *other = g->executing && g->running != c ? g->running : NULL;
  uint32_t n = g->executing;
  g->running = c;
  g->executing++;
  pthread_mutex_unlock(&g_sf_lock);
  if (other)
    snprintf(msg, len, "context 0x%lx executes while %u execute(s) of context 0x%lx run, in "
             "the same spill-fill group (first context 0x%lx): contexts sharing a spill-fill "
             "buffer must run one at a time", (unsigned long)c->handle, n,
             (unsigned long)other->handle, (unsigned long)g->id);
  return other != NULL;
}

void rb_sf_leave(rb_context *c) {
  rb_sf_group *g = c->group;
  if (!g) return;
  pthread_mutex_lock(&g_sf_lock);
  if (g->executing && --g->executing == 0) g->running = NULL;
  pthread_mutex_unlock(&g_sf_lock);
}

uint64_t rb_sf_group_bytes(void) {
  uint64_t sum = 0;
  pthread_mutex_lock(&g_sf_lock);
  for (rb_sf_group *g = g_groups; g; g = g->next) sum += g->bytes;
  pthread_mutex_unlock(&g_sf_lock);
  return sum;
}
