/* load.c - `htpu load MODEL...`: loads models together (htpu_context_open_many) and says
 * what each costs: how its binary is held, the graphs deserialized, its spill-fill buffer and
 * group, and the time of the whole call. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "guard.h"
#include "json.h"
#include "load_report.h"
#include "session.h"
#include "stats.h"

typedef struct load_state {
  const cli_args *args;
  cli_session s; /* options and libraries only (s.model is the first MODEL) */
  size_t n;
  htpu_load_request *reqs;
  htpu_load_options *opts; /* one per model: the session's, with its --graph */
  const char **graph;      /* the i-th --graph, NULL for every graph */
  char (*errors)[HTPU_ERROR_MAX]; /* each failed model's whole message */
  htpu_context_load_info *info;
  uint64_t wall_ns;
  int first_rc;
} load_state;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void load_free(load_state *l) {
  for (size_t i = 0; l->reqs && i < l->n; i++) htpu_context_close(&l->reqs[i].ctx);
  free(l->reqs);
  free(l->opts);
  free(l->graph);
  free(l->errors);
  free(l->info);
  cli_session_close(&l->s);
}

/* The requests: every model with the session's load options; the i-th --graph (if any, and
 * not "*") names the only graph of the i-th MODEL that is deserialized. */
static int build_requests(load_state *l) {
  const cli_args *a = l->args;
  size_t n = l->n, ngraph = cli_count(a, "graph");
  if (ngraph > n)
    return cli_usage_error(a->cmd, "%zu --graph options for %zu models (the i-th --graph is "
                                   "the i-th MODEL's)", ngraph, n);
  uint64_t mb = 0;
  int rc = cli_get_u64(a, "memory-limit", 0, 1, HTPU_MAX_MEMORY_LIMIT_MB, &mb);
  if (rc != CLI_EXIT_OK) return rc;
  l->reqs = calloc(n, sizeof *l->reqs);
  l->opts = calloc(n, sizeof *l->opts);
  l->graph = calloc(n, sizeof *l->graph);
  l->errors = calloc(n, sizeof *l->errors);
  l->info = calloc(n, sizeof *l->info);
  if (!l->reqs || !l->opts || !l->graph || !l->errors || !l->info)
    return cli_fail(a->cmd, "out of memory");
  for (size_t i = 0; i < n; i++) {
    htpu_load_options *o = &l->opts[i];
    *o = l->s.load;
    o->memory_limit_mb = mb;
    o->copy_binary = cli_has(a, "copy");
    const char *g = i < ngraph ? cli_nth(a, "graph", i) : NULL;
    if (g && strcmp(g, "*") != 0) {
      l->graph[i] = g;
      o->graph = g; /* an error names the graph option: --graph (cli_graph_option_note) */
      o->graphs = &l->graph[i];
      o->num_graphs = 1;
    }
    l->reqs[i].path = a->positional[i];
    l->reqs[i].opts = o;
    l->reqs[i].error = l->errors[i];
    l->reqs[i].error_len = sizeof l->errors[i];
  }
  return CLI_EXIT_OK;
}

/* The models that came up through the list call (their load info says so); *loaded, all
 * that came up. */
static size_t list_loaded(const load_state *l, size_t *loaded) {
  size_t k = 0, ok = 0;
  for (size_t i = 0; i < l->n; i++) {
    ok += l->reqs[i].rc == 0;
    k += l->reqs[i].rc == 0 && l->info[i].list_loaded;
  }
  if (loaded) *loaded = ok;
  return k;
}

/* How the call loaded them: the list call only where one was made (a spill-fill group's
 * first model is created alone before it; a single model, or the backend, makes none). */
static void print_how(const load_state *l, const htpu_runtime_info *ri, const char *t) {
  size_t loaded, k = list_loaded(l, &loaded);
  printf("%zu model%s in %s (", l->n, l->n == 1 ? "" : "s", t);
  if (k && k == loaded)
    printf("one contextCreateFromBinaryListAsync call)\n");
  else if (k)
    printf("%zu through one contextCreateFromBinaryListAsync call, %zu alone)\n", k,
           loaded - k);
  else if (ri->list_load)
    printf("one after another: no list call made)\n");
  else
    printf("one after another: the backend announces no list load)\n");
}

static void print_human(const load_state *l, const htpu_runtime_info *ri, const htpu_stats *st) {
  char t[32], note[512];
  cli_format_ns((double)l->wall_ns, t, sizeof t);
  print_how(l, ri, t);
  if (ri->spill_fill_sharing)
    printf("spill-fill: shared by the runtime's contexts (one group, one at a time)\n");
  else
    printf("spill-fill: a buffer per context (%s)\n",
           ri->spill_fill_note[0] ? cli_spill_fill_note(ri->spill_fill_note, note, sizeof note)
                                  : "--share-spill-fill not given");
  printf("binaries: %" PRIu64 " bytes mapped, %" PRIu64 " bytes copied\n",
         st->binary_bytes_mapped, st->binary_bytes_copied);
  for (size_t i = 0; i < l->n; i++) {
    const htpu_load_request *q = &l->reqs[i];
    printf("\n%s%s%s\n", q->path, l->graph[i] ? "  graph " : "", l->graph[i] ? l->graph[i] : "");
    char msg[HTPU_ERROR_MAX];
    if (q->rc != 0)
      printf("  failed: %s: %s\n", htpu_err_name(q->rc), cli_graph_option_note(q->error, msg,
                                                                               sizeof msg));
    else
      cli_load_info_print(&l->info[i], "  ");
  }
}

static int print_json(const load_state *l, const htpu_runtime_info *ri, const htpu_stats *st) {
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_object_begin(&j, NULL);
  cli_json_string(&j, "schema", "htpu.load/1");
  cli_json_string(&j, "htpu_version", HTPU_VERSION_STRING);
  cli_json_string(&j, "backend_lib", l->s.backend_lib);
  cli_json_string(&j, "system_lib", l->s.system_lib);
  cli_json_uint(&j, "wall_ns", l->wall_ns);
  char note[512];
  cli_json_bool(&j, "list_load", ri->list_load);
  cli_json_uint(&j, "list_loaded", list_loaded(l, NULL));
  cli_json_bool(&j, "spill_fill_sharing", ri->spill_fill_sharing);
  cli_json_string(&j, "spill_fill_note",
                  ri->spill_fill_note[0]
                      ? cli_spill_fill_note(ri->spill_fill_note, note, sizeof note)
                      : NULL);
  cli_json_uint(&j, "binary_bytes_mapped", st->binary_bytes_mapped);
  cli_json_uint(&j, "binary_bytes_copied", st->binary_bytes_copied);
  cli_json_array_begin(&j, "models", 0);
  for (size_t i = 0; i < l->n; i++) {
    const htpu_load_request *q = &l->reqs[i];
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "model", q->path);
    cli_json_string(&j, "graph", l->graph[i]);
    cli_json_string(&j, "error", q->rc ? htpu_err_name(q->rc) : NULL);
    char msg[HTPU_ERROR_MAX];
    cli_json_string(&j, "message",
                    q->rc ? cli_graph_option_note(q->error, msg, sizeof msg) : NULL);
    if (q->rc == 0)
      cli_load_info_json(&j, "load", &l->info[i]);
    else
      cli_json_null(&j, "load");
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  cli_json_object_end(&j);
  return cli_json_finish(&j);
}

static int load_run(const cli_args *a) {
  load_state l;
  memset(&l, 0, sizeof l);
  l.args = a;
  l.n = (size_t)a->num_positional;
  int rc = cli_session_options(a, &l.s);
  if (rc != CLI_EXIT_OK) return rc;
  if (cli_has(a, "share-spill-fill")) l.s.options.spill_fill_sharing = 1;
  rc = build_requests(&l);
  /* one NPU user at a time: not beside another program holding the NPU (guard.h) */
  if (rc == CLI_EXIT_OK) rc = cli_guard_npu(a->cmd, l.s.root, cli_has(a, "force"));
  uint64_t opened_at = now_ns();
  if (rc == CLI_EXIT_OK && (rc = htpu_runtime_open(&l.s.options, &l.s.rt)) != 0)
    rc = cli_fail_htpu(a->cmd, rc, "opening the runtime");
  /* --timeout bounds the open and the loads together, as for run (session.h) */
  if (rc == CLI_EXIT_OK)
    rc = cli_session_spend_on_open(a, &l.s, now_ns() - opened_at,
                                   l.n == 1 ? l.s.model : "the models");
  for (size_t i = 0; rc == CLI_EXIT_OK && i < l.n; i++) l.opts[i].timeout_ns = l.s.load.timeout_ns;
  if (rc != CLI_EXIT_OK) {
    load_free(&l);
    return rc;
  }
  uint64_t t0 = now_ns();
  l.first_rc = htpu_context_open_many(l.s.rt, l.reqs, l.n);
  l.wall_ns = now_ns() - t0;
  for (size_t i = 0; i < l.n; i++)
    if (l.reqs[i].rc == 0) htpu_context_get_load_info(l.reqs[i].ctx, &l.info[i]);
  htpu_runtime_info ri;
  htpu_stats st;
  htpu_runtime_get_info(l.s.rt, &ri);
  htpu_stats_get(&st);
  int w = cli_has(a, "json") ? print_json(&l, &ri, &st) : (print_human(&l, &ri, &st), 0);
  rc = w != 0 ? cli_fail(a->cmd, "could not write the report")
               : l.first_rc != 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
  if (l.first_rc != 0)
    fprintf(stderr, "htpu load: %s: a model did not load (see the report)\n",
            htpu_err_name(l.first_rc));
  load_free(&l);
  return rc;
}

static const cli_option load_options[] = {
    {"graph", "NAME",
     "the i-th --graph is the only graph of the i-th MODEL deserialized ('*': all of them; "
     "default all)",
     1},
    {"copy", NULL, "copy each binary even where it could be mapped", 0},
    {"memory-limit", "MB",
     "QNN's memory-limit hint for each context, where announced (1 to 2^44 - 1: in bytes it "
     "fits 64 bits)",
     0},
    {"share-spill-fill", NULL,
     "the contexts share one spill-fill buffer (runtime option spill_fill_sharing; default: "
     "each its own): less memory, but they execute one at a time",
     0},
    CLI_SESSION_OPTIONS,
    {"json", NULL, "print the report as JSON (schema htpu.load/1, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_load = {
    .name = "load",
    .synopsis = "MODEL... [--graph NAME|'*' ...] [--copy] [--memory-limit MB] "
                "[--share-spill-fill] [--backend PATH|reference] [--system-lib PATH|reference "
                "| --qnn DIR] [--fastrpc-lib PATH|reference] [--timeout MS] [--priority P] "
                "[--force] [--npu-lock PATH|none] [--root DIR] [--json]",
    .summary = "load models together and say what each costs (binary, graphs, spill-fill, time)",
    .description =
        "Loads every MODEL in one call (htpu_context_open_many: one\n"
        "contextCreateFromBinaryListAsync call where the backend announces it, else one after\n"
        "another), then prints the call's time and, per model, whether its binary is mapped or\n"
        "copied and why, the graphs deserialized, its spill-fill buffer and group, and its load\n"
        "time (docs/board.md, \"What a model costs\"). Exits 1 when a model did not load.\n",
    .options = load_options,
    .positional_name = "MODEL",
    .min_positional = 1,
    .max_positional = -1,
    .run = load_run,
};
