/* fixture.c - shared helpers for the core tests. */
#include "fixture.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/backend/htpu_ref_control.h"
#include "../../reference/cdsprpc/htpu_refcdsprpc.h"
#include "refmodel.h"
#include "test.h"

const char *FX_ADD_F32 =
    "graph add_f32\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n";

const char *FX_MULTI_GRAPH =
    "graph first\n"
    "  input x u8 [1,3] scale=0.5 zero_point=3\n"
    "  static w u8 [2,3] axis=0 scales=[0.25,0.125] zero_points=[1,2] data=[1,2,3,4,5,6]\n"
    "  output y u8 [1,2] scale=0.25 zero_point=0\n"
    "  op FullyConnected x w -> y\n"
    "graph second\n"
    "  input p f16 [2,2]\n"
    "  output q f16 [2,2]\n"
    "  op Relu p -> q\n"
    "graph third\n"
    "  input m i8 [4] scale=0.1 zero_point=-5\n"
    "  output n i8 [4] scale=0.1 zero_point=-5\n"
    "  op Relu m -> n\n";

void fx_ref_options(htpu_runtime_options *o) {
  htpu_runtime_options_init(o);
  o->backend_lib = test_build_path("libhtpu_refbackend.so");
  o->system_lib = test_build_path("libhtpu_refsystem.so");
}

htpu_runtime *fx_open_runtime(void) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  htpu_runtime *rt = NULL;
  int rc = htpu_runtime_open(&o, &rt);
  if (rc) printf("    htpu_runtime_open: %s: %s\n", htpu_err_name(rc), htpu_last_error());
  return rt;
}

int fx_rig_open(fx_rig *r, const htpu_runtime_options *o, const char *file, int open_graph) {
  memset(r, 0, sizeof *r);
  const char *path = fx_build_model_file(file, FX_ADD_F32);
  if (!path) return -1;
  htpu_runtime_options ref;
  if (!o) {
    fx_ref_options(&ref);
    o = &ref;
  }
  int rc = htpu_runtime_open(o, &r->rt);
  if (!rc) rc = htpu_context_open_file(r->rt, path, &r->ctx);
  if (!rc && open_graph) rc = htpu_graph_open(r->ctx, "add_f32", &r->g);
  return rc;
}

void fx_rig_close(fx_rig *r) {
  htpu_graph_close(&r->g);
  htpu_context_close(&r->ctx);
  htpu_runtime_close(&r->rt);
}

int fx_add(htpu_graph *g, float a0, const htpu_exec_options *opts, htpu_exec_stats *st, float *y) {
  float a[4] = {a0, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, 4 * sizeof(float), HTPU_F32};
  return htpu_graph_execute_ex(g, in, 2, &out, 1, opts, st);
}

void *fx_build_model(const char *text, size_t *len) {
  void *out = NULL;
  char err[512];
  if (ref_build_from_text(text, &out, len, err, sizeof err) != 0) {
    printf("    builder: %s\n", err);
    return NULL;
  }
  return out;
}

const char *fx_build_model_file(const char *name, const char *text) {
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return NULL;
  const char *path = test_tmp_path(name);
  int rc = test_write_file(path, bin, len);
  free(bin);
  return rc == 0 ? path : NULL;
}

void fx_reset_env(void) {
  unsetenv("HTPU_REF_PROVIDERS");
  unsetenv("HTPU_REF_SYSTEM_PROVIDERS");
  unsetenv("HTPU_REF_SYSTEM_LAYOUT");
  unsetenv("HTPU_REF_GETPROVIDERS_ERROR");
  unsetenv("HTPU_REF_FAULTS");
  unsetenv("HTPU_REF_LATENCY");
  unsetenv("HTPU_REF_DEVICE");
  unsetenv("HTPU_REF_RPCMEM_FAIL");
  unsetenv("HTPU_REF_BUILD_ID");
  unsetenv("HTPU_REF_SKIP_OUTPUTS");
  fx_ref_disarm();
}

/* The control API lives in the reference backend. The tests keep one reference to the
 * library for the whole run, so they and the core share one library state and the resolved
 * functions never dangle. */
static void *ref_symbol(const char *name) {
  static void *dl;
  if (!dl) dl = dlopen(test_build_path("libhtpu_refbackend.so"), RTLD_NOW | RTLD_GLOBAL);
  return dl ? dlsym(dl, name) : NULL;
}

int fx_ref_arm(const char *rules) {
  htpu_ref_arm_fn f = (htpu_ref_arm_fn)ref_symbol("htpu_ref_arm");
  return f ? f(rules) : -1;
}

void fx_ref_disarm(void) {
  htpu_ref_disarm_fn f = (htpu_ref_disarm_fn)ref_symbol("htpu_ref_disarm");
  if (f) f();
}

unsigned long fx_ref_violations(void) {
  htpu_ref_get_stats_fn f = (htpu_ref_get_stats_fn)ref_symbol("htpu_ref_get_stats");
  if (!f) return 0;
  htpu_ref_stats s;
  f(&s);
  return (unsigned long)s.violations;
}

const char *fx_ref_last_violation(void) {
  htpu_ref_last_violation_fn f = (htpu_ref_last_violation_fn)ref_symbol("htpu_ref_last_violation");
  return f ? f() : "";
}

int fx_ref_set_latency(const char *api, unsigned usec) {
  htpu_ref_set_latency_fn f = (htpu_ref_set_latency_fn)ref_symbol("htpu_ref_set_latency");
  return f ? f(api, usec) : -1;
}

uint32_t fx_ref_trigger_ssr(void) {
  htpu_ref_trigger_ssr_fn f = (htpu_ref_trigger_ssr_fn)ref_symbol("htpu_ref_trigger_ssr");
  return f ? f() : 0;
}

static htpu_ref_stats ref_stats(void) {
  htpu_ref_stats s;
  memset(&s, 0, sizeof s);
  htpu_ref_get_stats_fn f = (htpu_ref_get_stats_fn)ref_symbol("htpu_ref_get_stats");
  if (f) f(&s);
  return s;
}

uint64_t fx_ref_executes(void) { return ref_stats().total_executes; }

uint64_t fx_ref_faults(void) { return ref_stats().faults_injected; }

uint64_t fx_ref_thread_calls(const char *api) {
  htpu_ref_thread_calls_fn f = (htpu_ref_thread_calls_fn)ref_symbol("htpu_ref_thread_calls");
  return f ? f(api) : UINT64_MAX;
}

uint64_t fx_rpcmem_allocs(void) {
  /* The library the runtime loads (fx_ref_options_shared), kept open like the backend. */
  static void *dl;
  if (!dl) dl = dlopen(test_build_path("libhtpu_refcdsprpc.so"), RTLD_NOW | RTLD_LOCAL);
  htpu_refcdsprpc_get_stats_fn f =
      dl ? (htpu_refcdsprpc_get_stats_fn)dlsym(dl, "htpu_refcdsprpc_get_stats") : NULL;
  if (!f) return UINT64_MAX;
  htpu_refcdsprpc_stats s;
  f(&s);
  return s.total_allocs;
}

int fx_ref_power_state(uint32_t id, struct htpu_ref_power_state *out) {
  int (*f)(uint32_t, htpu_ref_power_state *) =
      (int (*)(uint32_t, htpu_ref_power_state *))ref_symbol("htpu_ref_get_power_state");
  return f ? f(id, out) : -1;
}

uint32_t fx_ref_live_power_ids(void) {
  uint32_t (*f)(void) = (uint32_t(*)(void))ref_symbol("htpu_ref_live_power_config_ids");
  return f ? f() : 0;
}

uint32_t fx_ref_last_power_id(void) {
  htpu_ref_last_power_config_id_fn f =
      (htpu_ref_last_power_config_id_fn)ref_symbol("htpu_ref_last_power_config_id");
  return f ? f() : 0;
}

uint32_t fx_ref_live_mem_handles(void) {
  htpu_ref_get_stats_fn f = (htpu_ref_get_stats_fn)ref_symbol("htpu_ref_get_stats");
  if (!f) return 0;
  htpu_ref_stats s;
  f(&s);
  return s.live_mem_handles;
}

void fx_ref_forget_power_history(void) {
  void (*f)(void) = (void (*)(void))ref_symbol("htpu_ref_forget_power_history");
  if (f) f();
}

void fx_ref_options_shared(htpu_runtime_options *o) {
  fx_ref_options(o);
  o->fastrpc_lib = test_build_path("libhtpu_refcdsprpc.so");
}

void fx_hold_init(fx_hold *h) {
  pthread_mutex_init(&h->m, NULL);
  pthread_cond_init(&h->cv, NULL);
  h->holding = h->release = 0;
}

int fx_hold_cancelled(void *arg) {
  fx_hold *h = arg;
  pthread_mutex_lock(&h->m);
  h->holding = 1;
  pthread_cond_broadcast(&h->cv);
  while (!h->release) pthread_cond_wait(&h->cv, &h->m);
  pthread_mutex_unlock(&h->m);
  return 0;
}

void fx_hold_wait(fx_hold *h) {
  pthread_mutex_lock(&h->m);
  while (!h->holding) pthread_cond_wait(&h->cv, &h->m);
  pthread_mutex_unlock(&h->m);
}

void fx_hold_release(fx_hold *h) {
  pthread_mutex_lock(&h->m);
  h->release = 1;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->m);
}

void fx_hold_destroy(fx_hold *h) {
  pthread_cond_destroy(&h->cv);
  pthread_mutex_destroy(&h->m);
}
