/*
 * stats.h - latency samples and their summary for `htpu bench` (stats.c), and the value
 * summary of an output tensor for `htpu run` (summary.c).
 */
#ifndef HTPU_STATS_H
#define HTPU_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"

/* ---- stats.c: latency ---- */

/* A growing array of nanosecond samples. The cap bounds memory for --duration runs: 8 bytes a
 * sample, two series, so 10M samples are 160 MB, on a board with a few GB. */
#define CLI_SAMPLES_MAX 10000000u

typedef struct cli_samples {
  uint64_t *v;
  size_t n, cap;
} cli_samples;

/* Reserves room for `n` samples up front (the -n case: one allocation, no growth while
 * timing). Returns 0 or -1 (out of memory, or n > CLI_SAMPLES_MAX). */
int cli_samples_reserve(cli_samples *s, size_t n);
/* Appends; grows geometrically (x2) up to CLI_SAMPLES_MAX. Returns 0, or -1 when full or out of
 * memory (the sample is not stored). */
int cli_samples_push(cli_samples *s, uint64_t ns);
void cli_samples_free(cli_samples *s);

typedef struct cli_latency {
  size_t count;
  uint64_t min, p50, p90, p99, max; /* ns */
  double mean;                      /* ns */
  double sum;                       /* ns */
} cli_latency;

/* Nearest-rank percentile of sorted[0, n), n >= 1, 0 < p <= 100: the smallest sample such that
 * at least p% of the samples are <= it, i.e. sorted[ceil(p/100 * n) - 1]. Always an observed
 * value (no interpolation), and monotonic in p, so p50 <= p90 <= p99 <= max holds exactly. */
uint64_t cli_percentile(const uint64_t *sorted, size_t n, unsigned p);

/* Summarizes v[0, n) (sorting a copy; v is left as recorded). Returns 0, or -1 when n == 0 or
 * the copy cannot be allocated. */
int cli_latency_compute(const uint64_t *v, size_t n, cli_latency *out);

/* "850 ns", "12.3 us", "4.56 ms", "1.23 s": three significant digits in a unit that keeps the
 * number readable. */
void cli_format_ns(double ns, char *buf, size_t len);

/* ---- summary.c: output values ---- */

#define CLI_SUMMARY_FIRST 8

typedef struct cli_value_summary {
  size_t count;     /* elements */
  size_t nan_count; /* NaNs are left out of min/max/mean/argmax */
  size_t counted;   /* elements that took part (all but NaNs; infinities count) */
  double min, max, mean;
  size_t argmax;    /* first index of max */
  int has_argmax;   /* the tensor is 1-D-ish: at most one dimension is larger than 1 */
  size_t num_first;
  double first[CLI_SUMMARY_FIRST];
} cli_value_summary;

/* Element i of a buffer of `dtype` as a double (f16 converted exactly). */
double cli_value_at(htpu_dtype dtype, const void *data, size_t i);

/* Summarizes `n` elements of `dtype` in data, for a tensor with the given dims. */
void cli_summarize(htpu_dtype dtype, const void *data, size_t n, const uint32_t *dims,
                   uint32_t rank, cli_value_summary *out);

#endif /* HTPU_STATS_H */
