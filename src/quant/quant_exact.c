/*
 * quant_exact.c - the exact scalar f32 <-> tensor element conversions (QNN's affine
 * quantization) and the public f16 helpers. The reference the SIMD kernels (quant_simd.c)
 * equal bit for bit, and their fallback; it calls nothing of theirs. quant.c dispatches
 * between the two and holds the public htpu_quantize / htpu_dequantize.
 *
 * Numerics, and why:
 *
 *  f32 -> integer: q = saturate(round_half_even(x / scale) + zero_point), where x / scale is
 *  the real quotient, not float's rounded one: fl32(x / scale) can land on a .5 the real
 *  quotient is not on (or leave one it is on), and ties-to-even then goes the wrong way.
 *  We divide in double. For floats x = X*2^a and scale = S*2^b (X, S < 2^24 integers), a
 *  quotient that is not a half-integer differs from every half-integer by
 *  |2X*2^a - (2k+1)*S*2^b| / (2*S*2^b) >= 2^-25 (the numerator is a nonzero multiple of
 *  2^min(a+1,b); work both cases). The double quotient is within 2^-27 of the real one while
 *  |x / scale| < 2^27, so rounding it gives the exact answer there: that is the fast,
 *  vectorizable path, used whenever the saturation bounds lo - zp and hi - zp lie inside
 *  +-2^27 (8/16-bit types with sane zero points). Wider ranges (32-bit types, extreme zero
 *  points) take the careful path, which settles a near-midpoint result with fma: one rounding
 *  of x - (k +- 0.5) * scale, so its sign is exact.
 *
 *  We divide rather than multiply by a hoisted 1/scale: x * fl(1/scale) is a different number
 *  from x / scale (scale = 0.1f, say) and moves ties, so it would not be bit-identical.
 *
 *  The clamp happens before rounding, against the integer bounds lo - zp and hi - zp:
 *  rounding is monotonic and integers are its fixed points, so this equals rounding then
 *  saturating, keeps |t| < 2^34 for the 1.5*2^52 shifter (rne() below), and leaves the cast
 *  to T in range. The clamps are written `t >= lo ? t : lo` so NaN becomes lo (never an
 *  undefined float->int cast); NaN itself is found by a separate, vectorizable scan of each
 *  block and reported by index.
 *
 *  integer -> f32: x = (float)((double)(q - zp) * (double)scale), the one definition
 *  everywhere. q - zp is exact in double and, for 8/16-bit storage, so is the product
 *  (25 + 24 bits): the result is the real value rounded once. Float arithmetic
 *  (float)(q - zp) * scale would round twice for 32-bit storage. For 8/16-bit storage with
 *  |zp| <= 2^24 - 2^16 the float expression is bit-identical to the double one (q - zp is
 *  exact in float, and one float multiply of exact operands is correctly rounded, subnormal
 *  and overflowing results included), so those loops use it for twice the SIMD lanes.
 *  32-bit storage: exact while |q - zp| < 2^29; beyond, the double product may round once
 *  before the final rounding to float.
 *
 *  All rounding relies on the default round-to-nearest mode (the shifter, the f16 subnormal
 *  trick and the C conversions all do); callers must not change fenv around these calls.
 *
 *  scales NULL, or a scale entry of 0 (quant.h: "plain integer tensor"), means no scaling;
 *  zero points still apply when given. f32, f16, u64, i64 and bool8 ignore the quantization
 *  parameters: QNN has no quantized encoding for them. u64/i64 round half to even and
 *  saturate; bool8 is C's conversion to _Bool (any nonzero value, +-Inf included, becomes 1;
 *  dequantized, any nonzero byte is 1.0f). NaN is an error for every target but f32 (a copy).
 */
#include "quant.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

#if defined(__FAST_MATH__)
#error "quant_exact.c needs IEEE arithmetic (round-to-nearest-even, NaN compares): no -ffast-math"
#endif

/* GCC 12 at -O2 vectorizes a loop only when its trip count is a known multiple of the vector
 * length (the "very-cheap" cost model), so the hot loops run as fixed chunks of QC_VLEN
 * elements plus a scalar tail: vectorized at -O2 and -O3 alike, without per-file flags. The
 * body is a statement using the index `i`. */
#define QC_VLEN 16
#define QC_FOR(i, n, ...)                                                                   \
  do {                                                                                      \
    size_t qc_base_ = 0;                                                                    \
    for (; qc_base_ + QC_VLEN <= (n); qc_base_ += QC_VLEN)                                  \
      for (size_t qc_k_ = 0; qc_k_ < QC_VLEN; qc_k_++) {                                    \
        size_t i = qc_base_ + qc_k_;                                                        \
        __VA_ARGS__;                                                                        \
      }                                                                                     \
    for (size_t i = qc_base_; i < (n); i++) {                                               \
      __VA_ARGS__;                                                                          \
    }                                                                                       \
  } while (0)

/* Elements per NaN scan: the block is converted right after its scan, while it is in L1. */
#define QC_BLOCK 1024

/* Below this magnitude the double quotient rounds to the exact quotient's integer (see top). */
#define QC_EXACT_LIMIT 0x1p27

/* Per-axis runs shorter than this go element by element instead of one call per run. */
#define QC_SHORT_RUN 16

/* Largest |zp| for which the float dequantize formula of 8/16-bit types is exact (see top). */
#define QC_FLOAT_DEQ_ZP_LIMIT (16777216.0 - 65536.0)

/* Adding and subtracting 1.5 * 2^52 rounds a double with |v| < 2^51 to an integer in the
 * current rounding mode (half to even by default): for such v the sum lies in [2^52, 2^53),
 * where the double spacing is exactly 1. Unlike nearbyint() it vectorizes on every target
 * (x86-64 baseline has no rounding instruction); compilers do not fold it without
 * -ffast-math, which is rejected above. */
static inline double rne(double v) {
  const double shifter = 0x1.8p52;
  return (v + shifter) - shifter;
}

static inline double clampd(double t, double lo, double hi) {
  t = t >= lo ? t : lo; /* NaN -> lo */
  return t <= hi ? t : hi;
}

/* round_half_even(x / scale) clamped to [lo, hi] (integers, |lo|, |hi| < 2^34), exact for
 * every input. x NaN gives lo. */
static inline double quot_careful(float x, double scale, double lo, double hi) {
  double k = rne(clampd((double)x / scale, lo, hi));
  if (fabs(k) >= QC_EXACT_LIMIT) {
    /* The double quotient is within 2^-18 of the real one, so k is off by at most one and only
     * when the real quotient is next to k +- 0.5. fma rounds x - (k +- 0.5) * scale once
     * ((k +- 0.5) is exact), so the signs below are those of the real differences. */
    double up = fma(-(k + 0.5), scale, (double)x);
    double dn = fma(-(k - 0.5), scale, (double)x);
    if (scale < 0) {
      up = -up;
      dn = -dn;
    }
    /* An exact tie cannot reach here (a half-integer beyond 2^24 times a float is no float),
     * but the tie rule is kept so the fix stays right for any threshold. */
    bool odd = ((int64_t)k & 1) != 0;
    if (up > 0 || (up == 0 && odd))
      k += 1;
    else if (dn < 0 || (dn == 0 && odd))
      k -= 1;
    k = clampd(k, lo, hi);
  }
  return k;
}

typedef void (*quant_run_fn)(const float *restrict src, void *restrict dst, size_t n,
                             double scale, double zp);
typedef void (*dequant_run_fn)(const void *restrict src, float *restrict dst, size_t n,
                               double scale, double zp);
typedef void (*quant_each_fn)(const float *restrict src, void *restrict dst, size_t n,
                              const qc_params *p, size_t base);
typedef void (*dequant_each_fn)(const void *restrict src, float *restrict dst, size_t n,
                                const qc_params *p, size_t base);

static inline double scale_at(const qc_params *p, size_t c) {
  float s = p->scales ? p->scales[c] : 0.0f;
  return s != 0.0f ? (double)s : 1.0;
}

static inline double zp_at(const qc_params *p, size_t c) {
  return p->zero_points ? (double)p->zero_points[c] : 0.0;
}

/* Walks channel c and position j within the channel's run along the flat index. */
typedef struct axis_pos {
  size_t inner, channels, c, j;
} axis_pos;

static inline axis_pos axis_start(const qc_params *p, size_t base) {
  axis_pos a;
  a.inner = p->inner ? p->inner : 1;
  a.channels = p->channels;
  a.c = (base / a.inner) % a.channels;
  a.j = base % a.inner;
  return a;
}

static inline void axis_step(axis_pos *a) {
  if (++a->j == a->inner) {
    a->j = 0;
    if (++a->c == a->channels) a->c = 0;
  }
}

/* fast: the per-tensor/run loop, exact only while [LO - zp, HI - zp] is inside
 *   +-QC_EXACT_LIMIT (checked by the caller); kept branch-free so it vectorizes.
 * careful: exact everywhere.
 * each: per element channel lookup, for per-axis runs too short to be worth a call.
 * deq: the double definition; deqf (8/16-bit only): its float twin, see top. */
#define QC_DEFINE_INT(NAME, T, LO, HI)                                                         \
  static void quant_fast_##NAME(const float *restrict src, void *restrict dstv, size_t n,   \
                                double scale, double zp) {                                 \
    T *restrict dst = dstv;                                                                \
    const double lo = (LO) - zp, hi = (HI) - zp;                                           \
    if (scale == 1.0) {                                                                    \
      QC_FOR(i, n, dst[i] = (T)(rne(clampd(src[i], lo, hi)) + zp));                        \
    } else {                                                                               \
      QC_FOR(i, n, dst[i] = (T)(rne(clampd((double)src[i] / scale, lo, hi)) + zp));        \
    }                                                                                      \
  }                                                                                        \
  static void quant_careful_##NAME(const float *restrict src, void *restrict dstv,         \
                                   size_t n, double scale, double zp) {                    \
    T *restrict dst = dstv;                                                                \
    const double lo = (LO) - zp, hi = (HI) - zp;                                           \
    for (size_t i = 0; i < n; i++) dst[i] = (T)(quot_careful(src[i], scale, lo, hi) + zp); \
  }                                                                                        \
  static void quant_each_##NAME(const float *restrict src, void *restrict dstv, size_t n,   \
                                const qc_params *p, size_t base) {                         \
    T *restrict dst = dstv;                                                                \
    axis_pos a = axis_start(p, base);                                                      \
    for (size_t i = 0; i < n; i++, axis_step(&a)) {                                        \
      double zp = zp_at(p, a.c);                                                           \
      dst[i] = (T)(quot_careful(src[i], scale_at(p, a.c), (LO) - zp, (HI) - zp) + zp);     \
    }                                                                                      \
  }                                                                                        \
  static void deq_##NAME(const void *restrict srcv, float *restrict dst, size_t n,          \
                         double scale, double zp) {                                        \
    const T *restrict src = srcv;                                                          \
    QC_FOR(i, n, dst[i] = (float)(((double)src[i] - zp) * scale));                         \
  }                                                                                        \
  static void deq_each_##NAME(const void *restrict srcv, float *restrict dst, size_t n,     \
                              const qc_params *p, size_t base) {                           \
    const T *restrict src = srcv;                                                          \
    axis_pos a = axis_start(p, base);                                                      \
    for (size_t i = 0; i < n; i++, axis_step(&a))                                          \
      dst[i] = (float)(((double)src[i] - zp_at(p, a.c)) * scale_at(p, a.c));               \
  }

#define QC_DEFINE_DEQ_FLOAT(NAME, T)                                                         \
  static void deqf_##NAME(const void *restrict srcv, float *restrict dst, size_t n,         \
                          double scale, double zp) {                                       \
    const T *restrict src = srcv;                                                          \
    const int32_t izp = (int32_t)zp;                                                       \
    const float fs = (float)scale;                                                         \
    QC_FOR(i, n, dst[i] = (float)((int32_t)src[i] - izp) * fs);                            \
  }

QC_DEFINE_INT(u8, uint8_t, 0.0, 255.0)
QC_DEFINE_INT(i8, int8_t, -128.0, 127.0)
QC_DEFINE_INT(u16, uint16_t, 0.0, 65535.0)
QC_DEFINE_INT(i16, int16_t, -32768.0, 32767.0)
QC_DEFINE_INT(u32, uint32_t, 0.0, 4294967295.0)
QC_DEFINE_INT(i32, int32_t, -2147483648.0, 2147483647.0)
QC_DEFINE_DEQ_FLOAT(u8, uint8_t)
QC_DEFINE_DEQ_FLOAT(i8, int8_t)
QC_DEFINE_DEQ_FLOAT(u16, uint16_t)
QC_DEFINE_DEQ_FLOAT(i16, int16_t)

typedef struct int_ops {
  size_t size;
  double lo, hi;
  quant_run_fn fast, careful;
  quant_each_fn each;
  dequant_run_fn deq;
  dequant_run_fn deqf; /* NULL for 32-bit types */
  dequant_each_fn deq_each;
} int_ops;

#define QC_OPS(NAME, T, LO, HI, DEQF)                                                        \
  {sizeof(T), LO, HI, quant_fast_##NAME, quant_careful_##NAME, quant_each_##NAME,           \
   deq_##NAME, DEQF, deq_each_##NAME}

static const int_ops ops_u8 = QC_OPS(u8, uint8_t, 0.0, 255.0, deqf_u8);
static const int_ops ops_i8 = QC_OPS(i8, int8_t, -128.0, 127.0, deqf_i8);
static const int_ops ops_u16 = QC_OPS(u16, uint16_t, 0.0, 65535.0, deqf_u16);
static const int_ops ops_i16 = QC_OPS(i16, int16_t, -32768.0, 32767.0, deqf_i16);
static const int_ops ops_u32 = QC_OPS(u32, uint32_t, 0.0, 4294967295.0, NULL);
static const int_ops ops_i32 = QC_OPS(i32, int32_t, -2147483648.0, 2147483647.0, NULL);

static const int_ops *int_ops_for(htpu_dtype t) {
  switch (t) {
    case HTPU_U8:
      return &ops_u8;
    case HTPU_I8:
      return &ops_i8;
    case HTPU_U16:
      return &ops_u16;
    case HTPU_I16:
      return &ops_i16;
    case HTPU_U32:
      return &ops_u32;
    case HTPU_I32:
      return &ops_i32;
    default:
      return NULL;
  }
}

/* ---- f16 ---------------------------------------------------------------------------------- */

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* cond ? a : b with masks. With plain ?: GCC sinks the float operation computing the unused
 * candidate into a branch, and then (-ftrapping-math, the default) will not if-convert it
 * back, so the loop would not vectorize. */
static inline uint32_t qc_select(bool cond, uint32_t a, uint32_t b) {
  uint32_t m = 0u - (uint32_t)cond;
  return (a & m) | (b & ~m);
}

/* f16 bits of |x| given as f32 bits `a` (not NaN): round half to even, saturating to 65504.
 * Both candidates are computed and one selected, so the loop vectorizes. */
static inline uint32_t f16_from_abs_bits(uint32_t a) {
  /* normal: rebias the exponent (127 -> 15) and round off 13 mantissa bits, half to even; a
   * carry out of the mantissa bumps the exponent, as it should */
  uint32_t normal = (a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13;
  /* |x| < 2^-14: in |x| + 0.5f the ulp is 2^-24, f16's subnormal step, so the FPU does the
   * rounding and the low bits are the f16 subnormal (0x400 = rounded up to 2^-14 is right) */
  uint32_t sub = f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u;
  /* >= 65504: [65504, 65520) rounds to 65504 anyway; beyond and Inf would round to Inf */
  return qc_select(a < 0x38800000u, sub, qc_select(a >= 0x477fe000u, 0x7bffu, normal));
}

static inline uint16_t f16_from_f32(float x) {
  uint32_t u = f32_bits(x);
  return (uint16_t)(((u >> 16) & 0x8000u) | f16_from_abs_bits(u & 0x7fffffffu));
}

/* Exact: every f16 is an f32. */
static inline float f32_from_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t em = h & 0x7fffu;
  uint32_t normal = (em << 13) + 0x38000000u;    /* rebias 15 -> 127 */
  uint32_t special = (em << 13) | 0x7f800000u;   /* Inf, or NaN keeping its payload */
  uint32_t sub = f32_bits((float)em * 0x1p-24f); /* subnormal or zero: em < 2^10, exact */
  uint32_t r = qc_select(em >= 0x7c00u, special, qc_select(em >= 0x0400u, normal, sub));
  return bits_f32(sign | r);
}

uint16_t htpu_f32_to_f16(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: quiet, keeping sign and the top payload bits */
    return (uint16_t)(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x03ffu));
  return f16_from_f32(x);
}

float htpu_f16_to_f32(uint16_t h) { return f32_from_f16(h); }

/* ---- plain (unquantized) targets ---------------------------------------------------------- */

/* Rounds half to even; floats of magnitude >= 2^23 are integers already and must not go
 * through the shifter when >= 2^51. */
static inline double rne_any(float x) {
  double v = x;
  return fabs(v) < 0x1p51 ? rne(v) : v;
}

static void quant_f16(const float *restrict src, uint16_t *restrict dst, size_t n) {
  QC_FOR(i, n, dst[i] = f16_from_f32(src[i]));
}

static void quant_i64(const float *restrict src, int64_t *restrict dst, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double r = rne_any(src[i]);
    dst[i] = r >= 0x1p63 ? INT64_MAX : r < -0x1p63 ? INT64_MIN : (int64_t)r;
  }
}

static void quant_u64(const float *restrict src, uint64_t *restrict dst, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double r = rne_any(src[i]);
    dst[i] = r >= 0x1p64 ? UINT64_MAX : r < 0 ? 0 : (uint64_t)r;
  }
}

static void quant_bool8(const float *restrict src, uint8_t *restrict dst, size_t n) {
  QC_FOR(i, n, dst[i] = src[i] != 0.0f);
}

/* ---- drivers ------------------------------------------------------------------------------ */

static bool per_axis(const qc_params *p) { return p && p->channels > 1; }

static void quant_int_run(const int_ops *ops, const float *src, void *dst, size_t n,
                          double scale, double zp) {
  bool fast = ops->lo - zp > -QC_EXACT_LIMIT && ops->hi - zp < QC_EXACT_LIMIT;
  (fast ? ops->fast : ops->careful)(src, dst, n, scale, zp);
}

/* Converts src[0, m) (flat indices base ...) of a NaN-free prefix. */
static void quant_block(htpu_dtype t, const qc_params *p, const float *src, unsigned char *dst,
                        size_t m, size_t base) {
  switch (t) {
    case HTPU_F16:
      quant_f16(src, (uint16_t *)(void *)dst, m);
      return;
    case HTPU_I64:
      quant_i64(src, (int64_t *)(void *)dst, m);
      return;
    case HTPU_U64:
      quant_u64(src, (uint64_t *)(void *)dst, m);
      return;
    case HTPU_BOOL8:
      quant_bool8(src, dst, m);
      return;
    default:
      break;
  }
  const int_ops *ops = int_ops_for(t);
  if (!ops) return;
  if (!per_axis(p)) {
    bool has = p && p->channels == 1;
    quant_int_run(ops, src, dst, m, has ? scale_at(p, 0) : 1.0, has ? zp_at(p, 0) : 0.0);
    return;
  }
  axis_pos a = axis_start(p, base);
  if (a.inner < QC_SHORT_RUN) {
    ops->each(src, dst, m, p, base);
    return;
  }
  for (size_t i = 0; i < m;) {
    size_t run = a.inner - a.j < m - i ? a.inner - a.j : m - i;
    quant_int_run(ops, src + i, dst + i * ops->size, run, scale_at(p, a.c), zp_at(p, a.c));
    i += run;
    a.j = 0;
    if (++a.c == a.channels) a.c = 0;
  }
}

/* Index of the first NaN in x[0, m), or m. The OR pass vectorizes; the search runs only when
 * there is a NaN to find. */
static size_t first_nan(const float *restrict x, size_t m) {
  unsigned any = 0;
  QC_FOR(i, m, any |= x[i] != x[i]);
  if (!any) return m;
  for (size_t i = 0; i < m; i++)
    if (isnan(x[i])) return i;
  return m;
}

ptrdiff_t qc_quantize_at(htpu_dtype t, const qc_params *p, const float *src, void *dst,
                         size_t n, size_t base) {
  if (t == HTPU_F32) {
    if (n && (const void *)src != dst) memmove(dst, src, n * sizeof(float));
    return -1;
  }
  size_t size = htpu_dtype_size(t);
  if (!size) return -1; /* HTPU_DTYPE_INVALID: outside the contract, nothing to write */
  unsigned char *out = dst;
  /* Everything before a NaN is written, so callers may rely on the prefix. */
  for (size_t b = 0; b < n; b += QC_BLOCK) {
    size_t m = n - b < QC_BLOCK ? n - b : QC_BLOCK;
    size_t bad = first_nan(src + b, m);
    quant_block(t, p, src + b, out + b * size, bad, base + b);
    if (bad < m) return (ptrdiff_t)(b + bad);
  }
  return -1;
}

ptrdiff_t qc_quantize_exact(htpu_dtype t, const qc_params *p, const float *src, void *dst,
                            size_t n) {
  return qc_quantize_at(t, p, src, dst, n, 0);
}

void qc_dequantize_exact(htpu_dtype t, const qc_params *p, const void *src, float *dst,
                         size_t n) {
  switch (t) {
    case HTPU_F32:
      if (n && src != (const void *)dst) memmove(dst, src, n * sizeof(float));
      return;
    case HTPU_F16: {
      const uint16_t *s = src;
      QC_FOR(i, n, dst[i] = f32_from_f16(s[i]));
      return;
    }
    case HTPU_I64: {
      const int64_t *s = src;
      for (size_t i = 0; i < n; i++) dst[i] = (float)s[i]; /* one correct rounding */
      return;
    }
    case HTPU_U64: {
      const uint64_t *s = src;
      for (size_t i = 0; i < n; i++) dst[i] = (float)s[i];
      return;
    }
    case HTPU_BOOL8: {
      const uint8_t *s = src;
      QC_FOR(i, n, dst[i] = s[i] ? 1.0f : 0.0f);
      return;
    }
    default:
      break;
  }
  const int_ops *ops = int_ops_for(t);
  if (!ops) return;
  const unsigned char *in = src;
  if (!per_axis(p)) {
    bool has = p && p->channels == 1;
    double scale = has ? scale_at(p, 0) : 1.0, zp = has ? zp_at(p, 0) : 0.0;
    bool use_float = ops->deqf && fabs(zp) <= QC_FLOAT_DEQ_ZP_LIMIT;
    (use_float ? ops->deqf : ops->deq)(in, dst, n, scale, zp);
    return;
  }
  axis_pos a = axis_start(p, 0);
  if (a.inner < QC_SHORT_RUN) {
    ops->deq_each(in, dst, n, p, 0);
    return;
  }
  for (size_t i = 0; i < n;) {
    size_t run = a.inner < n - i ? a.inner : n - i;
    double scale = scale_at(p, a.c), zp = zp_at(p, a.c);
    bool use_float = ops->deqf && fabs(zp) <= QC_FLOAT_DEQ_ZP_LIMIT;
    (use_float ? ops->deqf : ops->deq)(in + i * ops->size, dst + i, run, scale, zp);
    i += run;
    if (++a.c == a.channels) a.c = 0;
  }
}
