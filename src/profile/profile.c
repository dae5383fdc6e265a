/* profile.c - a QNN profile handle per profiled call (profile.h), and what a runtime's backend
 * announces about profiling. */
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "base/base.h"

static int announced(const qnn_backend_lib *b, uint32_t key) {
  return b->property_has_capability && b->property_has_capability(key) == QNN_SUCCESS;
}

int htpu_runtime_profile_caps(htpu_runtime *h, htpu_profile_caps *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_runtime_profile_caps: out is NULL");
  memset(out, 0, sizeof *out);
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_runtime_profile_caps: runtime is closed");
  const qnn_backend_lib *b = &rt->backend_lib;
  out->profiling = PROFILE_SLOT(b, profile_create) != NULL &&
                   announced(b, QNN_PROPERTY_GROUP_PROFILE);
  out->custom_config = announced(b, QNN_PROPERTY_PROFILE_SUPPORT_CUSTOM_CONFIG);
  out->max_events_config = announced(b, QNN_PROPERTY_PROFILE_SUPPORT_MAX_EVENTS_CONFIG);
  out->extended_events = announced(b, QNN_PROPERTY_PROFILE_SUPPORTS_EXTENDED_EVENT) &&
                         PROFILE_SLOT(b, profile_get_extended_event_data) != NULL;
  out->optrace = announced(b, QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG);
  out->continuous = announced(b, QNN_PROPERTY_GRAPH_SUPPORT_CONTINUOUS_PROFILING);
  out->profiling_state = announced(b, QNN_PROPERTY_GRAPH_SUPPORT_PROFILING_STATE);
  out->linting = out->profiling && b->backend_id == QNN_BACKEND_ID_HTP;
  const qnn_system_lib *s = &rt->system_lib;
  out->system_serialization =
      QNN_SYSTEM_INTERFACE_SLOT(system_profile_free_serialization_target) < s->slots;
  obj_release(&rt->base);
  return 0;
}

/* The QNN level of ours (0 for OFF and invalid values). */
static uint32_t qnn_level(int level) {
  switch (level) {
    case HTPU_PROFILE_BASIC: return QNN_PROFILE_LEVEL_BASIC;
    case HTPU_PROFILE_DETAILED:
    case HTPU_PROFILE_OPTRACE: return QNN_PROFILE_LEVEL_DETAILED;
    case HTPU_PROFILE_LINTING: return QNN_HTP_PROFILE_LEVEL_LINTING;
    default: return 0;
  }
}

/* 0, or the refusal of a level the backend's type cannot have: linting (7001) is HTP's own. */
static int level_refused(const qnn_backend_lib *b, int level) {
  if (level != HTPU_PROFILE_LINTING || b->backend_id == QNN_BACKEND_ID_HTP) return 0;
  static const char *const kinds[] = {"none", "reference", "saver", "CPU", "GPU", "DSP", "HTP"};
  const char *name = b->provider && b->provider->provider_name ? b->provider->provider_name : "";
  return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                        "profile level linting is HTP's own (QNN level 7001): the backend '%s' "
                        "is backend id %u (%s), not HTP (6)",
                        name, b->backend_id,
                        b->backend_id < sizeof kinds / sizeof kinds[0] ? kinds[b->backend_id]
                                                                       : "unknown");
}

static void free_handle(const qnn_backend_lib *b, profile_call *pc) {
  if (!pc->handle) return;
  qnn_error_t (*fr)(qnn_profile_handle_t) = PROFILE_SLOT(b, profile_free);
  if (fr) (void)fr(pc->handle); /* nothing to do about a failure but not leak our count */
  pc->handle = NULL;
  STAT_SUB(live_profiles, 1);
}

/* The configs a level needs: optrace, and the backend's own bound where it offers one. */
static int configure(runtime_obj *rt, profile_call *pc, uint64_t mark) {
  const qnn_backend_lib *b = &rt->backend_lib;
  qnn_profile_config_t optrace = {.option = QNN_PROFILE_CONFIG_OPTION_ENABLE_OPTRACE};
  optrace.u.enable_optrace = 1;
  qnn_profile_config_t cap = {.option = QNN_PROFILE_CONFIG_OPTION_MAX_EVENTS};
  cap.u.num_max_events = (uint64_t)pc->max_events + 1; /* one more: truncation shows */
  const qnn_profile_config_t *cfg[3] = {NULL, NULL, NULL};
  int n = 0;
  if (pc->level == HTPU_PROFILE_OPTRACE) cfg[n++] = &optrace;
  if (announced(b, QNN_PROPERTY_PROFILE_SUPPORT_MAX_EVENTS_CONFIG)) cfg[n++] = &cap;
  if (!n) return 0;
  qnn_error_t (*set)(qnn_profile_handle_t, const qnn_profile_config_t **) =
      PROFILE_SLOT(b, profile_set_config);
  if (!set) {
    if (pc->level != HTPU_PROFILE_OPTRACE) return 0; /* the bound is ours anyway */
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "profile level optrace: the backend has no profileSetConfig");
  }
  qnn_error_t e = set(pc->handle, cfg);
  if (e == QNN_SUCCESS) return 0;
  return qnn_fail(e, mark, "configuring the %s profile (optrace%s) failed",
                  htpu_profile_level_name(pc->level), n > 1 || !cfg[0] ? ", max events" : "");
}

int profile_call_begin(runtime_obj *rt, int level, uint32_t max_events, profile_call *pc) {
  memset(pc, 0, sizeof *pc);
  if (level == HTPU_PROFILE_OFF) return 0;
  const qnn_backend_lib *b = &rt->backend_lib;
  uint32_t ql = qnn_level(level);
  if (!ql)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "profile level %d is not one of off (0), basic (1), detailed (2), "
                          "linting (3), optrace (4)",
                          level);
  if (level_refused(b, level)) return HTPU_EUNSUPPORTED;
  if (max_events > HTPU_PROFILE_MAX_EVENTS_LIMIT)
    return htpu_set_error(HTPU_EINVAL, 0, "profile_max_events %u is above the limit of %u",
                          max_events, HTPU_PROFILE_MAX_EVENTS_LIMIT);
  pc->level = (htpu_profile_level)level;
  pc->max_events = max_events ? max_events : HTPU_PROFILE_DEFAULT_MAX_EVENTS;
  qnn_error_t (*create)(qnn_backend_handle_t, uint32_t, qnn_profile_handle_t *) =
      PROFILE_SLOT(b, profile_create);
  if (!create || !PROFILE_SLOT(b, profile_get_events) || !PROFILE_SLOT(b, profile_free))
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "profiling: the backend's interface (core API %u.%u) has no profile "
                          "calls",
                          b->core_api.major, b->core_api.minor);
  if (level == HTPU_PROFILE_OPTRACE && !announced(b, QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG))
    return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                          "profile level optrace: the backend does not announce the optrace "
                          "config (capability 1405, QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG)");
  pc->extended = announced(b, QNN_PROPERTY_PROFILE_SUPPORTS_EXTENDED_EVENT) &&
                 PROFILE_SLOT(b, profile_get_extended_event_data) != NULL;
  uint64_t mark = qnn_log_mark();
  qnn_error_t e = create(rt->backend, ql, &pc->handle);
  if (e != QNN_SUCCESS || !pc->handle) {
    pc->handle = NULL;
    uint32_t code = QNN_ERROR_CODE(e);
    if (code == QNN_COMMON_ERROR_NOT_SUPPORTED)
      return htpu_set_error(HTPU_EUNSUPPORTED, code,
                            "profile level %s: the backend does not support profiling "
                            "(profileCreate: QNN error %u, %s; capability 1401 %s)",
                            htpu_profile_level_name(pc->level), code, htpu_qnn_error_name(code),
                            announced(b, QNN_PROPERTY_GROUP_PROFILE) ? "announced"
                                                                     : "not announced");
    return qnn_fail(e, mark, "creating a %s profile failed", htpu_profile_level_name(pc->level));
  }
  STAT_ADD(live_profiles, 1);
  int rc = configure(rt, pc, mark);
  if (rc) free_handle(b, pc);
  return rc;
}

int profile_call_end(runtime_obj *rt, profile_call *pc, int read, const char *graph,
                     htpu_profile **out) {
  *out = NULL;
  if (!pc->handle) return 0;
  int rc = 0;
  if (read) {
    uint64_t t0 = htpu_now_ns();
    rc = profile_read(&rt->backend_lib, pc->handle, pc->level, pc->max_events, pc->extended,
                      graph, out);
    if (!rc) {
      (*out)->read_ns = htpu_now_ns() - t0;
      STAT_ADD(profiled_calls, 1);
    }
  }
  free_handle(&rt->backend_lib, pc);
  return rc;
}

int profile_call_finish_execute(runtime_obj *rt, profile_call *pc, int rc, const char *graph,
                                htpu_profile **out, uint64_t start_ns, uint64_t quantize_ns,
                                uint64_t execute_ns, uint64_t dequantize_ns) {
  *out = NULL;
  if (!pc->handle) return 0;
  htpu_profile *p = NULL;
  int read_rc = profile_call_end(rt, pc, rc == 0, graph, &p);
  if (rc) return 0; /* a failed call has no events to read */
  if (read_rc) {
    STAT_ADD(profiles_dropped, 1);
    char why[512];
    htpu_copy_message(htpu_last_error(), why, sizeof why);
    return htpu_set_error(read_rc, htpu_last_qnn_code(),
                          "graph '%s': the call succeeded but its %s profile could not be read "
                          "(the sample is dropped): %s",
                          graph, htpu_profile_level_name(pc->level), why);
  }
  p->start_ns = start_ns;
  p->quantize_ns = quantize_ns;
  p->execute_start_ns = pc->exec_start_ns;
  p->execute_ns = execute_ns;
  p->dequantize_ns = dequantize_ns;
  p->total_ns = htpu_now_ns() - start_ns;
  *out = p;
  return 0;
}

void htpu_profile_free(htpu_profile *p) { free(p); /* one allocation (profile_read.c) */ }
