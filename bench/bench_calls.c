/*
 * bench_calls.c - whole calls through the C API on the reference backend:
 *
 *   bench_calls    host overhead of one execute (total - graphExecute) at MobileNet-v2 I/O
 *                  (u8 [1,224,224,3] in, u8 [1,1001] out; bench/mobilenet_io.txt, a graph
 *                  with next to no compute) and at the digits model's (f32 [1,64] -> u8,
 *                  u8 [1,10] -> f32), against memcpy of the f32 bytes, for f32 buffers
 *                  (converted by the library into its scratch pool: FastRPC memory when the
 *                  runtime has it, ordinary memory when not) and buffers already in the
 *                  tensors' types (ordinary, or shared: htpu_graph_alloc_io)
 *   bench_callers  4 threads calling one graph at MobileNet I/O with a 1.37 ms execute
 *                  injected in the reference backend: calls per second against 1 / the
 *                  execute time one caller measures
 *
 * On this machine "shared" is the reference FastRPC stand-in (memfd): what it saves on the
 * board (FastRPC's copy of every ordinary buffer) is not modelled here; see
 * docs/performance.md.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MNET_LATENCY_US 1370

typedef struct model {
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *g;
} model;

static void lib_path(char *buf, size_t len, const bench_config *cfg, const char *name) {
  snprintf(buf, len, "%s/%s", cfg->build_dir, name);
}

/* fastrpc: use the reference FastRPC stand-in (shared scratch and buffers), else none. */
static int model_open(const bench_config *cfg, const char *path, int fastrpc, model *m) {
  char be[1024], sys[1024], rpc[1024];
  lib_path(be, sizeof be, cfg, "libhtpu_refbackend.so");
  lib_path(sys, sizeof sys, cfg, "libhtpu_refsystem.so");
  lib_path(rpc, sizeof rpc, cfg, fastrpc ? "libhtpu_refcdsprpc.so" : "no-fastrpc-here.so");
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

static void model_close(model *m) {
  htpu_graph_close(&m->g);
  htpu_context_close(&m->ctx);
  htpu_runtime_close(&m->rt);
}

/* The graph's single input and output as f32 buffers (ordinary memory), inputs in range. */
typedef struct f32_io {
  htpu_io in, out;
} f32_io;

static int f32_io_make(htpu_graph *g, f32_io *io) {
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

static void f32_io_free(f32_io *io) {
  free(io->in.data);
  free(io->out.data);
}

/* Host time per call (total - graphExecute) and memcpy of the I/O's f32 bytes, interleaved;
 * `inner` calls per repeat. Returns 0, or the first error (printed). */
typedef struct call_figures {
  bench_stat host_ns, total_ns, ratio; /* ratio: host / memcpy (lower is better) */
} call_figures;

static int time_calls(htpu_graph *g, const htpu_io *in, const htpu_io *out, size_t f32_bytes,
                      int reps, int inner, call_figures *f) {
  double *host = malloc(reps * sizeof *host), *total = malloc(reps * sizeof *total);
  double *copy = malloc(reps * sizeof *copy);
  unsigned char *a = malloc(f32_bytes), *b = malloc(f32_bytes);
  int rc = (!host || !total || !copy || !a || !b) ? -1 : 0;
  if (a) memset(a, 1, f32_bytes);
  for (int r = -1; !rc && r < reps; r++) {
    double t0 = bench_now_ns();
    for (int k = 0; k < inner; k++) memcpy(b, a, f32_bytes);
    double t1 = bench_now_ns();
    double h = 0, t = 0;
    for (int k = 0; !rc && k < inner; k++) {
      htpu_exec_stats s;
      rc = htpu_graph_execute(g, in, 1, out, 1, &s);
      h += (double)(s.total_ns - s.execute_ns);
      t += (double)s.total_ns;
    }
    bench_consume(b, f32_bytes);
    if (rc) printf("  execute: %s: %s\n", htpu_err_name(rc), htpu_last_error());
    if (r < 0) continue;
    copy[r] = (t1 - t0) / inner;
    host[r] = h / inner;
    total[r] = t / inner;
  }
  if (!rc) {
    bench_stat c = bench_stat_of(copy, reps);
    f->host_ns = bench_stat_of(host, reps);
    f->total_ns = bench_stat_of(total, reps);
    f->ratio = (bench_stat){f->host_ns.min / c.min, f->host_ns.med / c.med};
  }
  free(host);
  free(total);
  free(copy);
  free(a);
  free(b);
  return rc;
}

static void print_call(const char *what, const call_figures *f) {
  printf("  %-44s %8.1f %8.1f   %8.1f   %6.2fx %6.2fx\n", what, f->host_ns.med / 1e3,
         f->host_ns.min / 1e3, f->total_ns.med / 1e3, f->ratio.med, f->ratio.min);
}

/* One model's rows: f32 buffers on a FastRPC runtime and on one without, then buffers in the
 * tensors' own types, ordinary and shared. */
static void call_rows(const bench_config *cfg, const char *path, int reps, int inner,
                      bench_results *res, int is_mnet) {
  for (int fastrpc = 1; fastrpc >= 0; fastrpc--) {
    model m;
    if (model_open(cfg, path, fastrpc, &m) != 0) {
      model_close(&m);
      return;
    }
    f32_io io;
    if (f32_io_make(m.g, &io) != 0) {
      printf("  out of memory\n");
      model_close(&m);
      return;
    }
    size_t f32_bytes = io.in.size + io.out.size;
    call_figures f;
    if (time_calls(m.g, &io.in, &io.out, f32_bytes, reps, inner, &f) == 0) {
      print_call(fastrpc ? "f32 buffers, scratch in FastRPC memory" :
                           "f32 buffers, scratch in ordinary memory", &f);
      if (is_mnet && fastrpc) {
        res->call_mnet_f32 = f.ratio;
        res->call_mnet_host_us = f.host_ns.med / 1e3;
      }
      if (is_mnet && !fastrpc) res->call_mnet_f32_plain = f.ratio;
    }
    if (fastrpc) {
      /* the tensors' own types: ordinary memory, then shared */
      const htpu_tensor_info *ti = htpu_graph_input(m.g, 0), *to = htpu_graph_output(m.g, 0);
      void *x = calloc(1, ti->byte_size), *y = calloc(1, to->byte_size);
      htpu_io in = {x, ti->byte_size, ti->dtype}, out = {y, to->byte_size, to->dtype};
      if (x && y && time_calls(m.g, &in, &out, f32_bytes, reps, inner, &f) == 0)
        print_call("own-type buffers, ordinary memory", &f);
      free(x);
      free(y);
      htpu_shared *sh = NULL;
      if (htpu_graph_alloc_io(m.g, &in, &out, &sh) == 0 &&
          time_calls(m.g, &in, &out, f32_bytes, reps, inner, &f) == 0)
        print_call(htpu_shared_is_fastrpc(sh) ? "own-type buffers, shared (FastRPC)"
                                              : "own-type buffers, shared (ordinary fallback)",
                   &f);
      htpu_shared_free(&sh);
    }
    f32_io_free(&io);
    model_close(&m);
  }
}

void bench_calls(const bench_config *cfg, bench_results *res) {
  char mnet[1024], digits[1024];
  snprintf(mnet, sizeof mnet, "%s/bench-models/mobilenet_io.bin", cfg->build_dir);
  snprintf(digits, sizeof digits, "models/digits/digits.bin");
  int reps = cfg->reps;
  printf("\n== whole execute, host side: total - graphExecute (reference backend), per call; "
         "median and min of %d ==\n", reps);
  printf("  %-44s %8s %8s   %8s   %s\n", "", "host us", "min", "total us",
         "host / memcpy of the f32 bytes (med, min)");
  printf(" MobileNet-v2 I/O: u8 [1,224,224,3] in, u8 [1,1001] out (memcpy of 606,116 bytes)\n");
  call_rows(cfg, mnet, reps, cfg->quick ? 2 : 8, res, 1);
  printf(" digits: u8 [1,64] in, u8 [1,10] out (memcpy of 296 bytes)\n");
  call_rows(cfg, digits, reps, cfg->quick ? 50 : 500, res, 0);

  /* the C half of "Elixir predict over the C call": predict's own work, through C */
  model m;
  f32_io io;
  if (model_open(cfg, digits, 0, &m) == 0 && f32_io_make(m.g, &io) == 0) {
    int inner = cfg->quick ? 200 : 2000, rc = 0;
    double *t = malloc(reps * sizeof *t);
    for (int r = -1; t && !rc && r < reps; r++) {
      double t0 = bench_now_ns();
      for (int k = 0; !rc && k < inner; k++) rc = htpu_graph_execute(m.g, &io.in, 1, &io.out, 1, NULL);
      if (r >= 0) t[r] = (bench_now_ns() - t0) / inner / 1e3;
    }
    if (t && !rc) {
      res->digits_c_us = bench_stat_of(t, reps);
      printf(" digits through htpu_graph_execute, f32 in and out, wall time per call: %.2f µs "
             "(min %.2f)\n", res->digits_c_us.med, res->digits_c_us.min);
    }
    free(t);
    f32_io_free(&io);
  }
  model_close(&m);
}

/* ---- 4 callers on one graph ---------------------------------------------------------------- */

typedef struct caller {
  htpu_graph *g;
  int calls;
  int rc;
  double exec_ns; /* graphExecute time of its calls, summed */
} caller;

static void *caller_main(void *arg) {
  caller *c = arg;
  f32_io io;
  if (f32_io_make(c->g, &io) != 0) {
    c->rc = -1;
    return NULL;
  }
  for (int i = 0; !c->rc && i < c->calls; i++) {
    htpu_exec_stats s;
    c->rc = htpu_graph_execute(c->g, &io.in, 1, &io.out, 1, &s);
    c->exec_ns += (double)s.execute_ns;
  }
  f32_io_free(&io);
  return NULL;
}

static int set_latency(const bench_config *cfg, unsigned us) {
  char be[1024];
  lib_path(be, sizeof be, cfg, "libhtpu_refbackend.so");
  void *h = dlopen(be, RTLD_NOW | RTLD_NOLOAD);
  int (*f)(const char *, unsigned) = h ? (int (*)(const char *, unsigned))dlsym(h, "htpu_ref_set_latency") : NULL;
  int rc = f ? f("graphExecute", us) : -1;
  if (h) dlclose(h);
  return rc;
}

void bench_callers(const bench_config *cfg, bench_results *res) {
  enum { CALLERS = 4 };
  char mnet[1024];
  snprintf(mnet, sizeof mnet, "%s/bench-models/mobilenet_io.bin", cfg->build_dir);
  model m;
  if (model_open(cfg, mnet, 1, &m) != 0 || set_latency(cfg, MNET_LATENCY_US) != 0) {
    printf("  4 callers: could not open the model or set the reference backend's latency\n");
    model_close(&m);
    return;
  }
  int rounds = cfg->quick ? 2 : 5, per_caller = cfg->quick ? 25 : 150;
  printf("\n== %d callers on one graph, MobileNet-v2 I/O as f32, %u µs execute injected "
         "(reference backend), %d calls each, %d rounds ==\n"
         "  calls/s against 1 / the execute time graphExecute took in the same run (the injected "
         "sleep overshoots by more when the machine is loaded), and against what it took alone "
         "just before\n",
         CALLERS, MNET_LATENCY_US, per_caller, rounds);
  double *ratio = malloc(rounds * sizeof *ratio), *cps = malloc(rounds * sizeof *cps);
  double *solo = malloc(rounds * sizeof *solo), *gap = malloc(rounds * sizeof *gap);
  int failed = !ratio || !cps || !solo || !gap;
  for (int r = 0; !failed && r < rounds; r++) {
    /* the execute time as one caller sees it (the injected sleep plus its overshoot) */
    f32_io io;
    if (f32_io_make(m.g, &io) != 0) break;
    enum { SOLO = 40 };
    double ex[SOLO];
    for (int i = 0; !failed && i < SOLO; i++) {
      htpu_exec_stats s;
      failed = htpu_graph_execute(m.g, &io.in, 1, &io.out, 1, &s) != 0;
      ex[i] = (double)s.execute_ns;
    }
    f32_io_free(&io);
    double exec_ns = bench_median(ex, SOLO);
    caller c[CALLERS];
    pthread_t th[CALLERS];
    int made[CALLERS];
    double t0 = bench_now_ns();
    for (int i = 0; i < CALLERS; i++) {
      c[i] = (caller){m.g, per_caller, 0, 0};
      made[i] = pthread_create(&th[i], NULL, caller_main, &c[i]) == 0;
      if (!made[i]) c[i].rc = -1;
    }
    for (int i = 0; i < CALLERS; i++)
      if (made[i]) pthread_join(th[i], NULL);
    double wall = bench_now_ns() - t0;
    double busy = 0;
    for (int i = 0; i < CALLERS; i++) {
      failed |= c[i].rc != 0;
      busy += c[i].exec_ns;
    }
    if (failed) break;
    int calls = CALLERS * per_caller;
    cps[r] = calls / (wall / 1e9);
    ratio[r] = cps[r] * (busy / calls) / 1e9; /* = the graph's busy fraction */
    solo[r] = cps[r] * exec_ns / 1e9;
    gap[r] = (wall - busy) / calls / 1e3;
    /* where the rest goes: graphExecute itself taking longer than alone, or the gaps between
     * one execute and the next (the hand-over of the graph's lock, whatever runs under it) */
    printf("  round %d: %.1f calls/s; execute %.0f µs in the run: %.3fx of 1 / execute; "
           "%.0f µs alone: %.3fx; %.0f µs between executes\n",
           r + 1, cps[r], busy / calls / 1e3, ratio[r], exec_ns / 1e3, solo[r], gap[r]);
    res->callers4_exec_us = busy / calls / 1e3;
  }
  if (failed) {
    printf("  4 callers: an execute failed: %s\n", htpu_last_error());
  } else {
    res->callers4_calls_per_s = bench_median(cps, rounds);
    res->callers4 = bench_stat_of(ratio, rounds);
    res->callers4_solo = bench_stat_of(solo, rounds);
    res->callers4_gap_us = bench_median(gap, rounds);
  }
  free(ratio);
  free(cps);
  free(solo);
  free(gap);
  set_latency(cfg, 0);
  model_close(&m);
}
