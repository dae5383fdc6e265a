/*
 * quantize.c - libFuzzer target for the public quantization helpers, htpu_quantize and
 * htpu_dequantize (src/quant.c), the kernels every f32 execute goes through.
 *
 * The input describes a tensor, then its floats:
 *   byte 0     dtype: u8 i8 u16 i16 u32 i32 f16 (modulo 7)
 *   byte 1     bits 0-1 kind (none, per tensor, per axis; f16 is always none), bit 2 keep the
 *              scales as given (else made finite and > 0), bit 3 bring zero points into the
 *              type's range, bit 4 floats are small multiples of scale/2 (ties), not raw bits,
 *              bit 5 the floats' NaNs become 0 and one NaN goes at the index the first two
 *              float bytes give (modulo the element count), wherever the kernel's blocks end
 *   byte 2     rank 1..4 (bits 0-1), axis (bits 2-3, modulo rank)
 *   bytes 3..  one byte per dim (1..8, so at most 4096 elements)
 *   then       per tensor: scale (f32) and zero point (i32); per axis: that for each channel
 *   the rest   the floats, little-endian, reused cyclically when there are fewer than elements
 *
 * What is checked is what include/hexagon_tpu.h and src/quant.h promise, computed here
 * independently in long double (wide enough that every comparison below is exact):
 *  - scales that are not finite and > 0 are refused by both functions with HTPU_EINVAL, and
 *    nothing else is;
 *  - a NaN anywhere gives HTPU_ENAN naming the first NaN's index;
 *  - otherwise q = round_half_even(x / scale) + zero_point saturated to the type: q is lo for
 *    x at or below (lo - zp) * scale (-Inf included), hi at or above (hi - zp) * scale (+Inf
 *    included), else |(q - zp) * scale - x| <= scale / 2 with an even q - zp on a tie;
 *  - f16: the nearest f16 (ties to even), +-65504 from there on and for +-Inf, sign kept;
 *  - dequantize, of the quantized values and of the input bytes taken as raw elements, gives
 *    (q - zp) * scale rounded once to f32, or within one ulp of it once |q - zp| >= 2^29 (a
 *    32-bit type, or a zero point that far from the type's range), where src/quant.c's
 *    double product has more than 53 bits and may round twice.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "hexagon_tpu.h"

_Static_assert(LDBL_MANT_DIG >= 64, "the exact comparisons need a 64-bit long double mantissa");

#define MAX_ELEMS 4096

static const htpu_dtype DTYPES[] = {HTPU_U8, HTPU_I8, HTPU_U16, HTPU_I16,
                                    HTPU_U32, HTPU_I32, HTPU_F16};

typedef struct range {
  int64_t lo, hi;
} range;

static range range_of(htpu_dtype t) {
  switch (t) {
    case HTPU_U8: return (range){0, 255};
    case HTPU_I8: return (range){-128, 127};
    case HTPU_U16: return (range){0, 65535};
    case HTPU_I16: return (range){-32768, 32767};
    case HTPU_U32: return (range){0, 4294967295LL};
    default: return (range){INT32_MIN, INT32_MAX};
  }
}

static int64_t load_q(htpu_dtype t, const void *buf, size_t i) {
  const unsigned char *p = (const unsigned char *)buf + i * htpu_dtype_size(t);
  switch (t) {
    case HTPU_U8: return *p;
    case HTPU_I8: return (int8_t)*p;
    case HTPU_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case HTPU_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case HTPU_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { int32_t v; memcpy(&v, p, 4); return v; }
  }
}

static float f32_at(const uint8_t *p) {
  float f;
  memcpy(&f, p, sizeof f);
  return f;
}

static int32_t i32_at(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* The value of f16 bits, decoded without the library: NaN for NaN. */
static long double f16_value(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  long double v;
  if (e == 31) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexpl((long double)m, -24);
  else v = ldexpl((long double)(m | 0x400), e - 25);
  return sign ? -v : v;
}

typedef struct tensor {
  htpu_tensor_info info;
  float scales[8];
  int32_t zps[8];
  size_t inner; /* elements per channel run along the axis */
} tensor;

static double scale_of(const tensor *t, size_t i) {
  switch (t->info.quant.kind) {
    case HTPU_QUANT_PER_TENSOR: return t->info.quant.scale;
    case HTPU_QUANT_PER_AXIS: return t->scales[(i / t->inner) % t->info.quant.num_channels];
    default: return 1.0;
  }
}

static int64_t zp_of(const tensor *t, size_t i) {
  switch (t->info.quant.kind) {
    case HTPU_QUANT_PER_TENSOR: return t->info.quant.zero_point;
    case HTPU_QUANT_PER_AXIS: return t->zps[(i / t->inner) % t->info.quant.num_channels];
    default: return 0;
  }
}

static int scale_valid(float s) { return isfinite(s) && s > 0.0f; }

/* Reads the tensor description; returns the bytes used, 0 when the input is too short. */
static size_t read_tensor(const uint8_t *d, size_t n, tensor *t) {
  if (n < 3) return 0;
  memset(t, 0, sizeof *t);
  htpu_dtype dt = DTYPES[d[0] % 7];
  unsigned flags = d[1];
  uint32_t rank = 1 + (d[2] & 3u);
  uint32_t axis = ((d[2] >> 2) & 3u) % rank;
  size_t pos = 3;
  if (n < pos + rank) return 0;
  t->info.name = "fuzz";
  t->info.dtype = dt;
  t->info.rank = rank;
  t->info.num_elements = 1;
  for (uint32_t k = 0; k < rank; k++) {
    t->info.dims[k] = 1 + d[pos++] % 8u;
    t->info.num_elements *= t->info.dims[k];
  }
  t->info.byte_size = t->info.num_elements * htpu_dtype_size(dt);
  htpu_quant_kind kind = dt == HTPU_F16 ? HTPU_QUANT_NONE : (htpu_quant_kind)((flags & 3u) % 3u);
  uint32_t channels = kind == HTPU_QUANT_PER_AXIS ? t->info.dims[axis] : 1;
  if (kind != HTPU_QUANT_NONE) {
    if (n < pos + 8u * channels) return 0;
    range r = range_of(dt);
    for (uint32_t c = 0; c < channels; c++, pos += 8) {
      float s = f32_at(d + pos);
      int64_t zp = i32_at(d + pos + 4);
      if (!(flags & 4u)) {
        s = fabsf(s);
        if (!scale_valid(s)) s = 1.0f;
      }
      if (flags & 8u) zp = r.lo + (int64_t)((uint64_t)(zp - INT32_MIN) % (uint64_t)(r.hi - r.lo + 1));
      if (zp > INT32_MAX) zp = INT32_MAX; /* u32's range does not fit a zero point */
      t->scales[c] = s;
      t->zps[c] = (int32_t)zp;
    }
  }
  t->info.quant.kind = kind;
  if (kind == HTPU_QUANT_PER_TENSOR) {
    t->info.quant.scale = t->scales[0];
    t->info.quant.zero_point = t->zps[0];
  } else if (kind == HTPU_QUANT_PER_AXIS) {
    t->info.quant.axis = (int32_t)axis;
    t->info.quant.num_channels = channels;
    t->info.quant.scales = t->scales;
    t->info.quant.zero_points = t->zps;
  }
  t->inner = 1;
  for (uint32_t k = axis + 1; k < rank; k++) t->inner *= t->info.dims[k];
  return pos;
}

static void check_int(const tensor *t, const float *x, const void *q) {
  range r = range_of(t->info.dtype);
  for (size_t i = 0; i < t->info.num_elements; i++) {
    long double s = scale_of(t, i);
    int64_t zp = zp_of(t, i), v = load_q(t->info.dtype, q, i);
    long double lo = (long double)(r.lo - zp) * s, hi = (long double)(r.hi - zp) * s;
    if (x[i] <= lo) {
      FUZZ_CHECK(v == r.lo, "element %zu: %a (scale %La, zp %lld) gave %lld, want %lld", i,
                 (double)x[i], s, (long long)zp, (long long)v, (long long)r.lo);
    } else if (x[i] >= hi) {
      FUZZ_CHECK(v == r.hi, "element %zu: %a (scale %La, zp %lld) gave %lld, want %lld", i,
                 (double)x[i], s, (long long)zp, (long long)v, (long long)r.hi);
    } else {
      int64_t k = v - zp;
      long double off = fabsl((long double)k * s - x[i]);
      FUZZ_CHECK(off < s / 2 || (off == s / 2 && k % 2 == 0),
                 "element %zu: %a (scale %La, zp %lld) gave %lld, %La away", i, (double)x[i], s,
                 (long long)zp, (long long)v, off);
    }
  }
}

static void check_f16(const tensor *t, const float *x, const uint16_t *h) {
  for (size_t i = 0; i < t->info.num_elements; i++) {
    unsigned sign = h[i] >> 15, m = h[i] & 0x7fffu;
    FUZZ_CHECK(sign == (signbit(x[i]) ? 1u : 0u), "element %zu: %a gave 0x%04x (sign)", i,
               (double)x[i], h[i]);
    long double ax = fabsl((long double)x[i]);
    if (ax >= 65504) {
      FUZZ_CHECK(m == 0x7bffu, "element %zu: %a gave 0x%04x, not +-65504", i, (double)x[i], h[i]);
      continue;
    }
    FUZZ_CHECK(m <= 0x7bffu, "element %zu: %a gave 0x%04x, not finite", i, (double)x[i], h[i]);
    long double off = fabsl(f16_value((uint16_t)m) - ax);
    for (int dm = -1; dm <= 1; dm += 2) {
      if ((m == 0 && dm < 0) || (m == 0x7bffu && dm > 0)) continue;
      long double other = fabsl(f16_value((uint16_t)(m + (unsigned)dm)) - ax);
      FUZZ_CHECK(off < other || (off == other && m % 2 == 0),
                 "element %zu: %a gave 0x%04x, but 0x%04x is %s", i, (double)x[i], h[i],
                 m + (unsigned)dm, off == other ? "as near and even" : "nearer");
    }
  }
}

/* dequantize(q) against (q - zp) * scale rounded once. */
static void check_dequantize(const tensor *t, const void *q) {
  static float out[MAX_ELEMS];
  FUZZ_CHECK(htpu_dequantize(&t->info, q, out) == HTPU_OK, "dequantize: %s", htpu_last_error());
  for (size_t i = 0; i < t->info.num_elements; i++) {
    if (t->info.dtype == HTPU_F16) {
      uint16_t h;
      memcpy(&h, (const unsigned char *)q + 2 * i, 2);
      long double v = f16_value(h);
      if (isnan(v))
        FUZZ_CHECK(isnan(out[i]), "element %zu: f16 0x%04x (NaN) gave %a", i, h, (double)out[i]);
      else
        FUZZ_CHECK((long double)out[i] == v && signbit(out[i]) == signbit(v),
                   "element %zu: f16 0x%04x gave %a, want %La", i, h, (double)out[i], v);
      continue;
    }
    int64_t k = load_q(t->info.dtype, q, i) - zp_of(t, i);
    long double exact = (long double)k * scale_of(t, i);
    float want = (float)exact;
    int wide = k >= (1LL << 29) || k <= -(1LL << 29);
    FUZZ_CHECK(out[i] == want ||
                   (wide && (out[i] == nextafterf(want, INFINITY) ||
                             out[i] == nextafterf(want, -INFINITY))),
               "element %zu: q - zp = %lld, scale %a gave %a, want %a", i, (long long)k,
               scale_of(t, i), (double)out[i], (double)want);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tensor t;
  size_t pos = read_tensor(data, size, &t);
  if (pos == 0) return 0;
  const uint8_t *rest = data + pos;
  size_t nrest = (size - pos) / 4 * 4;
  size_t n = t.info.num_elements;

  static float x[MAX_ELEMS];
  static unsigned char q[MAX_ELEMS * 4];
  size_t first_nan = n;
  for (size_t i = 0; i < n; i++) {
    if (nrest == 0) {
      x[i] = 0.0f;
    } else if (data[1] & 16u) {
      int16_t k;
      memcpy(&k, rest + (2 * i) % nrest, sizeof k);
      x[i] = (float)k * 0.5f * (float)scale_of(&t, i);
    } else {
      x[i] = f32_at(rest + (4 * i) % nrest);
    }
    if (isnan(x[i]) && (data[1] & 32u)) x[i] = 0.0f;
  }
  if ((data[1] & 32u) && nrest >= 2) {
    uint16_t at;
    memcpy(&at, rest, sizeof at);
    x[at % n] = NAN;
  }
  for (size_t i = 0; i < n && first_nan == n; i++)
    if (isnan(x[i])) first_nan = i;

  int valid = 1;
  if (t.info.quant.kind == HTPU_QUANT_PER_TENSOR) valid = scale_valid(t.info.quant.scale);
  for (uint32_t c = 0; t.info.quant.kind == HTPU_QUANT_PER_AXIS && c < t.info.quant.num_channels; c++)
    valid = valid && scale_valid(t.scales[c]);
  int rc = htpu_quantize(&t.info, x, q);
  if (!valid) {
    FUZZ_CHECK(rc == HTPU_EINVAL, "quantize with an invalid scale returned %s", htpu_err_name(rc));
    FUZZ_CHECK(strstr(htpu_last_error(), "scale") != NULL, "message without 'scale': %s",
               htpu_last_error());
    static float out[MAX_ELEMS];
    rc = htpu_dequantize(&t.info, q, out);
    FUZZ_CHECK(rc == HTPU_EINVAL, "dequantize with an invalid scale returned %s", htpu_err_name(rc));
    return 0;
  }
  if (first_nan < n) {
    char want[64];
    snprintf(want, sizeof want, "element %zu is NaN;", first_nan);
    FUZZ_CHECK(rc == HTPU_ENAN, "NaN at %zu: quantize returned %s", first_nan, htpu_err_name(rc));
    FUZZ_CHECK(strstr(htpu_last_error(), want) != NULL, "NaN first at %zu, message: %s",
               first_nan, htpu_last_error());
  } else {
    FUZZ_CHECK(rc == HTPU_OK, "quantize returned %s: %s", htpu_err_name(rc), htpu_last_error());
    if (t.info.dtype == HTPU_F16)
      check_f16(&t, x, (const uint16_t *)(const void *)q);
    else
      check_int(&t, x, q);
    check_dequantize(&t, q);
  }

  /* the input bytes as raw elements: every bit pattern, not only what quantize makes */
  size_t raw = size - pos;
  size_t esize = htpu_dtype_size(t.info.dtype);
  if (raw > 0) {
    for (size_t i = 0; i < n * esize; i++) q[i] = rest[i % raw];
    check_dequantize(&t, q);
  }
  return 0;
}
