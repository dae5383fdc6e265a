/*
 * rb_loading.h - what the loading files of the reference backend declare (persist.c,
 * spill_fill.c, context_list.c), apart from rb_internal.h, which includes it at its end (the
 * types they use are there).
 */
#ifndef HTPU_RB_LOADING_H
#define HTPU_RB_LOADING_H

/* ---- persist.c: a persistent binary (PERSISTENT_BINARY) ---- */
/* Parses buf for c: in place when the config says the binary persists (and it is aligned), the
 * hashes of what it will read taken; else a copy (c->copied_bytes). 0, or -1 with err set. */
int rb_persist_parse(rb_context *c, bool persistent, const void *buf, size_t len, char *err,
                     size_t errlen);
/* Whether c's persistent binary is no longer mapped or has changed (graph < 0: all of it; else
 * the static data graph `graph` reads): 1 with the violation's words in msg, else 0. A copy
 * always passes. */
int rb_persist_broken(const rb_context *c, int graph, const char *api, char *msg, size_t len);
/* rb_persist_broken for a call on c: QNN_SUCCESS, else the violation logged and 1100. */
static inline qnn_error_t rb_persist_check(rb_context *c, int graph, const char *api) {
  char msg[384];
  if (!rb_persist_broken(c, graph, api, msg, sizeof msg)) return QNN_SUCCESS;
  rb_violation(c->backend->log, "%s", msg);
  return QNN_COMMON_ERROR_GENERAL;
}

/* ---- spill_fill.c: spill-fill buffers, own or shared by a group ---- */
/* c's spill-fill (its deserialized graphs') and its group from cfg: a new group or the group of
 * `first`, the live context behind cfg->group_first (NULL when there is none). Registry lock
 * held. Logs and returns the code of a refusal. */
qnn_error_t rb_sf_attach(rb_backend *b, const char *api, rb_context *c, const rb_ctx_cfg *cfg,
                         const rb_context *first);
/* c leaves its group (freed with its last member). Registry lock held. */
void rb_sf_detach(rb_context *c);
/* contextFree of c (b's): when c is its group's first context and other members live, an
 * unknown behaviour (spill_fill.c says why not a violation). Registry lock held. */
void rb_sf_check_free(rb_backend *b, const rb_context *c);
/* An execute of a graph of c starts / ends: contexts sharing a spill-fill buffer run one at a
 * time. rb_sf_enter returns 1 with the words of the violation in msg when another context of
 * c's group is executing (the caller reports it), else 0; a context's own graphs may run
 * beside each other, as without a group. */
int rb_sf_enter(rb_context *c, char *msg, size_t len);
void rb_sf_leave(rb_context *c);
/* The bytes of the live groups' buffers (each once). */
uint64_t rb_sf_group_bytes(void);
/* ---- context_list.c ---- */
qnn_error_t rb_context_create_from_binary_list_async(qnn_backend_handle_t, qnn_device_handle_t,
                                                     const qnn_context_params_t **,
                                                     const qnn_context_config_t **,
                                                     qnn_signal_handle_t);

#endif /* HTPU_RB_LOADING_H */
