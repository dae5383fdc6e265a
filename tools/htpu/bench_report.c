/* bench_report.c - the report of an `htpu bench` run (bench.h): latency percentiles and
 * throughput for graphExecute and the whole call, the host overhead, the run's setting and
 * the board around it, as tables (with --histogram, bars) or as the htpu.bench/1 JSON. */
#include <stdio.h>

#include "bench.h"
#include "histogram.h"
#include "json.h"

/* Mean time per call the graph was not in graphExecute: the gap between two executes. */
static double gap_mean_ns(const bench *b, size_t count) {
  if (!count || b->wall_ns <= b->exec_sum_ns) return 0;
  return (double)(b->wall_ns - b->exec_sum_ns) / (double)count;
}

static double throughput(const cli_latency *l) {
  return l->sum > 0 ? (double)l->count / (l->sum / 1e9) : 0;
}

/* "2171081/s", "12.5/s": whole numbers once the fraction stops mattering */
static void format_rate(double per_s, char *buf, size_t len) {
  snprintf(buf, len, per_s >= 100 ? "%.0f/s" : "%.3g/s", per_s);
}

static void latency_row(cli_table *t, const char *label, const cli_latency *l) {
  char c[7][32];
  cli_format_ns((double)l->min, c[0], sizeof(c[0]));
  cli_format_ns((double)l->p50, c[1], sizeof(c[1]));
  cli_format_ns((double)l->p90, c[2], sizeof(c[2]));
  cli_format_ns((double)l->p99, c[3], sizeof(c[3]));
  cli_format_ns((double)l->max, c[4], sizeof(c[4]));
  cli_format_ns(l->mean, c[5], sizeof(c[5]));
  format_rate(throughput(l), c[6], sizeof(c[6]));
  const char *row[] = {label, c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
  cli_table_add(t, row);
}

static void input_description(const cli_input *x, int shared, char *buf, size_t len) {
  if (shared && x->dtype != x->tensor->dtype)
    snprintf(buf, len, "%s f32 -> %s, converted once into the shared buffer",
                       x->source == CLI_INPUT_GENERATED ? "generated" : x->path,
                       htpu_dtype_name(x->tensor->dtype));
  else if (x->source == CLI_INPUT_GENERATED && x->tensor->dtype == HTPU_F32)
    snprintf(buf, len, "generated f32");
  else if (x->source == CLI_INPUT_GENERATED)
    snprintf(buf, len, "generated f32 -> %s", htpu_dtype_name(x->tensor->dtype));
  else if (x->dtype == x->tensor->dtype)
    snprintf(buf, len, "%s (%s, native %s)", x->path, cli_input_source_name(x->source),
             htpu_dtype_name(x->dtype));
  else
    snprintf(buf, len, "%s (%s, f32 -> %s)", x->path, cli_input_source_name(x->source),
             htpu_dtype_name(x->tensor->dtype));
}

/* --histogram: the distributions behind the percentiles, whole call first (what a caller
 * waits for). Returns 0 or -1 (out of memory, write error). */
static int print_histograms(const bench *b) {
  cli_histogram h;
  int utf8 = cli_locale_is_utf8();
  if (cli_histogram_build(b->total.v, b->total.n, &h) != 0) return -1;
  printf("\n");
  if (cli_histogram_print(&h, "whole call", utf8, stdout) != 0) return -1;
  if (cli_histogram_build(b->exec.v, b->exec.n, &h) != 0) return -1;
  printf("\n");
  return cli_histogram_print(&h, "execute", utf8, stdout);
}

static int print_human(const bench *b, const cli_latency *ex, const cli_latency *tot) {
  char runs[160], profile[128], host[256], q[32], dq[32], other[32], wall[32], rate[32];
  char shared[1200];
  double wall_s = (double)b->wall_ns / 1e9;
  cli_format_ns((double)b->wall_ns, wall, sizeof(wall));
  format_rate(wall_s > 0 ? (double)ex->count / wall_s : 0, rate, sizeof(rate));
  snprintf(runs, sizeof(runs), "%zu timed (+%u warmup) in %s, %s", ex->count, b->o.warmup, wall,
           rate);
  if (!b->o.profile)
    snprintf(profile, sizeof(profile), "backend default");
  else
    snprintf(profile, sizeof(profile), "%s%s", b->o.profile,
             b->profile_applied ? "" : " (not available: backend default)");
  double n = (double)ex->count;
  double other_ns = tot->mean - ex->mean - (double)b->quantize_ns / n -
                    (double)b->dequantize_ns / n;
  cli_format_ns((double)b->quantize_ns / n, q, sizeof(q));
  cli_format_ns((double)b->dequantize_ns / n, dq, sizeof(dq));
  cli_format_ns(other_ns > 0 ? other_ns : 0, other, sizeof(other));
  snprintf(host, sizeof(host), "quantize %s, dequantize %s, other %s (means per call)", q, dq,
           other);
  if (!b->o.shared)
    snprintf(shared, sizeof(shared), "no (ordinary buffers, copied on every call)");
  else if (b->sio.fastrpc)
    snprintf(shared, sizeof(shared), "yes: FastRPC shared memory, %llu tensor%s registered%s%s",
             (unsigned long long)b->registrations, b->registrations == 1 ? "" : "s",
             b->sio.note[0] ? ": " : "", b->sio.note);
  else
    snprintf(shared, sizeof(shared), "requested, fallback to ordinary memory: %s", b->sio.note);

  cli_table head;
  cli_table_init(&head, 2);
  const char *rows[][2] = {
      {"model", b->s.model}, {"graph", b->s.info->name}, {"backend", b->s.backend_lib},
      {"perf profile", profile}, {"shared I/O", shared}, {"iterations", runs},
      {"host overhead", host},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) cli_table_add(&head, rows[i]);
  cli_board_record_rows(&b->board, &head);
  if (b->o.in_flight) {
    char gap[32], flight[160];
    cli_format_ns(gap_mean_ns(b, ex->count), gap, sizeof(gap));
    snprintf(flight, sizeof(flight), "%u submitted calls at a time; gap between executes %s "
             "(mean)", b->o.in_flight, gap);
    const char *row[] = {"in flight", flight};
    cli_table_add(&head, row);
  }
  for (uint32_t i = 0; i < b->in.count; i++) {
    char label[32], desc[600];
    snprintf(label, sizeof(label), "input %u", (unsigned)i);
    char name_desc[512];
    input_description(&b->in.items[i], b->o.shared, name_desc, sizeof(name_desc));
    snprintf(desc, sizeof(desc), "%s: %s", b->in.items[i].tensor->name, name_desc);
    const char *row[] = {label, desc};
    cli_table_add(&head, row);
  }
  int rc = cli_table_print(&head, stdout, 0);
  cli_table_free(&head);

  printf("\n");
  cli_table t;
  cli_table_init(&t, 8);
  const char *h[] = {"latency", "min", "p50", "p90", "p99", "max", "mean", "throughput"};
  cli_table_add(&t, h);
  latency_row(&t, "execute", ex);
  latency_row(&t, "whole call", tot);
  if (cli_table_print(&t, stdout, 0) != 0) rc = -1;
  cli_table_free(&t);
  if (cli_has(b->args, "histogram") && print_histograms(b) != 0) rc = -1;
  return rc;
}

static void json_latency(cli_json *j, const char *key, const cli_latency *l) {
  cli_json_object_begin(j, key);
  cli_json_uint(j, "min_ns", l->min);
  cli_json_uint(j, "p50_ns", l->p50);
  cli_json_uint(j, "p90_ns", l->p90);
  cli_json_uint(j, "p99_ns", l->p99);
  cli_json_uint(j, "max_ns", l->max);
  cli_json_double(j, "mean_ns", l->mean);
  cli_json_double(j, "throughput_per_s", throughput(l));
  cli_json_object_end(j);
}

static int print_json(const bench *b, const cli_latency *ex, const cli_latency *tot) {
  cli_json j;
  double wall_s = (double)b->wall_ns / 1e9;
  cli_json_init(&j, stdout);
  cli_json_object_begin(&j, NULL);
  cli_json_string(&j, "schema", "htpu.bench/1");
  cli_json_string(&j, "htpu_version", HTPU_VERSION_STRING);
  cli_json_string(&j, "model", b->s.model);
  cli_json_string(&j, "graph", b->s.info->name);
  cli_json_string(&j, "backend_lib", b->s.backend_lib);
  cli_json_string(&j, "system_lib", b->s.system_lib);
  cli_json_object_begin(&j, "perf_profile");
  cli_json_string(&j, "requested", b->o.profile);
  cli_json_bool(&j, "applied", b->profile_applied);
  cli_json_object_end(&j);
  cli_json_array_begin(&j, "inputs", 0);
  for (uint32_t i = 0; i < b->in.count; i++) {
    const cli_input *x = &b->in.items[i];
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "name", x->tensor->name);
    cli_json_string(&j, "source", cli_input_source_name(x->source));
    cli_json_string(&j, "file", x->path);
    /* what reaches htpu_graph_execute: with shared buffers, the tensor's own type */
    cli_json_string(&j, "dtype", htpu_dtype_name(b->o.shared ? x->tensor->dtype : x->dtype));
    cli_json_string(&j, "tensor_dtype", htpu_dtype_name(x->tensor->dtype));
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  cli_json_uint(&j, "warmup", b->o.warmup);
  cli_json_uint(&j, "iterations", ex->count);
  if (b->o.iterations)
    cli_json_uint(&j, "requested_iterations", b->o.iterations);
  else
    cli_json_null(&j, "requested_iterations");
  if (b->o.duration_s > 0)
    cli_json_double(&j, "requested_duration_s", b->o.duration_s);
  else
    cli_json_null(&j, "requested_duration_s");
  cli_json_bool(&j, "sample_cap_reached", b->cap_reached);
  cli_json_double(&j, "wall_s", wall_s);
  cli_json_double(&j, "wall_throughput_per_s", wall_s > 0 ? (double)ex->count / wall_s : 0);
  cli_json_uint(&j, "in_flight", b->o.in_flight);
  if (b->o.in_flight)
    cli_json_double(&j, "gap_mean_ns", gap_mean_ns(b, ex->count));
  else
    cli_json_null(&j, "gap_mean_ns");
  json_latency(&j, "execute", ex);
  json_latency(&j, "total", tot);
  if (cli_has(b->args, "histogram")) {
    cli_histogram he, ht;
    if (cli_histogram_build(b->exec.v, b->exec.n, &he) != 0 ||
        cli_histogram_build(b->total.v, b->total.n, &ht) != 0)
      return -1;
    cli_json_object_begin(&j, "histogram");
    cli_histogram_json(&j, "execute", &he);
    cli_histogram_json(&j, "total", &ht);
    cli_json_object_end(&j);
  } else {
    cli_json_null(&j, "histogram");
  }
  cli_json_double(&j, "quantize_mean_ns", (double)b->quantize_ns / (double)ex->count);
  cli_json_double(&j, "dequantize_mean_ns", (double)b->dequantize_ns / (double)ex->count);
  cli_json_object_begin(&j, "shared_buffers");
  cli_json_bool(&j, "requested", b->o.shared);
  cli_json_bool(&j, "fastrpc", b->o.shared && b->sio.fastrpc);
  cli_json_string(&j, "note", b->o.shared && b->sio.note[0] ? b->sio.note : NULL);
  cli_json_uint(&j, "registrations", b->registrations);
  cli_json_object_end(&j);
  cli_json_string(&j, "fastrpc_lib", b->s.fastrpc_lib);
  cli_board_record_json(&b->board, &j);
  cli_json_object_end(&j);
  return cli_json_finish(&j);
}

int cli_bench_report(bench *b) {
  cli_latency ex, tot;
  if (cli_latency_compute(b->exec.v, b->exec.n, &ex) != 0 ||
      cli_latency_compute(b->total.v, b->total.n, &tot) != 0)
    return cli_fail(b->args->cmd, "no samples to report (out of memory?)");
  int w = cli_has(b->args, "json") ? print_json(b, &ex, &tot) : print_human(b, &ex, &tot);
  cli_board_record_warn(&b->board, b->args->cmd->name);
  return w == 0 ? CLI_EXIT_OK : cli_fail(b->args->cmd, "could not write the report");
}
