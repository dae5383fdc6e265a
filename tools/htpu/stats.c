/* stats.c - latency samples and percentiles (see stats.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int cli_samples_reserve(cli_samples *s, size_t n) {
  if (n > CLI_SAMPLES_MAX) return -1;
  if (n <= s->cap) return 0;
  uint64_t *v = realloc(s->v, (n ? n : 1) * sizeof(*v));
  if (!v) return -1;
  s->v = v;
  s->cap = n;
  return 0;
}

int cli_samples_push(cli_samples *s, uint64_t ns) {
  if (s->n == s->cap) {
    if (s->cap >= CLI_SAMPLES_MAX) return -1;
    size_t cap = s->cap ? s->cap * 2 : 1024;
    if (cap > CLI_SAMPLES_MAX) cap = CLI_SAMPLES_MAX;
    if (cli_samples_reserve(s, cap) != 0) return -1;
  }
  s->v[s->n++] = ns;
  return 0;
}

void cli_samples_free(cli_samples *s) {
  free(s->v);
  memset(s, 0, sizeof(*s));
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

uint64_t cli_percentile(const uint64_t *sorted, size_t n, unsigned p) {
  /* rank = ceil(p * n / 100) in integers: exact, unlike p / 100.0 * n in floating point
   * (0.9 * 100 is 90.00000000000001 and would give rank 91) */
  size_t rank = (size_t)(((unsigned long long)p * n + 99) / 100);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

int cli_latency_compute(const uint64_t *v, size_t n, cli_latency *out) {
  memset(out, 0, sizeof(*out));
  if (n == 0) return -1;
  uint64_t *s = malloc(n * sizeof(*s));
  if (!s) return -1;
  memcpy(s, v, n * sizeof(*s));
  qsort(s, n, sizeof(*s), cmp_u64);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += (double)s[i];
  out->count = n;
  out->min = s[0];
  out->p50 = cli_percentile(s, n, 50);
  out->p90 = cli_percentile(s, n, 90);
  out->p99 = cli_percentile(s, n, 99);
  out->max = s[n - 1];
  out->sum = sum;
  out->mean = sum / (double)n;
  free(s);
  return 0;
}

void cli_format_ns(double ns, char *buf, size_t len) {
  if (ns < 1e3)
    snprintf(buf, len, "%.0f ns", ns);
  else if (ns < 1e6)
    snprintf(buf, len, "%.3g us", ns / 1e3);
  else if (ns < 1e9)
    snprintf(buf, len, "%.3g ms", ns / 1e6);
  else
    snprintf(buf, len, "%.3g s", ns / 1e9);
}
