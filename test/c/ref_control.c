/* ref_control.c - the reference libraries' test-control API, resolved once (ref_control.h). */
#include "ref_control.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* Resolves one symbol into c->field, remembering the last one missing. */
#define SYM(field, lib, name) \
  if (!(*(void **)&c->field = dlsym((lib), (name)))) missing = (name)

static ref_ctl g_ctl;

/* Each library is resolved on first need (0 not tried, 1 resolved, -1 failed): a test of the
 * core that never asks for FastRPC memory leaves libhtpu_refcdsprpc.so to the core to load
 * and unload. */
static int g_backend, g_rpc;

static int resolve_backend(ref_ctl *c) {
  /* RTLD_GLOBAL as the core's own load may come later and must find this copy. */
  void *dl = dlopen(test_build_path("libhtpu_refbackend.so"), RTLD_NOW | RTLD_GLOBAL);
  if (!dl) {
    printf("    dlopen: %s\n", dlerror());
    return -1;
  }
  const char *missing = NULL;
  SYM(get_providers, dl, "QnnInterface_getProviders");
  SYM(arm, dl, "htpu_ref_arm");
  SYM(disarm, dl, "htpu_ref_disarm");
  SYM(set_latency, dl, "htpu_ref_set_latency");
  SYM(set_graph_latency, dl, "htpu_ref_set_graph_latency");
  SYM(stats, dl, "htpu_ref_get_stats");
  SYM(reset_stats, dl, "htpu_ref_reset_stats");
  SYM(last_violation, dl, "htpu_ref_last_violation");
  SYM(thread_calls, dl, "htpu_ref_thread_calls");
  SYM(unload_handles, dl, "htpu_ref_unload_handles");
  SYM(trigger_ssr, dl, "htpu_ref_trigger_ssr");
  SYM(power_state, dl, "htpu_ref_get_power_state");
  SYM(last_power_id, dl, "htpu_ref_last_power_config_id");
  SYM(live_power_ids, dl, "htpu_ref_live_power_config_ids");
  SYM(forget_power, dl, "htpu_ref_forget_power_history");
  SYM(set_capability, dl, "htpu_ref_set_capability");
  SYM(reset_capabilities, dl, "htpu_ref_reset_capabilities");
  SYM(graph_state, dl, "htpu_ref_get_graph_state");
  SYM(live_profiles, dl, "htpu_ref_live_profiles");
  SYM(context_state, dl, "htpu_ref_get_context_state");
  if (missing) printf("    missing symbol in libhtpu_refbackend.so: %s\n", missing);
  return missing ? -1 : 0;
}

static int resolve_rpc(ref_ctl *c) {
  void *rpc = dlopen(test_build_path("libhtpu_refcdsprpc.so"), RTLD_NOW | RTLD_LOCAL);
  if (!rpc) {
    printf("    dlopen: %s\n", dlerror());
    return -1;
  }
  const char *missing = NULL;
  SYM(rpc_alloc, rpc, "rpcmem_alloc");
  SYM(rpc_alloc2, rpc, "rpcmem_alloc2");
  SYM(rpc_free, rpc, "rpcmem_free");
  SYM(rpc_to_fd, rpc, "rpcmem_to_fd");
  SYM(rpc_init, rpc, "rpcmem_init");
  SYM(rpc_deinit, rpc, "rpcmem_deinit");
  SYM(rpc_stats, rpc, "htpu_refcdsprpc_get_stats");
  SYM(rpc_unload, rpc, "htpu_refcdsprpc_unload");
  if (missing) printf("    missing symbol in libhtpu_refcdsprpc.so: %s\n", missing);
  return missing ? -1 : 0;
}

/* The backend's functions only (the rpc_* fields may still be NULL). */
static const ref_ctl *backend_ctl(void) {
  if (g_backend == 0) g_backend = resolve_backend(&g_ctl) == 0 ? 1 : -1;
  return g_backend == 1 ? &g_ctl : NULL;
}

const ref_ctl *ref_ctl_get(void) {
  if (!backend_ctl()) return NULL;
  if (g_rpc == 0) g_rpc = resolve_rpc(&g_ctl) == 0 ? 1 : -1;
  return g_rpc == 1 ? &g_ctl : NULL;
}

void ref_reset_env(void) {
  static const char *const vars[] = {
      "HTPU_REF_PROVIDERS",         "HTPU_REF_SYSTEM_PROVIDERS",
      "HTPU_REF_SYSTEM_LAYOUT",     "HTPU_REF_GETPROVIDERS_ERROR",
      "HTPU_REF_SYSTEM_GETPROVIDERS_ERROR", "HTPU_REF_FAULTS",
      "HTPU_REF_LATENCY",           "HTPU_REF_DEVICE",
      "HTPU_REF_RPCMEM_FAIL",       "HTPU_REF_BUILD_ID",
      "HTPU_REF_SKIP_OUTPUTS",      "HTPU_REF_CAPS",
      "HTPU_REF_PROFILE_OBJECT"};
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) unsetenv(vars[i]);
}

int ref_ctl_open(ref_ctl *c) {
  memset(c, 0, sizeof(*c));
  ref_reset_env();
  const ref_ctl *r = ref_ctl_get();
  if (!r) return -1;
  *c = *r;
  c->disarm();
  c->reset_stats();
  return 0;
}

void ref_ctl_close(ref_ctl *c) {
  ref_reset_env();
  if (c->disarm) c->disarm();
}

htpu_ref_stats ref_ctl_stats(const ref_ctl *c) {
  htpu_ref_stats s;
  c->stats(&s);
  return s;
}

const qnn_interface_t *ref_first_provider(const ref_ctl *c) {
  const qnn_interface_t **list = NULL;
  uint32_t n = 0;
  if (c->get_providers(&list, &n) != QNN_SUCCESS || n == 0) return NULL;
  return list[0];
}

/* ---- one call at a time ------------------------------------------------------------------- */

int fx_ref_arm(const char *rules) {
  const ref_ctl *c = backend_ctl();
  return c ? c->arm(rules) : -1;
}

void fx_ref_disarm(void) {
  const ref_ctl *c = backend_ctl();
  if (c) c->disarm();
}

static htpu_ref_stats stats_now(void) {
  htpu_ref_stats s;
  memset(&s, 0, sizeof s);
  const ref_ctl *c = backend_ctl();
  if (c) c->stats(&s);
  return s;
}

unsigned long fx_ref_violations(void) { return (unsigned long)stats_now().violations; }

const char *fx_ref_last_violation(void) {
  const ref_ctl *c = backend_ctl();
  return c ? c->last_violation() : "";
}

int fx_ref_set_latency(const char *api, unsigned usec) {
  const ref_ctl *c = backend_ctl();
  return c ? c->set_latency(api, usec) : -1;
}

int fx_ref_set_graph_latency(const char *graph, unsigned usec) {
  const ref_ctl *c = backend_ctl();
  return c ? c->set_graph_latency(graph, usec) : -1;
}

uint32_t fx_ref_trigger_ssr(void) {
  const ref_ctl *c = backend_ctl();
  return c ? c->trigger_ssr() : 0;
}

uint64_t fx_ref_executes(void) { return stats_now().total_executes; }

uint64_t fx_ref_faults(void) { return stats_now().faults_injected; }

uint64_t fx_ref_thread_calls(const char *api) {
  const ref_ctl *c = backend_ctl();
  return c ? c->thread_calls(api) : UINT64_MAX;
}

uint64_t fx_rpcmem_allocs(void) {
  const ref_ctl *c = ref_ctl_get();
  if (!c) return UINT64_MAX;
  htpu_refcdsprpc_stats s;
  c->rpc_stats(&s);
  return s.total_allocs;
}

int fx_ref_power_state(uint32_t id, htpu_ref_power_state *out) {
  const ref_ctl *c = backend_ctl();
  return c ? c->power_state(id, out) : -1;
}

uint32_t fx_ref_live_power_ids(void) {
  const ref_ctl *c = backend_ctl();
  return c ? c->live_power_ids() : 0;
}

uint32_t fx_ref_last_power_id(void) {
  const ref_ctl *c = backend_ctl();
  return c ? c->last_power_id() : 0;
}

uint32_t fx_ref_live_mem_handles(void) { return stats_now().live_mem_handles; }

void fx_ref_forget_power_history(void) {
  const ref_ctl *c = backend_ctl();
  if (c) c->forget_power();
}

int fx_ref_set_capability(uint32_t key, uint32_t answer) {
  const ref_ctl *c = backend_ctl();
  return c ? c->set_capability(key, answer) : -1;
}

void fx_ref_reset_capabilities(void) {
  const ref_ctl *c = backend_ctl();
  if (c) c->reset_capabilities();
}

int fx_ref_graph_state(const char *name, htpu_ref_graph_state *out) {
  const ref_ctl *c = backend_ctl();
  return c ? c->graph_state(name, out) : -1;
}

uint64_t fx_ref_aborted_calls(void) { return stats_now().aborted_calls; }
uint64_t fx_ref_timed_out_calls(void) { return stats_now().timed_out_calls; }
uint32_t fx_ref_live_signals(void) { return stats_now().live_signals; }
uint32_t fx_ref_async_pending(void) { return stats_now().async_pending; }
uint64_t fx_ref_async_notified(void) { return stats_now().async_notified; }

uint32_t fx_ref_live_profiles(void) {
  const ref_ctl *c = backend_ctl();
  return c ? c->live_profiles() : 0;
}

int fx_ref_context_state(const char *graph, htpu_ref_context_state *out) {
  const ref_ctl *c = backend_ctl();
  htpu_ref_graph_state g;
  if (!c || c->graph_state(graph, &g) != 0) return -1;
  return c->context_state(g.context_handle, out);
}

htpu_ref_stats fx_ref_stats(void) { return stats_now(); }
