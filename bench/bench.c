/*
 * bench.c - `make bench`: where the host side stands against the memory limit, in one run.
 *
 *   bench [--reps N] [--quick] [--build DIR] [--python PY] [--cv2-python PY] [--elixir CMD]
 *         [--isa ISA] [--only LIST]
 *
 * Sections, in order (--only sweep,kernels,numpy,calls,callers,elixir,profile,batch,deadline,
 * vision,load picks some): the
 * quantization kernels from 1 KB to 64 MB and per type and layout (bench_kernels.c), numpy
 * doing the same conversion (bench_peers.c), whole executes at MobileNet-v2 and digits I/O
 * (bench_calls.c) and 4 concurrent callers (bench_callers.c), Elixir's predict
 * (bench_peers.c), profiling (bench_profile.c), 64 digits rows with a batch multiple
 * (bench_batch.c), deadlines (bench_deadline.c), vision (bench_vision.c: frames and heads,
 * next to OpenCV), loading (bench_load.c); then the summary: issue 11's table, each row a ratio
 * measured in this run, next to its "Done when" threshold and its goal, and the vision and
 * loading tables. docs/performance.md reads it.
 *
 * DIR (default build/plain) holds the reference libraries and bench-models/mobilenet_io.bin;
 * PY is a python3 with numpy (none: the numpy row says so); CMD runs an Elixir script (make
 * bench passes `mix run`). Timings depend on the machine and its load: nothing here fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench.h"
#include "quant/quant.h"

static int wanted(const char *only, const char *section) {
  if (!only) return 1;
  size_t n = strlen(section);
  for (const char *p = only; (p = strstr(p, section)) != NULL; p += n)
    if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
  return 0;
}

/* One row: higher_better says which way the threshold points. */
static void row(const char *what, bench_stat v, int measured, const char *unit,
                int higher_better, double done, double goal) {
  char d[24] = "-", g[24] = "-", status[16] = "n/a";
  const char *cmp = higher_better ? ">=" : "<=";
  if (done > 0) snprintf(d, sizeof d, "%s %.2f%s", cmp, done, unit);
  if (goal > 0) snprintf(g, sizeof g, "%s %.2f%s", cmp, goal, unit);
  if (!measured) {
    printf("| %-52s | %-21s | %-11s | %-11s | %-9s |\n", what, "not measured", d, g, "-");
    return;
  }
  int ok_done = higher_better ? v.med >= done : v.med <= done;
  int ok_goal = higher_better ? v.med >= goal : v.med <= goal;
  if (done > 0 || goal > 0)
    snprintf(status, sizeof status, "%s",
             goal > 0 && ok_goal ? "goal" : done > 0 && ok_done ? "done" : "BELOW");
  char val[40];
  snprintf(val, sizeof val, "%.2f%s (min %.2f%s)", v.med, unit, v.min, unit);
  printf("| %-52s | %-21s | %-11s | %-11s | %-9s |\n", what, val, d, g, status);
}

static int has(bench_stat s) { return s.med > 0; }

static const char *const size_name[2] = {"150,528", "1M"};

/* The quantization rows: each type and layout against memcpy, then numpy against the SIMD u8
 * kernel. */
static void summary_quant(const bench_results *r) {
  char what[80];
  const struct {
    const char *name;
    const bench_stat *v;
  } q[] = {{"u8", r->q_u8}, {"i8", r->q_i8}, {"u16", r->q_u16}, {"i16", r->q_i16}};
  for (size_t k = 0; k < 4; k++)
    for (int s = 0; s < 2; s++) {
      snprintf(what, sizeof what, "f32 -> %s quantize vs memcpy, %s", q[k].name, size_name[s]);
      row(what, q[k].v[s], has(q[k].v[s]), "x", 1, 0.5, 0.7);
    }
  for (int s = 0; s < 2; s++) {
    snprintf(what, sizeof what, "  (the exact scalar path, u8, %s)", size_name[s]);
    row(what, r->q_u8_exact[s], has(r->q_u8_exact[s]), "x", 1, 0, 0);
  }
  for (int s = 0; s < 2; s++) {
    snprintf(what, sizeof what, "per-axis quantize, last axis, 3 ch, %s", size_name[s]);
    row(what, r->q_last3[s], has(r->q_last3[s]), "x", 1, 0.35, 0.5);
    snprintf(what, sizeof what, "per-axis quantize, last axis, 64 ch, %s", size_name[s]);
    row(what, r->q_last64[s], has(r->q_last64[s]), "x", 1, 0.35, 0.5);
  }
  for (int s = 0; s < 2; s++) {
    snprintf(what, sizeof what, "per-axis dequantize, last axis, 3 ch, %s", size_name[s]);
    row(what, r->dq_last3[s], has(r->dq_last3[s]), "x", 1, 0, 0.7);
    snprintf(what, sizeof what, "per-axis dequantize, last axis, 64 ch, %s", size_name[s]);
    row(what, r->dq_last64[s], has(r->dq_last64[s]), "x", 1, 0, 0.7);
  }
  for (int s = 0; s < 2; s++) {
    /* how many times slower numpy is than the SIMD u8 kernel */
    bench_stat v = {0, 0};
    int m = has(r->numpy_ns[s]) && r->simd_u8_ns[s][1] > 0;
    if (m) v = (bench_stat){r->numpy_ns[s].min / r->simd_u8_ns[s][0],
                            r->numpy_ns[s].med / r->simd_u8_ns[s][1]};
    snprintf(what, sizeof what, "u8 quantize vs numpy (times faster), %s", size_name[s]);
    row(what, v, m, "x", 1, 8, 8);
  }
  if (r->numpy_note) printf("|   numpy: %-105s |\n", r->numpy_note);
}

/* The call rows: MobileNet-v2 I/O overhead, Elixir's predict, 4 callers. */
static void summary_calls(const bench_results *r) {
  row("MobileNet-v2 I/O host overhead / memcpy (FastRPC)", r->call_mnet_f32,
      has(r->call_mnet_f32), "x", 0, 2.5, 1.5);
  row("  the same, scratch in ordinary memory", r->call_mnet_f32_plain,
      has(r->call_mnet_f32_plain), "x", 0, 0, 0);
  row("Elixir predict over the C call, digits (us)", r->digits_over_us, has(r->digits_over_us),
      "", 0, 3, 3);
  bench_stat ex = {r->digits_ex_us.min - r->digits_c_us.min,
                   r->digits_ex_us.med - r->digits_c_us.med};
  row("  predict's wall time - the C section's (us)", ex,
      has(r->digits_ex_us) && has(r->digits_c_us), "", 0, 0, 0);
  if (r->elixir_note) printf("|   Elixir: %-104s |\n", r->elixir_note);
  row("4 callers, 1.37 ms execute: calls/s x execute time", r->callers4, has(r->callers4), "x",
      1, 0.95, 0.95);
  row("  the same, x execute time alone", r->callers4_solo, has(r->callers4_solo), "x", 1, 0,
      0);
  if (has(r->callers4))
    printf("\n4 callers: %.1f calls/s, execute %.0f µs (1 / execute = %.1f/s), %.0f µs between "
           "executes\n",
           r->callers4_calls_per_s, r->callers4_exec_us, 1e6 / r->callers4_exec_us,
           r->callers4_gap_us);
}

/* The deadline rows: stalls, closes, priorities, the gap between executes in flight. */
static void summary_deadlines(const bench_results *r) {
  row("a 5 s stalled execute, timeout 200 ms, returns after (ms)", r->stall_200_ms,
      has(r->stall_200_ms), "", 0, 250, 250);
  row("close with 8 calls queued on a stalled graph (ms)", r->close8_ms, has(r->close8_ms), "",
      0, 50, 50);
  row("HIGH call behind 8 queued LOW: executes waited", r->high_waited, 1, "", 0, 1, 1);
  row("gap between executes, 4 submitted in flight (us)", r->inflight4_gap_us,
      has(r->inflight4_gap_us), "", 0, 3, 3);
  row("  the same, median of the gaps between two executes", r->inflight4_gap_med_us,
      has(r->inflight4_gap_med_us), "", 0, 3, 3);
  row("  the same through graphExecuteAsync (304 on; no HTP has it)",
      r->inflight4_async_gap_us, has(r->inflight4_async_gap_us), "", 0, 0, 0);
}

/* The profiling rows: throughput with 1 call in 100 profiled, read-back, resident memory. */
static void summary_profile(const bench_results *r) {
  row("profile_every: 100 (detailed, 100 ops), predict/3", r->prof_ex_throughput,
      has(r->prof_ex_throughput), "x", 1, 0.99, 0.99);
  row("  the same with scheduler: :auto (the default)", r->prof_ex_auto, has(r->prof_ex_auto),
      "x", 1, 0, 0);
  if (r->prof_ex_note) printf("|   Elixir: %-104s |\n", r->prof_ex_note);
  row("  the same through the C API, 1 call in 100", r->prof_throughput,
      has(r->prof_throughput), "x", 1, 0.99, 0.99);
  row("reading one 100-op detailed profile back (us)", r->prof_read_us, has(r->prof_read_us),
      "", 0, 100, 100);
  if (r->prof_rss_calls) {
    char val[40];
    snprintf(val, sizeof val, "%+.2f%%", r->prof_rss_growth_pct);
    printf("| %-52s | %-21s | %-11s | %-11s | %-9s |\n",
           "resident memory after the profiled calls vs 1,000", val, "<= +1.00%", "<= +1.00%",
           r->prof_rss_growth_pct <= 1.0 ? "goal" : "BELOW");
    printf("|   %ld profiled calls (resident set from /proc/self/statm)%*s|\n", r->prof_rss_calls,
           58, "");
  }
}

/* The batch-multiple rows, and the MobileNet-v2 host time per call. */
static void summary_batch(const bench_results *r) {
  if (r->batch_executes) {
    char val[40];
    snprintf(val, sizeof val, "%u (vs %u)", r->batch_executes, r->batch_executes_chunked);
    printf("| %-52s | %-21s | %-11s | %-11s | %-9s |\n",
           "64 digits rows, batch multiple: executes (vs chunks)", val, "<= 1", "<= 1",
           r->batch_executes <= 1 ? "goal" : "BELOW");
  }
  row("  64 chunks' time / one batch-multiple execute's", r->batch_ratio, has(r->batch_ratio),
      "x", 1, 0, 0);
  if (r->call_mnet_host_us > 0)
    printf("MobileNet-v2 I/O host time per call: %.1f µs (%.1f%% of a 1.37 ms execute)\n",
           r->call_mnet_host_us, 100 * r->call_mnet_host_us / 1370);
}

void bench_summary(const bench_results *r) {
  printf("\n== summary: issue 11's table, measured in this run ==\n");
  printf("median (min): for ratios to memcpy, memcpy median / median (fastest / fastest); "
         "status: \"goal\" meets the goal column, \"done\" the Done-when threshold\n\n");
  printf("| %-52s | %-21s | %-11s | %-11s | %-9s |\n", "what", "median (min)", "done when",
         "goal", "status");
  static const char dashes[] = "------------------------------------------------------";
  printf("|%.54s|%.23s|%.13s|%.13s|%.11s|\n", dashes, dashes, dashes, dashes, dashes);
  summary_quant(r);
  summary_calls(r);
  summary_deadlines(r);
  summary_profile(r);
  summary_batch(r);
}

static void usage(void) {
  fprintf(stderr, "usage: bench [--reps N] [--quick] [--build DIR] [--python PY] [--elixir CMD] "
                  "[--cv2-python PY] [--isa auto|avx2|sse2|neon|none] [--only sweep,kernels,numpy,calls,"
                  "callers,profile,elixir,batch,deadline,vision,load]\n");
}

int main(int argc, char **argv) {
  bench_config cfg = {31, "build/plain", NULL, NULL, 0, NULL};
  const char *isa = "auto", *only = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) {
      cfg.quick = 1;
      cfg.reps = 5;
      continue;
    }
    if (!v) {
      usage();
      return 2;
    }
    i++;
    if (strcmp(a, "--reps") == 0)
      cfg.reps = atoi(v);
    else if (strcmp(a, "--build") == 0)
      cfg.build_dir = v;
    else if (strcmp(a, "--python") == 0)
      cfg.python = *v ? v : NULL;
    else if (strcmp(a, "--cv2-python") == 0)
      cfg.cv2_python = *v ? v : NULL;
    else if (strcmp(a, "--elixir") == 0)
      cfg.elixir_cmd = *v ? v : NULL;
    else if (strcmp(a, "--isa") == 0)
      isa = v;
    else if (strcmp(a, "--only") == 0)
      only = v;
    else {
      usage();
      return 2;
    }
  }
  if (cfg.reps < 1) cfg.reps = 1;
  if (qc_simd_select(isa) != 0) {
    fprintf(stderr, "bench: no '%s' kernels in this build or on this CPU\n", isa);
    return 2;
  }
  struct utsname u;
  time_t now = time(NULL);
  char date[40];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  uname(&u);
  printf("bench: %s, %s %s, %s kernels, %d repeats%s\n", date, u.sysname, u.machine,
         qc_simd_name(), cfg.reps, cfg.quick ? " (--quick: a smoke run, not figures)" : "");
  fflush(stdout);
  bench_results r;
  memset(&r, 0, sizeof r);
  if (wanted(only, "sweep")) bench_sweep(&cfg);
  if (wanted(only, "kernels")) bench_kernels(&cfg, &r);
  if (wanted(only, "numpy")) bench_numpy(&cfg, &r);
  if (wanted(only, "calls")) bench_calls(&cfg, &r);
  if (wanted(only, "callers")) bench_callers(&cfg, &r);
  fflush(stdout);
  if (wanted(only, "elixir")) bench_elixir(&cfg, &r);
  if (wanted(only, "profile")) bench_profile(&cfg, &r);
  if (wanted(only, "batch")) bench_batch(&cfg, &r);
  if (wanted(only, "deadline")) bench_deadline(&cfg, &r);
  if (wanted(only, "vision")) bench_vision(&cfg);
  if (wanted(only, "load")) bench_load(&cfg, &r);
  if (!only) bench_summary(&r);
  if (wanted(only, "vision")) bench_vision_summary();
  if (wanted(only, "load")) bench_load_summary(&r);
  return 0;
}
