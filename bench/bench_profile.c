/*
 * bench_profile.c - what profiling costs, on models/chain100 (100 ops) and the reference
 * backend (docs/profiling.md, docs/performance.md):
 *   - throughput with one call in 100 profiled at the detailed level (what profile_every: 100
 *     does) against none: rounds of 1,000 plain calls and 1,000 sampled calls, alternated so
 *     that drift in the machine's speed falls on both; the ratio per round, median and min;
 *   - the host time to read one profile back and turn it into the caller's tree
 *     (htpu_profile.read_ns);
 *   - resident memory after many profiled calls against after 1,000 (each profile freed as a
 *     user would): the handles are per call and freed, so it must not grow;
 *   - the first figure again where an application pays it: `profile_every: 100` on
 *     HexagonTpu.load_model/2, calls through HexagonTpu.predict/3 (bench/profile_every.exs, run
 *     as a child with --elixir's command), the profile summarized and sent as telemetry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define ROUND 1000
#define EVERY 100

static long rss_pages(void) {
  long size = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
  fclose(f);
  return resident;
}

typedef struct chain_io {
  uint8_t x[1024], y[1024];
  htpu_io in, out;
} chain_io;

static int call(htpu_graph *g, chain_io *io, int level, htpu_profile **p) {
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.profile_level = level;
  o.profile = p;
  return htpu_graph_execute_ex(g, &io->in, 1, &io->out, 1, level ? &o : NULL, NULL);
}

/* One round of n calls, every `every`-th profiled (0: none); calls/s, or -1 on a failure. */
static double round_rate(htpu_graph *g, chain_io *io, int n, int every) {
  double t0 = bench_now_ns();
  for (int i = 0; i < n; i++) {
    htpu_profile *p = NULL;
    int sampled = every && i % every == 0;
    if (call(g, io, sampled ? HTPU_PROFILE_DETAILED : HTPU_PROFILE_OFF, &p) != 0) return -1;
    htpu_profile_free(p);
  }
  return n * 1e9 / (bench_now_ns() - t0);
}

static char g_prof_ex_note[1600];

static int profile_every_line(void *arg, const char *line) {
  bench_stat *out = arg;
  double mn, md;
  if (sscanf(line, "profile_every_ratio %lf %lf", &mn, &md) == 2) {
    *out = (bench_stat){mn, md};
    printf("  through HexagonTpu.predict/3, profile_every: 100: median %.4f, min %.4f\n", md, mn);
    return 1;
  }
  if (strncmp(line, "profiled calls seen", 19) == 0) {
    printf("  %s", line);
    return 1;
  }
  return 0;
}

/* profile_every: 100 where an application pays it (bench/profile_every.exs). */
static void bench_profile_elixir(const bench_config *cfg, bench_results *r, const char *model) {
  if (!cfg->elixir_cmd) {
    r->prof_ex_note = "not run (no --elixir command)";
    return;
  }
  /* :async first: both models' calls on the path a sampled call may take, so the ratio is
   * the profiles' cost alone; then the default :auto, where chain100 (~150 us here) sits at
   * the short-call limit and its calls move on and off the short path for other reasons
   * (bench/profile_every.exs) */
  static const char *const scheduler[2] = {"async", "auto"};
  bench_stat *out[2] = {&r->prof_ex_throughput, &r->prof_ex_auto};
  for (int i = 0; i < 2; i++) {
    char cmd[1500];
    snprintf(cmd, sizeof cmd, "%s bench/profile_every.exs %s %d %d %s", cfg->elixir_cmd, model,
             ROUND, cfg->quick ? 3 : cfg->reps, scheduler[i]);
    if (bench_child_lines(cmd, profile_every_line, out[i]) != 0 || out[i]->med <= 0) {
      snprintf(g_prof_ex_note, sizeof g_prof_ex_note, "the Elixir run failed (%s)", cmd);
      r->prof_ex_note = g_prof_ex_note;
      printf("  %s\n", g_prof_ex_note);
      return;
    }
  }
}

void bench_profile(const bench_config *cfg, bench_results *r) {
  printf("\n== profiling: models/chain100 (100 ops), reference backend ==\n");
  char path[1024];
  bench_lib_path(path, sizeof path, cfg, "bench-models/chain100.bin");
  bench_model m;
  if (bench_model_open(cfg, path, 0, &m) != 0) return;
  chain_io io;
  for (int i = 0; i < 1024; i++) io.x[i] = (uint8_t)(i * 37);
  io.in = (htpu_io){io.x, sizeof io.x, HTPU_U8};
  io.out = (htpu_io){io.y, sizeof io.y, HTPU_U8};
  int reps = cfg->quick ? 3 : cfg->reps;
  double *ratio = calloc((size_t)reps, sizeof *ratio), *read = calloc((size_t)reps, sizeof *read);
  if (!ratio || !read) goto out;
  (void)round_rate(m.g, &io, ROUND, 0); /* warm-up */
  for (int k = 0; k < reps; k++) {
    double plain = k % 2 ? round_rate(m.g, &io, ROUND, 0) : 0;
    double sampled = round_rate(m.g, &io, ROUND, EVERY);
    if (!(k % 2)) plain = round_rate(m.g, &io, ROUND, 0);
    if (plain <= 0 || sampled <= 0) {
      printf("  a call failed: %s\n", htpu_last_error());
      goto out;
    }
    ratio[k] = sampled / plain;
    htpu_profile *p = NULL;
    if (call(m.g, &io, HTPU_PROFILE_DETAILED, &p) != 0 || !p || p->num_ops != 100) {
      printf("  profiling failed: %s\n", htpu_last_error());
      htpu_profile_free(p);
      goto out;
    }
    read[k] = p->read_ns / 1000.0;
    htpu_profile_free(p);
  }
  r->prof_throughput = bench_stat_of(ratio, reps);
  r->prof_read_us = bench_stat_of(read, reps);
  printf("  calls/s with 1 in %d profiled / without: median %.4f, min %.4f (%d rounds of %d)\n",
         EVERY, r->prof_throughput.med, r->prof_throughput.min, reps, ROUND);
  printf("  reading one profile back (207 events, 100 ops): median %.1f µs, min %.1f µs\n",
         r->prof_read_us.med, r->prof_read_us.min);

  /* memory: every call profiled, so the handles' lifetime is what is measured */
  long n = cfg->quick ? 10000 : 100000, base = 0;
  for (long i = 0; i < n; i++) {
    htpu_profile *p = NULL;
    if (call(m.g, &io, HTPU_PROFILE_DETAILED, &p) != 0) {
      printf("  a profiled call failed: %s\n", htpu_last_error());
      goto out;
    }
    htpu_profile_free(p);
    if (i + 1 == 1000) base = rss_pages();
  }
  long end = rss_pages();
  htpu_stats st;
  htpu_stats_get(&st);
  if (base > 0) {
    r->prof_rss_growth_pct = 100.0 * (double)(end - base) / (double)base;
    r->prof_rss_calls = n;
    printf("  resident set after 1,000 profiled calls %ld kB, after %ld %ld kB (%+.2f%%); live "
           "profile handles %llu\n",
           base * (sysconf(_SC_PAGESIZE) / 1024), n, end * (sysconf(_SC_PAGESIZE) / 1024),
           r->prof_rss_growth_pct, (unsigned long long)st.live_profiles);
  }
out:
  free(ratio);
  free(read);
  bench_model_close(&m);
  bench_profile_elixir(cfg, r, path);
}
