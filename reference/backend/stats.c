/* stats.c - htpu_ref_get_stats: the live objects of every kind, counted where each lives (the
 * registry's lists, signal.c, perf.c, spill_fill.c, the graphs' queues), and the counters
 * (counters.c). The one control call that reads every object file, so it sits above them
 * (rb_internal.h's layers) rather than in the counters they all write. */
#include <string.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

RB_EXPORT void htpu_ref_get_stats(htpu_ref_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&g_rb.lock);
  for (rb_log *l = g_rb.logs; l; l = l->next) out->live_logs++;
  for (rb_backend *b = g_rb.backends; b; b = b->next) out->live_backends++;
  for (rb_device *d = g_rb.devices; d; d = d->next) out->live_devices++;
  for (rb_context *c = g_rb.contexts; c; c = c->next) {
    out->live_contexts++;
    out->stale_contexts += atomic_load(&c->stale);
  }
  for (rb_mem *m = g_rb.mems; m; m = m->next) out->live_mem_handles++;
  out->live_signals = rb_signal_live_count();
  pthread_mutex_lock(&g_sched.lock);
  for (rb_context *c = g_rb.contexts; c; c = c->next)
    for (uint32_t i = 0; i < c->num_graphs; i++) out->async_pending += c->graphs[i].async_pending;
  pthread_mutex_unlock(&g_sched.lock);
  for (rb_backend *b = g_rb.backends; b; b = b->next)
    for (rb_pinfo *p = b->pinfos; p; p = p->next) out->live_platform_infos++;
  out->live_power_config_ids = rb_power_live_count();
  out->spill_fill_bytes = rb_sf_group_bytes(); /* each group's buffer once, */
  for (rb_context *c = g_rb.contexts; c; c = c->next) {
    if (!c->group) out->spill_fill_bytes += c->spill_fill; /* each other context's own */
    out->binary_copy_bytes += c->copied_bytes;
  }
  pthread_mutex_unlock(&g_rb.lock);
  rb_counters_read(out);
}
