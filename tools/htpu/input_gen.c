/* input_gen.c - deterministic input data for `htpu bench` (see inputs.h).
 *
 * Values are f32, so the benchmark exercises the quantize path a real caller uses, and spread
 * over what the tensor can represent: for a quantized tensor [(qmin - zp) * scale,
 * (qmax - zp) * scale] of its storage type (per channel for per-axis tensors), so no value
 * saturates and every quantization level can occur. Plain floats get [-1, 1]; plain integers
 * small non-negative whole numbers (0..min(127, type max)), which stay valid as indices or
 * counts; bool8 0 and 1. The generator is splitmix64 with a fixed seed: the same model gets the
 * same data on every run and every machine. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "inputs.h"

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* uniform in [0, 1) with 53 random bits */
static double uniform01(uint64_t *state) { return (double)(splitmix64(state) >> 11) * 0x1p-53; }

/* The storage type's integer range; 0 for types that are not integers. */
static int int_range(htpu_dtype t, double *lo, double *hi) {
  switch (t) {
  case HTPU_U8: *lo = 0; *hi = 255; return 1;
  case HTPU_I8: *lo = -128; *hi = 127; return 1;
  case HTPU_U16: *lo = 0; *hi = 65535; return 1;
  case HTPU_I16: *lo = -32768; *hi = 32767; return 1;
  case HTPU_U32: *lo = 0; *hi = 4294967295.0; return 1;
  case HTPU_I32: *lo = -2147483648.0; *hi = 2147483647.0; return 1;
  case HTPU_U64: *lo = 0; *hi = 18446744073709551615.0; return 1;
  case HTPU_I64: *lo = -9223372036854775808.0; *hi = 9223372036854775807.0; return 1;
  case HTPU_BOOL8: *lo = 0; *hi = 1; return 1;
  default: return 0;
  }
}

/* Real-value range of element i. */
static void element_range(const htpu_tensor_info *t, size_t i, size_t inner, double *lo,
                          double *hi) {
  double qlo, qhi;
  const htpu_quant *q = &t->quant;
  if (!int_range(t->dtype, &qlo, &qhi)) {
    *lo = -1.0;
    *hi = 1.0;
    return;
  }
  double scale, zp;
  if (q->kind == HTPU_QUANT_PER_TENSOR) {
    scale = q->scale;
    zp = q->zero_point;
  } else if (q->kind == HTPU_QUANT_PER_AXIS && q->scales && q->zero_points &&
             q->num_channels) {
    size_t c = (i / inner) % q->num_channels;
    scale = q->scales[c];
    zp = q->zero_points[c];
  } else {
    *lo = qlo;
    *hi = qhi < 127 ? qhi : 127;
    if (*lo < 0) *lo = 0;
    return;
  }
  *lo = (qlo - zp) * scale;
  *hi = (qhi - zp) * scale;
}

static void fill(const htpu_tensor_info *t, float *x, uint64_t seed) {
  uint64_t state = seed;
  /* elements per step along a per-axis tensor's axis: the product of the later dims */
  size_t inner = 1;
  if (t->quant.kind == HTPU_QUANT_PER_AXIS && t->quant.axis >= 0)
    for (uint32_t d = (uint32_t)t->quant.axis + 1; d < t->rank && d < HTPU_MAX_RANK; d++)
      inner *= t->dims[d];
  if (inner == 0) inner = 1;
  int plain_int = t->quant.kind == HTPU_QUANT_NONE && t->dtype != HTPU_F32 &&
                  t->dtype != HTPU_F16;
  for (size_t i = 0; i < t->num_elements; i++) {
    double lo, hi;
    element_range(t, i, inner, &lo, &hi);
    double v = lo + (hi - lo) * uniform01(&state);
    if (plain_int) v = floor(v + 0.5);
    /* a huge scale times a wide type's range can leave float's range, and converting such a
     * double to float is undefined (C11 6.3.1.5); saturating is what quantization does anyway */
    if (v > FLT_MAX) v = FLT_MAX;
    if (v < -FLT_MAX) v = -FLT_MAX;
    x[i] = (float)v;
  }
}

int cli_inputs_generate(const cli_command *cmd, cli_inputs *in, uint64_t seed) {
  for (uint32_t i = 0; i < in->count; i++) {
    cli_input *it = &in->items[i];
    if (it->source != CLI_INPUT_UNBOUND || it->path) continue;
    size_t n = it->tensor->num_elements;
    float *x = malloc(n ? n * sizeof(float) : 1);
    if (!x) return cli_fail(cmd, "out of memory generating input '%s'", it->tensor->name);
    /* one stream per input, so adding an input does not change the others' data */
    fill(it->tensor, x, seed ^ (0x9E3779B97F4A7C15ull * (i + 1)));
    it->data = x;
    it->size = n * sizeof(float);
    it->dtype = HTPU_F32;
    it->source = CLI_INPUT_GENERATED;
  }
  return CLI_EXIT_OK;
}
