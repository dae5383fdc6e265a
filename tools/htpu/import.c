/* import.c - `htpu import MODEL -o OUT`: the raw context binary an ONNX EPContext model holds
 * (htpu_model_binary), written as a plain .bin. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "hexagon_tpu.h"
#include "qnn_sets.h"
#include "util.h"

/* Written beside the target and renamed over it: a failed write leaves no half file. */
static int write_file(const cli_args *a, const char *path, const void *data, size_t len) {
  char tmp[4200];
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp)
    return cli_fail(a->cmd, "the output path '%s' is too long", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) return cli_fail(a->cmd, "cannot write '%s': %s", tmp, strerror(errno));
  size_t w = fwrite(data, 1, len, f);
  int err = w != len ? errno : 0;
  if (fclose(f) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    return cli_fail(a->cmd, "cannot write '%s': %s", path, strerror(err));
  }
  return CLI_EXIT_OK;
}

static int run_import(const cli_args *a) {
  const char *path = a->positional[0], *o = cli_get(a, "o"), *out = cli_get(a, "output");
  if (o && out) return cli_usage_error(a->cmd, "give -o or --output, not both");
  if (!out) out = o;
  if (!out) return cli_usage_error(a->cmd, "-o OUT is required (where to write the binary)");
  /* the system library checks the binary (and finds --graph's): --system-lib or --qnn's */
  static cli_libs libs;
  static htpu_qnn_set set;
  const char *system_lib = NULL;
  int ex = cli_system_lib_option(a, &libs, &set, &system_lib);
  if (ex != CLI_EXIT_OK) return ex;
  uint32_t index = 0;
  ex = cli_get_u32(a, "context", 0, 0, HTPU_MAX_EPCONTEXT_NODES - 1, &index);
  if (ex != CLI_EXIT_OK) return ex;
  void *bin = NULL;
  size_t len = 0;
  int rc = htpu_model_binary(system_lib, path, cli_get(a, "graph"), index, &bin, &len);
  if (rc != 0) {
    const char *msg = htpu_last_error();
    return cli_fail(a->cmd, "%s: %s", htpu_err_name(rc), msg && msg[0] ? msg : htpu_strerror(rc));
  }
  ex = write_file(a, out, bin, len);
  free(bin);
  if (ex == CLI_EXIT_OK) printf("%s: %zu bytes\n", out, len);
  return ex;
}

static const cli_option import_options[] = {
    {"o", "OUT", "where to write the context binary (required)", 0},
    {"output", "OUT", "same as -o", 0},
    {"graph", "NAME", "a model holding several binaries: the one holding this graph", 0},
    {"context", "N", "a model holding several binaries: the N-th (from 0; default 0)", 0},
    {"system-lib", "PATH",
     "QNN system library that reads the binaries' graphs (default " HTPU_DEFAULT_SYSTEM_LIB
     "; 'reference' = the reference system library)",
     0},
    CLI_QNN_OPTION,
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_import = {
    .name = "import",
    .synopsis = "MODEL -o OUT [--graph NAME | --context N] [--system-lib PATH|reference | --qnn "
                "DIR]",
    .summary = "write the context binary an ONNX EPContext model holds as a plain .bin",
    .description =
        "Takes the QNN context binary out of an ONNX model whose EPContext nodes carry it\n"
        "(Ultralytics' format=\"qnn\", ONNX Runtime's ep.context_enable; embedded, or a file\n"
        "beside the model) and writes it to OUT, checked by the system library first: the\n"
        "one of --system-lib or of --qnn's set (no backend is opened). A model holding\n"
        "several binaries takes --graph or --context. A raw binary is copied as it is.\n"
        "docs/context-binaries.md.\n",
    .options = import_options,
    .positional_name = "MODEL",
    .min_positional = 1,
    .max_positional = 1,
    .run = run_import,
};
