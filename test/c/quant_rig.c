/* quant_rig.c - the references and helpers the quantization tests share (quant_rig.h). */
#include "quant_rig.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const htpu_dtype k_int_types[] = {HTPU_U8, HTPU_I8, HTPU_U16, HTPU_I16, HTPU_U32, HTPU_I32};

int64_t type_lo(htpu_dtype t) {
  switch (t) {
    case HTPU_I8:
      return INT8_MIN;
    case HTPU_I16:
      return INT16_MIN;
    case HTPU_I32:
      return INT32_MIN;
    default:
      return 0;
  }
}

int64_t type_hi(htpu_dtype t) {
  switch (t) {
    case HTPU_U8:
      return UINT8_MAX;
    case HTPU_I8:
      return INT8_MAX;
    case HTPU_U16:
      return UINT16_MAX;
    case HTPU_I16:
      return INT16_MAX;
    case HTPU_U32:
      return UINT32_MAX;
    case HTPU_I32:
      return INT32_MAX;
    default:
      return 0;
  }
}

int64_t load_int(htpu_dtype t, const void *buf, size_t i) {
  switch (t) {
    case HTPU_U8:
      return ((const uint8_t *)buf)[i];
    case HTPU_I8:
      return ((const int8_t *)buf)[i];
    case HTPU_U16:
      return ((const uint16_t *)buf)[i];
    case HTPU_I16:
      return ((const int16_t *)buf)[i];
    case HTPU_U32:
      return ((const uint32_t *)buf)[i];
    case HTPU_I32:
      return ((const int32_t *)buf)[i];
    default:
      abort();
  }
}

void store_int(htpu_dtype t, void *buf, size_t i, int64_t v) {
  switch (t) {
    case HTPU_U8:
      ((uint8_t *)buf)[i] = (uint8_t)v;
      return;
    case HTPU_I8:
      ((int8_t *)buf)[i] = (int8_t)v;
      return;
    case HTPU_U16:
      ((uint16_t *)buf)[i] = (uint16_t)v;
      return;
    case HTPU_I16:
      ((int16_t *)buf)[i] = (int16_t)v;
      return;
    case HTPU_U32:
      ((uint32_t *)buf)[i] = (uint32_t)v;
      return;
    case HTPU_I32:
      ((int32_t *)buf)[i] = (int32_t)v;
      return;
    default:
      abort();
  }
}

uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Deterministic xorshift, so failures reproduce. */
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

float rnd_float_any(void) { /* any non-NaN bit pattern */
  for (;;) {
    float f = bitsf((uint32_t)rnd());
    if (!isnan(f)) return f;
  }
}

/* A float's magnitude as integer significand * 2^exp (significand < 2^24). */
void decompose(float f, int64_t *sig, int *exp) {
  int e;
  double m = frexp(fabs((double)f), &e); /* [0.5, 1) */
  *sig = (int64_t)ldexp(m, 24);          /* exact: a float has <= 24 significant bits */
  *exp = e - 24;
}

/* round_half_even(x / s) for finite x and finite s > 0, exactly; magnitudes beyond 2^40 come
 * back as +-2^40 (every caller saturates to 32 bits anyway). */
int64_t ref_div_rne(float x, float s) {
  if (x == 0) return 0;
  int64_t X, S;
  int ex, es;
  decompose(x, &X, &ex);
  decompose(s, &S, &es);
  /* |x / s| = X / S * 2^e, and X / S is in (1/2, 2) */
  int e = ex - es;
  int64_t q;
  if (e < -1) {
    q = 0; /* < 1/2 */
  } else if (e > 41) {
    q = (int64_t)1 << 40;
  } else {
    unsigned __int128 num = (unsigned __int128)X, den = (unsigned __int128)S;
    if (e >= 0)
      num <<= e;
    else
      den <<= -e;
    unsigned __int128 qq = num / den, r = num % den;
    if (2 * r > den || (2 * r == den && (qq & 1))) qq++;
    q = qq > ((unsigned __int128)1 << 40) ? (int64_t)1 << 40 : (int64_t)qq;
  }
  return x < 0 ? -q : q;
}

/* The spec: saturate(round_half_even(x / scale) + zp), scale 0 = unscaled; x not NaN. */
int64_t ref_quant(htpu_dtype t, float x, float scale, int32_t zp) {
  int64_t lo = type_lo(t), hi = type_hi(t);
  if (isinf(x)) return x > 0 ? hi : lo;
  int64_t v = ref_div_rne(x, scale != 0 ? scale : 1.0f) + zp;
  return v < lo ? lo : v > hi ? hi : v;
}

/* sig * 2^exp rounded once to float (half to even, subnormals, overflow to Inf). */
static float ref_round_to_float(int64_t sig, int exp) {
  if (sig == 0) return 0.0f;
  bool neg = sig < 0;
  uint64_t m = neg ? (uint64_t)0 - (uint64_t)sig : (uint64_t)sig;
  int top = 63 - __builtin_clzll(m) + exp; /* floor(log2 |value|) */
  int unit = top - 23 > -149 ? top - 23 : -149; /* float spacing at that magnitude */
  int shift = unit - exp;
  uint64_t r;
  if (shift <= 0) {
    r = m << -shift; /* exact, small: the value has fewer bits than the unit allows */
  } else if (shift >= 64) {
    r = 0; /* far below half the smallest subnormal */
  } else {
    r = m >> shift;
    uint64_t rem = m & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
  }
  double v = ldexp((double)r, unit); /* exact in double */
  float f = v > FLT_MAX ? INFINITY : (float)v; /* r <= 2^24: exact unless it overflows */
  return neg ? -f : f;
}

/* (q - zp) * S * 2^es rounded once to float, scale already decomposed. */
float ref_dequant_se(int64_t q, int64_t S, int es, int32_t zp) {
  int64_t d = q - zp;
  if (d > ((int64_t)1 << 38) || d < -((int64_t)1 << 38)) abort(); /* product must fit */
  return ref_round_to_float(d * S, es);
}

/* (q - zp) * scale rounded once to float; scale 0 = unscaled. */
float ref_dequant(int64_t q, float scale, int32_t zp) {
  int64_t S;
  int es;
  decompose(scale != 0 ? scale : 1.0f, &S, &es);
  return ref_dequant_se(q, S, es, zp);
}

/* What quant.c documents: exact (one rounding) while |q - zp| < 2^29, beyond that
 * (float)((double)(q - zp) * scale), whose double product may itself round. */
float ref_dequant_doc(int64_t q, float scale, int32_t zp) {
  int64_t d = q - zp;
  if (d < ((int64_t)1 << 29) && d > -((int64_t)1 << 29)) return ref_dequant(q, scale, zp);
  return (float)((double)d * (double)(scale != 0 ? scale : 1.0f));
}

/* f16 decoded with ldexp, independent of the bit tricks in quant.c. */
double ref_f16_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 0x3ff;
  double v;
  if (e == 31)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp(m, -24);
  else
    v = ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* f32 -> f16 by searching the (monotonic) positive f16 values for the nearest, ties to the
 * even encoding, and saturating at 65504. x not NaN. */
uint16_t ref_f16_encode(float x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs((double)x);
  if (a >= 65504.0) return sign | 0x7bff;
  unsigned lo = 0, hi = 0x7bff; /* largest h with value(h) <= a */
  while (lo < hi) {
    unsigned mid = (lo + hi + 1) / 2;
    if (ref_f16_value((uint16_t)mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  double below = ref_f16_value((uint16_t)lo), above = ref_f16_value((uint16_t)(lo + 1));
  double dlo = a - below, dhi = above - a; /* exact: both differences are of nearby floats */
  unsigned h = dlo < dhi ? lo : dhi < dlo ? lo + 1 : (lo & 1) ? lo + 1 : lo;
  return (uint16_t)(sign | h);
}

qc_params per_tensor(const float *scale, const int32_t *zp) {
  return (qc_params){scale, zp, 1, 1};
}
