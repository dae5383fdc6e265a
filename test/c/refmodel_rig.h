/* refmodel_rig.h - what the reference-model tests (test_refmodel_*.c) share: building text
 * into a binary or a parsed model, running a graph, the last error message, comparisons of
 * outputs, and the two-graph model the builder and the command both read. */
#ifndef HTPU_TEST_REFMODEL_RIG_H
#define HTPU_TEST_REFMODEL_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "refmodel.h"
#include "test.h"

/* The message of the last failing build, parse or run below. */
extern char g_err[1024];

/* Builds text into a binary (caller frees) or NULL with the message in g_err. */
void *build_bin(const char *text, size_t *len);
/* Builds and parses; the binary is freed right away (the model keeps its own copy). */
ref_model *build_model(const char *text);
/* Runs graph `name` with one input and one output, or two inputs and one output. */
int run1(const ref_model *m, const char *name, const void *in, void *out);
int run2(const ref_model *m, const char *name, const void *a, const void *b, void *out);

/* Index of the first element that differs by more than tol, or -1. */
int first_diff_f32(const float *got, const float *want, size_t n, float tol);

#define CHECK_F32S(got, want, n, tol)                                                        \
  do {                                                                                       \
    int d_ = first_diff_f32((got), (want), (n), (tol));                                      \
    CHECK_MSG(d_ < 0, "element %d: got %.9g, want %.9g", d_, (double)(got)[d_ < 0 ? 0 : d_], \
              (double)(want)[d_ < 0 ? 0 : d_]);                                              \
  } while (0)

#define CHECK_BYTES(got, want, n)                                                         \
  do {                                                                                    \
    for (size_t i_ = 0; i_ < (n); i_++)                                                   \
      CHECK_MSG((got)[i_] == (want)[i_], "element %zu: got %lld, want %lld", i_,          \
                (long long)(got)[i_], (long long)(want)[i_]);                             \
  } while (0)

/* Two graphs: add_f32 (y = a + b, f32 [1,4]) and mlp (FullyConnected then Relu), with every
 * meta key set; names repeat across the graphs, ids do not. */
extern const char *const k_two_graphs;

#endif
