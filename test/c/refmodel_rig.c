/* refmodel_rig.c - what the reference-model tests share (refmodel_rig.h). */
#include "refmodel_rig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char g_err[1024];

/* Builds text into a binary (caller frees) or NULL with the message in g_err. */
void *build_bin(const char *text, size_t *len) {
  void *bin = NULL;
  g_err[0] = '\0';
  if (ref_build_from_text(text, &bin, len, g_err, sizeof g_err) != 0) return NULL;
  return bin;
}

/* Builds and parses; the binary is freed right away (the model keeps its own copy). */
ref_model *build_model(const char *text) {
  size_t len;
  void *bin = build_bin(text, &len);
  if (!bin) return NULL;
  ref_model *m = NULL;
  if (ref_model_parse(bin, len, &m, g_err, sizeof g_err) != 0) m = NULL;
  memset(bin, 0xAB, len); /* the model must not point into the caller's buffer */
  free(bin);
  return m;
}

/* Runs graph `name` with one input and one output. */
int run1(const ref_model *m, const char *name, const void *in, void *out) {
  int g = ref_model_find_graph(m, name);
  if (g < 0) {
    snprintf(g_err, sizeof g_err, "no graph %s", name);
    return -1;
  }
  const void *ins[1] = {in};
  void *outs[1] = {out};
  return ref_graph_run(m, (uint32_t)g, ins, outs, g_err, sizeof g_err);
}

int run2(const ref_model *m, const char *name, const void *a, const void *b, void *out) {
  int g = ref_model_find_graph(m, name);
  if (g < 0) return -1;
  const void *ins[2] = {a, b};
  void *outs[1] = {out};
  return ref_graph_run(m, (uint32_t)g, ins, outs, g_err, sizeof g_err);
}

static int near(float a, float b, float tol) { return fabsf(a - b) <= tol; }

/* Index of the first element that differs by more than tol, or -1. */
int first_diff_f32(const float *got, const float *want, size_t n, float tol) {
  for (size_t i = 0; i < n; i++)
    if (!near(got[i], want[i], tol)) return (int)i;
  return -1;
}

const char *const k_two_graphs =
    "# two graphs; names repeat across graphs, ids do not\n"
    "meta binary_info=2 graph_info=1 tensor=1 backend_id=6 build_id=\"v2.42.0-ref\"\n"
    "meta core_api=2.29.0 backend_api=5.42.1 context_blob=3.1.0 soc_model=35 dsp_arch=68 "
    "vtcm_bytes=4194304 soc_version=\"v68\"\n"
    "graph add_f32\n"
    "  input  a f32 [1,4]\n"
    "  input  b f32 [1,4]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "\n"
    "graph mlp\n"
    "  input  a f32 [1,2]\n"
    "  static w f32 [2,2] data=[1, -1,\n"
    "                           2, 0.5]  # wraps onto a second line\n"
    "  static bias f32 [2] data=[0.5, -10]\n"
    "  native h f32 [1,2]\n"
    "  output y f32 [1,2]\n"
    "  op FullyConnected a w bias -> h name=fc1\n"
    "  op Relu h -> y\n";
