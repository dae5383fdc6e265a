/*
 * bench.h - one `htpu bench` run (bench.c: options, the timed loops) and its report
 * (bench_report.c: the human tables and the JSON document, from the samples the run took).
 */
#ifndef HTPU_CLI_BENCH_H
#define HTPU_CLI_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "board_record.h"
#include "cli.h"
#include "inputs.h"
#include "session.h"
#include "shared_io.h"
#include "stats.h"

typedef struct bench_opts {
  uint32_t iterations; /* 0 with --duration */
  double duration_s;   /* 0 with --iterations */
  uint32_t warmup;
  const char *profile; /* NULL: not requested */
  int shared;          /* --shared-buffers / --zero-copy */
  uint32_t in_flight;  /* --in-flight K; 0: synchronous executes */
} bench_opts;

typedef struct bench {
  const cli_args *args;
  bench_opts o;
  cli_session s;
  cli_inputs in;
  htpu_io *io; /* inputs then outputs */
  void **out_bufs;
  cli_shared_io sio; /* --shared-buffers */
  htpu_io *slot_io;  /* --in-flight: K sets of inputs then outputs (outputs each their own) */
  void **slot_bufs;  /* their output buffers, K x outputs */
  uint64_t exec_sum_ns; /* --in-flight: graphExecute time over the timed calls */
  uint64_t registrations; /* memRegister calls during the run */
  int profile_applied;
  cli_samples exec, total;
  uint64_t quantize_ns, dequantize_ns; /* sums over the timed iterations */
  uint64_t wall_ns;
  int cap_reached;
  int progress; /* stderr is a terminal */
  size_t progress_len;
  cli_board_record board; /* the board at the timed run's start and end */
} bench;

/* The report of a finished run (--json: the htpu.bench/1 document; else tables, and
 * --histogram's bars) on stdout: CLI_EXIT_OK, or the exit code after a message on stderr. */
int cli_bench_report(bench *b);

#endif
