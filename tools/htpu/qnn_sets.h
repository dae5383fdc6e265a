/* qnn_sets.h - QNN sets in the command: the --qnn DIR option of the commands that open a
 * runtime or read a model (its libraries), and `htpu info`'s verdict on which installed set
 * can load a binary (docs/board.md, "QNN sets"). */
#ifndef HTPU_QNN_SETS_H
#define HTPU_QNN_SETS_H

#include "cli.h"
#include "hexagon_tpu.h"
#include "json.h"
#include "util.h"

/* The --qnn option's help line, for the option tables. */
#define CLI_QNN_OPTION                                                                         \
  {"qnn", "DIR",                                                                               \
   "use the QNN set in DIR: its backend, system library, stub and skel (one QAIRT release; "  \
   "`htpu doctor` lists the sets installed)",                                                  \
   0}

/* With --qnn DIR: the set read (*set), ro->qnn_set, backend_lib and system_lib its own, and
 * the DSP search path its skel's folder unless ro has one; a usage error with --backend or
 * --system-lib, a failure when the set cannot be used. Without --qnn: nothing. Returns
 * CLI_EXIT_OK or the exit code (printed). In session.c, with the other option handling. */
int cli_qnn_option(const cli_args *a, htpu_runtime_options *ro, htpu_qnn_set *set);
/* The system library of a command that reads models without a backend (info, import):
 * --system-lib (resolved into *libs), else --qnn's set's (read into *set), else the library's
 * default (NULL); *system_lib points into libs or set. Returns CLI_EXIT_OK or the exit code
 * (printed). */
int cli_system_lib_option(const cli_args *a, cli_libs *libs, htpu_qnn_set *set,
                          const char **system_lib);

/* `htpu info`: each installed set and whether it can load m (release from build ids). */
int cli_qnn_verdict_print(const htpu_model_info *m);
void cli_qnn_verdict_json(cli_json *j, const htpu_model_info *m);

#endif
