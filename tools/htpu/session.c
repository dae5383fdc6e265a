/* session.c - opening MODEL for `htpu run` and `htpu bench` (see session.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guard.h"
#include "memory.h"
#include "session.h"
#include "util.h"

int cli_fail_htpu(const cli_command *cmd, int rc, const char *what) {
  const char *msg = htpu_last_error();
  return cli_fail(cmd, "%s%s%s: %s", what ? what : "", what ? ": " : "", htpu_err_name(rc),
                  msg && msg[0] ? msg : htpu_strerror(rc));
}

void cli_shape_string(const htpu_tensor_info *t, char *buf, size_t len) {
  size_t pos = 0;
  if (len == 0) return;
  buf[0] = '\0';
  int w = snprintf(buf, len, "[");
  for (uint32_t d = 0; w >= 0 && d < t->rank && d < HTPU_MAX_RANK; d++) {
    pos += (size_t)w;
    if (pos >= len) return;
    w = snprintf(buf + pos, len - pos, "%s%" PRIu32, d ? "," : "", t->dims[d]);
  }
  if (w < 0) return;
  pos += (size_t)w;
  if (pos < len) snprintf(buf + pos, len - pos, "]");
}

/* "'a', 'b'" into buf, control bytes shown as '?' (names come from the binary), truncated
 * with "..." when the list does not fit. */
static void graph_names(const htpu_model_info *m, char *buf, size_t len) {
  size_t pos = 0;
  buf[0] = '\0';
  for (uint32_t g = 0; g < m->num_graphs; g++) {
    const char *name = m->graphs[g].name ? m->graphs[g].name : "";
    size_t need = strlen(name) + 4;
    if (pos + need + 4 >= len) {
      snprintf(buf + pos, len - pos, "...");
      return;
    }
    pos += (size_t)snprintf(buf + pos, len - pos, "%s'", g ? ", " : "");
    for (const char *p = name; *p; p++)
      buf[pos++] = ((unsigned char)*p < 0x20 || *p == 0x7F) ? '?' : *p;
    buf[pos++] = '\'';
    buf[pos] = '\0';
  }
}

static int has_graph(const htpu_model_info *m, const char *want) {
  for (uint32_t g = 0; g < m->num_graphs; g++)
    if (m->graphs[g].name && strcmp(m->graphs[g].name, want) == 0) return 1;
  return 0;
}

/* An ONNX model holding several context binaries: the one holding --graph becomes s->meta
 * (and the load's choice); without --graph, a usage error listing each context's graphs.
 * s->meta came from htpu_inspect_file_all, so every context's graphs are at hand: the model
 * is read once more only for the chosen context's own metadata. */
static int select_context(const cli_args *a, cli_session *s) {
  const char *want = cli_get(a, "graph");
  uint32_t n = s->meta->source->num_contexts;
  const htpu_model_context *ctxs = s->meta->source->contexts;
  char list[2048];
  size_t pos = 0;
  list[0] = '\0';
  for (uint32_t i = 0; i < n; i++) {
    const htpu_model_info *cur = ctxs[i].info;
    if (want && has_graph(cur, want)) {
      htpu_model_info *m = NULL;
      int rc = i ? htpu_inspect_file_context(s->system_lib, s->model, i, &m) : 0;
      if (rc != 0) return cli_fail_htpu(a->cmd, rc, "reading the model's metadata");
      if (i) {
        htpu_model_info_free(s->meta);
        s->meta = m;
      }
      s->load.graph = want;
      return CLI_EXIT_OK;
    }
    char names[1024];
    graph_names(cur, names, sizeof names);
    if (pos < sizeof list)
      pos += (size_t)snprintf(list + pos, sizeof list - pos, "%scontext %" PRIu32 ": %s",
                              i ? "; " : "", i, names);
  }
  if (!want)
    return cli_usage_error(a->cmd, "%s holds %" PRIu32 " context binaries (%s): choose a graph "
                           "with --graph", s->model, n, list);
  return cli_usage_error(a->cmd, "%s has no graph '%s' (%s)", s->model, want, list);
}

/* The name check happens here rather than in htpu_graph_open so a wrong --graph is a usage
 * error (exit 2) with the same wording in both commands. */
static int select_graph(const cli_args *a, cli_session *s) {
  const htpu_model_info *m = s->meta;
  const char *want = cli_get(a, "graph");
  char names[1024];
  graph_names(m, names, sizeof(names));
  if (!want && m->num_graphs > 1)
    return cli_usage_error(a->cmd, "%s holds %" PRIu32 " graphs (%s): choose one with --graph",
                           s->model, m->num_graphs, names);
  for (uint32_t g = 0; g < m->num_graphs; g++) {
    if (!want || (m->graphs[g].name && strcmp(m->graphs[g].name, want) == 0)) {
      s->graph_name = want;
      s->meta_info = &m->graphs[g];
      if (want) { /* only the graph asked for is loaded (ENABLE_GRAPHS where announced) */
        s->load.graphs = &s->graph_name;
        s->load.num_graphs = 1;
      }
      return CLI_EXIT_OK;
    }
  }
  if (!want) return cli_fail(a->cmd, "%s holds no graph", s->model);
  return cli_usage_error(a->cmd, "%s has no graph '%s' (graphs: %s)", s->model, want, names);
}

/* --timeout MS and --priority P, before any backend: usage errors name the option and what
 * it takes. */
static int parse_load_options(const cli_args *a, htpu_load_options *lo) {
  memset(lo, 0, sizeof(*lo));
  uint32_t ms = 0;
  int rc = cli_get_u32(a, "timeout", 0, 1, (uint32_t)(HTPU_MAX_TIMEOUT_NS / 1000000u), &ms);
  if (rc != CLI_EXIT_OK) return rc;
  lo->timeout_ns = lo->exec_timeout_ns = (uint64_t)ms * 1000000u;
  const char *p = cli_get(a, "priority");
  htpu_priority prio = HTPU_PRIORITY_DEFAULT;
  if (p && (strcmp(p, "default") == 0 || htpu_priority_from_name(p, &prio) != 0))
    return cli_usage_error(a->cmd,
                           "unknown --priority '%s' (priorities: low, normal, normal_high, high)",
                           p);
  lo->priority = (int)prio;
  return CLI_EXIT_OK;
}

/* --npu-lock, --root, and the NPU lock's wait: bounded by --timeout like the load, announced
 * on stderr. Before any backend. */
static int parse_board_options(const cli_args *a, cli_session *s) {
  htpu_runtime_options *ro = &s->options;
  const char *lock = cli_get(a, "npu-lock");
  if (lock && strcmp(lock, "none") != 0 && lock[0] != '/')
    return cli_usage_error(a->cmd, "--npu-lock '%s': expected an absolute path (every program "
                           "must name the same file) or 'none'", lock);
  if (lock) ro->npu_lock_path = strcmp(lock, "none") == 0 ? "" : lock;
  ro->npu_lock_timeout_ns = s->load.timeout_ns;
  ro->npu_lock_wait = cli_npu_lock_waiting;
  ro->npu_lock_wait_arg = (void *)a->cmd;
  s->root = cli_get(a, "root");
  if (!s->root) {
    /* a whole script's board, e.g. the tests' fake one. Said every time: left over in a
     * shell on the board, it would point the guard at a stand-in and let it pass unseen. */
    const char *env = getenv("HTPU_BOARD_ROOT");
    s->root = env && env[0] ? env : NULL;
    if (s->root)
      fprintf(stderr, "htpu %s: HTPU_BOARD_ROOT=%s: the other-NPU-users check and the board's "
                      "figures read /proc, /dev and /sys under it, not this machine's (unset it "
                      "to watch the real board)\n",
              a->cmd->name, s->root);
  }
  return cli_check_root(a->cmd, s->root);
}

int cli_session_options(const cli_args *a, cli_session *s) {
  memset(s, 0, sizeof(*s));
  s->model = a->positional[0];
  if (cli_resolve_libs(cli_get(a, "backend"), cli_get(a, "system-lib"), &s->libs) != 0)
    return CLI_EXIT_FAIL;
  int failed = 0;
  const char *fastrpc_lib = cli_resolve_lib(cli_get(a, "fastrpc-lib"), CLI_REFERENCE_CDSPRPC,
                                            s->fastrpc_buf, sizeof(s->fastrpc_buf), &failed);
  if (failed) return CLI_EXIT_FAIL;

  htpu_runtime_options *ro = &s->options;
  htpu_runtime_options_init(ro);
  if (s->libs.backend_lib) ro->backend_lib = s->libs.backend_lib;
  if (s->libs.system_lib) ro->system_lib = s->libs.system_lib;
  if (fastrpc_lib) ro->fastrpc_lib = fastrpc_lib;
  int rc = cli_get_u32(a, "recovery-retries", ro->recovery_retries, 0, UINT32_MAX,
                       &ro->recovery_retries);
  if (rc == CLI_EXIT_OK)
    rc = cli_get_u32(a, "startup-retries", ro->startup_retries, 0, UINT32_MAX,
                     &ro->startup_retries);
  if (rc == CLI_EXIT_OK) rc = parse_load_options(a, &s->load);
  if (rc == CLI_EXIT_OK) rc = parse_board_options(a, s);
  if (rc == CLI_EXIT_OK && cli_get(a, "qnn")) {
    s->qnn = calloc(1, sizeof *s->qnn);
    rc = s->qnn ? cli_qnn_option(a, ro, s->qnn) : cli_fail(a->cmd, "out of memory");
  }
  if (rc != CLI_EXIT_OK) {
    cli_session_close(s);
    return rc;
  }
  s->backend_lib = ro->backend_lib;
  s->system_lib = ro->system_lib;
  s->fastrpc_lib = ro->fastrpc_lib ? ro->fastrpc_lib : CLI_DEFAULT_FASTRPC_LIB;
  return CLI_EXIT_OK;
}

int cli_session_inspect(const cli_args *a, cli_session *s) {
  int rc = cli_session_options(a, s);
  if (rc != CLI_EXIT_OK) return rc;
  /* the system library reads the metadata without a backend: on the board a typo in --graph
   * or --input then costs no DSP session and no model load */
  rc = htpu_inspect_file_all(s->options.system_lib, s->model, &s->meta);
  if (rc != 0) {
    int failed_rc = cli_fail_htpu(a->cmd, rc, "reading the model's metadata");
    cli_session_close(s);
    return failed_rc;
  }
  int ex = s->meta->source && s->meta->source->num_contexts > 1 ? select_context(a, s)
                                                                 : CLI_EXIT_OK;
  if (ex == CLI_EXIT_OK) ex = select_graph(a, s);
  if (ex != CLI_EXIT_OK) cli_session_close(s);
  return ex;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --timeout bounds the runtime's open and the model's load together (each may wait for the
 * NPU lock): the load gets what the open left. Its executes keep the whole --timeout each. */
int cli_session_spend_on_open(const cli_args *a, cli_session *s, uint64_t spent,
                              const char *what) {
  uint64_t budget = s->load.timeout_ns;
  if (!budget) return CLI_EXIT_OK;
  if (spent >= budget)
    return cli_fail(a->cmd, "HTPU_ETIMEDOUT: opening the runtime took %" PRIu64 " ms of "
                    "--timeout %" PRIu64 " ms, which bounds the open and the model's load "
                    "together: no time left to load %s", spent / 1000000u, budget / 1000000u,
                    what);
  s->load.timeout_ns = budget - spent;
  return CLI_EXIT_OK;
}

int cli_session_open(const cli_args *a, cli_session *s) {
  if (!s->meta) {
    int ex = cli_session_inspect(a, s);
    if (ex != CLI_EXIT_OK) return ex;
  }
  /* one NPU user at a time: not beside another program holding the NPU (guard.h) */
  int guard = cli_guard_npu(a->cmd, s->root, cli_has(a, "force"));
  if (guard != CLI_EXIT_OK) {
    cli_session_close(s);
    return guard;
  }
  uint64_t opened_at = now_ns();
  int rc = htpu_runtime_open(&s->options, &s->rt);
  if (rc != 0) {
    int failed_rc = cli_fail_htpu(a->cmd, rc, "opening the runtime");
    cli_session_close(s);
    return failed_rc;
  }
  int ex = cli_session_spend_on_open(a, s, now_ns() - opened_at, s->model);
  if (ex != CLI_EXIT_OK) {
    cli_session_close(s);
    return ex;
  }
  /* the message first: closing is an htpu call and resets htpu_last_error() */
  s->rss_before_load = cli_rss_bytes();
  rc = htpu_context_open_file_ex(s->rt, s->model, &s->load, &s->ctx);
  s->rss_after_load = cli_rss_bytes();
  if (rc != 0) {
    int failed_rc = cli_fail_htpu(a->cmd, rc, "loading the model");
    cli_session_close(s);
    return failed_rc;
  }
  rc = htpu_graph_open(s->ctx, s->graph_name, &s->graph);
  if (rc != 0) {
    int failed_rc = cli_fail_htpu(a->cmd, rc, "opening the graph");
    cli_session_close(s);
    return failed_rc;
  }
  s->info = htpu_graph_get_info(s->graph);
  if (!s->info) {
    cli_session_close(s);
    return cli_fail(a->cmd, "the graph has no information (htpu_graph_get_info failed)");
  }
  return CLI_EXIT_OK;
}

void cli_session_close(cli_session *s) {
  /* children first: not required (handles keep their parents alive) but it tears down in the
   * order QNN expects without relying on that */
  htpu_graph_close(&s->graph);
  htpu_context_close(&s->ctx);
  htpu_runtime_close(&s->rt);
  htpu_model_info_free(s->meta);
  s->meta = NULL;
  free(s->qnn);
  s->qnn = NULL;
  s->meta_info = NULL;
  s->info = NULL;
}

/* Whether the command has that option (cli_get of one it does not have is a bug). */
static const char *given(const cli_args *a, const char *name) {
  for (const cli_option *o = a->cmd->options; o && o->name; o++)
    if (strcmp(o->name, name) == 0) return cli_get(a, name);
  return NULL;
}

int cli_qnn_option(const cli_args *a, htpu_runtime_options *ro, htpu_qnn_set *set) {
  const char *dir = cli_get(a, "qnn");
  if (!dir) return CLI_EXIT_OK;
  if (given(a, "backend") || given(a, "system-lib"))
    return cli_usage_error(a->cmd, "--qnn names the backend and system library: give it "
                           "without --backend and --system-lib");
  if (htpu_qnn_set_inspect(dir, set) != 0)
    return cli_fail(a->cmd, "--qnn %s: %s", dir, htpu_last_error());
  if (!set->complete || !set->consistent)
    return cli_fail(a->cmd, "--qnn %s: the set cannot be used: %s", dir, set->note);
  ro->qnn_set = set->dir;
  ro->backend_lib = set->backend_lib;
  ro->system_lib = set->system_lib;
  if (!ro->dsp_library_path) ro->dsp_library_path = set->skel_dir;
  return CLI_EXIT_OK;
}

int cli_system_lib_option(const cli_args *a, cli_libs *libs, htpu_qnn_set *set,
                          const char **system_lib) {
  if (cli_resolve_libs(NULL, cli_get(a, "system-lib"), libs) != 0) return CLI_EXIT_FAIL;
  htpu_runtime_options ro;
  htpu_runtime_options_init(&ro);
  int ex = cli_qnn_option(a, &ro, set);
  if (ex != CLI_EXIT_OK) return ex;
  *system_lib = ro.qnn_set ? set->system_lib : libs->system_lib;
  return CLI_EXIT_OK;
}
