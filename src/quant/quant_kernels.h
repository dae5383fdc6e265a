/*
 * quant_kernels.h - the SIMD quantization kernels, written once over qv_* primitives that the
 * including file defines for its instruction set (quant_sse2.c, quant_avx2.c, quant_neon.c).
 * Everything here is static: each includer gets its own copy, compiled for its ISA.
 *
 * The includer defines, before including:
 *   QV_W                    lanes per vector; a block is 4 vectors (QK_B elements)
 *   QK_FN                   attributes for every function here (the ISA's target attribute)
 *   qv_f, qv_i, qv_m        W floats, W int32, a W-lane mask
 *   the primitives used below (their one-line contracts are in quant_sse2.c)
 *
 * ---- Why the kernels are bit-identical to the exact path (quant_exact.c) -------------------
 *
 * The exact result is saturate(round_half_even(Q) + zp), Q = x / scale the real quotient;
 * equivalently round_half_even(clamp(Q, lo', hi')) + zp with the integer bounds lo' = LO - zp,
 * hi' = HI - zp (rounding is monotonic and fixes integers). For 8/16-bit types the kernels run
 * only when both bounds are within +-2^21 (QK_LIMIT; quant_simd.c checks); for 32-bit types
 * the bounds are clipped to +-2^21, and a lane that reaches 2^21 in magnitude is left to the
 * exact path (4).
 *
 * 1. Error of the fast quotient. v = fl(1/s) and t = fl(x * v) are each one correctly rounded
 *    float operation, so with u = 2^-24: v = (1 + d1) / s, t = x * v * (1 + d2), |d1|, |d2| <= u
 *    (scale in [2^-100, 2^100] keeps v normal; a subnormal t means |Q| < 2^-100, which rounds
 *    to 0 as t does). Hence |t - Q| <= |Q| (2u + u^2) <= |t| (2u + u^2) / (1 - u)^2
 *    < |t| * D, D = 2^-23 (1 + 2^-21).
 *
 * 2. The near-tie flag. tc = clamp(t, lo', hi'), R = round_half_even(tc) (the ISA's
 *    round-to-nearest-even conversion), d = tc - R (exact: R is the integer nearest tc). A lane
 *    is flagged when room = 0.5 - |d| is not greater than its window: fl(|tc| * K) for 16-bit
 *    types, K = 2^-23 (1 + 2^-20); for 8-bit types one window per call,
 *    fl(max(|lo'|, |hi'|) * K) (the bounds are small, so a constant window flags as rarely and
 *    costs two operations less). room is exact whenever |tc| >= 1/4 (|d| is a multiple of
 *    ulp(tc) >= 2^-25), and below that it exceeds 1/4 while the window is below 2^-24; the
 *    window's one rounding leaves it above |tc| * D. An unflagged lane is right:
 *     - tc = t (not clamped): the half-integer nearest t is room > |t| * D > |t - Q| away, so
 *       Q lies in the same open interval (k - 1/2, k + 1/2) as t and rounds to R, and R, like
 *       t, is within [lo', hi'].
 *     - t > hi' = b (clamped to b, a real bound, |b| < 2^21): the exact answer is b iff
 *       Q > b - 1/2. If t <= 2^21, |t - Q| < 2^21 D < 1/2 gives it; if t > 2^21,
 *       Q >= t (1 - D) > 2^21 - 1/2 > b - 1/2. Likewise below lo'. +-Inf lands here.
 *    A NaN is flagged too: the clamp propagates it (qv_min/qv_max keep a NaN second operand)
 *    and the test is "not greater", true when unordered. 32-bit types skip this step and
 *    flag only a NaN or a lane with |tc| >= 2^21: every vector takes step 3.
 *
 * 3. The exact step, for a flagged vector (every vector of a 32-bit type) without NaN and with
 *    every |tc| < 2^21: each lane is recomputed in double, t' = fl64(fl64(x) * w) with w = fl64(1 / scale): |t' - Q| <=
 *    |Q| (2^-52 + 2^-106). A quotient that is not a half-integer h is more than 2^-26 away from
 *    it: with scale = S 2^b and x = X 2^a (S, X in [2^23, 2^24); a subnormal x gives |Q| < 1/4),
 *    x - h scale is a nonzero multiple of 2^min(a+1, b), so |Q - h| > 2^(min(a+1-b, 0) - 25),
 *    which is > 2^-25 when a + 1 >= b; otherwise |Q| < 1/2 and only h = +-1/2 is near, at
 *    |X - 2S| / (4S) > 2^-26 (a = b - 2) or more than 1/4 (a < b - 2).
 *    t' is clamped to [lo', hi'] (exact in double) and rounded to the grid of 2^-26 (adding and
 *    subtracting 1.5 * 2^26). For an unclamped lane |Q| < 2^21 + 1, so |t' - Q| < 2^-30: a
 *    tie (Q = h, a grid point) snaps onto h exactly; any other quotient is more than
 *    2^-26 - 2^-30 > 2^-27 from every half-integer, so the snapped value is no half-integer
 *    and, rounding being monotonic, lies on Q's side of each. Its conversion to an integer,
 *    which rounds half to even, therefore gives round_half_even(Q). A lane clamped at a real
 *    bound is the bound, which is right as in 2. No division: a block of nothing but ties
 *    still runs well ahead of the exact path.
 *
 * 4. Everything else goes back to the exact path: a block holding a NaN (it reports the first
 *    NaN's index and writes the elements before it) or a lane with |tc| >= 2^21.
 *
 * All of it assumes round-to-nearest-even and no flush-to-zero / denormals-are-zero, as the
 * rest of quant_exact.c does (the defaults; callers must not change them around these calls).
 */

#define QK_B (4 * QV_W)

#define QK_INLINE QK_FN static inline __attribute__((always_inline))

/* ---- parameters as vectors -------------------------------------------------------------- */

typedef struct qk_vp {
  qv_f inv, lo, hi, win;
  qv_i zp;
  /* For the exact step. One set of parameters: in registers. Per-lane (pattern): read or
   * converted only when a vector needs that step. */
  qv_d2 invd, lod, hid;
  const double *invd_at;
} qk_vp;

QK_INLINE qk_vp qk_vp_chan(const qk_chan *c) {
  qk_vp p;
  p.inv = qv_set1(c->inv);
  p.invd = qv_d2_set1(c->invd);
  p.lod = qv_d2_set1(c->lo);
  p.hid = qv_d2_set1(c->hi);
  p.invd_at = NULL;
  p.win = qv_set1(c->win);
  p.lo = qv_set1(c->lo);
  p.hi = qv_set1(c->hi);
  p.zp = qv_iset1(c->zp);
  return p;
}

QK_INLINE qk_vp qk_vp_lanes(const qk_lanes *l, size_t j) {
  qk_vp p;
  p.inv = qv_load(l->inv + j);
  p.invd_at = l->invd + j;
  p.win = qv_set1(l->win);
  p.lo = qv_load(l->lo + j);
  p.hi = qv_load(l->hi + j);
  p.zp = qv_iload(l->zp + j);
  return p;
}

/* ---- quantize ------------------------------------------------------------------------------ */

/* clamp(t) to the bounds, a NaN t staying NaN */
QK_INLINE qv_f qk_clamp(qv_f t, const qk_vp *p) { return qv_min(p->hi, qv_max(p->lo, t)); }

QK_INLINE size_t qk_type_size(int T) {
  return T == QK_U8 || T == QK_I8 ? 1 : T == QK_U16 || T == QK_I16 ? 2 : 4;
}

/* Step 2: R as int32, and the lanes that are flagged (NaN included). 32-bit types take the
 * exact step (3) for every vector instead: with their wide ranges most vectors would be
 * flagged anyway; only a NaN or a lane beyond the domain is flagged (then 4). */
QK_INLINE qv_i qk_quant_fast(int T, int pattern, qv_f x, const qk_vp *p, qv_m *flag) {
  qv_f tc = qk_clamp(qv_mul(x, p->inv), p);
  if (qk_type_size(T) == 4) {
    *flag = qv_ngt(qv_set1(QK_LIMIT), qv_abs(tc));
    if (pattern)
      return qv_exact(x, qv_d2_load(p->invd_at), qv_d2_cvt(p->lo), qv_d2_cvt(p->hi));
    return qv_exact(x, p->invd, p->lod, p->hid);
  }
  qv_i r = qv_round(tc);
  qv_f room = qv_sub(qv_set1(0.5f), qv_abs(qv_sub(tc, qv_itof(r))));
  if (qk_type_size(T) == 1)
    *flag = qv_ngt(room, p->win);
  else
    *flag = qv_ngt(room, qv_mul(qv_abs(tc), qv_set1(QK_K)));
  return r;
}

/* Steps 3-4 for one flagged vector: 0 when it holds a NaN or a lane beyond the domain. */
QK_INLINE int qk_quant_slow(int T, int pattern, const float *src, const qk_vp *p, qv_i *r) {
  qv_f x = qv_load(src);
  if (qk_type_size(T) < 4) { /* the bounds are real: only a NaN stops it */
    if (qv_many(qv_isnan(x))) return 0;
  } else if (qv_many(qv_ngt(qv_set1(QK_LIMIT), qv_abs(qk_clamp(qv_mul(x, p->inv), p))))) {
    return 0;
  }
  if (pattern)
    *r = qv_exact(x, qv_d2_load(p->invd_at), qv_d2_cvt(p->lo), qv_d2_cvt(p->hi));
  else
    *r = qv_exact(x, p->invd, p->lod, p->hid); /* converted once per call */
  return 1;
}

/* One block of QK_B elements into type T. 0: left alone (nothing written). */
QK_INLINE int qk_quant_block(int T, const float *src, void *dst, const qk_vp *p, size_t pstep) {
  qv_m flag[4];
  qv_i r[4];
  QK_UNROLL
  for (int k = 0; k < 4; k++)
    r[k] = qk_quant_fast(T, pstep, qv_load(src + k * QV_W), p + k * pstep, &flag[k]);
  if (qv_many(qv_mor(qv_mor(flag[0], flag[1]), qv_mor(flag[2], flag[3])))) {
    QK_UNROLL
    for (int k = 0; k < 4; k++)
      if (qv_many(flag[k]) && !qk_quant_slow(T, pstep, src + k * QV_W, p + k * pstep, &r[k]))
        return 0;
  }
  QK_UNROLL
  for (int k = 0; k < 4; k++) r[k] = qv_iadd(r[k], p[k * pstep].zp);
  qv_store_block(T, dst, r);
  return 1;
}

/* Blocks of one parameter set (!pattern: c) or of per-lane parameters from l. */
QK_INLINE size_t qk_quant_run(int T, int pattern, const float *src, void *dstv, size_t n,
                              const qk_chan *c, const qk_lanes *l, size_t phase) {
  unsigned char *dst = dstv;
  const size_t size = qk_type_size(T), pstep = pattern ? 1 : 0;
  qk_vp p[4];
  if (!pattern) p[0] = qk_vp_chan(c);
  size_t i = 0, j = phase;
  for (; i < n; i += QK_B) {
    if (pattern) {
      QK_UNROLL
      for (int k = 0; k < 4; k++) p[k] = qk_vp_lanes(l, j + (size_t)k * QV_W);
      j += QK_B;
      if (j >= l->period) j -= l->period;
    }
    if (n - i >= QK_B) {
      if (!qk_quant_block(T, src + i, dst + i * size, p, pstep)) return i;
      continue;
    }
    /* the tail: through zero-padded copies, so it runs the same code as a whole block */
    float x[QK_B] = {0};
    unsigned char q[QK_B * 4];
    memcpy(x, src + i, (n - i) * sizeof *x);
    if (!qk_quant_block(T, x, q, p, pstep)) return i;
    memcpy(dst + i * size, q, (n - i) * size);
  }
  return n;
}

/* ---- dequantize ---------------------------------------------------------------------------- */

/* One set of dequantize parameters; the double ones only for the double formula. */
typedef struct qk_dp {
  qv_f scale;
  qv_i zp;
  qv_d2 sd, zpd;
} qk_dp;

QK_INLINE void qk_deq_block(int T, const void *src, float *dst, const qk_dp *p, size_t pstep,
                            int dbl) {
  qv_i q[4];
  qv_load_block(T, src, q);
  QK_UNROLL
  for (int k = 0; k < 4; k++) {
    const qk_dp *pk = p + k * pstep;
    qv_f x = dbl ? qv_deq_double(q[k], pk->zpd, pk->sd, T == QK_U32)
                 : qv_mul(qv_itof(qv_isub(q[k], pk->zp)), pk->scale);
    qv_store(dst + k * QV_W, x);
  }
}

QK_INLINE void qk_deq_run(int T, int pattern, int dbl, const void *srcv, float *dst, size_t n,
                          float scale, int32_t zp, const qk_deq_lanes *l, size_t phase) {
  const unsigned char *src = srcv;
  const size_t size = qk_type_size(T), pstep = pattern ? 1 : 0;
  qk_dp p[4];
  if (!pattern) {
    p[0].scale = qv_set1(scale);
    p[0].zp = qv_iset1(zp);
    p[0].sd = qv_d2_set1((double)scale);
    p[0].zpd = qv_d2_set1((double)zp);
  }
  size_t i = 0, j = phase;
  for (; i < n; i += QK_B) {
    if (pattern) {
      QK_UNROLL
      for (int k = 0; k < 4; k++) {
        p[k].scale = qv_load(l->scale + j + (size_t)k * QV_W);
        p[k].zp = qv_iload(l->zp + j + (size_t)k * QV_W);
        if (dbl) {
          p[k].sd = qv_d2_cvt(p[k].scale);
          p[k].zpd = qv_d2_itod(p[k].zp);
        }
      }
      j += QK_B;
      if (j >= l->period) j -= l->period;
    }
    if (n - i >= QK_B) {
      qk_deq_block(T, src + i * size, dst + i, p, pstep, dbl);
      continue;
    }
    unsigned char q[QK_B * 4] = {0};
    float x[QK_B];
    memcpy(q, src + i * size, (n - i) * size);
    qk_deq_block(T, q, x, p, pstep, dbl);
    memcpy(dst + i, x, (n - i) * sizeof *x);
  }
}

/* ---- the ops table ------------------------------------------------------------------------- */

/* Each entry point picks one of the specialized loops: the parameters' layout and, for
 * dequantize, the formula are constants inside them. */
#define QK_DEFINE_TYPE(NAME, T)                                                              \
  QK_FN static size_t qk_quant_##NAME(const float *src, void *dst, size_t n, const qk_chan *c, \
                                      const qk_lanes *l, size_t phase) {                      \
    if (l) return qk_quant_run(T, 1, src, dst, n, c, l, phase);                               \
    return qk_quant_run(T, 0, src, dst, n, c, l, phase);                                      \
  }                                                                                           \
  QK_FN static void qk_deq_##NAME(const void *src, float *dst, size_t n, float scale,          \
                                  int32_t zp, const qk_deq_lanes *l, size_t phase, int dbl) { \
    if (l && dbl)                                                                             \
      qk_deq_run(T, 1, 1, src, dst, n, scale, zp, l, phase);                                  \
    else if (l)                                                                               \
      qk_deq_run(T, 1, 0, src, dst, n, scale, zp, l, phase);                                  \
    else if (dbl)                                                                             \
      qk_deq_run(T, 0, 1, src, dst, n, scale, zp, l, phase);                                  \
    else                                                                                      \
      qk_deq_run(T, 0, 0, src, dst, n, scale, zp, l, phase);                                  \
  }

QK_DEFINE_TYPE(u8, QK_U8)
QK_DEFINE_TYPE(i8, QK_I8)
QK_DEFINE_TYPE(u16, QK_U16)
QK_DEFINE_TYPE(i16, QK_I16)
QK_DEFINE_TYPE(u32, QK_U32)
QK_DEFINE_TYPE(i32, QK_I32)

#define QK_OPS(NAME)                                                                         \
  {                                                                                          \
    NAME, QK_B, {qk_quant_u8, qk_quant_i8, qk_quant_u16, qk_quant_i16, qk_quant_u32,          \
                 qk_quant_i32},                                                              \
        {qk_deq_u8, qk_deq_i8, qk_deq_u16, qk_deq_i16, qk_deq_u32, qk_deq_i32},               \
  }
