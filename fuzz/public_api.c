/*
 * public_api.c - libFuzzer target for the public path a context binary takes through the C
 * API (include/hexagon_tpu.h): htpu_inspect_buffer, htpu_context_open_buffer, htpu_graph_open
 * and htpu_graph_execute, against the reference backend (reference/), whose model reader,
 * validator and interpreter run inside the libraries the core dlopens.
 *
 * One runtime is opened at start-up on libhtpu_refbackend.so / libhtpu_refsystem.so /
 * libhtpu_refcdsprpc.so from the directory of this executable (build/fuzz, built with the same
 * sanitizers and coverage), or from $HTPU_FUZZ_LIB_DIR. Per input:
 *  - inspect it; open it as a context; open every graph by name (and by NULL, which must work
 *    for exactly one graph and be HTPU_EINVAL for several);
 *  - execute each graph twice with zero-filled inputs: in its own types through a shared
 *    buffer from htpu_graph_alloc_io, and as f32 (quantized and dequantized by the core);
 *    a graph the backend accepted at load must run, unless its arithmetic makes a NaN that a
 *    quantized tensor cannot hold (weights and scales the input chose can overflow), the one
 *    failure the reference interpreter has at run time besides running out of memory;
 *  - close everything, then abort() unless the live context, graph and shared-buffer counters
 *    (htpu_stats_get) are back at their values from before the first input and no execute is
 *    in flight or waiting: a handle kept alive by a failure path is a leak libFuzzer reports.
 *
 * Memory per input stays small: HTPU_REF_MAX_ACTIVATION_BYTES (unless set) is 256 KiB, so a
 * graph's non-static tensors (all the core and the interpreter allocate per execute) fit in it,
 * and the rest scales with the input (-max_len in mk/fuzz.mk).
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "hexagon_tpu.h"

static htpu_runtime *rt;
static htpu_stats baseline;
static char system_lib[PATH_MAX];

static void lib_path(char *out, const char *dir, const char *name) {
  int w = snprintf(out, PATH_MAX, "%s/%s", dir, name);
  FUZZ_CHECK(w > 0 && w < PATH_MAX, "library path too long");
}

static void close_runtime(void) { htpu_runtime_close(&rt); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("HTPU_REF_MAX_ACTIVATION_BYTES", "262144", 0);
  char dir[PATH_MAX];
  const char *env = getenv("HTPU_FUZZ_LIB_DIR");
  if (env && *env) {
    snprintf(dir, sizeof dir, "%s", env);
  } else {
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    FUZZ_CHECK(n > 0, "cannot read /proc/self/exe");
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
  }
  static char backend[PATH_MAX], fastrpc[PATH_MAX];
  lib_path(backend, dir, "libhtpu_refbackend.so");
  lib_path(system_lib, dir, "libhtpu_refsystem.so");
  lib_path(fastrpc, dir, "libhtpu_refcdsprpc.so");

  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.backend_lib = backend;
  o.system_lib = system_lib;
  o.fastrpc_lib = fastrpc;
  o.log_level = 1;
  int rc = htpu_runtime_open(&o, &rt);
  FUZZ_CHECK(rc == 0, "htpu_runtime_open(%s): %s: %s", backend, htpu_err_name(rc),
             htpu_last_error());
  htpu_stats_get(&baseline);
  atexit(close_runtime); /* the backend counts handles still alive at unload */
  return 0;
}

static void check_inspect(const htpu_model_info *mi) {
  FUZZ_CHECK(mi->build_id && mi->soc_version, "model info strings missing");
  for (uint32_t g = 0; g < mi->num_graphs; g++) {
    const htpu_graph_info *gi = &mi->graphs[g];
    FUZZ_CHECK(gi->name != NULL, "graph %u has no name", g);
    const htpu_tensor_info *lists[2] = {gi->inputs, gi->outputs};
    uint32_t counts[2] = {gi->num_inputs, gi->num_outputs};
    for (int l = 0; l < 2; l++)
      for (uint32_t i = 0; i < counts[l]; i++) {
        const htpu_tensor_info *t = &lists[l][i];
        FUZZ_CHECK(t->name && t->rank <= HTPU_MAX_RANK, "graph %u tensor %u malformed", g, i);
        FUZZ_CHECK(t->byte_size == t->num_elements * htpu_dtype_size(t->dtype),
                   "graph %u tensor '%s': %zu bytes for %zu elements of %s", g, t->name,
                   t->byte_size, t->num_elements, htpu_dtype_name(t->dtype));
      }
  }
}

static void check_execute(int rc, const htpu_graph_info *gi, const char *how) {
  if (rc == HTPU_EQNN && strstr(htpu_last_error(), " is NaN, which ")) return;
  FUZZ_CHECK(rc == 0, "graph '%s': %s execute: %s: %s", gi->name, how, htpu_err_name(rc),
             htpu_last_error());
}

/* In the graph's own types, through one shared buffer. */
static void execute_native(htpu_graph *g, const htpu_graph_info *gi, htpu_io *in, htpu_io *out) {
  htpu_shared *buf = NULL;
  int rc = htpu_graph_alloc_io(g, in, out, &buf);
  FUZZ_CHECK(rc == 0, "graph '%s': htpu_graph_alloc_io: %s: %s", gi->name, htpu_err_name(rc),
             htpu_last_error());
  memset(htpu_shared_data(buf), 0, htpu_shared_size(buf));
  check_execute(htpu_graph_execute(g, in, gi->num_inputs, out, gi->num_outputs, NULL), gi,
                "native");
  htpu_shared_free(&buf);
}

/* Everything as f32: the core quantizes the zeros and dequantizes the results. */
static void execute_f32(htpu_graph *g, const htpu_graph_info *gi, htpu_io *in, htpu_io *out) {
  uint32_t n = gi->num_inputs + gi->num_outputs;
  for (uint32_t i = 0; i < n; i++) {
    int is_in = i < gi->num_inputs;
    const htpu_tensor_info *t = is_in ? &gi->inputs[i] : &gi->outputs[i - gi->num_inputs];
    void *p = calloc(t->num_elements ? t->num_elements : 1, sizeof(float));
    FUZZ_CHECK(p != NULL, "out of memory for %zu floats", t->num_elements);
    htpu_io *io = is_in ? &in[i] : &out[i - gi->num_inputs];
    *io = (htpu_io){p, t->num_elements * sizeof(float), HTPU_F32};
  }
  check_execute(htpu_graph_execute(g, in, gi->num_inputs, out, gi->num_outputs, NULL), gi,
                "f32");
  for (uint32_t i = 0; i < gi->num_inputs; i++) free(in[i].data);
  for (uint32_t i = 0; i < gi->num_outputs; i++) free(out[i].data);
}

static void run_context(htpu_context *ctx) {
  const htpu_model_info *mi = htpu_context_model_info(ctx);
  FUZZ_CHECK(mi != NULL, "an open context has no model info");
  check_inspect(mi);

  htpu_graph *only = NULL;
  int rc = htpu_graph_open(ctx, NULL, &only);
  if (mi->num_graphs == 1)
    FUZZ_CHECK(rc == 0, "the only graph does not open by NULL: %s: %s", htpu_err_name(rc),
               htpu_last_error());
  else if (mi->num_graphs > 1)
    FUZZ_CHECK(rc == HTPU_EINVAL, "NULL name with %u graphs gave %s", mi->num_graphs,
               htpu_err_name(rc));
  htpu_graph_close(&only);

  for (uint32_t i = 0; i < mi->num_graphs; i++) {
    htpu_graph *g = NULL;
    rc = htpu_graph_open(ctx, mi->graphs[i].name, &g);
    FUZZ_CHECK(rc == 0, "graph '%s' of the model info does not open: %s: %s",
               mi->graphs[i].name, htpu_err_name(rc), htpu_last_error());
    const htpu_graph_info *gi = htpu_graph_get_info(g);
    FUZZ_CHECK(gi != NULL && strcmp(gi->name, mi->graphs[i].name) == 0,
               "graph '%s' opened as another", mi->graphs[i].name);
    htpu_io *in = calloc(gi->num_inputs + 1u, sizeof *in);
    htpu_io *out = calloc(gi->num_outputs + 1u, sizeof *out);
    FUZZ_CHECK(in && out, "out of memory for %u + %u buffers", gi->num_inputs, gi->num_outputs);
    execute_native(g, gi, in, out);
    execute_f32(g, gi, in, out);
    free(in);
    free(out);
    htpu_graph_close(&g);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  htpu_model_info *info = NULL;
  int inspected = htpu_inspect_buffer(system_lib, data, size, &info);
  if (inspected == 0) {
    check_inspect(info);
    htpu_model_info_free(info);
  } else {
    FUZZ_CHECK(info == NULL && htpu_last_error()[0] != '\0',
               "failed inspect (%s) left info or no message", htpu_err_name(inspected));
  }

  htpu_context *ctx = NULL;
  int rc = htpu_context_open_buffer(rt, data, size, &ctx);
  if (rc == 0) {
    FUZZ_CHECK(inspected == 0, "a binary that does not inspect (%s) opened",
               htpu_err_name(inspected));
    run_context(ctx);
    htpu_context_close(&ctx);
  } else {
    FUZZ_CHECK(ctx == NULL && htpu_last_error()[0] != '\0',
               "failed open (%s) left a context or no message", htpu_err_name(rc));
  }

  htpu_stats now;
  htpu_stats_get(&now);
  if (now.live_contexts != baseline.live_contexts || now.live_graphs != baseline.live_graphs ||
      now.live_shared_buffers != baseline.live_shared_buffers ||
      now.live_runtimes != baseline.live_runtimes || now.executes_in_flight != 0 ||
      now.executes_waiting != 0) {
    fprintf(stderr,
            "live counters not back at baseline: runtimes %llu/%llu contexts %llu/%llu graphs "
            "%llu/%llu shared buffers %llu/%llu, in flight %llu, waiting %llu\n",
            (unsigned long long)now.live_runtimes, (unsigned long long)baseline.live_runtimes,
            (unsigned long long)now.live_contexts, (unsigned long long)baseline.live_contexts,
            (unsigned long long)now.live_graphs, (unsigned long long)baseline.live_graphs,
            (unsigned long long)now.live_shared_buffers,
            (unsigned long long)baseline.live_shared_buffers,
            (unsigned long long)now.executes_in_flight, (unsigned long long)now.executes_waiting);
    abort();
  }
  return 0;
}
