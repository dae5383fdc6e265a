/* inputs.c - matching --input values with graph inputs (see inputs.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inputs.h"
#include "session.h"

const char *cli_input_source_name(cli_input_source s) {
  switch (s) {
  case CLI_INPUT_RAW: return "raw";
  case CLI_INPUT_NPY: return "npy";
  case CLI_INPUT_GENERATED: return "generated";
  case CLI_INPUT_FRAME: return "frame";
  case CLI_INPUT_UNBOUND: break;
  }
  return "none";
}

/* "'a' f32 [1,4], 'b' u8 [3]" for messages; control bytes of names shown as '?'; "..." when
 * the list does not fit. */
static void input_list(const htpu_graph_info *gi, char *buf, size_t len) {
  size_t pos = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < gi->num_inputs; i++) {
    const htpu_tensor_info *t = &gi->inputs[i];
    char shape[160];
    cli_shape_string(t, shape, sizeof(shape));
    const char *name = t->name ? t->name : "";
    size_t need = strlen(name) + strlen(shape) + 24;
    if (pos + need + 4 >= len) {
      snprintf(buf + pos, len - pos, "...");
      return;
    }
    pos += (size_t)snprintf(buf + pos, len - pos, "%s'", i ? ", " : "");
    for (const char *p = name; *p; p++)
      buf[pos++] = ((unsigned char)*p < 0x20 || *p == 0x7F) ? '?' : *p;
    pos += (size_t)snprintf(buf + pos, len - pos, "' %s %s", htpu_dtype_name(t->dtype), shape);
  }
}

/* Index of the input named by the text before one of spec's '=' (the first that matches, so a
 * tensor name may itself contain '='), or -1. *path is what follows that '='. */
static int named_input(const htpu_graph_info *gi, const char *spec, const char **path) {
  for (const char *eq = strchr(spec, '='); eq; eq = strchr(eq + 1, '=')) {
    size_t n = (size_t)(eq - spec);
    for (uint32_t i = 0; i < gi->num_inputs; i++) {
      const char *name = gi->inputs[i].name;
      if (name && strlen(name) == n && memcmp(name, spec, n) == 0) {
        *path = eq + 1;
        return (int)i;
      }
    }
  }
  return -1;
}

int cli_inputs_bind(const cli_args *a, const htpu_graph_info *gi, int allow_missing,
                    cli_inputs *out) {
  memset(out, 0, sizeof(*out));
  out->count = gi->num_inputs;
  out->items = calloc(gi->num_inputs ? gi->num_inputs : 1, sizeof(*out->items));
  if (!out->items) return cli_fail(a->cmd, "out of memory");
  for (uint32_t i = 0; i < gi->num_inputs; i++) out->items[i].tensor = &gi->inputs[i];

  char valid[1024];
  input_list(gi, valid, sizeof(valid));
  size_t n = cli_count(a, "input");
  size_t bare = 0, named = 0;
  int rc = CLI_EXIT_OK;
  for (size_t k = 0; k < n && rc == CLI_EXIT_OK; k++) {
    const char *spec = cli_nth(a, "input", k);
    const char *path = NULL;
    int idx = named_input(gi, spec, &path);
    if (idx < 0) {
      const char *eq = strchr(spec, '=');
      /* "typo=x.npy" is an unknown name unless a file of exactly that name exists */
      if (eq && access(spec, F_OK) != 0) {
        rc = cli_usage_error(a->cmd, "--input %s: the graph has no input '%.*s' (inputs: %s)",
                             spec, (int)(eq - spec), spec, valid);
        break;
      }
      if (bare >= gi->num_inputs) {
        rc = cli_usage_error(a->cmd, "--input %s: extra input, the graph has %u (%s)", spec,
                             (unsigned)gi->num_inputs, valid);
        break;
      }
      idx = (int)bare++;
      path = spec;
    } else {
      named++;
      if (out->items[idx].path) {
        rc = cli_usage_error(a->cmd, "input '%s' given twice (%s and %s)",
                             gi->inputs[idx].name, out->items[idx].path, path);
        break;
      }
    }
    if (!path[0]) {
      rc = cli_usage_error(a->cmd, "--input %s: no file name", spec);
      break;
    }
    if (bare && named) {
      rc = cli_usage_error(a->cmd, "--input: give every input as NAME=FILE, or every input as "
                                   "a bare FILE in graph order, not a mix (inputs: %s)",
                           valid);
      break;
    }
    out->items[idx].path = path;
  }
  if (rc == CLI_EXIT_OK && bare && bare < gi->num_inputs) {
    /* bench may generate the rest, but which ones the bare files are meant for is a guess */
    rc = cli_usage_error(a->cmd,
                         "%zu bare --input file%s for %u graph inputs: name them as NAME=FILE "
                         "(inputs: %s)",
                         bare, bare == 1 ? "" : "s", (unsigned)gi->num_inputs, valid);
  }
  if (rc == CLI_EXIT_OK && !allow_missing) rc = cli_inputs_check_all(a, gi, out);
  if (rc != CLI_EXIT_OK) cli_inputs_free(out);
  return rc;
}

int cli_inputs_check_all(const cli_args *a, const htpu_graph_info *gi, const cli_inputs *in) {
  char valid[1024];
  for (uint32_t i = 0; i < gi->num_inputs; i++) {
    if (in->items[i].path) continue;
    input_list(gi, valid, sizeof(valid));
    return cli_usage_error(a->cmd, "missing input '%s': give --input %s=FILE (inputs: %s)",
                           gi->inputs[i].name, gi->inputs[i].name, valid);
  }
  return CLI_EXIT_OK;
}

void cli_inputs_retarget(cli_inputs *in, const htpu_graph_info *gi) {
  for (uint32_t i = 0; i < in->count && i < gi->num_inputs; i++) in->items[i].tensor = &gi->inputs[i];
}

int cli_inputs_load(const cli_command *cmd, cli_inputs *in) {
  for (uint32_t i = 0; i < in->count; i++) {
    if (!in->items[i].path || in->items[i].data) continue;
    int rc = cli_input_read_file(cmd, &in->items[i]);
    if (rc != CLI_EXIT_OK) return rc;
  }
  return CLI_EXIT_OK;
}

void cli_inputs_fill_io(const cli_inputs *in, htpu_io *io) {
  for (uint32_t i = 0; i < in->count; i++) {
    io[i].data = in->items[i].data;
    io[i].size = in->items[i].size;
    io[i].dtype = in->items[i].dtype;
  }
}

void cli_inputs_free(cli_inputs *in) {
  for (uint32_t i = 0; in->items && i < in->count; i++) free(in->items[i].data);
  free(in->items);
  memset(in, 0, sizeof(*in));
}
