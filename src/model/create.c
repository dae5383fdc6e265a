/* create.c - a QNN context from a context's retained binary: its configs (the priority), and
 * the timeout signal that bounds it where the backend takes one. Used by a load (context.c)
 * and by the recovery after a DSP restart (exec/recover.c). */
#include "create.h"

#include "internal.h"
#include "qnn/qnn_signal_abi.h"

/* contextCreateFromBinary of the context's retained binary, with the load's profile handle
 * (NULL: none). Under the gate, exclusively. */
qnn_error_t create_from_binary_signalled(context_obj *c, qnn_context_handle_t *out,
                                         qnn_profile_handle_t profile,
                                         qnn_signal_handle_t signal) {
  runtime_obj *rt = c->rt;
  *out = NULL;
  /* The context's priority reaches QNN as its PRIORITY config (the default of the graphs
   * retrieved from it) where the backend takes context configs and priority control; asked
   * for explicitly only, so a plain load passes no config list at all. */
  static const uint32_t qnn_priority[HTPU_PRIORITY_COUNT] = {
      [HTPU_PRIORITY_LOW] = QNN_PRIORITY_LOW,
      [HTPU_PRIORITY_NORMAL] = QNN_PRIORITY_NORMAL,
      [HTPU_PRIORITY_NORMAL_HIGH] = QNN_PRIORITY_NORMAL_HIGH,
      [HTPU_PRIORITY_HIGH] = QNN_PRIORITY_HIGH,
  };
  qnn_context_config_t prio = {.option = QNN_CONTEXT_CONFIG_OPTION_PRIORITY};
  const qnn_context_config_t *cfgs[] = {&prio, NULL};
  const qnn_context_config_t **configs = NULL;
  if (c->priority_explicit && rt->priority_control) {
    prio.u.priority = qnn_priority[c->priority];
    configs = cfgs;
  }
  qnn_context_binary_size_t n = (qnn_context_binary_size_t)c->binary_len;
  if (signal)
    return rt->backend_lib.context_create_from_binary_with_signal(
        rt->backend, rt->device, configs, c->binary, n, out, profile, signal);
  return rt->backend_lib.context_create_from_binary(rt->backend, rt->device, configs, c->binary,
                                                    n, out, profile);
}

qnn_error_t create_from_binary(context_obj *c, qnn_context_handle_t *out,
                               qnn_profile_handle_t profile) {
  return create_from_binary_signalled(c, out, profile, NULL);
}

/* The load under a timeout signal until deadline_ns (0: none) where the backend bounds loads
 * (else unbounded: the load runs to its end, documented). 5013/5012 (or a deadline already
 * passed) -> *timed_out. */
qnn_error_t create_bounded(context_obj *c, qnn_context_handle_t *out, uint64_t deadline_ns,
                           qnn_profile_handle_t profile, int *timed_out) {
  runtime_obj *rt = c->rt;
  *timed_out = 0;
  *out = NULL;
  if (!deadline_ns || !rt->load_signals) return create_from_binary(c, out, profile);
  uint64_t now = htpu_now_ns();
  if (now >= deadline_ns) {
    *timed_out = 1;
    return QNN_CONTEXT_ERROR_TIMED_OUT;
  }
  qnn_signal_config_t tcfg = {.option = QNN_SIGNAL_CONFIG_OPTION_TIMEOUT};
  tcfg.u.timeout_duration_us = (deadline_ns - now + 999u) / 1000u;
  const qnn_signal_config_t *cfgs[] = {&tcfg, NULL};
  qnn_signal_handle_t sig = NULL;
  if (rt->backend_lib.signal_create(rt->backend, cfgs, &sig) != QNN_SUCCESS || !sig)
    return create_from_binary(c, out, profile); /* refused: unbounded */
  qnn_error_t e = create_from_binary_signalled(c, out, profile, sig);
  rt->backend_lib.signal_free(sig);
  uint32_t code = QNN_ERROR_CODE(e);
  *timed_out = code == QNN_CONTEXT_ERROR_TIMED_OUT || code == QNN_CONTEXT_ERROR_ABORTED;
  return e;
}
