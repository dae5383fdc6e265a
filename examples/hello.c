/*
 * hello.c - the smallest complete use of the C API: open a runtime, load a context binary,
 * run each graph once with f32 data (quantized and dequantized for you), print the results.
 *
 *   hello BACKEND_LIB SYSTEM_LIB MODEL.bin
 */
#include <stdio.h>
#include <stdlib.h>

#include "hexagon_tpu.h"

static int run_graph(htpu_context *ctx, const htpu_graph_info *gi) {
  htpu_graph *g = NULL;
  int rc = htpu_graph_open(ctx, gi->name, &g);
  if (rc) return rc;
  htpu_io *in = calloc(gi->num_inputs, sizeof *in);
  htpu_io *out = calloc(gi->num_outputs, sizeof *out);
  for (uint32_t i = 0; in && i < gi->num_inputs; i++) {
    size_t n = gi->inputs[i].num_elements;
    float *x = malloc(n * sizeof *x);
    for (size_t k = 0; x && k < n; k++) x[k] = 0.5f * (float)(k + 1);
    in[i] = (htpu_io){x, n * sizeof *x, HTPU_F32};
  }
  for (uint32_t i = 0; out && i < gi->num_outputs; i++) {
    size_t n = gi->outputs[i].num_elements;
    out[i] = (htpu_io){malloc(n * sizeof(float)), n * sizeof(float), HTPU_F32};
  }
  htpu_exec_stats st;
  rc = (in && out) ? htpu_graph_execute(g, in, gi->num_inputs, out, gi->num_outputs, &st)
                   : HTPU_ENOMEM;
  if (rc == 0) {
    for (uint32_t i = 0; i < gi->num_outputs; i++) {
      const float *y = out[i].data;
      printf("%s -> %s =", gi->name, gi->outputs[i].name);
      for (size_t k = 0; k < gi->outputs[i].num_elements && k < 8; k++) printf(" %g", y[k]);
      printf("   (graphExecute %llu ns, whole call %llu ns)\n",
             (unsigned long long)st.execute_ns, (unsigned long long)st.total_ns);
    }
  }
  for (uint32_t i = 0; in && i < gi->num_inputs; i++) free(in[i].data);
  for (uint32_t i = 0; out && i < gi->num_outputs; i++) free(out[i].data);
  free(in);
  free(out);
  htpu_graph_close(&g);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s BACKEND_LIB SYSTEM_LIB MODEL.bin\n", argv[0]);
    return 2;
  }
  htpu_runtime_options ro;
  htpu_runtime_options_init(&ro);
  ro.backend_lib = argv[1];
  ro.system_lib = argv[2];
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  int rc = htpu_runtime_open(&ro, &rt);
  if (rc == 0) rc = htpu_context_open_file(rt, argv[3], &ctx);
  const htpu_model_info *info = rc == 0 ? htpu_context_model_info(ctx) : NULL;
  for (uint32_t i = 0; info && rc == 0 && i < info->num_graphs; i++)
    rc = run_graph(ctx, &info->graphs[i]);
  if (rc) fprintf(stderr, "%s: %s\n", htpu_err_name(rc), htpu_last_error());
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  return rc ? 1 : 0;
}
