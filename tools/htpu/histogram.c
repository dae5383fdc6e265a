/* histogram.c - binning and drawing latency samples (see histogram.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "histogram.h"
#include "stats.h"

#define BAR_WIDTH 40

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Edges e[0] = lo < e[1] < ... < e[k] = hi, log-spaced (latencies are skewed: equal widths
 * would put the whole body in the first bar). Equal rounded edges are merged, so a narrow
 * range gets fewer bins rather than empty ones of zero width. Returns k >= 1. */
static unsigned log_edges(uint64_t lo, uint64_t hi, uint64_t e[CLI_HISTOGRAM_BINS + 1]) {
  e[0] = lo;
  if (hi <= lo) {
    e[1] = hi;
    return 1;
  }
  unsigned k = 0;
  double l0 = log((double)(lo ? lo : 1)), l1 = log((double)hi);
  for (unsigned i = 1; i <= CLI_HISTOGRAM_BINS; i++) {
    uint64_t x = i == CLI_HISTOGRAM_BINS
                     ? hi
                     : (uint64_t)llround(exp(l0 + (l1 - l0) * i / CLI_HISTOGRAM_BINS));
    if (x <= e[k]) continue;
    if (x > hi) x = hi;
    e[++k] = x;
    if (x == hi) break;
  }
  return k;
}

int cli_histogram_build(const uint64_t *v, size_t n, cli_histogram *out) {
  memset(out, 0, sizeof(*out));
  if (n == 0) return -1;
  uint64_t *s = malloc(n * sizeof(*s));
  if (!s) return -1;
  memcpy(s, v, n * sizeof(*s));
  qsort(s, n, sizeof(*s), cmp_u64);
  uint64_t p99 = cli_percentile(s, n, 99), max = s[n - 1];
  uint64_t e[CLI_HISTOGRAM_BINS + 1];
  unsigned k = log_edges(s[0], p99, e);
  out->samples = n;
  out->num_bins = k;
  for (unsigned b = 0; b < k; b++) out->bins[b] = (cli_histogram_bin){e[b], e[b + 1], 0};
  out->above_p99 = (cli_histogram_bin){p99, max, 0};
  /* one pass over the sorted samples: each bin takes [lo, hi), the last body bin also hi */
  unsigned b = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] > p99) {
      out->above_p99.count++;
      continue;
    }
    while (b + 1 < k && s[i] >= out->bins[b].hi_ns) b++;
    out->bins[b].count++;
  }
  free(s);
  return 0;
}

/* width eighths of a bar; a nonzero count always shows at least one eighth */
static void bar(char *buf, size_t len, size_t count, size_t peak, int utf8) {
  static const char *eighth[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  size_t units = peak ? (count * BAR_WIDTH * 8 + peak / 2) / peak : 0;
  if (count && !units) units = 1;
  size_t used = 0;
  buf[0] = '\0';
  if (!utf8) units = (units + 7) / 8 * 8; /* whole characters */
  for (size_t i = 0; i < units / 8 && used + 4 < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s", utf8 ? "█" : "#");
  if (utf8 && units % 8 && used + 4 < len)
    snprintf(buf + used, len - used, "%s", eighth[units % 8]);
}

static int row(FILE *f, const char *lo, const char *hi, const char *b, size_t cols,
               size_t count, size_t samples, const char *note) {
  /* pad the bar by display columns, not bytes (a block is 3 bytes) */
  int w = fprintf(f, "  %9s .. %-9s  %s%*s %9zu %6.2f%%%s\n", lo, hi, b,
                  (int)(BAR_WIDTH - cols), "", count, 100.0 * (double)count / (double)samples,
                  note);
  return w < 0 ? -1 : 0;
}

static size_t display_cols(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

int cli_histogram_print(const cli_histogram *h, const char *title, int utf8, FILE *f) {
  size_t peak = h->above_p99.count;
  for (unsigned b = 0; b < h->num_bins; b++)
    if (h->bins[b].count > peak) peak = h->bins[b].count;
  if (fprintf(f, "%s, %zu calls (log scale up to p99, then the slowest 1%%)\n", title,
              h->samples) < 0)
    return -1;
  char lo[32], hi[32], b[BAR_WIDTH * 4 + 8];
  for (unsigned i = 0; i < h->num_bins; i++) {
    const cli_histogram_bin *x = &h->bins[i];
    cli_format_ns((double)x->lo_ns, lo, sizeof(lo));
    cli_format_ns((double)x->hi_ns, hi, sizeof(hi));
    bar(b, sizeof(b), x->count, peak, utf8);
    if (row(f, lo, hi, b, display_cols(b), x->count, h->samples,
            i + 1 == h->num_bins ? "  (p99)" : "") != 0)
      return -1;
  }
  if (h->above_p99.count) {
    cli_format_ns((double)h->above_p99.lo_ns, lo, sizeof(lo));
    cli_format_ns((double)h->above_p99.hi_ns, hi, sizeof(hi));
    bar(b, sizeof(b), h->above_p99.count, peak, utf8);
    if (row(f, lo, hi, b, display_cols(b), h->above_p99.count, h->samples,
            "  (above p99, to max)") != 0)
      return -1;
  }
  return 0;
}

static void json_bin(cli_json *j, const char *key, const cli_histogram_bin *b) {
  cli_json_object_begin(j, key);
  cli_json_uint(j, "lo_ns", b->lo_ns);
  cli_json_uint(j, "hi_ns", b->hi_ns);
  cli_json_uint(j, "count", b->count);
  cli_json_object_end(j);
}

void cli_histogram_json(cli_json *j, const char *key, const cli_histogram *h) {
  cli_json_object_begin(j, key);
  cli_json_array_begin(j, "bins", 0);
  for (unsigned b = 0; b < h->num_bins; b++) json_bin(j, NULL, &h->bins[b]);
  cli_json_array_end(j);
  if (h->above_p99.count)
    json_bin(j, "above_p99", &h->above_p99);
  else
    cli_json_null(j, "above_p99");
  cli_json_object_end(j);
}

int cli_locale_is_utf8(void) {
  const char *names[] = {"LC_ALL", "LC_CTYPE", "LANG"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const char *v = getenv(names[i]);
    if (v && *v) return strcasestr(v, "utf-8") != NULL || strcasestr(v, "utf8") != NULL;
  }
  return 0;
}
