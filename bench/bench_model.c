/* bench_model.c - the reference runtime, model and f32 buffers the whole-call sections share
 * (bench_calls.c, bench_callers.c; bench.h), and the reference backend's injected latency. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_lib_path(char *buf, size_t len, const bench_config *cfg, const char *name) {
  snprintf(buf, len, "%s/%s", cfg->build_dir, name);
}

/* fastrpc: use the reference FastRPC stand-in (shared scratch and buffers), else none. */
int bench_model_open(const bench_config *cfg, const char *path, int fastrpc, bench_model *m) {
  char be[1024], sys[1024], rpc[1024];
  bench_lib_path(be, sizeof be, cfg, "libhtpu_refbackend.so");
  bench_lib_path(sys, sizeof sys, cfg, "libhtpu_refsystem.so");
  bench_lib_path(rpc, sizeof rpc, cfg, fastrpc ? "libhtpu_refcdsprpc.so" : "no-fastrpc-here.so");
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.backend_lib = be;
  o.system_lib = sys;
  o.fastrpc_lib = rpc;
  memset(m, 0, sizeof *m);
  int rc = htpu_runtime_open(&o, &m->rt);
  if (!rc) rc = htpu_context_open_file(m->rt, path, &m->ctx);
  if (!rc) rc = htpu_graph_open(m->ctx, NULL, &m->g);
  if (rc) printf("  %s: %s: %s\n", path, htpu_err_name(rc), htpu_last_error());
  return rc;
}

void bench_model_close(bench_model *m) {
  htpu_graph_close(&m->g);
  htpu_context_close(&m->ctx);
  htpu_runtime_close(&m->rt);
}

int bench_f32_io_make(htpu_graph *g, bench_f32_io *io) {
  const htpu_tensor_info *ti = htpu_graph_input(g, 0), *to = htpu_graph_output(g, 0);
  size_t ni = ti->num_elements, no = to->num_elements;
  float *x = malloc(ni * 4), *y = malloc(no * 4);
  if (!x || !y) {
    free(x);
    free(y);
    return -1;
  }
  for (size_t i = 0; i < ni; i++) x[i] = (float)(bench_rnd01() * 1.9 - 0.95);
  io->in = (htpu_io){x, ni * 4, HTPU_F32};
  io->out = (htpu_io){y, no * 4, HTPU_F32};
  return 0;
}

void bench_f32_io_free(bench_f32_io *io) {
  free(io->in.data);
  free(io->out.data);
}

/* Every graphExecute of the reference backend bench_model_open loaded sleeps `us` first. */
int bench_set_latency(const bench_config *cfg, unsigned us) {
  char be[1024];
  bench_lib_path(be, sizeof be, cfg, "libhtpu_refbackend.so");
  void *h = dlopen(be, RTLD_NOW | RTLD_NOLOAD);
  typedef int (*set_latency_fn)(const char *, unsigned);
  set_latency_fn f = h ? (set_latency_fn)dlsym(h, "htpu_ref_set_latency") : NULL;
  int rc = f ? f("graphExecute", us) : -1;
  if (h) dlclose(h);
  return rc;
}
