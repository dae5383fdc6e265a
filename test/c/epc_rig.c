/* epc_rig.c - see epc_rig.h. */
#include "epc_rig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "test.h"

char epc_msg[4096];

static const uint8_t *cached(const char *text, uint8_t **slot, size_t *slot_len, size_t *len) {
  if (!*slot) *slot = fx_build_model(text, slot_len);
  *len = *slot_len;
  return *slot;
}

const uint8_t *epc_add_bin(size_t *len) {
  static uint8_t *bin;
  static size_t n;
  return cached(FX_ADD_F32, &bin, &n, len);
}

const uint8_t *epc_add_two_bin(size_t *len) {
  static uint8_t *bin;
  static size_t n;
  static const char *text =
      "graph add_two\n"
      "  input a f32 [1,4]\n"
      "  input b f32 [1,4]\n"
      "  output y f32 [1,4]\n"
      "  op ElementWiseAdd a b -> y\n";
  return cached(text, &bin, &n, len);
}

int epc_write(const char *path, const ob_model *m) {
  size_t n = 0;
  uint8_t *b = ob_build(m, &n);
  int rc = test_write_file(path, b, n);
  free(b);
  return rc;
}

static int keep(int rc) {
  snprintf(epc_msg, sizeof epc_msg, "%s", rc ? htpu_last_error() : "");
  return rc;
}

int epc_inspect_buffer(const uint8_t *bytes, size_t len, htpu_model_info **out) {
  return keep(htpu_inspect_buffer(test_build_path("libhtpu_refsystem.so"), bytes, len, out));
}

int epc_inspect_file(const char *path, uint32_t index, htpu_model_info **out) {
  return keep(htpu_inspect_file_context(test_build_path("libhtpu_refsystem.so"), path, index,
                                        out));
}

int epc_load_and_run(const char *path, const char *graph, const char *run) {
  htpu_runtime *rt = fx_open_runtime();
  if (!rt) return -1;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.graph = graph;
  int rc = htpu_context_open_file_ex(rt, path, &lo, &ctx);
  if (!rc) rc = htpu_graph_open(ctx, run ? run : "add_f32", &g);
  float y[4] = {0};
  if (!rc) rc = fx_add(g, 5.0f, NULL, NULL, y);
  keep(rc);
  if (!rc && !(y[0] == 15.0f && y[1] == 22.0f && y[2] == 33.0f && y[3] == 44.0f)) {
    snprintf(epc_msg, sizeof epc_msg, "wrong answer %g %g %g %g", y[0], y[1], y[2], y[3]);
    rc = -2;
  }
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  return rc;
}
