/*
 * bench_peers.c - the figures measured in another process, started from here so they land in
 * the same run: numpy doing the same quantization (bench/numpy_peer.py, the peer) and
 * HexagonTpu.predict/3 from Elixir (bench/predict_bench.exs). Each prints one line per figure;
 * a missing numpy or Elixir is said in the table, not skipped silently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static char g_numpy_note[512], g_elixir_note[1600];

void bench_numpy(const bench_config *cfg, bench_results *r) {
  if (!cfg->python) {
    r->numpy_note = "no python3 with numpy found (Debian: apt-get install python3-numpy)";
    printf("\n== numpy: %s ==\n", r->numpy_note);
    return;
  }
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s bench/numpy_peer.py %d 150528 1048576", cfg->python,
           cfg->reps);
  FILE *f = popen(cmd, "r");
  if (!f) {
    r->numpy_note = "could not start python";
    return;
  }
  printf("\n== numpy (%s): np.clip(np.rint(x / scale) + zero_point, 0, 255).astype(np.uint8), "
         "min and median of %d ==\n", cfg->python, cfg->reps);
  char line[400];
  while (fgets(line, sizeof line, f)) {
    size_t n;
    double mn, md;
    if (strncmp(line, "numpy-absent", 12) == 0) {
      snprintf(g_numpy_note, sizeof g_numpy_note, "numpy absent:%.400s", line + 12);
      g_numpy_note[strcspn(g_numpy_note, "\n")] = 0;
      r->numpy_note = g_numpy_note;
      printf("  %s\n", g_numpy_note);
    } else if (sscanf(line, "numpy %zu %lf %lf", &n, &mn, &md) == 3) {
      int si = n == 150528 ? 0 : n == 1048576 ? 1 : -1;
      if (si >= 0) r->numpy_ns[si] = (bench_stat){mn, md};
      printf("  %8zu elements: %8.1f µs (min %.1f)\n", n, md / 1e3, mn / 1e3);
    }
  }
  if (pclose(f) != 0 && !r->numpy_note) r->numpy_note = "numpy_peer.py failed";
}

static int elixir_line(void *arg, const char *line) {
  bench_results *r = arg;
  double mn, md, pct;
  if (sscanf(line, "predict_us %lf %lf", &mn, &md) == 2) {
    r->digits_ex_us = (bench_stat){mn, md};
    printf("  predict: %.2f µs per call (min %.2f)\n", md, mn);
    return 1;
  }
  if (sscanf(line, "over_us %lf %lf %lf", &mn, &md, &pct) == 3) {
    r->digits_over_us = (bench_stat){mn, md};
    printf("  over the C call, same call (predict's wall time - its total_ns): %.2f µs (min "
           "%.2f); %.1f%% of calls on a normal scheduler\n",
           md, mn, pct);
    return 1;
  }
  return 0;
}

void bench_elixir(const bench_config *cfg, bench_results *r) {
  if (!cfg->elixir_cmd) {
    r->elixir_note = "not run (no --elixir command)";
    return;
  }
  int inner = cfg->quick ? 200 : 2000;
  char cmd[1500];
  snprintf(cmd, sizeof cmd, "%s bench/predict_bench.exs models/digits/digits.bin %d %d",
           cfg->elixir_cmd, cfg->reps, inner);
  printf("\n== Elixir: HexagonTpu.predict/3 on digits, f32 in and out, %d batches of %d ==\n",
         cfg->reps, inner);
  int rc = bench_child_lines(cmd, elixir_line, r);
  if (rc != 0 || r->digits_ex_us.med <= 0) {
    snprintf(g_elixir_note, sizeof g_elixir_note, "the Elixir run failed (%s)", cmd);
    r->elixir_note = g_elixir_note;
    printf("  %s\n", g_elixir_note);
  }
}
