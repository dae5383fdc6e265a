/* create.c - a QNN context from a context's retained binary: its configs (the priority, the
 * persistent binary, the graphs to deserialize, the memory-limit hint, the spill-fill group),
 * and the timeout signal that bounds it where the backend takes one. Used by a load
 * (context_load.c) and by the recovery after a DSP restart (exec/recover.c); a list load
 * (create_list.c) builds the same configs. */
#include "create.h"

#include <string.h>

#include "internal.h"
#include "qnn/qnn_htp_abi.h"
#include "qnn/qnn_signal_abi.h"

static const uint32_t qnn_priority[HTPU_PRIORITY_COUNT] = {
    [HTPU_PRIORITY_LOW] = QNN_PRIORITY_LOW,
    [HTPU_PRIORITY_NORMAL] = QNN_PRIORITY_NORMAL,
    [HTPU_PRIORITY_NORMAL_HIGH] = QNN_PRIORITY_NORMAL_HIGH,
    [HTPU_PRIORITY_HIGH] = QNN_PRIORITY_HIGH,
};

const qnn_context_config_t **create_configs_for(const context_obj *c, int use_group,
                                                create_configs *cc) {
  const runtime_obj *rt = c->rt;
  size_t n = 0;
  memset(cc, 0, sizeof *cc);
  /* The context's priority reaches QNN as its PRIORITY config (the default of the graphs
   * retrieved from it) where the backend takes context configs and priority control; asked
   * for explicitly only. */
  if (c->priority_explicit && rt->priority_control) {
    cc->prio.option = QNN_CONTEXT_CONFIG_OPTION_PRIORITY;
    cc->prio.u.priority = qnn_priority[c->priority];
    cc->list[n++] = &cc->prio;
  }
  if (c->persistent) { /* the binary outlives the context: QNN may skip its own copy */
    cc->persist.option = QNN_CONTEXT_CONFIG_PERSISTENT_BINARY;
    cc->persist.u.is_persistent_binary = 1;
    cc->list[n++] = &cc->persist;
  }
  if (c->enable_passed) {
    cc->enable.option = QNN_CONTEXT_CONFIG_ENABLE_GRAPHS;
    cc->enable.u.enable_graphs = c->enabled;
    cc->list[n++] = &cc->enable;
  }
  if (c->memory_limit_passed) {
    cc->memlim.option = QNN_CONTEXT_CONFIG_MEMORY_LIMIT_HINT;
    cc->memlim.u.memory_limit_hint = c->memory_limit_mb;
    cc->list[n++] = &cc->memlim;
  }
  /* The spill-fill group: its first context registers a new group with the buffer's size,
   * the others name the first context's current QNN handle. */
  if (use_group && c->sf_anchor) {
    cc->htp.option = QNN_HTP_CONTEXT_CONFIG_OPTION_REGISTER_MULTI_CONTEXTS;
    cc->htp.u.group_registration.first_group_handle = c->sf_anchor == c ? NULL : c->sf_anchor->qnn;
    cc->htp.u.group_registration.max_spill_fill_buffer = c->sf_bytes;
    cc->custom.option = QNN_CONTEXT_CONFIG_OPTION_CUSTOM;
    cc->custom.u.custom_config = &cc->htp;
    cc->list[n++] = &cc->custom;
  }
  /* No config at all: NULL, as a plain load always passed. */
  return n ? cc->list : NULL;
}

/* contextCreateFromBinary of the context's retained binary, with the load's profile handle
 * (NULL: none). Under the gate, exclusively. */
qnn_error_t create_from_binary_signalled(context_obj *c, qnn_context_handle_t *out,
                                         qnn_profile_handle_t profile,
                                         qnn_signal_handle_t signal, int use_group) {
  runtime_obj *rt = c->rt;
  *out = NULL;
  create_configs cc;
  const qnn_context_config_t **configs = create_configs_for(c, use_group, &cc);
  qnn_context_binary_size_t n = (qnn_context_binary_size_t)c->bin.len;
  if (signal)
    return rt->backend_lib.context_create_from_binary_with_signal(
        rt->backend, rt->device, configs, c->bin.data, n, out, profile, signal);
  return rt->backend_lib.context_create_from_binary(rt->backend, rt->device, configs,
                                                    c->bin.data, n, out, profile);
}

qnn_signal_handle_t create_timeout_signal(runtime_obj *rt, uint64_t deadline_ns) {
  uint64_t now = htpu_now_ns();
  if (now >= deadline_ns) return NULL;
  qnn_signal_config_t tcfg = {.option = QNN_SIGNAL_CONFIG_OPTION_TIMEOUT};
  tcfg.u.timeout_duration_us = (deadline_ns - now + 999u) / 1000u;
  const qnn_signal_config_t *cfgs[] = {&tcfg, NULL};
  qnn_signal_handle_t sig = NULL;
  if (rt->backend_lib.signal_create(rt->backend, cfgs, &sig) != QNN_SUCCESS) return NULL;
  return sig;
}

/* The load under a timeout signal until deadline_ns (0: none) where the backend bounds loads
 * (else unbounded: the load runs to its end, documented). 5013/5012 (or a deadline already
 * passed) -> *timed_out. */
qnn_error_t create_bounded(context_obj *c, qnn_context_handle_t *out, uint64_t deadline_ns,
                           qnn_profile_handle_t profile, int use_group, int *timed_out) {
  runtime_obj *rt = c->rt;
  *timed_out = 0;
  *out = NULL;
  if (!deadline_ns || !rt->load_signals)
    return create_from_binary_signalled(c, out, profile, NULL, use_group);
  if (htpu_now_ns() >= deadline_ns) {
    *timed_out = 1;
    return QNN_CONTEXT_ERROR_TIMED_OUT;
  }
  qnn_signal_handle_t sig = create_timeout_signal(rt, deadline_ns);
  if (!sig) /* refused: unbounded */
    return create_from_binary_signalled(c, out, profile, NULL, use_group);
  qnn_error_t e = create_from_binary_signalled(c, out, profile, sig, use_group);
  rt->backend_lib.signal_free(sig);
  uint32_t code = QNN_ERROR_CODE(e);
  *timed_out = code == QNN_CONTEXT_ERROR_TIMED_OUT || code == QNN_CONTEXT_ERROR_ABORTED;
  return e;
}
