/* create.h - a QNN context from a context's retained binary (create.c), alone or with others
 * in one call (create_list.c). */
#ifndef HTPU_MODEL_CREATE_H
#define HTPU_MODEL_CREATE_H

#include <stddef.h>
#include <stdint.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_htp_abi.h"

struct context_obj;
struct runtime_obj;

/* The configs of a context's creation and the storage they point into. */
typedef struct create_configs {
  qnn_context_config_t prio, persist, enable, memlim, custom;
  qnn_htp_context_custom_config_t htp;
  const qnn_context_config_t *list[6];
} create_configs;

/* c's configs (into *cc): its PRIORITY where asked and announced, PERSISTENT_BINARY,
 * ENABLE_GRAPHS and MEMORY_LIMIT_HINT as its load decided, and with use_group its spill-fill
 * group's registration (a new group when c is its first context, else the first context's
 * current QNN handle). NULL when there is none. Under the execute gate, exclusively. */
const qnn_context_config_t **create_configs_for(const struct context_obj *c, int use_group,
                                                create_configs *cc);

/* contextCreateFromBinary of c's binary with its configs (use_group: with its group's
 * registration) and the load's profile handle (NULL: none); with `signal`,
 * createFromBinaryWithSignal (an abort signal its caller triggers to stop it, where the
 * backend takes load signals: load_signals). Under the execute gate, exclusively. */
qnn_error_t create_from_binary_signalled(struct context_obj *c, qnn_context_handle_t *out,
                                         qnn_profile_handle_t profile, qnn_signal_handle_t signal,
                                         int use_group);

/* The same under a timeout signal until deadline_ns (CLOCK_MONOTONIC; 0: none) where the
 * backend bounds loads (load_signals; else unbounded: it runs to its end). *timed_out: QNN
 * answered 5013/5012, or the deadline had passed (then nothing was asked). */
qnn_error_t create_bounded(struct context_obj *c, qnn_context_handle_t *out, uint64_t deadline_ns,
                           qnn_profile_handle_t profile, int use_group, int *timed_out);

/* A timeout signal running out at deadline_ns; NULL when the deadline has passed or the
 * backend refuses one (the caller then runs unbounded). Free it with signal_free. */
qnn_signal_handle_t create_timeout_signal(struct runtime_obj *rt, uint64_t deadline_ns);

/* ---- several contexts in one call (create_list.c) ---- */

/* One context of a list: in, the context (its binary, configs, load choices), its profile
 * handle and group choice; out, its QNN handle or the failure and when it was notified. */
typedef struct create_item {
  struct context_obj *c;
  qnn_profile_handle_t profile;
  int use_group;
  qnn_context_handle_t qnn;  /* out */
  qnn_error_t status;        /* out: its CONTEXT_INIT status (the call's code if none came) */
  uint64_t notified_ns;      /* out: when its CONTEXT_INIT came (0: never) */
} create_item;

/* contextCreateFromBinaryListAsync of the items (list_load announced), under a timeout signal
 * until deadline_ns (0: none) where loads take signals; returns once every item was notified
 * (or the call refused the list: then every item gets its code). Returns the call's code.
 * Under the execute gate, exclusively. */
qnn_error_t create_list(struct runtime_obj *rt, create_item *items, size_t n,
                        uint64_t deadline_ns);

#endif
