/*
 * soak.c - the C API under a long, steady load (`make soak`, docs/reliability.md).
 *
 *   soak LIBDIR MODEL EXECUTES
 *
 * LIBDIR holds libhtpu_refbackend.so, libhtpu_refsystem.so and libhtpu_refcdsprpc.so; MODEL is
 * examples/add.txt built with htpu-refbuild. Runs EXECUTES graph executes, cycling through
 *   0  add_f32, f32 buffers: a + b for multiples of 1/4, exact in f32
 *   1  scale_u8 with f32 buffers (quantized in, dequantized out by the core)
 *   2  scale_u8 with u8 buffers
 *   3  scale_u8 with the u8 buffers of one shared allocation (htpu_graph_alloc_io)
 * and checks every answer against its value computed here: scale_u8 is y = x * s with x and y
 * u8 (scale 0.1, zero point 128) and s = [1, 2, 3, 4], so its exact answer is
 * q_y = clamp((q_x - 128) * (k + 1) + 128, 0, 255), and as f32 (q_y - 128) * 0.1f rounded once.
 * Every RELOAD executes everything is closed and opened again (by path and by buffer in turn),
 * and every 1000th execute is followed by two calls that must fail (a wrong buffer size, a
 * NaN input) with the documented codes.
 *
 * The resident set (see `mark` below) and the live counters are reported after WARMUP
 * executes and at the end, in the same state (everything open, the same number of executes
 * since a reload). Fails (exit 1) on any wrong answer, on live counters that are not back at
 * their baseline once everything is closed (or that differ between the two marks), on execute
 * and error counters that do not match the calls made, and when the resident set grew by
 * more than 1% from the warm-up mark to the end.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hexagon_tpu.h"

#define WARMUP 10000u
#define RELOAD 1000u
#define REPORT 100000u
#define RSS_LIMIT_PERCENT 1.0

static const char *model_path;
static void *model_buf;
static size_t model_len;
static unsigned long long wrong, reloads, failing_calls;

typedef struct session {
  htpu_context *ctx;
  htpu_graph *add, *scale;
  htpu_shared *shared;
  htpu_io shared_in, shared_out;
} session;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("soak: FAILED: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void check_rc(int rc, const char *what) {
  if (rc) die("%s: %s: %s", what, htpu_err_name(rc), htpu_last_error());
}

/* The kB figure on the line of `file` that starts with `key`, or -1. */
static long proc_kb(const char *file, const char *key) {
  FILE *f = fopen(file, "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  size_t n = strlen(key);
  while (kb < 0 && fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0 && sscanf(line + n, " %ld kB", &kb) != 1) kb = -1;
  fclose(f);
  return kb;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open %s: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  unsigned char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf || n == 0) die("cannot read %s", path);
  *len = n;
  return buf;
}

static void session_open(htpu_runtime *rt, session *s, int by_buffer) {
  memset(s, 0, sizeof *s);
  if (by_buffer)
    check_rc(htpu_context_open_buffer(rt, model_buf, model_len, &s->ctx), "open by buffer");
  else
    check_rc(htpu_context_open_file(rt, model_path, &s->ctx), "open by path");
  check_rc(htpu_graph_open(s->ctx, "add_f32", &s->add), "graph add_f32");
  check_rc(htpu_graph_open(s->ctx, "scale_u8", &s->scale), "graph scale_u8");
  check_rc(htpu_graph_alloc_io(s->scale, &s->shared_in, &s->shared_out, &s->shared),
           "alloc_io scale_u8");
}

static void session_close(session *s) {
  htpu_shared_free(&s->shared);
  check_rc(htpu_graph_close(&s->add), "close add_f32");
  check_rc(htpu_graph_close(&s->scale), "close scale_u8");
  check_rc(htpu_context_close(&s->ctx), "close context");
}

static void report_wrong(unsigned long long i, const char *what, unsigned k, double got,
                         double want) {
  if (++wrong <= 10)
    fprintf(stderr, "soak: execute %llu (%s) element %u: got %.9g, want %.9g\n", i, what, k,
            got, want);
}

static int expected_q(int qx, unsigned k) {
  int q = (qx - 128) * (int)(k + 1) + 128;
  return q < 0 ? 0 : q > 255 ? 255 : q;
}

static float dequant_scale_out(int q) { return (float)((double)(q - 128) * (double)0.1f); }

static void run_add(session *s, unsigned long long i) {
  float a[4], b[4], y[4];
  int qa[4], qb[4];
  for (unsigned k = 0; k < 4; k++) {
    qa[k] = (int)((i * 4 + k) % 2001) - 1000; /* a = qa / 4 */
    qb[k] = (int)((i * 7 + 3 * k) % 1001);    /* b = qb / 2 */
    a[k] = (float)qa[k] * 0.25f;
    b[k] = (float)qb[k] * 0.5f;
  }
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  check_rc(htpu_graph_execute(s->add, in, 2, &out, 1, NULL), "execute add_f32");
  for (unsigned k = 0; k < 4; k++) {
    float want = (float)(qa[k] + 2 * qb[k]) * 0.25f; /* exact: |quarters| < 2^24 */
    if (y[k] != want) report_wrong(i, "add_f32", k, y[k], want);
  }
}

static void inputs_q(unsigned long long i, uint8_t qx[4]) {
  for (unsigned k = 0; k < 4; k++) qx[k] = (uint8_t)((i * 13 + k * 61) % 256);
}

static void run_scale_f32(session *s, unsigned long long i) {
  uint8_t qx[4];
  float x[4], y[4];
  inputs_q(i, qx);
  for (unsigned k = 0; k < 4; k++) x[k] = (float)(qx[k] - 128) * 0.1f; /* quantizes to qx */
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  check_rc(htpu_graph_execute(s->scale, &in, 1, &out, 1, NULL), "execute scale_u8 f32");
  for (unsigned k = 0; k < 4; k++) {
    float want = dequant_scale_out(expected_q(qx[k], k));
    if (y[k] != want) report_wrong(i, "scale_u8 f32", k, y[k], want);
  }
}

static void check_u8(unsigned long long i, const char *what, const uint8_t qx[4],
                     const uint8_t qy[4]) {
  for (unsigned k = 0; k < 4; k++)
    if (qy[k] != expected_q(qx[k], k)) report_wrong(i, what, k, qy[k], expected_q(qx[k], k));
}

static void run_scale_u8(session *s, unsigned long long i) {
  uint8_t qx[4], qy[4];
  inputs_q(i, qx);
  htpu_io in = {qx, sizeof qx, HTPU_U8}, out = {qy, sizeof qy, HTPU_U8};
  check_rc(htpu_graph_execute(s->scale, &in, 1, &out, 1, NULL), "execute scale_u8 u8");
  check_u8(i, "scale_u8 u8", qx, qy);
}

static void run_scale_shared(session *s, unsigned long long i) {
  uint8_t *qx = s->shared_in.data, *qy = s->shared_out.data;
  inputs_q(i, qx);
  check_rc(htpu_graph_execute(s->scale, &s->shared_in, 1, &s->shared_out, 1, NULL),
           "execute scale_u8 shared");
  check_u8(i, "scale_u8 shared", qx, qy);
}

/* Two calls that must fail, and say why. */
static void run_failing(session *s, unsigned long long i) {
  float x[4] = {1, 2, 3, 4}, y[4];
  htpu_io in = {x, 3 * sizeof(float), HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  int rc = htpu_graph_execute(s->scale, &in, 1, &out, 1, NULL);
  if (rc != HTPU_EMISMATCH || !strstr(htpu_last_error(), "expected 16 bytes"))
    die("execute %llu: a 12-byte input gave %s: %s", i, htpu_err_name(rc), htpu_last_error());
  in.size = sizeof x;
  x[2] = NAN;
  rc = htpu_graph_execute(s->scale, &in, 1, &out, 1, NULL);
  if (rc != HTPU_ENAN || !strstr(htpu_last_error(), "element 2 is NaN"))
    die("execute %llu: a NaN input gave %s: %s", i, htpu_err_name(rc), htpu_last_error());
  failing_calls += 2;
}

/* Two readings of the resident set: VmRSS from /proc/self/status, which the kernel documents
 * as approximate (its counters are updated in batches for scalability), and Rss from
 * /proc/self/smaps_rollup, a walk of the page tables at the moment of the call, which the
 * growth check uses: 1% of this ~2.4 MB process is six pages. */
typedef struct mark {
  long rss_kb, vm_rss_kb;
  htpu_stats st;
  double t;
} mark;

static mark take_mark(void) {
  mark m;
  m.rss_kb = proc_kb("/proc/self/smaps_rollup", "Rss:");
  m.vm_rss_kb = proc_kb("/proc/self/status", "VmRSS:");
  htpu_stats_get(&m.st);
  m.t = now_s();
  return m;
}

static void print_mark(const char *label, const mark *m, const mark *start) {
  printf("  %-8s RSS %5ld kB (VmRSS %5ld kB)  live runtimes %llu contexts %llu graphs %llu "
         "shared %llu  calls %llu  %.1f s\n",
         label, m->rss_kb, m->vm_rss_kb, (unsigned long long)m->st.live_runtimes,
         (unsigned long long)m->st.live_contexts, (unsigned long long)m->st.live_graphs,
         (unsigned long long)m->st.live_shared_buffers,
         (unsigned long long)(m->st.executes - start->st.executes), m->t - start->t);
  fflush(stdout);
}

static int same_live(const htpu_stats *a, const htpu_stats *b) {
  return a->live_runtimes == b->live_runtimes && a->live_contexts == b->live_contexts &&
         a->live_graphs == b->live_graphs && a->live_shared_buffers == b->live_shared_buffers &&
         a->executes_in_flight == 0 && b->executes_in_flight == 0 &&
         a->executes_waiting == 0 && b->executes_waiting == 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: soak LIBDIR MODEL EXECUTES\n");
    return 2;
  }
  char *end = NULL;
  unsigned long long n = strtoull(argv[3], &end, 10);
  if (!end || *end || n < WARMUP) die("EXECUTES must be a number >= %u, got '%s'", WARMUP, argv[3]);
  model_path = argv[2];
  model_buf = read_file(model_path, &model_len);

  char backend[4096], system_lib[4096], fastrpc[4096];
  snprintf(backend, sizeof backend, "%s/libhtpu_refbackend.so", argv[1]);
  snprintf(system_lib, sizeof system_lib, "%s/libhtpu_refsystem.so", argv[1]);
  snprintf(fastrpc, sizeof fastrpc, "%s/libhtpu_refcdsprpc.so", argv[1]);
  htpu_stats before_runtime;
  htpu_stats_get(&before_runtime);
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.backend_lib = backend;
  o.system_lib = system_lib;
  o.fastrpc_lib = fastrpc;
  htpu_runtime *rt = NULL;
  check_rc(htpu_runtime_open(&o, &rt), "htpu_runtime_open");

  printf("soak: %llu executes through the C API (%s: add_f32, scale_u8 as f32, u8 and shared "
         "buffers), everything reopened every %u\n",
         n, model_path, RELOAD);
  mark base = take_mark();
  /* Printed before the loop also so that the code of every report is resident before the
   * warm-up mark: its first run (printf's float formatting) maps 64 kB of libc. */
  print_mark("start", &base, &base);
  session s;
  session_open(rt, &s, 0);
  mark warm = base;
  for (unsigned long long i = 0; i < n; i++) {
    if (i > 0 && i % RELOAD == 0) {
      session_close(&s);
      session_open(rt, &s, (int)(++reloads % 2));
    }
    switch (i % 4) {
      case 0: run_add(&s, i); break;
      case 1: run_scale_f32(&s, i); break;
      case 2: run_scale_u8(&s, i); break;
      default: run_scale_shared(&s, i); break;
    }
    if (i % 1000 == 999) run_failing(&s, i);
    if (i + 1 == WARMUP) {
      warm = take_mark();
      print_mark("warm-up", &warm, &base);
    } else if ((i + 1) % REPORT == 0) {
      mark m = take_mark();
      print_mark("progress", &m, &base);
    }
  }
  mark last = take_mark();
  print_mark("end", &last, &base);
  session_close(&s);
  mark closed = take_mark();
  print_mark("closed", &closed, &base);
  check_rc(htpu_runtime_close(&rt), "htpu_runtime_close");
  htpu_stats after;
  htpu_stats_get(&after);

  int failed = 0;
  double growth = 100.0 * (double)(last.rss_kb - warm.rss_kb) / (double)warm.rss_kb;
  double secs = last.t - base.t;
  printf("soak: %llu executes in %.1f s (%.0f/s), %llu failing calls as expected, %llu reloads; "
         "RSS %ld kB after warm-up, %ld kB at the end (%+.2f%%, limit %.0f%%)\n",
         n, secs, (double)n / secs, failing_calls, reloads, warm.rss_kb, last.rss_kb, growth,
         RSS_LIMIT_PERCENT);
  if (wrong) {
    fprintf(stderr, "soak: FAILED: %llu wrong answers\n", wrong);
    failed = 1;
  }
  /* htpu_stats counts every execute of an open graph in `executes`, the failed ones also in
   * `execute_errors` (src/execute.c). */
  unsigned long long calls = last.st.executes - base.st.executes;
  unsigned long long errors = last.st.execute_errors - base.st.execute_errors;
  if (calls != n + failing_calls || errors != failing_calls) {
    fprintf(stderr, "soak: FAILED: the counters grew by %llu executes, %llu errors; expected "
            "%llu and %llu\n", calls, errors, n + failing_calls, failing_calls);
    failed = 1;
  }
  if (!same_live(&warm.st, &last.st)) {
    fprintf(stderr, "soak: FAILED: live counters differ between warm-up and the end\n");
    failed = 1;
  }
  if (!same_live(&closed.st, &base.st) || !same_live(&after, &before_runtime)) {
    fprintf(stderr, "soak: FAILED: live counters not back at baseline: contexts %llu graphs "
            "%llu shared %llu runtimes %llu (baseline %llu %llu %llu %llu)\n",
            (unsigned long long)closed.st.live_contexts, (unsigned long long)closed.st.live_graphs,
            (unsigned long long)closed.st.live_shared_buffers,
            (unsigned long long)after.live_runtimes, (unsigned long long)base.st.live_contexts,
            (unsigned long long)base.st.live_graphs,
            (unsigned long long)base.st.live_shared_buffers,
            (unsigned long long)before_runtime.live_runtimes);
    failed = 1;
  }
  if (warm.rss_kb <= 0 || last.rss_kb <= 0) {
    fprintf(stderr, "soak: FAILED: Rss unreadable from /proc/self/smaps_rollup\n");
    failed = 1;
  } else if (growth > RSS_LIMIT_PERCENT) {
    fprintf(stderr, "soak: FAILED: RSS grew %.2f%% after warm-up (limit %.0f%%)\n", growth,
            RSS_LIMIT_PERCENT);
    failed = 1;
  }
  free(model_buf);
  if (failed) return 1;
  printf("soak: ok: every answer right, live counters back at baseline\n");
  return 0;
}
