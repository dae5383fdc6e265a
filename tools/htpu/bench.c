/* bench.c - `htpu bench MODEL`: execute a graph repeatedly and report latency percentiles and
 * throughput for graphExecute alone and for the whole htpu_graph_execute call, on ordinary or
 * (--shared-buffers) registered shared buffers; or (--in-flight K) with K calls submitted at a
 * time (htpu_graph_submit), reporting also the mean gap between executes. The report itself is
 * bench_report.c's. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "board_record.h"
#include "cli.h"
#include "commands.h"
#include "inputs.h"
#include "profile.h"
#include "session.h"
#include "shared_io.h"
#include "stats.h"

#define BENCH_DEFAULT_ITERATIONS 100u
#define BENCH_DEFAULT_WARMUP 5u
#define BENCH_MAX_DURATION_S 86400.0
/* Fixed so that two runs (or two machines) time the same data. */
#define BENCH_SEED 0x68747075ull /* "htpu" */
#define PROGRESS_INTERVAL_NS 100000000ull /* at most ~10 updates a second */
#define BENCH_MAX_IN_FLIGHT 1024u

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- options ---- */

static int parse_duration(const cli_args *a, double *out) {
  const char *s = cli_get(a, "duration");
  *out = 0;
  if (!s) return CLI_EXIT_OK;
  char *end = NULL;
  errno = 0;
  double v = (s[0] >= '0' && s[0] <= '9') || s[0] == '.' ? strtod(s, &end) : NAN;
  if (!end || *end != '\0' || errno == ERANGE || !(v > 0) || v > BENCH_MAX_DURATION_S)
    return cli_usage_error(a->cmd, "--duration wants seconds, more than 0 and at most %.0f, not "
                                   "'%s'",
                           BENCH_MAX_DURATION_S, s);
  *out = v;
  return CLI_EXIT_OK;
}

static int parse_options(const cli_args *a, bench_opts *o) {
  memset(o, 0, sizeof(*o));
  if (cli_has(a, "n") && cli_has(a, "iterations"))
    return cli_usage_error(a->cmd, "-n and --iterations are the same option; give one");
  const char *count_opt = cli_has(a, "n") ? "n" : "iterations";
  int rc = cli_get_u32(a, count_opt, BENCH_DEFAULT_ITERATIONS, 1, CLI_SAMPLES_MAX,
                       &o->iterations);
  if (rc == CLI_EXIT_OK)
    rc = cli_get_u32(a, "warmup", BENCH_DEFAULT_WARMUP, 0, UINT32_MAX, &o->warmup);
  if (rc == CLI_EXIT_OK) rc = parse_duration(a, &o->duration_s);
  if (rc != CLI_EXIT_OK) return rc;
  if (cli_has(a, count_opt) && cli_has(a, "duration"))
    return cli_usage_error(a->cmd, "give %s%s or --duration, not both", cli_dashes(count_opt),
                           count_opt);
  if (cli_has(a, "duration")) o->iterations = 0;
  o->shared = cli_has(a, "shared-buffers") || cli_has(a, "zero-copy");
  rc = cli_get_u32(a, "in-flight", 0, 1, BENCH_MAX_IN_FLIGHT, &o->in_flight);
  if (rc != CLI_EXIT_OK) return rc;
  if (o->in_flight && o->shared)
    return cli_usage_error(a->cmd, "--in-flight gives each call its own output buffers; it does "
                                   "not combine with --shared-buffers (one buffer for all calls)");
  o->profile = cli_get(a, "perf-profile");
  if (o->profile && cli_perf_profile_find(o->profile) < 0)
    return cli_usage_error(a->cmd, "unknown --perf-profile '%s' (profiles: %s)", o->profile,
                           cli_perf_profile_list());
  return CLI_EXIT_OK;
}

/* ---- progress on a terminal ---- */

static void progress_show(bench *b, const char *phase, uint64_t done, uint64_t elapsed_ns) {
  char line[128];
  int n;
  if (b->o.iterations && strcmp(phase, "timing") == 0)
    n = snprintf(line, sizeof(line), "htpu bench: %s %llu/%u iterations", phase,
                 (unsigned long long)done, b->o.iterations);
  else if (strcmp(phase, "timing") == 0)
    n = snprintf(line, sizeof(line), "htpu bench: %s %llu iterations, %.1f/%g s", phase,
                 (unsigned long long)done, (double)elapsed_ns / 1e9, b->o.duration_s);
  else
    n = snprintf(line, sizeof(line), "htpu bench: %s %llu/%u", phase, (unsigned long long)done,
                 b->o.warmup);
  if (n < 0) return;
  /* pad over the previous, possibly longer, line: \r alone does not clear it */
  size_t len = strlen(line);
  fprintf(stderr, "\r%s%*s", line, b->progress_len > len ? (int)(b->progress_len - len) : 0, "");
  fflush(stderr);
  b->progress_len = len;
}

static void progress_clear(bench *b) {
  if (!b->progress_len) return;
  fprintf(stderr, "\r%*s\r", (int)b->progress_len, "");
  fflush(stderr);
  b->progress_len = 0;
}

/* ---- running ---- */

/* --shared-buffers: inputs converted once into the registered buffer, outputs left in their
 * own type there; every execute then passes the same buffers by handle. */
static int setup_shared_io(bench *b) {
  int rc = cli_shared_io_open(b->args->cmd, b->s.graph, b->s.info, &b->sio);
  if (rc == CLI_EXIT_OK) rc = cli_shared_io_fill_inputs(b->args->cmd, &b->sio, &b->in);
  if (rc == CLI_EXIT_OK) b->io = b->sio.io;
  return rc;
}

static int setup_io(bench *b) {
  if (b->o.shared) return setup_shared_io(b);
  const htpu_graph_info *gi = b->s.info;
  uint32_t n_in = gi->num_inputs, n_out = gi->num_outputs;
  b->io = calloc((size_t)n_in + n_out + 1, sizeof(*b->io));
  b->out_bufs = calloc((size_t)n_out + 1, sizeof(*b->out_bufs));
  if (!b->io || !b->out_bufs) return cli_fail(b->args->cmd, "out of memory");
  cli_inputs_fill_io(&b->in, b->io);
  /* f32 outputs: the whole-call figure then includes dequantization, as a caller sees it */
  for (uint32_t i = 0; i < n_out; i++) {
    const htpu_tensor_info *t = &gi->outputs[i];
    size_t size = t->num_elements * sizeof(float);
    b->out_bufs[i] = malloc(size ? size : 1);
    if (!b->out_bufs[i]) return cli_fail(b->args->cmd, "out of memory (%zu bytes)", size);
    b->io[n_in + i] = (htpu_io){b->out_bufs[i], size, HTPU_F32};
  }
  return CLI_EXIT_OK;
}

static int execute_once(bench *b, htpu_exec_stats *st) {
  const htpu_graph_info *gi = b->s.info;
  int rc = htpu_graph_execute(b->s.graph, b->io, gi->num_inputs, b->io + gi->num_inputs,
                              gi->num_outputs, st);
  if (rc != 0) {
    progress_clear(b);
    return cli_fail_htpu(b->args->cmd, rc, "executing the graph");
  }
  return CLI_EXIT_OK;
}

static int warm_up(bench *b) {
  uint64_t start = now_ns(), last = 0;
  for (uint32_t i = 0; i < b->o.warmup; i++) {
    htpu_exec_stats st;
    int rc = execute_once(b, &st);
    if (rc != CLI_EXIT_OK) return rc;
    uint64_t t = now_ns();
    if (b->progress && t - last >= PROGRESS_INTERVAL_NS) {
      progress_show(b, "warmup", i + 1, t - start);
      last = t;
    }
  }
  return CLI_EXIT_OK;
}

static int timed_loop(bench *b) {
  size_t reserve = b->o.iterations ? b->o.iterations : 1024;
  if (cli_samples_reserve(&b->exec, reserve) != 0 || cli_samples_reserve(&b->total, reserve) != 0)
    return cli_fail(b->args->cmd, "out of memory for %zu latency samples", reserve);
  uint64_t deadline = (uint64_t)(b->o.duration_s * 1e9);
  uint64_t start = now_ns(), last = start, t = start;
  for (uint64_t i = 0;; i++) {
    if (b->o.iterations ? i >= b->o.iterations : (i > 0 && t - start >= deadline)) break;
    htpu_exec_stats st;
    int rc = execute_once(b, &st);
    if (rc != CLI_EXIT_OK) return rc;
    t = now_ns();
    if (cli_samples_push(&b->exec, st.execute_ns) != 0 ||
        cli_samples_push(&b->total, st.total_ns) != 0) {
      /* both series must stay the same length; drop the half-stored sample */
      if (b->exec.n > b->total.n) b->exec.n--;
      b->cap_reached = 1;
      break;
    }
    b->quantize_ns += st.quantize_ns;
    b->dequantize_ns += st.dequantize_ns;
    if (b->progress && t - last >= PROGRESS_INTERVAL_NS) {
      progress_show(b, "timing", i + 1, t - start);
      last = t;
    }
  }
  b->wall_ns = t - start;
  progress_clear(b);
  if (b->cap_reached)
    fprintf(stderr,
            "htpu %s: note: stopped after %zu iterations (%.1f of %g s): that is the most one "
            "run records\n",
            b->args->cmd->name, b->exec.n, (double)b->wall_ns / 1e9, b->o.duration_s);
  return CLI_EXIT_OK;
}

/* --in-flight: K slots, each with the shared inputs and its own f32 outputs. */
static int setup_slots(bench *b) {
  const htpu_graph_info *gi = b->s.info;
  uint32_t k = b->o.in_flight, n_in = gi->num_inputs, n_out = gi->num_outputs, n = n_in + n_out;
  b->slot_io = calloc((size_t)k * n + 1, sizeof(*b->slot_io));
  b->slot_bufs = calloc((size_t)k * n_out + 1, sizeof(*b->slot_bufs));
  if (!b->slot_io || !b->slot_bufs) return cli_fail(b->args->cmd, "out of memory");
  for (uint32_t s = 0; s < k; s++) {
    htpu_io *io = b->slot_io + (size_t)s * n;
    for (uint32_t i = 0; i < n_in; i++) io[i] = b->io[i]; /* read only: shared */
    for (uint32_t i = 0; i < n_out; i++) {
      size_t size = b->io[n_in + i].size;
      void *p = malloc(size ? size : 1);
      if (!p) return cli_fail(b->args->cmd, "out of memory (%zu bytes)", size);
      b->slot_bufs[(size_t)s * n_out + i] = p;
      io[n_in + i] = (htpu_io){p, size, HTPU_F32};
    }
  }
  return CLI_EXIT_OK;
}

static void free_slots(bench *b) {
  const htpu_graph_info *gi = b->s.info;
  for (size_t i = 0; b->slot_bufs && gi && i < (size_t)b->o.in_flight * gi->num_outputs; i++)
    free(b->slot_bufs[i]);
  free(b->slot_bufs);
  free(b->slot_io);
  b->slot_bufs = NULL;
  b->slot_io = NULL;
}

/* The timed calls with K submitted at a time: each slot's call is waited for, recorded and
 * submitted again, so K calls are queued or running while the graph executes. */
static int timed_in_flight(bench *b) {
  const htpu_graph_info *gi = b->s.info;
  uint32_t k = b->o.in_flight, n_in = gi->num_inputs, n_out = gi->num_outputs;
  size_t reserve = b->o.iterations ? b->o.iterations : 1024;
  if (cli_samples_reserve(&b->exec, reserve) != 0 || cli_samples_reserve(&b->total, reserve) != 0)
    return cli_fail(b->args->cmd, "out of memory for %zu latency samples", reserve);
  htpu_call **ring = calloc(k, sizeof(*ring));
  if (!ring) return cli_fail(b->args->cmd, "out of memory");
  uint64_t deadline = (uint64_t)(b->o.duration_s * 1e9);
  uint64_t start = now_ns(), last = start, t = start, submitted = 0;
  int rc = CLI_EXIT_OK;
  for (uint64_t i = 0;; i++) {
    uint32_t s = (uint32_t)(i % k);
    if (ring[s]) {
      htpu_exec_stats st;
      htpu_call_wait(ring[s], UINT64_MAX);
      int e = htpu_call_result(ring[s], &st, NULL, 0);
      htpu_call_release(&ring[s]);
      if (e != 0) {
        progress_clear(b);
        rc = cli_fail_htpu(b->args->cmd, e, "executing the graph (a submitted call)");
        break;
      }
      t = now_ns();
      if (cli_samples_push(&b->exec, st.execute_ns) != 0 ||
          cli_samples_push(&b->total, st.total_ns) != 0) {
        if (b->exec.n > b->total.n) b->exec.n--;
        b->cap_reached = 1; /* submits no more */
      }
      b->exec_sum_ns += st.execute_ns;
      b->quantize_ns += st.quantize_ns;
      b->dequantize_ns += st.dequantize_ns;
      if (b->progress && t - last >= PROGRESS_INTERVAL_NS) {
        progress_show(b, "timing", b->exec.n, t - start);
        last = t;
      }
    }
    int more = b->o.iterations ? submitted < b->o.iterations
                               : (submitted == 0 || now_ns() - start < deadline);
    if (more && !b->cap_reached) {
      htpu_io *io = b->slot_io + (size_t)s * (n_in + n_out);
      int e = htpu_graph_submit(b->s.graph, io, n_in, io + n_in, n_out, NULL, NULL, NULL,
                                &ring[s]);
      if (e != 0) {
        progress_clear(b);
        rc = cli_fail_htpu(b->args->cmd, e, "submitting a call");
        break;
      }
      submitted++;
    }
    int busy = 0;
    for (uint32_t j = 0; j < k; j++) busy |= ring[j] != NULL;
    if (!busy) break;
  }
  for (uint32_t j = 0; j < k; j++) { /* after a failure: the rest still end before we go */
    if (!ring[j]) continue;
    htpu_call_cancel(ring[j]);
    htpu_call_wait(ring[j], UINT64_MAX);
    htpu_call_release(&ring[j]);
  }
  free(ring);
  b->wall_ns = t - start;
  progress_clear(b);
  return rc;
}

/* ---- command ---- */

static void bench_free(bench *b) {
  for (uint32_t i = 0; b->out_bufs && b->s.info && i < b->s.info->num_outputs; i++)
    free(b->out_bufs[i]);
  free(b->out_bufs);
  if (b->o.shared)
    cli_shared_io_close(&b->sio); /* b->io pointed into it */
  else
    free(b->io);
  b->io = NULL;
  free_slots(b);
  cli_samples_free(&b->exec);
  cli_samples_free(&b->total);
  cli_inputs_free(&b->in);
  cli_session_close(&b->s);
  cli_board_record_free(&b->board);
}

static int run_bench(const cli_args *a) {
  bench b;
  memset(&b, 0, sizeof(b));
  b.args = a;
  int rc = parse_options(a, &b.o);
  if (rc != CLI_EXIT_OK) return rc;
  b.progress = isatty(STDERR_FILENO);
  rc = cli_session_inspect(a, &b.s);
  if (rc != CLI_EXIT_OK) return rc;
  /* the inputs against the metadata, before a backend is created and the model loaded */
  rc = cli_inputs_bind(a, b.s.meta_info, 1, &b.in);
  if (rc == CLI_EXIT_OK) rc = cli_inputs_load(a->cmd, &b.in);
  if (rc == CLI_EXIT_OK) rc = cli_session_open(a, &b.s);
  if (rc == CLI_EXIT_OK) cli_inputs_retarget(&b.in, b.s.info);
  if (rc == CLI_EXIT_OK) rc = cli_inputs_generate(a->cmd, &b.in, BENCH_SEED);
  if (rc == CLI_EXIT_OK) rc = setup_io(&b);
  if (rc == CLI_EXIT_OK && b.o.profile)
    rc = cli_perf_profile_apply(a->cmd, b.s.rt, b.o.profile, &b.profile_applied);
  if (rc == CLI_EXIT_OK) rc = warm_up(&b);
  if (rc == CLI_EXIT_OK && b.o.in_flight) rc = setup_slots(&b);
  if (rc == CLI_EXIT_OK) cli_board_record_start(&b.board, b.s.root);
  if (rc == CLI_EXIT_OK) rc = b.o.in_flight ? timed_in_flight(&b) : timed_loop(&b);
  if (rc == CLI_EXIT_OK) cli_board_record_end(&b.board, b.s.root);
  if (b.o.shared && b.sio.buf) b.registrations = cli_shared_io_finish(&b.sio, b.s.rt);
  if (rc == CLI_EXIT_OK) rc = cli_bench_report(&b);
  bench_free(&b);
  return rc;
}

static const cli_option bench_options[] = {
    {"graph", "NAME", "the graph to run (needed when MODEL holds several)", 0},
    {"iterations", "N", "timed executes (default 100; at most 10000000)", 0},
    {"n", "N", "same as --iterations", 0},
    {"duration", "S", "time executes for S seconds instead of a count (decimals allowed)", 0},
    {"warmup", "W", "untimed executes before timing (default 5)", 0},
    {"input", "NAME=FILE",
     "input data as for htpu run; inputs not given get deterministic pseudo-random f32 data "
     "within the tensor's representable range",
     1},
    {"perf-profile", "P",
     "performance profile: burst, sustained_high_performance, high_performance, balanced, "
     "low_balanced, high_power_saver, power_saver, low_power_saver, extreme_power_saver, default",
     0},
    {"shared-buffers", NULL,
     "zero-copy: run on one registered shared buffer holding every input and output in its "
     "own type (htpu_graph_alloc_io); inputs are converted once, before timing",
     0},
    {"zero-copy", NULL, "same as --shared-buffers", 0},
    {"in-flight", "K",
     "keep K calls submitted at a time (htpu_graph_submit; 1 to 1024) instead of executing one "
     "after another, and report the mean gap between executes",
     0},
    {"histogram", NULL,
     "also draw the latency distributions (whole call and execute): log-scaled bins from the "
     "fastest call to p99, and a row for the slowest 1%",
     0},
    CLI_SESSION_OPTIONS,
    {"json", NULL, "print the report as JSON (schema htpu.bench/1, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_bench = {
    .name = "bench",
    .synopsis = "MODEL [--graph NAME] [-n N | --iterations N | --duration S] [--warmup W] "
                "[--input NAME=FILE ...] [--perf-profile P] [--shared-buffers | --in-flight K] "
                "[--timeout MS] [--priority P] "
                "[--backend PATH|reference] [--system-lib PATH|reference | --qnn DIR] "
                "[--fastrpc-lib PATH|reference] [--recovery-retries N] [--startup-retries N] "
                "[--force] [--npu-lock PATH|none] [--root DIR] [--histogram] [--json]",
    .summary = "time a graph: latency percentiles and throughput, execute vs whole call",
    .description =
        "Executes one graph repeatedly and reports min, p50, p90, p99, max and mean latency and\n"
        "throughput twice: for graphExecute alone and for the whole htpu_graph_execute call\n"
        "(quantizing f32 inputs, executing, dequantizing f32 outputs), so host overhead is\n"
        "visible. Percentiles are nearest-rank: the smallest sample with at least p% of the\n"
        "samples at or below it. Progress is shown on stderr when it is a terminal.\n"
        "--histogram draws the distributions as bars (Unicode blocks in a UTF-8 locale, else\n"
        "'#'); with --json the same bins are in \"histogram\".\n"
        "With --shared-buffers the I/O lives in registered FastRPC memory, in the tensors' own\n"
        "types: nothing is copied or converted per call, and the report says whether FastRPC\n"
        "memory was obtained or why the library fell back to ordinary memory.\n"
        "With --in-flight K the timed calls are submitted (htpu_graph_submit) K at a time, each\n"
        "slot waited for and submitted again, so the next inputs are converted while the graph\n"
        "executes; the report adds the mean gap between executes (wall time minus graphExecute\n"
        "time, per call), and \"whole call\" is a call's submit to its end. Warmup executes\n"
        "stay synchronous.\n"
        "--timeout MS bounds the load and every execute (an execute past it fails with\n"
        "HTPU_ETIMEDOUT, exit 1); --priority sets the model's priority.\n",
    .options = bench_options,
    .positional_name = "MODEL",
    .min_positional = 1,
    .max_positional = 1,
    .run = run_bench,
};
