/*
 * quant_simd.c - runs the SIMD quantization kernels (quant_simd.h): picks the instruction set
 * once, prepares each channel's parameters, lays out per-axis parameters as a repeating
 * per-lane pattern, and hands every block a kernel leaves alone (a NaN, a value beyond the
 * fast domain) to the exact path in quant.c, so the result is the exact path's in every case.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"
#include "quant_simd.h"

/* ---- choosing the instruction set ---------------------------------------------------------- */

static const qk_ops *detect(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  /* GCC's and compiler-rt's answer includes the OS check (XGETBV) that YMM state is saved */
  if (__builtin_cpu_supports("avx2")) return &qk_ops_avx2;
  return &qk_ops_sse2;
#elif defined(__aarch64__)
  return &qk_ops_neon;
#else
  return NULL;
#endif
}

/* Chosen at first use; a race only computes the same answer twice. */
static _Atomic(const qk_ops *) g_ops;
static atomic_int g_chosen;

static const qk_ops *current_ops(void) {
  if (!atomic_load_explicit(&g_chosen, memory_order_acquire)) {
    atomic_store_explicit(&g_ops, detect(), memory_order_relaxed);
    atomic_store_explicit(&g_chosen, 1, memory_order_release);
  }
  return atomic_load_explicit(&g_ops, memory_order_relaxed);
}

int qc_simd_select(const char *name) {
  const qk_ops *ops = NULL;
  if (!name || strcmp(name, "auto") == 0) {
    ops = detect();
  } else if (strcmp(name, "none") == 0) {
    ops = NULL;
#if defined(__x86_64__)
  } else if (strcmp(name, "sse2") == 0) {
    ops = &qk_ops_sse2;
  } else if (strcmp(name, "avx2") == 0) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) return -1;
    ops = &qk_ops_avx2;
#endif
#if defined(__aarch64__)
  } else if (strcmp(name, "neon") == 0) {
    ops = &qk_ops_neon;
#endif
  } else {
    return -1;
  }
  atomic_store_explicit(&g_ops, ops, memory_order_relaxed);
  atomic_store_explicit(&g_chosen, 1, memory_order_release);
  return 0;
}

const char *qc_simd_name(void) {
  const qk_ops *ops = current_ops();
  return ops ? ops->name : "none";
}

/* Elements converted by the kernels, and by the exact path on their behalf (blocks a kernel left,
 * runs of out-of-domain channels); calls the kernels do not take at all are in neither. Counted
 * once per call or fallback block, so they cost nothing per element. */
static _Atomic uint64_t g_kernel_elems, g_fallback_elems;

void qc_simd_counters(uint64_t *kernel, uint64_t *fallback) {
  *kernel = atomic_load_explicit(&g_kernel_elems, memory_order_relaxed);
  *fallback = atomic_load_explicit(&g_fallback_elems, memory_order_relaxed);
}

static void count(_Atomic uint64_t *c, size_t n) {
  if (n) atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* ---- parameters ---------------------------------------------------------------------------- */

static int qk_type(htpu_dtype t) {
  switch (t) {
    case HTPU_U8:
      return QK_U8;
    case HTPU_I8:
      return QK_I8;
    case HTPU_U16:
      return QK_U16;
    case HTPU_I16:
      return QK_I16;
    case HTPU_U32:
      return QK_U32;
    case HTPU_I32:
      return QK_I32;
    default:
      return -1;
  }
}

static const double k_lo[QK_NTYPES] = {0.0, -128.0, 0.0, -32768.0, 0.0, -2147483648.0};
static const double k_hi[QK_NTYPES] = {255.0, 127.0, 65535.0, 32767.0, 4294967295.0,
                                       2147483647.0};
static const size_t k_size[QK_NTYPES] = {1, 1, 2, 2, 4, 4};

/* Per-axis parameters repeat with period inner * channels. Up to this period they are laid out
 * per lane (24 bytes an entry); beyond it, and for runs of at least LONG_RUN elements, each
 * run of one channel goes to the kernel on its own. */
#define PATTERN_MAX 4096
#define LONG_RUN 64
/* Pattern entries kept on the stack; larger patterns are allocated. */
#define PATTERN_STACK 256

/* |zp| up to which quant.c dequantizes 8/16-bit storage with the float formula. */
#define FLOAT_DEQ_ZP_LIMIT (16777216.0 - 65536.0)

static float scale_of(const qc_params *p, size_t c) {
  float s = p && p->scales ? p->scales[c] : 0.0f;
  return s != 0.0f ? s : 1.0f; /* quant.h: 0 (or none) = unscaled */
}

static int32_t zp_of(const qc_params *p, size_t c) {
  return p && p->zero_points ? p->zero_points[c] : 0;
}

/* The kernels' domain (quant_kernels.h): a scale in [2^-100, 2^100] (this excludes 0, negative
 * and non-finite ones); for 8/16-bit types bounds lo - zp, hi - zp within +-QK_LIMIT, for
 * 32-bit types a range that reaches inside it. 0: the exact path takes the call. */
static int prepare_channel(int T, float scale, int32_t zp, qk_chan *c) {
  if (!(scale >= 0x1p-100f && scale <= 0x1p100f)) return 0;
  double lo = k_lo[T] - (double)zp, hi = k_hi[T] - (double)zp;
  if (k_size[T] < 4 ? (lo <= -QK_LIMIT || hi >= QK_LIMIT) : (lo >= QK_LIMIT || hi <= -QK_LIMIT))
    return 0;
  c->inv = 1.0f / scale;
  c->invd = 1.0 / (double)scale;
  c->lo = (float)(lo > -QK_LIMIT ? lo : -QK_LIMIT);
  c->hi = (float)(hi < QK_LIMIT ? hi : QK_LIMIT);
  c->win = fmaxf(fabsf(c->lo), fabsf(c->hi)) * QK_K;
  c->zp = zp;
  return 1;
}

static bool per_axis(const qc_params *p) { return p && p->channels > 1; }

/* How per-axis parameters reach the kernels. */
typedef enum { LAYOUT_RUNS, LAYOUT_PATTERN, LAYOUT_NONE } layout;

static layout choose_layout(const qc_params *p, size_t block, size_t *period) {
  size_t inner = p->inner ? p->inner : 1;
  if (inner >= LONG_RUN) return LAYOUT_RUNS;
  if (inner <= PATTERN_MAX / p->channels) {
    *period = inner * p->channels;
    return LAYOUT_PATTERN;
  }
  return inner >= block ? LAYOUT_RUNS : LAYOUT_NONE;
}

/* The pattern's length: the smallest multiple of the period that is at least one block, so a
 * kernel's block never wraps more than once. */
static size_t pattern_length(size_t period, size_t block) {
  return (block + period - 1) / period * period;
}

/* A pattern's storage: `entries` lanes of each array, on the stack when small. */
typedef struct pattern_mem {
  void *heap;
  double stack[PATTERN_STACK * 3]; /* 24 bytes an entry */
} pattern_mem;

static void *pattern_alloc(pattern_mem *m, size_t bytes) {
  m->heap = NULL;
  if (bytes <= sizeof m->stack) return m->stack;
  m->heap = malloc(bytes);
  return m->heap;
}

/* ---- quantize ------------------------------------------------------------------------------ */

/* Runs a kernel over src[0, n) (flat index base ...), doing the blocks it leaves exactly.
 * Returns the first NaN's index or -1. */
static ptrdiff_t run_quant(const qk_ops *ops, int T, htpu_dtype t, const qc_params *p,
                           const qk_chan *c, const qk_lanes *l, const float *src,
                           unsigned char *dst, size_t n, size_t base) {
  size_t size = k_size[T], i = 0;
  while (i < n) {
    size_t phase = l ? (base + i) % l->period : 0;
    size_t done = ops->quant[T](src + i, dst + i * size, n - i, c, l, phase);
    count(&g_kernel_elems, done);
    i += done;
    if (i >= n) break;
    size_t m = n - i < ops->block ? n - i : ops->block;
    count(&g_fallback_elems, m);
    ptrdiff_t bad = qc_quantize_at(t, p, src + i, dst + i * size, m, base + i);
    if (bad >= 0) return (ptrdiff_t)i + bad;
    i += m;
  }
  return -1;
}

static int quant_pattern(const qk_ops *ops, int T, htpu_dtype t, const qc_params *p,
                         size_t period, const float *src, unsigned char *dst, size_t n,
                         ptrdiff_t *nan_index) {
  size_t inner = p->inner ? p->inner : 1;
  size_t len = pattern_length(period, ops->block), entries = len + QK_MAX_BLOCK;
  pattern_mem mem;
  double *invd = pattern_alloc(&mem, entries * 3 * sizeof(double));
  if (!invd) return 0; /* the exact path needs no memory */
  float *inv = (float *)(void *)(invd + entries), *lo = inv + entries, *hi = lo + entries;
  int32_t *zp = (int32_t *)(void *)(hi + entries);
  int ok = 1;
  float win = 0.0f;
  for (size_t c = 0; ok && c < p->channels; c++) {
    qk_chan ch;
    ok = prepare_channel(T, scale_of(p, c), zp_of(p, c), &ch);
    win = fmaxf(win, ch.win);
    for (size_t e = c * inner; ok && e < entries; e += period) {
      for (size_t k = 0; k < inner && e + k < entries; k++) {
        invd[e + k] = ch.invd;
        inv[e + k] = ch.inv;
        lo[e + k] = ch.lo;
        hi[e + k] = ch.hi;
        zp[e + k] = ch.zp;
      }
    }
  }
  if (ok) {
    qk_lanes l = {invd, inv, lo, hi, zp, win, len};
    *nan_index = run_quant(ops, T, t, p, NULL, &l, src, dst, n, 0);
  }
  free(mem.heap);
  return ok;
}

static ptrdiff_t quant_runs(const qk_ops *ops, int T, htpu_dtype t, const qc_params *p,
                            const float *src, unsigned char *dst, size_t n) {
  size_t inner = p->inner ? p->inner : 1;
  for (size_t i = 0; i < n; i += inner) {
    size_t run = n - i < inner ? n - i : inner, c = (i / inner) % p->channels;
    qk_chan ch;
    ptrdiff_t bad;
    if (prepare_channel(T, scale_of(p, c), zp_of(p, c), &ch)) {
      bad = run_quant(ops, T, t, p, &ch, NULL, src + i, dst + i * k_size[T], run, i);
    } else {
      count(&g_fallback_elems, run);
      bad = qc_quantize_at(t, p, src + i, dst + i * k_size[T], run, i);
    }
    if (bad >= 0) return (ptrdiff_t)i + bad;
  }
  return -1;
}

int qs_quantize(htpu_dtype t, const qc_params *p, const float *src, void *dst, size_t n,
                ptrdiff_t *nan_index) {
  const qk_ops *ops = current_ops();
  int T = qk_type(t);
  if (!ops || T < 0) return 0;
  if (!per_axis(p)) {
    if (p && p->channels != 1) p = NULL; /* no parameters: as quant.c, unscaled */
    qk_chan ch;
    if (!prepare_channel(T, scale_of(p, 0), zp_of(p, 0), &ch)) return 0;
    *nan_index = run_quant(ops, T, t, p, &ch, NULL, src, dst, n, 0);
    return 1;
  }
  size_t period = 0;
  switch (choose_layout(p, ops->block, &period)) {
    case LAYOUT_RUNS:
      *nan_index = quant_runs(ops, T, t, p, src, dst, n);
      return 1;
    case LAYOUT_PATTERN:
      return quant_pattern(ops, T, t, p, period, src, dst, n, nan_index);
    default:
      return 0;
  }
}

/* ---- dequantize ---------------------------------------------------------------------------- */

/* quant.c's rule: the float formula for 8/16-bit storage with a small zero point. */
static int needs_double(int T, int32_t zp) {
  return T == QK_U32 || T == QK_I32 || fabs((double)zp) > FLOAT_DEQ_ZP_LIMIT;
}

int qs_dequantize(htpu_dtype t, const qc_params *p, const void *src, float *dst, size_t n) {
  const qk_ops *ops = current_ops();
  int T = qk_type(t);
  if (!ops || T < 0) return 0;
  const unsigned char *in = src;
  if (!per_axis(p)) {
    if (p && p->channels != 1) p = NULL;
    int32_t zp = zp_of(p, 0);
    ops->deq[T](in, dst, n, scale_of(p, 0), zp, NULL, 0, needs_double(T, zp));
    count(&g_kernel_elems, n);
    return 1;
  }
  size_t inner = p->inner ? p->inner : 1, period = 0;
  switch (choose_layout(p, ops->block, &period)) {
    case LAYOUT_RUNS:
      for (size_t i = 0; i < n; i += inner) {
        size_t run = n - i < inner ? n - i : inner, c = (i / inner) % p->channels;
        ops->deq[T](in + i * k_size[T], dst + i, run, scale_of(p, c), zp_of(p, c), NULL, 0,
                    needs_double(T, zp_of(p, c)));
      }
      count(&g_kernel_elems, n);
      return 1;
    case LAYOUT_PATTERN:
      break;
    default:
      return 0;
  }
  size_t len = pattern_length(period, ops->block), entries = len + QK_MAX_BLOCK;
  pattern_mem mem;
  float *scale = pattern_alloc(&mem, entries * 2 * sizeof(float));
  if (!scale) return 0;
  int32_t *zp = (int32_t *)(void *)(scale + entries);
  int dbl = 0;
  for (size_t e = 0; e < entries; e++) {
    size_t c = (e % period) / inner;
    scale[e] = scale_of(p, c);
    zp[e] = zp_of(p, c);
    dbl |= needs_double(T, zp[e]); /* the double formula is the definition: exact for all */
  }
  qk_deq_lanes l = {scale, zp, len};
  ops->deq[T](in, dst, n, 0.0f, 0, &l, 0, dbl);
  free(mem.heap);
  count(&g_kernel_elems, n);
  return 1;
}
