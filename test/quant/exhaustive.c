/*
 * exhaustive.c - every float bit pattern through the SIMD quantization kernels and the exact
 * scalar path, for several (dtype, scale, zero point) sets, compared byte for byte; NaN
 * patterns must be reported at their own index by both, with the same bytes before them.
 *
 *   quant_exhaustive [--step K] [--threads T] [--isa NAME]...
 *
 * --step K checks every K-th chunk of 2^16 patterns only (under qemu the full walk takes hours;
 * an odd K spreads the sample over all exponents). --isa limits the kernels tried (default:
 * every one this build and CPU run: SSE2 and AVX2 on x86-64, NEON on aarch64). Prints one line
 * per set (and the first differing patterns), stops after the first set with a difference,
 * having counted all of that set's, and exits 1 then. Run by make test-quant-exhaustive
 * (and test-quant-exhaustive-aarch64 under qemu); not part of make test (minutes, not
 * seconds).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quant/quant.h"

#define CHUNK_BITS 16
#define CHUNK ((size_t)1 << CHUNK_BITS)
#define NCHUNKS ((uint64_t)1 << (32 - CHUNK_BITS))
#define MAX_ISAS 3
#define MAX_CHANNELS 3

typedef struct param_set {
  const char *what;
  htpu_dtype dtype;
  size_t channels; /* > 1: per-axis, channel on the last axis (inner 1) */
  float scales[MAX_CHANNELS];
  int32_t zps[MAX_CHANNELS];
} param_set;

/* Typical activations, reciprocals that are inexact (49, 0.1: a plain multiply moves their
 * ties), unscaled, wide types, zero points at the ends, a per-axis pattern. */
static const param_set k_sets[] = {
    {"u8 activations", HTPU_U8, 1, {0.0235294122f}, {128}},
    {"u8 inexact reciprocal", HTPU_U8, 1, {49.0f}, {0}},
    {"u8 scale 0.1", HTPU_U8, 1, {0.1f}, {3}},
    {"u8 unscaled", HTPU_U8, 1, {0.0f}, {0}},
    {"i8 symmetric", HTPU_I8, 1, {0.00787401572f}, {0}},
    {"i8 zero point at the end", HTPU_I8, 1, {0.5f}, {-128}},
    {"u16 activations", HTPU_U16, 1, {0.00152590219f}, {32768}},
    {"i16 1/3", HTPU_I16, 1, {0.333333343f}, {-7}},
    {"u32 halves", HTPU_U32, 1, {0.5f}, {0}},
    {"i32 scale 1e-3", HTPU_I32, 1, {0.001f}, {12345}},
    {"u8 per-axis, last axis of 3", HTPU_U8, 3, {0.02f, 0.1f, 49.0f}, {128, 3, 0}},
};
#define NSETS (sizeof k_sets / sizeof k_sets[0])

static uint64_t g_step = 1;

/* One pass: one set through one ISA's kernels (qc_simd_select is process-wide, so all threads
 * of a pass use the same kernels). */
typedef struct job {
  const param_set *set;
  const char *isa;
  _Atomic uint64_t next_chunk;
  _Atomic uint64_t values, nans, mismatches;
  _Atomic int reported;
} job;

static void report(job *j, const char *isa, uint32_t bits, const char *what) {
  if (atomic_fetch_add(&j->reported, 1) < 10)
    fprintf(stderr, "  MISMATCH %s [%s]: pattern 0x%08x: %s\n", j->set->what, isa, bits, what);
  atomic_fetch_add(&j->mismatches, 1);
}

/* Compares the kernels' conversion of src[0, n) (patterns first .. first + n - 1) with the
 * exact path's, following NaNs one by one. `phase` is the flat index of src[0] modulo the
 * channel count, so the per-axis pattern continues across chunks. */
static void compare(job *j, const float *src, size_t n, uint32_t first, unsigned char *a,
                    unsigned char *b, uint64_t *nans) {
  const char *isa = j->isa;
  const param_set *ps = j->set;
  size_t size = htpu_dtype_size(ps->dtype);
  size_t at = 0;
  while (at < n) {
    /* The chunk starts at a flat index that is a multiple of 2^16; restarting after a NaN
     * shifts the channels, so the parameters are rotated to match. */
    float scales[MAX_CHANNELS];
    int32_t zps[MAX_CHANNELS];
    size_t ch = ps->channels;
    for (size_t c = 0; c < ch; c++) {
      size_t from = (first + at + c) % ch;
      scales[c] = ps->scales[from];
      zps[c] = ps->zps[from];
    }
    qc_params p = {scales, zps, ch, 1};
    ptrdiff_t ra = qc_quantize(ps->dtype, &p, src + at, a, n - at);
    ptrdiff_t rb = qc_quantize_exact(ps->dtype, &p, src + at, b, n - at);
    size_t upto = rb >= 0 ? (size_t)rb : n - at;
    if (ra != rb) {
      char what[96];
      snprintf(what, sizeof what, "NaN index %td, exact path %td", ra, rb);
      report(j, isa, first + (uint32_t)at, what);
      return;
    }
    if (memcmp(a, b, upto * size) != 0) {
      for (size_t i = 0; i < upto; i++)
        if (memcmp(a + i * size, b + i * size, size) != 0)
          report(j, isa, first + (uint32_t)(at + i), "bytes differ");
      return;
    }
    if (rb < 0) return;
    (*nans)++;
    at += upto + 1;
  }
}

static void *worker(void *arg) {
  job *j = arg;
  float *src = malloc(CHUNK * sizeof *src);
  unsigned char *a = malloc(CHUNK * 4), *b = malloc(CHUNK * 4);
  if (!src || !a || !b) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  for (;;) {
    uint64_t c = atomic_fetch_add(&j->next_chunk, g_step);
    if (c >= NCHUNKS) break;
    uint32_t first = (uint32_t)(c << CHUNK_BITS);
    for (size_t i = 0; i < CHUNK; i++) {
      uint32_t bits = first + (uint32_t)i;
      memcpy(&src[i], &bits, sizeof bits);
    }
    uint64_t nans = 0;
    compare(j, src, CHUNK, first, a, b, &nans);
    atomic_fetch_add(&j->values, CHUNK);
    atomic_fetch_add(&j->nans, nans);
  }
  free(src);
  free(a);
  free(b);
  return NULL;
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(void) {
  fprintf(stderr, "usage: quant_exhaustive [--step K] [--threads T] [--isa NAME]...\n");
  return 2;
}

int main(int argc, char **argv) {
  int threads = 2;
  const char *isas[MAX_ISAS];
  size_t nisas = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--step") == 0 && i + 1 < argc) {
      g_step = strtoull(argv[++i], NULL, 10);
      if (g_step < 1) return usage();
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = atoi(argv[++i]);
      if (threads < 1 || threads > 64) return usage();
    } else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc && nisas < MAX_ISAS) {
      const char *isa = argv[++i];
      if (strcmp(isa, "none") == 0 || qc_simd_select(isa) != 0) {
        fprintf(stderr, "quant_exhaustive: no '%s' kernels in this build or on this CPU\n", isa);
        return 2;
      }
      isas[nisas++] = isa;
    } else {
      return usage();
    }
  }
  if (!nisas) {
    static const char *all[] = {"avx2", "sse2", "neon"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
      if (qc_simd_select(all[i]) == 0) isas[nisas++] = all[i];
  }
  if (!nisas) {
    fprintf(stderr, "quant_exhaustive: this build has no SIMD kernels to check\n");
    return 2;
  }
  printf("quant_exhaustive: kernels");
  for (size_t k = 0; k < nisas; k++) printf(" %s", isas[k]);
  printf(" against the exact path; %s; %d threads\n",
         g_step == 1 ? "all 2^32 patterns" : "sampled", threads);
  if (g_step > 1)
    printf("  every %llu-th chunk of 65536 patterns (%llu of 65536 chunks)\n",
           (unsigned long long)g_step, (unsigned long long)((NCHUNKS + g_step - 1) / g_step));
  int failed = 0;
  double t_all = seconds();
  for (size_t si = 0; si < NSETS && !failed; si++) {
    const param_set *ps = &k_sets[si];
    double t0 = seconds();
    uint64_t values = 0, nans = 0, mismatches = 0;
    for (size_t k = 0; k < nisas; k++) {
      job j = {.set = ps, .isa = isas[k]};
      qc_simd_select(isas[k]);
      pthread_t tid[64];
      for (int t = 0; t < threads; t++) pthread_create(&tid[t], NULL, worker, &j);
      for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
      values = atomic_load(&j.values); /* the same patterns for each kernel */
      nans = atomic_load(&j.nans);
      mismatches += atomic_load(&j.mismatches);
    }
    failed = mismatches != 0;
    printf("  %-28s %-3s scale %-12.9g zp %-6d: %llu patterns (%llu NaN) x %zu kernel%s: "
           "%s (%.1f s)\n",
           ps->what, htpu_dtype_name(ps->dtype), (double)ps->scales[0], ps->zps[0],
           (unsigned long long)values, (unsigned long long)nans, nisas, nisas > 1 ? "s" : "",
           failed ? "MISMATCHES" : "identical", seconds() - t0);
    if (failed)
      printf("    %llu patterns differ (or NaN answers: those end the chunk)\n",
             (unsigned long long)mismatches);
    fflush(stdout);
  }
  printf("quant_exhaustive: %s (%.0f s)\n",
         failed ? "FAILED" : "every kernel matches the exact path", seconds() - t_all);
  return failed;
}
