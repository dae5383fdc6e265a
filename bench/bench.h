/*
 * bench.h - what the sections of `make bench` share (bench/bench.c runs them in order).
 *
 * Every figure is a ratio to a baseline timed in the same loop, interleaved with what it is
 * compared with, so both see the same clock, cache, frequency and load: min/median over the
 * repeats. Nothing here passes or fails a build; the summary only marks rows against the
 * issue's thresholds.
 */
#ifndef HTPU_BENCH_H
#define HTPU_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"

double bench_now_ns(void);
/* Sorts v in place; the median of n > 0 values. */
double bench_median(double *v, int n);
double bench_min(const double *v, int n);
/* Keeps the compiler from discarding an output. */
void bench_consume(const void *p, size_t len);
double bench_rnd01(void);

/* A time series: min and median of its repeats. */
typedef struct bench_stat {
  double min, med;
} bench_stat;
bench_stat bench_stat_of(double *v, int n);

/* The figures the summary table is made of, filled by the sections that measure them (a
 * field left 0 was not measured: the summary says so). Ratios: baseline time / time (higher
 * is faster) unless named otherwise. */
typedef struct bench_results {
  /* [0]: 150,528 elements, [1]: 1,048,576; ratio to memcpy of the f32 bytes */
  bench_stat q_u8[2], q_i8[2], q_u16[2], q_i16[2];
  bench_stat q_u8_exact[2];
  bench_stat q_last3[2], q_last64[2];     /* per-axis quantize, channel last (u8) */
  bench_stat dq_last3[2], dq_last64[2];   /* per-axis dequantize, channel last (u8) */
  double simd_u8_ns[2][2];                /* u8 per-tensor quantize time: [size][min, med] */
  bench_stat numpy_ns[2];                 /* numpy's time for the same conversion */
  const char *numpy_note;                 /* why numpy is missing, when it is */
  /* whole call at MobileNet-v2 I/O: host time (total - execute) / memcpy of the f32 bytes,
   * so lower is better */
  bench_stat call_mnet_f32, call_mnet_f32_plain;
  double call_mnet_host_us;
  /* digits: per-call wall time through C, and through Elixir predict (µs) */
  bench_stat digits_c_us, digits_ex_us;
  /* predict's wall time minus the same call's total_ns (bench/predict_bench.exs) */
  bench_stat digits_over_us;
  const char *elixir_note;
  /* 4 callers, 1.37 ms injected execute: calls/s x the execute time measured in the run
   * (callers4) and alone just before (callers4_solo); the time between executes */
  bench_stat callers4, callers4_solo;
  double callers4_exec_us, callers4_calls_per_s, callers4_gap_us;
  /* profiling (bench_profile.c, models/chain100): calls/s with 1 in 100 calls profiled at the
   * detailed level / calls/s without; reading one profile back (µs); resident memory after
   * many profiled calls / after 1,000, in percent growth */
  bench_stat prof_throughput, prof_read_us;
  bench_stat prof_ex_throughput; /* profile_every: 100 through HexagonTpu.predict/3, :async */
  bench_stat prof_ex_auto;       /* the same with the default scheduler (:auto) */
  const char *prof_ex_note;      /* why that row is empty, when it is */
  double prof_rss_growth_pct;
  long prof_rss_calls;
  /* batch multiple (bench_batch.c): 64 digits rows as 64 chunked calls / as one call with
   * batch_multiple 64 (time ratio); graphExecute calls each way */
  bench_stat batch_ratio;
  uint32_t batch_executes, batch_executes_chunked;
  /* deadlines (bench_deadline.c): ms until a 5 s stall with a 200 ms timeout returned; ms for
   * a close with 8 calls queued behind a stall; executes a HIGH call waited behind 8 queued
   * LOW ones; µs between executes with 4 submitted calls in flight (200 µs execute) */
  bench_stat stall_200_ms, close8_ms, high_waited, inflight4_gap_us, inflight4_gap_med_us,
      inflight4_async_gap_us;
  /* loading (bench_load.c): anonymous memory a load of a load_binary_mib binary adds, in
   * percent of the binary, mapped / copied / copied without PERSISTENT_BINARY; the backend's
   * spill-fill MiB for 4 contexts of 20 MiB, shared and each its own; the wall time (ms) of 4
   * loads of 500 ms: one list call, starting a spill-fill group, joining one, one after
   * another; graphs deserialized when 1 of 4 / all are asked for; calls/s of two models at
   * once with a shared spill-fill buffer / each its own */
  double load_binary_mib;
  bench_stat load_anon_mapped_pct, load_anon_copied_pct, load_anon_before_pct;
  double load_sf_shared_mib, load_sf_own_mib;
  bench_stat load4_list_ms, load4_shared_ms, load4_warm_ms, load4_seq_ms;
  uint64_t load_graphs_one, load_graphs_all;
  bench_stat load_group_exec;
} bench_results;

typedef struct bench_config {
  int reps;
  const char *build_dir;  /* the reference libraries and models */
  const char *python;     /* with numpy; NULL: none found */
  const char *elixir_cmd; /* runs bench/predict_bench.exs; NULL: skip */
  int quick;              /* fewer repeats (a smoke run) */
  const char *cv2_python; /* with cv2 and numpy (bench_vision.c's peer); NULL: none found */
} bench_config;

/* Runs cmd (a child whose output is parsed, e.g. an Elixir script) and hands each output line
 * to line(arg, text), which returns 1 for a line it took. The lines it did not take (mix's
 * compile output) are shown only when the run fails: the child exits non-zero or no line was
 * taken. Returns 0 on success, -1 on failure. */
int bench_child_lines(const char *cmd, int (*line)(void *arg, const char *text), void *arg);

/* bench_model.c: a reference runtime (fastrpc: with the reference FastRPC stand-in, so
 * scratch blocks and shared buffers are FastRPC memory; else without), the model at path and
 * its only graph. Returns 0, or an error (printed); bench_model_close in either case. */
typedef struct bench_model {
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *g;
} bench_model;
void bench_lib_path(char *buf, size_t len, const bench_config *cfg, const char *name);
/* The reference backend's injected graphExecute latency (htpu_ref_set_latency of the library
 * already loaded from cfg's build directory), in microseconds; 0 clears it. 0 or -1. */
int bench_set_latency(const bench_config *cfg, unsigned us);
int bench_model_open(const bench_config *cfg, const char *path, int fastrpc, bench_model *m);
void bench_model_close(bench_model *m);

/* The graph's single input and output as f32 buffers (ordinary memory), inputs in range. */
typedef struct bench_f32_io {
  htpu_io in, out;
} bench_f32_io;
int bench_f32_io_make(htpu_graph *g, bench_f32_io *io);
void bench_f32_io_free(bench_f32_io *io);

void bench_sweep(const bench_config *cfg);
void bench_kernels(const bench_config *cfg, bench_results *r);
void bench_numpy(const bench_config *cfg, bench_results *r);
void bench_calls(const bench_config *cfg, bench_results *r);
void bench_callers(const bench_config *cfg, bench_results *r);
void bench_elixir(const bench_config *cfg, bench_results *r);
void bench_profile(const bench_config *cfg, bench_results *r);
void bench_batch(const bench_config *cfg, bench_results *r);
void bench_deadline(const bench_config *cfg, bench_results *r);
void bench_load(const bench_config *cfg, bench_results *r);
void bench_load_summary(const bench_results *r);
void bench_summary(const bench_results *r);
/* bench_vision.c: issue 33's rows (frames into inputs, heads into detections) and table. */
void bench_vision(const bench_config *cfg);
void bench_vision_summary(void);

#endif
