/*
 * histogram.h - a latency histogram for `htpu bench --histogram` (histogram.c): the samples
 * binned on a log scale between the fastest call and p99, and one more row for the slowest 1%,
 * so one outlier cannot squeeze the body of the distribution into a single bar.
 */
#ifndef HTPU_HISTOGRAM_H
#define HTPU_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

#define CLI_HISTOGRAM_BINS 12

typedef struct cli_histogram_bin {
  uint64_t lo_ns, hi_ns; /* [lo, hi), the last body bin [lo, hi] */
  size_t count;
} cli_histogram_bin;

typedef struct cli_histogram {
  size_t samples;
  unsigned num_bins;          /* body bins, 1..CLI_HISTOGRAM_BINS */
  cli_histogram_bin bins[CLI_HISTOGRAM_BINS];
  cli_histogram_bin above_p99; /* (p99, max]; count 0 when max == p99 */
} cli_histogram;

/* Bins v[0, n) (any order), n >= 1. Returns 0, or -1 when n == 0 or out of memory. */
int cli_histogram_build(const uint64_t *v, size_t n, cli_histogram *out);

/* A titled block of rows "lo .. hi  bar  count  share"; bars in Unicode eighth blocks when
 * `utf8`, else '#'. Returns 0 or -1 (write error). */
int cli_histogram_print(const cli_histogram *h, const char *title, int utf8, FILE *f);

/* "key": {"bins": [{"lo_ns", "hi_ns", "count"}...], "above_p99": {...} | null} */
void cli_histogram_json(cli_json *j, const char *key, const cli_histogram *h);

/* Whether the terminal's locale (LC_ALL, LC_CTYPE, LANG, the first one set) is UTF-8. */
int cli_locale_is_utf8(void);

#endif /* HTPU_HISTOGRAM_H */
