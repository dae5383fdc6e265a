/* summary.c - min/max/mean/argmax and the first values of an output tensor (see stats.h). */
#include <math.h>
#include <string.h>

#include "stats.h"

double cli_value_at(htpu_dtype dtype, const void *data, size_t i) {
  /* memcpy: the buffer is only as aligned as malloc made its start */
  switch (dtype) {
#define AT(T)                                                                                    \
  do {                                                                                           \
    T x_;                                                                                        \
    memcpy(&x_, (const unsigned char *)data + i * sizeof(T), sizeof(T));                         \
    return (double)x_;                                                                           \
  } while (0)
  case HTPU_F32: AT(float);
  case HTPU_U8: AT(uint8_t);
  case HTPU_I8: AT(int8_t);
  case HTPU_U16: AT(uint16_t);
  case HTPU_I16: AT(int16_t);
  case HTPU_U32: AT(uint32_t);
  case HTPU_I32: AT(int32_t);
  case HTPU_U64: AT(uint64_t);
  case HTPU_I64: AT(int64_t);
  case HTPU_BOOL8: AT(uint8_t);
#undef AT
  case HTPU_F16: {
    uint16_t h;
    memcpy(&h, (const unsigned char *)data + i * 2, 2);
    return (double)htpu_f16_to_f32(h);
  }
  default: return NAN;
  }
}

void cli_summarize(htpu_dtype dtype, const void *data, size_t n, const uint32_t *dims,
                   uint32_t rank, cli_value_summary *out) {
  memset(out, 0, sizeof(*out));
  out->count = n;
  /* argmax only means something for a vector: [1000], [1,1000], [1,1,1,1000] */
  uint32_t big = 0;
  for (uint32_t d = 0; d < rank; d++) big += dims[d] > 1;
  out->has_argmax = big <= 1;
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    double v = cli_value_at(dtype, data, i);
    if (i < CLI_SUMMARY_FIRST) out->first[out->num_first++] = v;
    if (isnan(v)) {
      out->nan_count++;
      continue;
    }
    if (out->counted == 0 || v < out->min) out->min = v;
    if (out->counted == 0 || v > out->max) {
      out->max = v;
      out->argmax = i;
    }
    out->counted++;
    sum += v;
  }
  if (out->counted == 0) {
    out->min = out->max = out->mean = NAN;
    out->has_argmax = 0;
  } else {
    out->mean = sum / (double)out->counted;
  }
}
