/*
 * profile_cmd.c - `htpu profile`: where one graph's time goes, op by op, from the backend's
 * profile events (docs/profiling.md). Not to be confused with profile.c (perf profiles).
 *
 * Runs the graph N times with a profile of the chosen level; per op it reports the minimum and
 * median of its time and cycles over the runs and its share of the accelerator's cycles, the
 * heaviest first, with the accelerator's and the host's figures beside them. The trace, page
 * and QNN log are written from the median run (by accelerator time) of those whose event tree
 * was kept (PROFILE_KEEP_TREES below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "hexagon_tpu.h"
#include "inputs.h"
#include "json.h"
#include "session.h"

#define PROFILE_SEED 1u
/* What a run leaves behind: its per-op figures (16 bytes an op), its totals (64 bytes), and
 * its event tree only while it is one of PROFILE_KEEP_TREES kept at random (reservoir
 * sampling), from which the run closest to the median accelerator time is written and shown.
 * The per-op figures are bounded: ops x runs at most PROFILE_MAX_SAMPLES (256 MiB). */
#define PROFILE_KEEP_TREES 8u
#define PROFILE_MAX_SAMPLES (1ull << 24)

/* One run's totals. */
typedef struct run_fig {
  uint64_t accel_us, accel_cycles, host_rpc_us, htp_rpc_us;
  uint64_t quantize_ns, execute_ns, dequantize_ns, total_ns;
} run_fig;

typedef struct kept_tree {
  htpu_profile *p;
  uint32_t run;
} kept_tree;

typedef struct prof_state {
  cli_session s;
  cli_inputs in;
  htpu_io *io;
  void **out_bufs;
  uint32_t runs;
  htpu_profile_level level;
  /* per op (the first run's ops; every run of a graph has the same), in execution order */
  uint32_t num_ops;
  char **op_names;
  uint64_t *us, *cyc; /* op k's samples at [k * runs + i], i < count[k] */
  uint32_t *count;
  /* what the runs read of every op (htpu_profile's ops_with_*: a prefix), the least of the
   * runs; partial: some run's tree was cut at the event cap */
  uint32_t with_cyc, with_us;
  int partial;
  /* linting: per op its wait, overlap and wait-overlap cycles (HTP's events 5001-5003 under
   * each op of the critical path, 6001), at [(k * runs + i) * 3 + f]; lint_seen[f]: reported */
  uint64_t *lint;
  int lint_seen[3];
  run_fig *fig; /* per run */
  kept_tree trees[PROFILE_KEEP_TREES];
  uint32_t num_trees;
  uint64_t rng;
} prof_state;

/* HTP's linting events under an op (QnnHtpProfile.h) and the column each goes to. */
#define LINT_FIELDS 3
static const uint32_t k_lint_types[LINT_FIELDS] = {5001, 5002, 5003};
static const char *const k_lint_json[LINT_FIELDS] = {"wait_cycles", "overlap_cycles",
                                                    "wait_overlap_cycles"};

typedef struct op_row {
  const char *name;
  uint32_t index;
  uint64_t min_us, med_us, min_cyc, med_cyc;
  uint64_t lint[LINT_FIELDS]; /* medians (linting) */
  int has_us, has_cyc; /* read in every run (else unknown: printed "-") */
  uint64_t weight;     /* what the rows are sorted by: cycles, else time, else none */
  double share; /* percent of the ops' total cycles (or time); < 0: not computed */
} op_row;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static uint64_t median(uint64_t *v, uint32_t n) {
  qsort(v, n, sizeof *v, cmp_u64);
  return n ? v[(n - 1) / 2] : 0;
}

static int cmp_row(const void *a, const void *b) {
  const op_row *x = a, *y = b;
  uint64_t wx = x->weight, wy = y->weight;
  return wx < wy ? 1 : wx > wy ? -1 : (x->index > y->index) - (x->index < y->index);
}

/* The first run: the ops' names and room for every run's samples. Returns a CLI_EXIT_* code. */
static int first_run(const cli_command *cmd, prof_state *st, const htpu_profile *p) {
  st->num_ops = p->num_ops;
  st->with_cyc = p->ops_with_cycles;
  st->with_us = p->ops_with_us;
  if ((uint64_t)p->num_ops * st->runs > PROFILE_MAX_SAMPLES)
    return cli_fail(cmd,
                    "%u runs of %u ops make %llu per-op samples, past the limit of %llu (about "
                    "16 bytes each); use fewer runs (-n %llu at most for this graph)",
                    st->runs, p->num_ops, (unsigned long long)p->num_ops * st->runs,
                    PROFILE_MAX_SAMPLES, PROFILE_MAX_SAMPLES / p->num_ops);
  size_t n = (size_t)p->num_ops * st->runs;
  st->op_names = calloc((size_t)p->num_ops + 1, sizeof *st->op_names);
  st->us = malloc((n ? n : 1) * sizeof *st->us);
  st->cyc = malloc((n ? n : 1) * sizeof *st->cyc);
  st->count = calloc((size_t)p->num_ops + 1, sizeof *st->count);
  if (!st->op_names || !st->us || !st->cyc || !st->count) return cli_fail(cmd, "out of memory");
  if (st->level == HTPU_PROFILE_LINTING &&
      !(st->lint = calloc((n ? n : 1) * LINT_FIELDS, sizeof *st->lint)))
    return cli_fail(cmd, "out of memory");
  for (uint32_t k = 0; k < p->num_ops; k++)
    if (!(st->op_names[k] = strdup(p->ops[k].name))) return cli_fail(cmd, "out of memory");
  return CLI_EXIT_OK;
}

static uint64_t next_rand(prof_state *st) {
  st->rng ^= st->rng << 13;
  st->rng ^= st->rng >> 7;
  st->rng ^= st->rng << 17;
  return st->rng;
}

/* The linting level's critical-path event (6001) under the execute event, or NULL. */
static const htpu_profile_event *critical_path(const htpu_profile *p) {
  for (uint32_t i = 0; i < p->num_events; i++)
    for (uint32_t c = 0; c < p->events[i].num_children; c++)
      if (p->events[i].children[c].type == 6001) return &p->events[i].children[c];
  return NULL;
}

/* Takes run r's profile: its figures kept, its tree kept or freed. */
static int add_run(const cli_command *cmd, prof_state *st, uint32_t r, htpu_profile *p) {
  int rc = r == 0 ? first_run(cmd, st, p) : CLI_EXIT_OK;
  if (rc != CLI_EXIT_OK) {
    htpu_profile_free(p);
    return rc;
  }
  if (p->ops_with_cycles < st->with_cyc) st->with_cyc = p->ops_with_cycles;
  if (p->ops_with_us < st->with_us) st->with_us = p->ops_with_us;
  if (p->dropped_events) st->partial = 1;
  st->fig[r] = (run_fig){p->accel_us,   p->accel_cycles, p->host_rpc_us,   p->htp_rpc_us,
                         p->quantize_ns, p->execute_ns,  p->dequantize_ns, p->total_ns};
  const htpu_profile_event *crit = st->lint ? critical_path(p) : NULL;
  uint32_t node = 0;
  for (uint32_t k = 0; k < st->num_ops && k < p->num_ops; k++) {
    size_t at = (size_t)k * st->runs + st->count[k]++;
    st->us[at] = p->ops[k].us;
    st->cyc[at] = p->ops[k].cycles;
    /* the op's NODE event under the critical path: the ops are those events, in order */
    while (crit && node < crit->num_children && crit->children[node].type != 404) node++;
    if (!crit || node >= crit->num_children) continue;
    const htpu_profile_event *op = &crit->children[node++];
    for (uint32_t c = 0; c < op->num_children; c++)
      for (int f = 0; f < LINT_FIELDS; f++)
        if (op->children[c].type == k_lint_types[f]) {
          st->lint[at * LINT_FIELDS + f] = op->children[c].value;
          st->lint_seen[f] = 1;
        }
  }
  /* reservoir sampling: every run is kept with the same chance */
  uint64_t slot = r < PROFILE_KEEP_TREES ? r : next_rand(st) % ((uint64_t)r + 1);
  if (slot < PROFILE_KEEP_TREES) {
    if (r < PROFILE_KEEP_TREES) st->num_trees++;
    else htpu_profile_free(st->trees[slot].p);
    st->trees[slot] = (kept_tree){p, r};
  } else {
    htpu_profile_free(p);
  }
  return CLI_EXIT_OK;
}

static uint64_t med_fig(const prof_state *st, size_t off) {
  uint64_t *v = calloc(st->runs, sizeof *v);
  if (!v) return 0;
  for (uint32_t r = 0; r < st->runs; r++) v[r] = *(const uint64_t *)((const char *)&st->fig[r] + off);
  uint64_t m = median(v, st->runs);
  free(v);
  return m;
}
#define MED(st, field) med_fig(st, offsetof(run_fig, field))

/* Of the kept runs, the one whose accelerator time is closest to the median of all runs (the
 * median run itself when every run was kept); the earliest on a tie. */
static const htpu_profile *median_run(const prof_state *st) {
  uint64_t m = MED(st, accel_us);
  const kept_tree *best = &st->trees[0];
  for (uint32_t i = 1; i < st->num_trees; i++) {
    const kept_tree *t = &st->trees[i];
    uint64_t d = t->p->accel_us > m ? t->p->accel_us - m : m - t->p->accel_us;
    uint64_t bd = best->p->accel_us > m ? best->p->accel_us - m : m - best->p->accel_us;
    if (d < bd || (d == bd && t->run < best->run)) best = t;
  }
  return best->p;
}

/* Per-op rows over the runs. Shares are of the ops' total in one unit, cycles where every op
 * has them, else time; none when some op lacks both or the tree was cut at the event cap (the
 * ops read are only the first ones: a share of them would mislead). */
static op_row *rows_of(const prof_state *st, uint32_t *n) {
  *n = st->num_ops;
  op_row *rows = calloc(*n + 1, sizeof *rows);
  if (!rows) return NULL;
  int by_cyc = st->with_cyc >= *n, by_us = !by_cyc && st->with_us >= *n;
  uint64_t total = 0;
  for (uint32_t k = 0; k < *n; k++) {
    uint32_t m = st->count[k];
    uint64_t *us = st->us + (size_t)k * st->runs, *cyc = st->cyc + (size_t)k * st->runs;
    rows[k].name = st->op_names[k];
    rows[k].index = k;
    rows[k].has_us = k < st->with_us;
    rows[k].has_cyc = k < st->with_cyc;
    rows[k].med_us = median(us, m);
    rows[k].min_us = m ? us[0] : 0;
    rows[k].med_cyc = median(cyc, m);
    rows[k].min_cyc = m ? cyc[0] : 0;
    for (int f = 0; st->lint && f < LINT_FIELDS; f++) {
      uint64_t *v = us; /* reused as scratch: its median is taken above */
      for (uint32_t i = 0; i < m; i++) v[i] = st->lint[((size_t)k * st->runs + i) * LINT_FIELDS + f];
      rows[k].lint[f] = median(v, m);
    }
    rows[k].weight = by_cyc ? rows[k].med_cyc : by_us ? rows[k].med_us : 0;
    total += rows[k].weight;
  }
  for (uint32_t k = 0; k < *n; k++) {
    rows[k].share = st->partial || !(by_cyc || by_us) ? -1
                    : total ? 100.0 * (double)rows[k].weight / (double)total
                            : 0;
  }
  qsort(rows, *n, sizeof *rows, cmp_row);
  return rows;
}

/* A figure, or "-" when it was not read. */
static const char *fig(char *buf, size_t len, int known, uint64_t v) {
  if (!known) return "-";
  snprintf(buf, len, "%llu", (unsigned long long)v);
  return buf;
}

/* The linting level's table: per op its critical-path cycles, and the wait and overlaps HTP
 * reports for it (cycles; "-" for a figure the backend did not report). */
static void print_linting(const prof_state *st, const op_row *rows, uint32_t n) {
  printf("\n%-4s %-32s %14s %14s %12s %12s %12s %7s\n", "#", "op", "crit. cycles", "(min)",
         "wait", "overlap", "wait ovl", "share");
  uint64_t sum_cyc = 0, sum[LINT_FIELDS] = {0};
  char b[6][32];
  for (uint32_t i = 0; i < n; i++) {
    const op_row *r = &rows[i];
    if (r->share >= 0) snprintf(b[5], sizeof b[5], "%6.1f%%", r->share);
    printf("%-4u %-32.32s %14s %14s %12s %12s %12s %7s\n", r->index, r->name,
           fig(b[0], sizeof b[0], r->has_cyc, r->med_cyc),
           fig(b[1], sizeof b[1], r->has_cyc, r->min_cyc),
           fig(b[2], sizeof b[2], st->lint_seen[0], r->lint[0]),
           fig(b[3], sizeof b[3], st->lint_seen[1], r->lint[1]),
           fig(b[4], sizeof b[4], st->lint_seen[2], r->lint[2]), r->share >= 0 ? b[5] : "-");
    sum_cyc += r->med_cyc;
    for (int f = 0; f < LINT_FIELDS; f++) sum[f] += r->lint[f];
  }
  printf("%-4s %-32s %14s %14s %12s %12s %12s %7s\n", "", st->partial ? "total (ops read)" : "total (ops)",
         fig(b[0], sizeof b[0], 1, sum_cyc), "", fig(b[2], sizeof b[2], st->lint_seen[0], sum[0]),
         fig(b[3], sizeof b[3], st->lint_seen[1], sum[1]),
         fig(b[4], sizeof b[4], st->lint_seen[2], sum[2]), n && rows[0].share >= 0 ? "100.0%" : "-");
  printf("(linting: the critical path's cycles per op; wait: cycles the op waited since the "
         "previous op of the main thread; overlap: background work running during it; wait ovl: "
         "background work during the wait)\n");
}

static void print_table(const prof_state *st, const op_row *rows, uint32_t n) {
  const htpu_profile *p = median_run(st);
  printf("graph %s, level %s, %u run%s (median; min in brackets)\n", p->graph,
         htpu_profile_level_name(st->level), st->runs, st->runs == 1 ? "" : "s");
  /* HTP reports the accelerator's cycles (3003) at the detailed level only (QnnHtpProfile.h);
   * a 0 there is "not reported", never a figure */
  if (MED(st, accel_cycles))
    printf("accelerator  %llu us, %llu cycles\n", (unsigned long long)MED(st, accel_us),
           (unsigned long long)MED(st, accel_cycles));
  else
    printf("accelerator  %llu us (cycles not reported at this level: HTP gives them at "
           "--level detailed)\n",
           (unsigned long long)MED(st, accel_us));
  printf("RPC          host %llu us, HTP %llu us\n", (unsigned long long)MED(st, host_rpc_us),
         (unsigned long long)MED(st, htp_rpc_us));
  printf("host         convert in %.1f us, graphExecute %.1f us, convert out %.1f us, call "
         "%.1f us\n",
         MED(st, quantize_ns) / 1000.0, MED(st, execute_ns) / 1000.0,
         MED(st, dequantize_ns) / 1000.0, MED(st, total_ns) / 1000.0);
  if (p->note[0]) printf("note         %s\n", p->note);
  if (!n) {
    if (st->partial)
      printf("(no per-op events read before the event cap of %u; raise --max-events)\n",
             p->max_events);
    else if (st->level == HTPU_PROFILE_BASIC)
      printf("(no per-op events at level basic; use --level detailed)\n");
    else
      printf("(the backend gave no per-op events at level %s)\n",
             htpu_profile_level_name(st->level));
    return;
  }
  if (st->partial)
    printf("\nPARTIAL: the event cap (%u, --max-events) cut the events before their end: %u op%s "
           "read (the graph may have more), \"-\" is a figure not read, no shares\n",
           p->max_events, n, n == 1 ? "" : "s");
  if (st->lint) {
    print_linting(st, rows, n);
    return;
  }
  printf("\n%-4s %-32s %12s %12s %14s %14s %7s\n", "#", "op", "us", "(min)", "cycles", "(min)",
         "share");
  uint64_t sum_us = 0, sum_cyc = 0;
  int all_us = 1, all_cyc = 1;
  char b[6][32];
  for (uint32_t i = 0; i < n; i++) {
    const op_row *r = &rows[i];
    if (r->share >= 0) snprintf(b[4], sizeof b[4], "%6.1f%%", r->share);
    printf("%-4u %-32.32s %12s %12s %14s %14s %7s\n", r->index, r->name,
           fig(b[0], sizeof b[0], r->has_us, r->med_us), fig(b[1], sizeof b[1], r->has_us, r->min_us),
           fig(b[2], sizeof b[2], r->has_cyc, r->med_cyc),
           fig(b[3], sizeof b[3], r->has_cyc, r->min_cyc), r->share >= 0 ? b[4] : "-");
    sum_us += r->med_us;
    sum_cyc += r->med_cyc;
    all_us &= r->has_us;
    all_cyc &= r->has_cyc;
  }
  int shares = n && rows[0].share >= 0;
  printf("%-4s %-32s %12s %12s %14s %14s %7s\n", "", st->partial ? "total (ops read)" : "total (ops)",
         fig(b[0], sizeof b[0], all_us, sum_us), "", fig(b[2], sizeof b[2], all_cyc, sum_cyc), "",
         shares ? "100.0%" : "-");
}

static void json_event(cli_json *j, const htpu_profile_event *e) {
  cli_json_object_begin(j, NULL);
  cli_json_uint(j, "type", e->type);
  cli_json_string(j, "name", e->name);
  cli_json_string(j, "unit", htpu_profile_unit_name(e->unit));
  cli_json_uint(j, "value", e->value);
  if (e->unit == 5) { /* an object: its size and file name (its bytes go to --qnn-log) */
    cli_json_uint(j, "object_bytes", e->object_size);
    cli_json_string(j, "object_file", e->object_file);
  }
  if (e->identifier[0]) cli_json_string(j, "identifier", e->identifier);
  if (e->has_timestamp) cli_json_uint(j, "timestamp", e->timestamp);
  if (e->num_children) {
    cli_json_array_begin(j, "children", 0);
    for (uint32_t i = 0; i < e->num_children; i++) json_event(j, &e->children[i]);
    cli_json_array_end(j);
  }
  cli_json_object_end(j);
}

static int print_json(const prof_state *st, const op_row *rows, uint32_t n) {
  const htpu_profile *p = median_run(st);
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_object_begin(&j, NULL);
  cli_json_string(&j, "schema", "htpu.profile/1");
  cli_json_string(&j, "graph", p->graph);
  cli_json_string(&j, "level", htpu_profile_level_name(st->level));
  cli_json_uint(&j, "runs", st->runs);
  cli_json_uint(&j, "accel_us", MED(st, accel_us));
  cli_json_uint(&j, "accel_cycles", MED(st, accel_cycles));
  cli_json_uint(&j, "host_rpc_us", MED(st, host_rpc_us));
  cli_json_uint(&j, "htp_rpc_us", MED(st, htp_rpc_us));
  cli_json_object_begin(&j, "host_ns");
  cli_json_uint(&j, "quantize", MED(st, quantize_ns));
  cli_json_uint(&j, "execute", MED(st, execute_ns));
  cli_json_uint(&j, "dequantize", MED(st, dequantize_ns));
  cli_json_uint(&j, "total", MED(st, total_ns));
  cli_json_object_end(&j);
  cli_json_string(&j, "note", p->note);
  cli_json_bool(&j, "partial", st->partial);
  /* What the backend announced, so a reader can tell a level or event the backend lacks from
   * one that measured nothing (docs/profiling.md). */
  htpu_profile_caps caps;
  if (htpu_runtime_profile_caps(st->s.rt, &caps) == HTPU_OK) {
    cli_json_object_begin(&j, "capabilities");
    cli_json_bool(&j, "profiling", caps.profiling);
    cli_json_bool(&j, "extended_events", caps.extended_events);
    cli_json_bool(&j, "optrace", caps.optrace);
    cli_json_bool(&j, "max_events_config", caps.max_events_config);
    cli_json_bool(&j, "custom_config", caps.custom_config);
    cli_json_bool(&j, "continuous", caps.continuous);
    cli_json_bool(&j, "profiling_state", caps.profiling_state);
    cli_json_bool(&j, "system_serialization", caps.system_serialization);
    cli_json_object_end(&j);
  }
  cli_json_array_begin(&j, "ops", 0);
  for (uint32_t i = 0; i < n; i++) {
    cli_json_object_begin(&j, NULL);
    cli_json_uint(&j, "index", rows[i].index);
    cli_json_string(&j, "name", rows[i].name);
    /* a figure not read (a tree cut at the event cap, a backend without it) is null */
    if (rows[i].has_us) {
      cli_json_uint(&j, "us", rows[i].med_us);
      cli_json_uint(&j, "min_us", rows[i].min_us);
    } else {
      cli_json_null(&j, "us");
      cli_json_null(&j, "min_us");
    }
    if (rows[i].has_cyc) {
      cli_json_uint(&j, "cycles", rows[i].med_cyc);
      cli_json_uint(&j, "min_cycles", rows[i].min_cyc);
    } else {
      cli_json_null(&j, "cycles");
      cli_json_null(&j, "min_cycles");
    }
    if (rows[i].share >= 0) cli_json_double(&j, "share_pct", rows[i].share);
    else cli_json_null(&j, "share_pct");
    for (int f = 0; st->lint && f < LINT_FIELDS; f++) {
      if (st->lint_seen[f]) cli_json_uint(&j, k_lint_json[f], rows[i].lint[f]);
      else cli_json_null(&j, k_lint_json[f]);
    }
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  const htpu_profile *m = p;
  cli_json_uint(&j, "total_events", m->total_events);
  cli_json_uint(&j, "dropped_events", m->dropped_events);
  cli_json_array_begin(&j, "events", 0);
  for (uint32_t i = 0; i < m->num_events; i++) json_event(&j, &m->events[i]);
  cli_json_array_end(&j);
  cli_json_object_end(&j);
  return cli_json_finish(&j);
}

/* --qnn-log needs the system library's QnnSystemProfile slots (System API 1.5 on): refused
 * before the first run, so a long profile does not end in that error with its trace and page
 * already written. */
static int check_qnn_log(const cli_args *a, const cli_session *s) {
  if (!cli_get(a, "qnn-log")) return CLI_EXIT_OK;
  htpu_profile_caps caps;
  htpu_runtime_info ri;
  int e = htpu_runtime_profile_caps(s->rt, &caps);
  if (!e) e = htpu_runtime_get_info(s->rt, &ri);
  if (e) return cli_fail_htpu(a->cmd, e, "--qnn-log");
  if (caps.system_serialization) return CLI_EXIT_OK;
  return cli_fail(a->cmd,
                  "--qnn-log: HTPU_EUNSUPPORTED: the system library %s (System API %u.%u.%u) has "
                  "no QnnSystemProfile serialization (it came with System API 1.5); nothing was "
                  "run or written",
                  ri.system_lib, ri.system_api_version.major, ri.system_api_version.minor,
                  ri.system_api_version.patch);
}

/* --trace, --html and --qnn-log: the median run. */
static int write_reports(const cli_args *a, const prof_state *st) {
  const htpu_profile *m = median_run(st);
  const char *path;
  char title[512];
  snprintf(title, sizeof title, "%s (%s)", m->graph, htpu_profile_level_name(st->level));
  int e = 0;
  if ((path = cli_get(a, "trace")) && (e = htpu_profile_write_trace(m, path)) != 0)
    return cli_fail_htpu(a->cmd, e, "writing the trace");
  if ((path = cli_get(a, "html")) && (e = htpu_profile_write_html(m, title, path)) != 0)
    return cli_fail_htpu(a->cmd, e, "writing the page");
  if ((path = cli_get(a, "qnn-log")) && (e = htpu_profile_write_qnn_log(st->s.rt, m, path)) != 0)
    return cli_fail_htpu(a->cmd, e, "writing the QNN profile log");
  return CLI_EXIT_OK;
}

static int run_profile(const cli_args *a) {
  prof_state st;
  memset(&st, 0, sizeof st);
  const char *lvl = cli_get(a, "level");
  if (!lvl) lvl = "detailed";
  if (htpu_profile_level_from_name(lvl, &st.level) != 0 || st.level == HTPU_PROFILE_OFF)
    return cli_usage_error(a->cmd, "--level '%s': expected basic, detailed, linting or optrace",
                           lvl);
  uint32_t max_events = 0;
  int rc = cli_get_u32(a, "n", 10, 1, 100000, &st.runs);
  if (rc == CLI_EXIT_OK)
    rc = cli_get_u32(a, "max-events", HTPU_PROFILE_DEFAULT_MAX_EVENTS, 1,
                     HTPU_PROFILE_MAX_EVENTS_LIMIT, &max_events);
  if (rc == CLI_EXIT_OK) rc = cli_session_inspect(a, &st.s);
  if (rc != CLI_EXIT_OK) return rc;
  rc = cli_inputs_bind(a, st.s.meta_info, 1, &st.in);
  if (rc == CLI_EXIT_OK) rc = cli_inputs_load(a->cmd, &st.in);
  if (rc == CLI_EXIT_OK) rc = cli_session_open(a, &st.s);
  if (rc == CLI_EXIT_OK) rc = check_qnn_log(a, &st.s);
  if (rc == CLI_EXIT_OK) cli_inputs_retarget(&st.in, st.s.info);
  if (rc == CLI_EXIT_OK) rc = cli_inputs_generate(a->cmd, &st.in, PROFILE_SEED);
  const htpu_graph_info *gi = st.s.info;
  if (rc == CLI_EXIT_OK) {
    st.io = calloc((size_t)gi->num_inputs + gi->num_outputs + 1, sizeof *st.io);
    st.out_bufs = calloc((size_t)gi->num_outputs + 1, sizeof *st.out_bufs);
    st.fig = calloc(st.runs, sizeof *st.fig);
    st.rng = 0x9e3779b97f4a7c15ull;
    if (!st.io || !st.out_bufs || !st.fig) rc = cli_fail(a->cmd, "out of memory");
  }
  if (rc == CLI_EXIT_OK) {
    cli_inputs_fill_io(&st.in, st.io);
    for (uint32_t i = 0; rc == CLI_EXIT_OK && i < gi->num_outputs; i++) {
      size_t size = gi->outputs[i].num_elements * sizeof(float);
      st.out_bufs[i] = malloc(size ? size : 1);
      if (!st.out_bufs[i]) rc = cli_fail(a->cmd, "out of memory");
      st.io[gi->num_inputs + i] = (htpu_io){st.out_bufs[i], size, HTPU_F32};
    }
  }
  for (uint32_t r = 0; rc == CLI_EXIT_OK && r < st.runs; r++) {
    htpu_exec_options o;
    memset(&o, 0, sizeof o);
    o.profile_level = st.level;
    o.profile_max_events = max_events;
    htpu_profile *p = NULL;
    o.profile = &p;
    int e = htpu_graph_execute_ex(st.s.graph, st.io, gi->num_inputs, st.io + gi->num_inputs,
                                  gi->num_outputs, &o, NULL);
    if (e) rc = cli_fail_htpu(a->cmd, e, "profiling the graph");
    /* the execute succeeded but its events could not be read (the message says why) */
    else if (!p) rc = cli_fail(a->cmd, "%s", htpu_last_error());
    else rc = add_run(a->cmd, &st, r, p);
  }
  op_row *rows = NULL;
  uint32_t n = 0;
  if (rc == CLI_EXIT_OK && !(rows = rows_of(&st, &n))) rc = cli_fail(a->cmd, "out of memory");
  if (rc == CLI_EXIT_OK) rc = write_reports(a, &st);
  if (rc == CLI_EXIT_OK) {
    int w = cli_has(a, "json") ? print_json(&st, rows, n) : (print_table(&st, rows, n), 0);
    if (w != 0 || fflush(stdout) != 0) rc = cli_fail(a->cmd, "could not write the report");
  }
  free(rows);
  for (uint32_t i = 0; i < st.num_trees; i++) htpu_profile_free(st.trees[i].p);
  for (uint32_t k = 0; st.op_names && k < st.num_ops; k++) free(st.op_names[k]);
  free(st.op_names);
  free(st.us);
  free(st.cyc);
  free(st.count);
  free(st.lint);
  free(st.fig);
  for (uint32_t i = 0; st.out_bufs && gi && i < gi->num_outputs; i++) free(st.out_bufs[i]);
  free(st.out_bufs);
  free(st.io);
  cli_inputs_free(&st.in);
  cli_session_close(&st.s);
  return rc;
}

static const cli_option profile_options[] = {
    {"graph", "NAME", "the graph to profile (needed when MODEL holds several)", 0},
    {"n", "N", "runs (default 10; 1..100000): per op the median and the minimum", 0},
    {"level", "LEVEL",
     "basic (the accelerator and RPC figures), detailed (default: per op), linting (HTP: "
     "per-op critical path and waits) or optrace (needs capability 1405 and a binary built "
     "for it)",
     0},
    {"input", "NAME=FILE",
     "input data, as for htpu run; inputs not given are filled with deterministic pseudo-random "
     "values",
     1},
    {"max-events", "N", "read at most N events per run (default 4096); past it: truncated", 0},
    {"trace", "FILE", "write the median run as Chrome trace-event JSON (Perfetto, "
                      "chrome://tracing)", 0},
    {"html", "FILE", "write the median run as one self-contained HTML page", 0},
    {"qnn-log", "FILE",
     "write the median run through the system library's QnnSystemProfile serialization "
     "(System API 1.5 on), for qnn-profile-viewer",
     0},
    CLI_SESSION_OPTIONS,
    {"json", NULL, "print the report as JSON (schema htpu.profile/1, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_profile = {
    .name = "profile",
    .synopsis = "MODEL [-n N] [--level basic|detailed|linting|optrace] [--input NAME=FILE ...] "
                "[--trace FILE] [--html FILE] [--qnn-log FILE] [--max-events N] "
                "[--backend PATH|reference] [--system-lib PATH|reference | --qnn DIR] "
                "[--timeout MS] [--priority P] [--force] [--npu-lock PATH|none] [--root DIR] "
                "[--json]",
    .summary = "where a graph's time goes, op by op, from the backend's profile events",
    .description =
        "Runs one graph N times with a QNN profile of the chosen level and prints, per op, its\n"
        "time and cycles (median and minimum over the runs) and its share of the accelerator,\n"
        "heaviest first, with the accelerator's total, the RPC sides and the host's own time\n"
        "(converting inputs and outputs, the graphExecute call). --trace, --html and --qnn-log\n"
        "write the median run. docs/profiling.md says how to read the figures.\n",
    .options = profile_options,
    .positional_name = "MODEL",
    .min_positional = 1,
    .max_positional = 1,
    .run = run_profile,
};
