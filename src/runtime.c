/* runtime.c - QNN log + backend + device, and the libraries they come from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "exec/exec.h"
#include "base/base.h"
#include "device/device.h"
#include "qnn/qnn_device_abi.h"
#include "loader/loader.h"
#include "qnnset/qnnset.h"

void htpu_runtime_options_init(htpu_runtime_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->backend_lib = HTPU_DEFAULT_BACKEND_LIB;
  o->system_lib = HTPU_DEFAULT_SYSTEM_LIB;
  o->log_level = QNN_LOG_LEVEL_WARN;
  o->perf_profile = HTPU_PERF_DEFAULT;
  o->fastrpc_lib = "libcdsprpc.so";
  o->recovery_retries = 1;
  o->startup_retries = 3;
  o->startup_retry_delay_ms = 100;
  o->spill_fill_sharing = 0; /* a group's contexts execute one at a time: opt in */
}

/* Frees the QNN objects in QNN's required order; safe on a partly built runtime. */
static void free_qnn_objects(runtime_obj *rt) {
  qnn_backend_lib *b = &rt->backend_lib;
  if (rt->device && b->device_free) b->device_free(rt->device);
  if (rt->backend) b->backend_free(rt->backend);
  if (rt->log && b->log_free) b->log_free(rt->log);
  rt->device = rt->backend = rt->log = NULL;
}

/* How far an open got: what a teardown has to undo. */
typedef enum runtime_stage {
  STAGE_QNN,   /* libraries and QNN objects (any of them, maybe none) */
  STAGE_PERF,  /* and the perf state */
  STAGE_ALL,   /* and the shared registry: a complete runtime */
} runtime_stage;

/* Everything made up to `stage`, in order: the vote goes before its device, the libraries
 * last. Freeing the device and backend tears down the DSP session: like a context free it
 * waits for every in-flight execute in the process (the DSP process domain is shared). */
static void runtime_teardown_gated(runtime_obj *rt, runtime_stage stage) {
  if (stage >= STAGE_PERF) perf_release(&rt->perf);
  free_qnn_objects(rt);
  gate_leave_exclusive(&htpu_exec_gate);
  if (stage >= STAGE_ALL) shared_registry_destroy(&rt->shared);
  loader_close_system(&rt->system_lib);
  loader_close_backend(&rt->backend_lib);
}

static void runtime_teardown(runtime_obj *rt, runtime_stage stage) {
  /* An open that failed before any QNN object existed (the open timed out at the gate, the
   * library did not load) has no session to end: it does not wait for the gate. */
  if (stage == STAGE_QNN && !rt->backend && !rt->device && !rt->log) {
    loader_close_system(&rt->system_lib);
    loader_close_backend(&rt->backend_lib);
    return;
  }
  gate_enter_exclusive(&htpu_exec_gate, NULL, 0);
  runtime_teardown_gated(rt, stage);
}

/* What the backend announces for deadlines and priorities; anything but 0 is "no" (Qualcomm's
 * Saver backend answers 4950 to every key). */
static void read_signal_caps(runtime_obj *rt) {
  const qnn_backend_lib *b = &rt->backend_lib;
#define HAS(key) (b->property_has_capability && b->property_has_capability(key) == QNN_SUCCESS)
  int api = HAS(QNN_PROPERTY_GROUP_SIGNAL) && b->signal_create && b->signal_trigger &&
            b->signal_free;
  rt->execute_signals = api && HAS(QNN_PROPERTY_GRAPH_SUPPORT_EXECUTE_SIGNAL) &&
                        HAS(QNN_PROPERTY_SIGNAL_SUPPORT_ABORT);
  rt->load_signals = api && b->context_create_from_binary_with_signal &&
                     HAS(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_WITH_SIGNALS) &&
                     HAS(QNN_PROPERTY_SIGNAL_SUPPORT_TIMEOUT);
  rt->priority_control = HAS(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION) &&
                         HAS(QNN_PROPERTY_GRAPH_SUPPORT_PRIORITY_CONTROL);
  /* No HTP release announces 304 (platform.md, "Capabilities"); a backend that does gets
   * submitted calls queued in QNN (execute.c, "executeAsync"). */
  rt->execute_async = HAS(QNN_PROPERTY_GRAPH_SUPPORT_ASYNC_EXECUTION) && b->graph_execute_async;
  /* Loading (context_load.c): the configs reach QNN only where announced; the list call only
   * where the provider's version has its slot too. */
  rt->context_configs = HAS(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIGURATION);
  rt->persistent_binary =
      rt->context_configs && HAS(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY);
  rt->enable_graphs = rt->context_configs && HAS(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_ENABLE_GRAPHS);
  rt->memory_limit_hint =
      rt->context_configs && HAS(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_MEMORY_LIMIT_HINT);
  rt->list_load = HAS(QNN_PROPERTY_CONTEXT_SUPPORT_CREATE_FROM_BINARY_LIST_ASYNC) &&
                  b->context_create_from_binary_list_async;
#undef HAS
}

/* With the gate held exclusively (the teardown leaves it). */
static void runtime_destroy_gated(void *arg) {
  runtime_obj *rt = arg;
  runtime_teardown_gated(rt, STAGE_ALL);
  timer_release();
  pthread_mutex_destroy(&rt->contexts_lock);
  free(rt->contexts);
  free(rt->build_id);
  free(rt->dsp_library_path);
  free(rt);
  STAT_SUB(live_runtimes, 1);
}

/* The last reference went: torn down here, or (behind a stuck execute) by the janitor. */
static void runtime_destroy(htpu_object *o) { janitor_run_gated(runtime_destroy_gated, o); }

/* A FastRPC region to free everywhere (runtime_free_region), with its runtime held. */
typedef struct region_free {
  runtime_obj *rt;
  void *p;
  int fd;
} region_free;

static void region_free_gated(void *arg) {
  region_free *f = arg;
  runtime_release_registrations(f->rt, f->fd);
  shared_region_remove(&f->rt->shared, f->p);
  gate_leave_exclusive(&htpu_exec_gate);
  shared_region_free(&f->rt->shared, f->p);
  obj_release(&f->rt->base);
  free(f);
}

void runtime_free_region(runtime_obj *rt, void *p, int fd) {
  region_free *f = malloc(sizeof *f);
  if (!f) { /* no room to defer it: as it always was, here */
    gate_enter_exclusive(&htpu_exec_gate, NULL, 0);
    runtime_release_registrations(rt, fd);
    shared_region_remove(&rt->shared, p);
    gate_leave_exclusive(&htpu_exec_gate);
    shared_region_free(&rt->shared, p);
    return;
  }
  obj_retain(&rt->base); /* alive until the free ran, here or on the janitor */
  *f = (region_free){rt, p, fd};
  janitor_run_gated(region_free_gated, f);
}

/* QNN allows NULL for every log handle parameter, so a log that cannot be created costs only
 * the captured QNN lines. The real libQnnHtp returns 11002 here when no DSP is reachable;
 * stopping would hide the backendCreate code that follows (4000, which is retried and has a
 * hint). */
static void create_log(runtime_obj *rt, const htpu_runtime_options *o) {
  qnn_backend_lib *b = &rt->backend_lib;
  rt->log_note[0] = '\0';
  if (!b->log_create) return;
  qnn_error_t e = b->log_create(qnn_log_callback, o->log_level, &rt->log);
  if (e == QNN_SUCCESS) return;
  rt->log = NULL; /* QNN may leave garbage behind on failure */
  uint32_t code = QNN_ERROR_CODE(e);
  snprintf(rt->log_note, sizeof rt->log_note,
           "QNN log unavailable: logCreate returned %u (%s: %s); QNN log lines are not captured",
           code, htpu_qnn_error_name(code), htpu_qnn_error_message(code));
}

static int create_qnn_objects(runtime_obj *rt, const htpu_runtime_options *o) {
  qnn_backend_lib *b = &rt->backend_lib;
  create_log(rt, o);
  uint64_t mark = qnn_log_mark();
  qnn_error_t e = b->backend_create(rt->log, NULL, &rt->backend);
  if (e != QNN_SUCCESS || !rt->backend) {
    rt->backend = NULL;
    return qnn_fail(e, mark, "creating the QNN backend of '%s' failed", b->path);
  }
  const char *build_id = NULL;
  free(rt->build_id); /* from an earlier attempt */
  rt->build_id = NULL;
  if (b->backend_get_build_id && b->backend_get_build_id(&build_id) == QNN_SUCCESS && build_id)
    rt->build_id = strdup(build_id);
  else
    rt->build_id = strdup("");
  if (!rt->build_id) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");

  /* Backends without devices answer the device capability with NOT_SUPPORTED; skip them, as
   * every known client does. */
  int want_device = !o->skip_device && b->device_create && b->device_free;
  if (want_device && b->property_has_capability &&
      b->property_has_capability(QNN_PROPERTY_GROUP_DEVICE) != QNN_SUCCESS)
    want_device = 0;
  if (want_device) {
    mark = qnn_log_mark();
    e = b->device_create(rt->log, NULL, &rt->device);
    if (e != QNN_SUCCESS) {
      rt->device = NULL;
      return qnn_fail(e, mark, "creating the QNN device of '%s' failed", b->path);
    }
  }
  return 0;
}

typedef struct startup_try {
  runtime_obj *rt;
  const htpu_runtime_options *o;
  uint64_t deadline_ns; /* the open's (open_timeout_ns), 0: none */
} startup_try;

static int startup_try_once(void *arg, uint32_t attempt, uint32_t *qnn_code) {
  startup_try *t = arg;
  t->rt->startup_attempts = attempt + 1;
  /* Creating a backend and device opens a DSP session: not while anything executes, nor while
   * another process creates one (the NPU lock, taken before the gate: src/board/). */
  npu_lock_hold hold;
  int rc = npu_lock_enter(&t->rt->npu_lock, t->deadline_ns, NULL,
                          "creating the QNN backend and device", &hold);
  *qnn_code = 0;
  if (rc) return rc;
  if (!gate_enter_exclusive(&htpu_exec_gate, NULL, t->deadline_ns)) {
    npu_lock_leave(&hold);
    return htpu_set_error(HTPU_ETIMEDOUT, 0,
                          "opening the runtime passed its %llu ms limit (open_timeout_ns) while "
                          "it waited for the executes in flight in this process to end (no QNN "
                          "session is created beside an execute: the execute gate)",
                          (unsigned long long)(t->o->open_timeout_ns / 1000000u));
  }
  rc = create_qnn_objects(t->rt, t->o);
  uint32_t code = htpu_last_qnn_code();
  if (rc) free_qnn_objects(t->rt);
  gate_leave_exclusive(&htpu_exec_gate);
  npu_lock_leave(&hold);
  *qnn_code = rc == HTPU_EQNN ? code : 0; /* only a QNN failure may be transient */
  return rc;
}

/* Log, backend and device, retried with backoff while the failure looks transient. */
static int create_with_retries(runtime_obj *rt, const htpu_runtime_options *o) {
  retry_policy p = {o->startup_retries, o->startup_retry_delay_ms,
                    &htpu_g_counters.startup_retries, NULL, NULL};
  startup_try t = {rt, o, o->open_timeout_ns ? htpu_now_ns() + o->open_timeout_ns : 0};
  int rc = retry_run(&p, startup_try_once, &t);
  /* where the real HTP library cannot create its log it has no DSP either: the note says why no
   * QNN lines are quoted */
  if (rc && rt->log_note[0]) htpu_append_error("\n  note: %s", rt->log_note);
  return rc;
}

/* What the device says about itself: arch, SoC model, VTCM (for the compatibility checks). */
static void read_device_facts(runtime_obj *rt) {
  const qnn_backend_lib *b = &rt->backend_lib;
  if (!rt->device || !b->device_get_platform_info || !b->device_free_platform_info) return;
  const struct qnn_device_platform_info *p = NULL;
  if (b->device_get_platform_info(rt->log, &p) != QNN_SUCCESS || !p) return;
  platform_info_read(p, &rt->device_facts.arch, &rt->device_facts.soc_model,
                     &rt->device_facts.vtcm_bytes);
  b->device_free_platform_info(rt->log, p);
}

/* The HTP perf infrastructure, when the backend and its version have one. */
static const qnn_htp_perf_infrastructure_t *find_perf_infrastructure(runtime_obj *rt) {
  const qnn_backend_lib *b = &rt->backend_lib;
  if (!rt->device || !b->device_get_infrastructure) return NULL;
  if (b->property_has_capability &&
      b->property_has_capability(QNN_PROPERTY_DEVICE_SUPPORT_INFRASTRUCTURE) != QNN_SUCCESS)
    return NULL;
  void *infra = NULL;
  if (b->device_get_infrastructure(&infra) != QNN_SUCCESS || !infra) return NULL;
  const qnn_htp_device_infrastructure_t *htp = infra;
  if (htp->infra_type != QNN_HTP_DEVICE_INFRASTRUCTURE_TYPE_PERF) return NULL;
  const qnn_htp_perf_infrastructure_t *perf = &htp->u.perf_infra;
  if (!perf->create_power_config_id || !perf->destroy_power_config_id || !perf->set_power_config)
    return NULL;
  return perf;
}

/* setenv is not safe against a concurrent getenv; runtimes opened from several threads at once
 * at least do not race each other, and an unchanged value is not written again. */
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

static int set_dsp_library_path(const char *value) {
  pthread_mutex_lock(&env_lock);
  int rc = 0;
  const char *names[2] = {"DSP_LIBRARY_PATH", "ADSP_LIBRARY_PATH"};
  for (int i = 0; i < 2 && rc == 0; i++) {
    const char *cur = getenv(names[i]);
    if (!cur || strcmp(cur, value) != 0) rc = setenv(names[i], value, 1);
  }
  pthread_mutex_unlock(&env_lock);
  return rc;
}

static char *current_dsp_library_path(void) {
  pthread_mutex_lock(&env_lock);
  const char *dsp = getenv("DSP_LIBRARY_PATH");
  char *copy = strdup(dsp ? dsp : "");
  pthread_mutex_unlock(&env_lock);
  return copy;
}

/* The options' own checks, before anything is loaded. */
static int check_options(const htpu_runtime_options *o) {
  if (o->log_level < QNN_LOG_LEVEL_ERROR || o->log_level > QNN_LOG_LEVEL_DEBUG)
    return htpu_set_error(HTPU_EINVAL, 0, "log_level %u is out of range; expected 1 (error) .. 5 (debug)",
                          o->log_level);
  qnn_log_init_from_env();
  if ((unsigned)o->perf_profile >= HTPU_PERF_PROFILE_COUNT)
    return htpu_set_error(HTPU_EINVAL, 0, "perf_profile %d is out of range", (int)o->perf_profile);
  if (o->default_timeout_ns > HTPU_MAX_TIMEOUT_NS || o->open_timeout_ns > HTPU_MAX_TIMEOUT_NS)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "%s %llu is above the limit of %llu ns (24 h); expected 0 (the "
                          "default%s) up to the limit",
                          o->open_timeout_ns > HTPU_MAX_TIMEOUT_NS ? "open_timeout_ns"
                                                                   : "default_timeout_ns",
                          (unsigned long long)(o->open_timeout_ns > HTPU_MAX_TIMEOUT_NS
                                                   ? o->open_timeout_ns
                                                   : o->default_timeout_ns),
                          (unsigned long long)HTPU_MAX_TIMEOUT_NS,
                          o->open_timeout_ns > HTPU_MAX_TIMEOUT_NS ? ": none" : ", 60 s");
  return 0;
}

/* Libraries, QNN objects, then what needs the device: the perf state (its infrastructure is
 * the device's) and the shared registry (FastRPC memory only works once the device, a FastRPC
 * session, exists), each made once. On failure undoes what it made. */
static int runtime_build(runtime_obj *rt, const htpu_runtime_options *o) {
  const char *backend_path = o->backend_lib ? o->backend_lib : HTPU_DEFAULT_BACKEND_LIB;
  const char *system_path = o->system_lib ? o->system_lib : HTPU_DEFAULT_SYSTEM_LIB;
  int rc = loader_open_backend(backend_path, o->backend_id, &rt->backend_lib);
  if (!rc) rc = loader_open_system(system_path, &rt->system_lib);
  if (!rc) rc = create_with_retries(rt, o);
  if (rc) {
    runtime_teardown(rt, STAGE_QNN);
    return rc;
  }
  read_device_facts(rt);
  rt->batch_multiple = batch_runtime_announces(rt);
  perf_init(&rt->perf, find_perf_infrastructure(rt), rt->device_facts.arch);
  if (o->perf_profile != HTPU_PERF_DEFAULT) rc = perf_set_base(&rt->perf, o->perf_profile);
  if (rc) {
    runtime_teardown(rt, STAGE_PERF);
    return rc;
  }
  shared_registry_init(&rt->shared, &rt->backend_lib, rt->device != NULL,
                       o->fastrpc_lib ? o->fastrpc_lib : "libcdsprpc.so");
  rt->dsp_library_path = current_dsp_library_path();
  if (!rt->dsp_library_path) {
    runtime_teardown(rt, STAGE_ALL);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  return 0;
}

int htpu_runtime_open(const htpu_runtime_options *opts, htpu_runtime **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_runtime_open: out is NULL");
  *out = NULL;
  htpu_runtime_options defaults;
  htpu_runtime_options_init(&defaults);
  const htpu_runtime_options *o = opts ? opts : &defaults;
  int rc = check_options(o);
  if (rc) return rc;
  /* A QNN set's libraries, DSP path and stubs; one set per process (src/qnnset/) */
  qnnset_options *with_set = malloc(sizeof *with_set);
  if (!with_set) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  rc = qnnset_apply(o, with_set);
  o = &with_set->opts;
  /* Before anything is loaded: the DSP side reads these when the first FastRPC session opens,
   * and Erlang's os:putenv never reaches the C environment. */
  if (!rc && o->dsp_library_path && set_dsp_library_path(o->dsp_library_path) != 0)
    rc = htpu_set_error(HTPU_EINVAL, 0, "setting DSP_LIBRARY_PATH to '%s' failed",
                        o->dsp_library_path);
  if (rc) {
    free(with_set);
    return rc;
  }

  runtime_obj *rt = calloc(1, sizeof *rt);
  if (!rt) {
    free(with_set);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  rt->recovery_retries = o->recovery_retries;
  rt->retry_delay_ms = o->startup_retry_delay_ms;
  rt->default_timeout_ns = o->default_timeout_ns ? o->default_timeout_ns : HTPU_DEFAULT_TIMEOUT_NS;
  rt->queue_limit = o->queue_limit ? o->queue_limit : HTPU_DEFAULT_QUEUE_LIMIT;
  atomic_init(&rt->sf_sharing, o->spill_fill_sharing != 0);
  if (!o->spill_fill_sharing)
    snprintf(rt->sf_note, sizeof rt->sf_note,
             "spill-fill sharing is off, the default: htpu_runtime_options.spill_fill_sharing "
             "turns it on, at the price of a group's contexts executing one at a time");
  rc = npu_lock_configure(&rt->npu_lock, o);
  if (!rc) rc = runtime_build(rt, o);
  free(with_set); /* npu_lock_configure and runtime_build copied what they keep */
  if (rc) {
    free(rt->build_id);
    free(rt);
    return rc;
  }
  read_signal_caps(rt);
  timer_retain();
  pthread_mutex_init(&rt->contexts_lock, NULL);
  obj_init(&rt->base, OBJ_RUNTIME, runtime_destroy);
  STAT_ADD(live_runtimes, 1);
  void *h = obj_register(&rt->base);
  if (!h) {
    obj_release(&rt->base);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  *out = h;
  return 0;
}

int htpu_runtime_close(htpu_runtime **rtp) {
  htpu_clear_error();
  if (!rtp || !*rtp) return 0;
  htpu_object *o = obj_unregister(*rtp, OBJ_RUNTIME);
  *rtp = NULL;
  if (!o) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_runtime_close: not a live runtime handle");
  /* Everything submitted under it is cancelled (waiting calls leave, running ones abort). */
  runtime_obj *rt = (runtime_obj *)o;
  pthread_mutex_lock(&rt->contexts_lock);
  for (size_t i = 0; i < rt->num_contexts; i++) context_cancel_calls(rt->contexts[i]);
  pthread_mutex_unlock(&rt->contexts_lock);
  obj_release(o);
  return 0;
}

int htpu_runtime_get_info(htpu_runtime *h, htpu_runtime_info *out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_runtime_get_info: out is NULL");
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt) return htpu_set_error(HTPU_ECLOSED, 0, "htpu_runtime_get_info: runtime is closed");
  const qnn_backend_lib *b = &rt->backend_lib;
  out->backend_lib = b->path;
  out->system_lib = rt->system_lib.path;
  out->provider_name = b->provider->provider_name ? b->provider->provider_name : "";
  out->backend_id = b->backend_id;
  out->core_api_version = (htpu_version3){b->core_api.major, b->core_api.minor, b->core_api.patch};
  out->backend_api_version =
      (htpu_version3){b->backend_api.major, b->backend_api.minor, b->backend_api.patch};
  out->build_id = rt->build_id;
  out->system_provider_name =
      rt->system_lib.provider->provider_name ? rt->system_lib.provider->provider_name : "";
  out->system_api_version =
      (htpu_version3){rt->system_lib.api.major, rt->system_lib.api.minor, rt->system_lib.api.patch};
  out->has_device = rt->device != NULL;
  out->dsp_library_path = rt->dsp_library_path;
  out->device_arch = rt->device_facts.arch;
  out->device_soc_model = rt->device_facts.soc_model;
  out->device_vtcm_bytes = rt->device_facts.vtcm_bytes;
  /* Never behind perf.lock: a vote in progress holds it across a DSP round trip, and this is
   * called from places that must not block (the NIF reads it on a normal scheduler). The
   * infrastructure pointer is set once, before the runtime is published. */
  out->perf_profile = (htpu_perf_profile)atomic_load(&rt->perf.base_published);
  out->has_perf_infrastructure = rt->perf.infra != NULL;
  out->has_shared_memory = rt->shared.available;
  out->shared_memory_note = shared_registry_note(&rt->shared); /* "" until one is set */
  out->startup_attempts = rt->startup_attempts;
  out->log_note = rt->log_note; /* fixed before the runtime was published */
  out->batch_multiple = rt->batch_multiple;
  out->execute_signals = rt->execute_signals;
  out->execute_async = rt->execute_async;
  out->load_signals = rt->load_signals;
  out->priority_control = rt->priority_control;
  out->persistent_binary = rt->persistent_binary;
  out->enable_graphs = rt->enable_graphs;
  out->memory_limit_hint = rt->memory_limit_hint;
  out->list_load = rt->list_load;
  /* The note is written once, before sharing is turned off (spill_group.c). */
  out->spill_fill_sharing = atomic_load(&rt->sf_sharing);
  out->spill_fill_note = out->spill_fill_sharing ? "" : rt->sf_note;
  /* The strings stay valid while the caller's handle is open: drop only our reference. */
  obj_release(&rt->base);
  return 0;
}

int htpu_runtime_set_perf_profile(htpu_runtime *h, htpu_perf_profile p) {
  htpu_clear_error();
  runtime_obj *rt = (runtime_obj *)obj_acquire(h, OBJ_RUNTIME);
  if (!rt)
    return htpu_set_error(HTPU_ECLOSED, 0, "setting the performance profile: the runtime is closed");
  int rc = perf_set_base(&rt->perf, p);
  if (rc) obj_keep_error(&rt->base);
  obj_release(&rt->base);
  return rc;
}

size_t htpu_runtime_last_error(htpu_runtime *h, char *buf, size_t len) {
  htpu_object *o = obj_acquire(h, OBJ_RUNTIME);
  if (!o) return htpu_copy_message("runtime is closed", buf, len);
  size_t n = obj_copy_error(o, buf, len);
  obj_release(o);
  return n;
}
