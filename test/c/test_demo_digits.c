/* The digits demo model through the library: its held-out accuracy is deterministic on the
 * reference backend, so any change in quantization or kernels that moves one prediction fails
 * here (models/digits/README.md has the numbers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

#define DIGITS_DIR "models/digits/"

static void *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = n > 0 ? malloc((size_t)n) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = buf ? (size_t)n : 0;
  return buf;
}

TEST(demo_digits_accuracy_is_exactly_reproduced) {
  fx_reset_env();
  size_t nx = 0, ny = 0, np = 0;
  float *x = slurp(DIGITS_DIR "test_x.f32", &nx);
  uint8_t *labels = slurp(DIGITS_DIR "test_y.u8", &ny);
  uint8_t *float_pred = slurp(DIGITS_DIR "float_pred.u8", &np);
  htpu_runtime *rt = fx_open_runtime();
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  int ok = x && labels && float_pred && rt && ny == np && nx == ny * 64 * sizeof(float) &&
           htpu_context_open_file(rt, DIGITS_DIR "digits.bin", &ctx) == 0 &&
           htpu_graph_open(ctx, "digits", &g) == 0;
  size_t correct = 0, agree = 0;
  for (size_t i = 0; ok && i < ny; i++) {
    float logits[10];
    htpu_io in = {x + i * 64, 64 * sizeof(float), HTPU_F32};
    htpu_io out = {logits, sizeof logits, HTPU_F32};
    if (htpu_graph_execute(g, &in, 1, &out, 1, NULL) != 0) {
      ok = 0;
      break;
    }
    int best = 0;
    for (int k = 1; k < 10; k++)
      if (logits[k] > logits[best]) best = k;
    correct += best == labels[i];
    agree += best == float_pred[i];
  }
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  free(x);
  free(labels);
  free(float_pred);
  CHECK_MSG(ok, "could not run the digits model: %s", htpu_last_error());
  CHECK_EQ(ny, 539);
  CHECK_EQ(correct, 523); /* 97.03 %, equal to the float model */
  CHECK_EQ(agree, 539);
}
