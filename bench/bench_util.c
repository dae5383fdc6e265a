/* bench_util.c - timing, statistics and child runs for bench/ (bench.h). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_min(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
  return m;
}

bench_stat bench_stat_of(double *v, int n) {
  bench_stat s;
  s.min = bench_min(v, n);
  s.med = bench_median(v, n);
  return s;
}

static volatile uint64_t g_sink;
void bench_consume(const void *p, size_t len) {
  const unsigned char *b = p;
  g_sink += b[0] + b[len / 2] + b[len - 1];
}

static uint64_t g_rng = 88172645463325252ull;
double bench_rnd01(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) * 0x1p-53;
}

int bench_child_lines(const char *cmd, int (*line)(void *arg, const char *text), void *arg) {
  fflush(stdout);
  FILE *f = popen(cmd, "r");
  FILE *held = tmpfile();
  char text[400];
  int took = 0;
  while (f && fgets(text, sizeof text, f)) {
    if (line(arg, text))
      took = 1;
    else if (held)
      fputs(text, held);
  }
  int st = f ? pclose(f) : -1;
  int failed = !took || st != 0;
  if (failed && held) {
    rewind(held);
    while (fgets(text, sizeof text, held)) fputs(text, stdout);
  }
  if (held) fclose(held);
  return failed ? -1 : 0;
}
