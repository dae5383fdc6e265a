/*
 * session.h - the runtime, context and graph that `htpu run` and `htpu bench` work on.
 *
 * Both commands take MODEL, --backend, --system-lib, --fastrpc-lib, --recovery-retries,
 * --startup-retries, --timeout, --priority and --graph with the same meaning; this is the one
 * place that turns them into open handles and words the failures. --timeout and --priority
 * are the load's options (htpu_load_options): the timeout bounds the load and is the default
 * of every execute on the model, the priority is the model's (its executes' default).
 */
#ifndef HTPU_SESSION_H
#define HTPU_SESSION_H

#include "cli.h"
#include "hexagon_tpu.h"
#include "qnn_sets.h"
#include "util.h"

typedef struct cli_session {
  const char *model;      /* the MODEL argument */
  const char *backend_lib; /* as opened (resolved "reference", or the library default) */
  const char *system_lib;
  const char *fastrpc_lib; /* as passed to the runtime ("libcdsprpc.so" by default) */
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *graph;
  const htpu_graph_info *info; /* borrowed from graph */
  htpu_model_info *meta;       /* the model's metadata, read before any backend (owned) */
  const htpu_graph_info *meta_info; /* the chosen graph in meta */
  const char *graph_name;      /* --graph, NULL for the model's only graph */
  const char *root;            /* --root, NULL for this machine */
  htpu_runtime_options options;
  htpu_load_options load; /* --timeout, --priority; --graph: only that graph loaded */
  uint64_t rss_before_load, rss_after_load; /* resident set around the model's load */
  htpu_qnn_set *qnn;      /* --qnn's set (owned), NULL without */
  cli_libs libs; /* --backend and --system-lib, resolved */
  char fastrpc_buf[4096];
} cli_session;

/* Options every session command declares (append to the command's option table through
 * CLI_SESSION_OPTIONS). */
#define CLI_SESSION_OPTIONS                                                                      \
  {"backend", "PATH",                                                                            \
   "QNN backend library (default " HTPU_DEFAULT_BACKEND_LIB "; 'reference' = the reference "     \
   "backend, with the reference system library unless --system-lib is given)",                  \
   0},                                                                                           \
      {"system-lib", "PATH",                                                                     \
       "QNN system library (default " HTPU_DEFAULT_SYSTEM_LIB "; 'reference' = the reference "   \
       "system library)",                                                                        \
       0},                                                                                       \
      {"fastrpc-lib", "PATH",                                                                    \
       "FastRPC library for shared buffers (rpcmem_*; default libcdsprpc.so; 'reference' = "     \
       "the reference stand-in libhtpu_refcdsprpc.so)",                                          \
       0},                                                                                       \
      {"recovery-retries", "N",                                                                  \
       "after a DSP restart, recreate the model and retry a call up to N times (default 1; 0 = "  \
       "off)",                                                                                   \
       0},                                                                                       \
      {"startup-retries", "N",                                                                   \
       "retry a transient failure to open the NPU session up to N times (default 3)", 0},        \
      {"timeout", "MS",                                                                          \
       "bound the runtime's open and the model's load together (waits for the NPU lock "       \
       "included), and every execute, to MS milliseconds (1 to 86400000; default: the "          \
       "library's 60 s for executes and for each lock wait, none for the load)",                 \
       0},                                                                                       \
      {"priority", "P",                                                                          \
       "the model's priority: low, normal, normal_high or high (passed to QNN where the backend "\
       "has priority control; default normal)",                                                  \
       0},                                                                                       \
      {"force", NULL,                                                                            \
       "start even while another process holds the NPU (/dev/fastrpc-cdsp open); without it the "\
       "command refuses, naming that process",                                                   \
       0},                                                                                       \
      {"npu-lock", "PATH",                                                                       \
       "the NPU lock shared with other programs creating QNN sessions (an absolute path; "       \
       "default $HTPU_NPU_LOCK, else " HTPU_DEFAULT_NPU_LOCK "; 'none' = no lock); waits for "   \
       "it are bounded by --timeout, else 60 s each",                                             \
       0},                                                                                       \
      {"root", "DIR",                                                                            \
       "read the board's /proc, /dev and /sys under DIR instead of / (a copy of a board's tree, " \
       "or a test's fake one; default $HTPU_BOARD_ROOT when set, which is then said on "        \
       "stderr): the other-NPU-users check and bench's board record",                            \
       0},                                                                                       \
      CLI_QNN_OPTION

/* Opens MODEL (positional 0) with the command's --backend, --system-lib and --graph
 * (`--backend reference` implies `--system-lib reference`: cli_resolve_libs), after the NPU
 * users guard (guard.h: another process holding the NPU stops it unless --force). Without
 * --graph the model must hold one graph; a missing or unknown --graph is a usage error that
 * lists the graph names. Returns CLI_EXIT_OK, or the exit code after printing why; the session
 * is then already closed. */
int cli_session_open(const cli_args *a, cli_session *s);

/* The part of cli_session_open that needs no backend: options, libraries, and the model's
 * metadata through the system library (htpu_inspect_file), with the graph chosen
 * (s->meta_info). Commands check their arguments against it (--input names and files) before
 * cli_session_open creates the backend and loads the model. Same return and failure contract. */
int cli_session_inspect(const cli_args *a, cli_session *s);
/* The first part of cli_session_inspect: the options and libraries, no model read (for
 * commands of several models, which use s->options and s->load). */
int cli_session_options(const cli_args *a, cli_session *s);
/* --timeout bounds the runtime's open and the load together: after an open that took SPENT
 * ns, s->load.timeout_ns is what is left for the load of WHAT (a model, or "the models"), or,
 * with nothing left, HTPU_ETIMEDOUT is said and CLI_EXIT_FAIL returned. Commands that open
 * the runtime themselves (htpu load) call it as cli_session_open does. */
int cli_session_spend_on_open(const cli_args *a, cli_session *s, uint64_t spent,
                              const char *what);
void cli_session_close(cli_session *s);

/* Prints "htpu CMD: HTPU_E...: <htpu_last_error()>" for a failed library call and returns
 * CLI_EXIT_FAIL. `what` prefixes the message ("executing graph 'g'"), may be NULL. */
int cli_fail_htpu(const cli_command *cmd, int rc, const char *what);

/* "[1,4]" */
void cli_shape_string(const htpu_tensor_info *t, char *buf, size_t len);

#endif /* HTPU_SESSION_H */
