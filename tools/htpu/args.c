/* args.c - option parsing against a cli_command's option table, and the accessors. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int find_option(const cli_command *cmd, const char *name, size_t name_len) {
  if (!cmd->options) return -1;
  for (int i = 0; cmd->options[i].name; i++) {
    if (strlen(cmd->options[i].name) == name_len &&
        memcmp(cmd->options[i].name, name, name_len) == 0)
      return i;
  }
  return -1;
}

/* Accessors abort on undeclared names: such a call is a bug in the subcommand, and aborting
 * makes it fail the first test that reaches it instead of reading as "not given". */
static int option_index(const cli_args *args, const char *name) {
  int i = find_option(args->cmd, name, strlen(name));
  if (i < 0) {
    fprintf(stderr, "htpu: internal error: command '%s' has no option '--%s'\n", args->cmd->name,
            name);
    abort();
  }
  return i;
}

/* The option at argv[*i] (its value the rest after '=' or the next argument, *i moved past
 * it) recorded in out. CLI_PARSE_USAGE after printing what was wrong. */
static cli_parse_result take_option(const cli_command *cmd, int argc, char **argv, int *i,
                                    cli_args *out) {
  const char *a = argv[*i];
  /* A single-letter option "-x" is the option a command declares with the one-letter
   * name "x" (e.g. bench's -n); nothing else may start with a single dash. */
  int short_form = a[1] != '-';
  if (short_form && strlen(a) != 2) {
    cli_usage_error(cmd, "unknown option '%s'", a);
    return CLI_PARSE_USAGE;
  }
  const char *name = short_form ? a + 1 : a + 2;
  const char *eq = short_form ? NULL : strchr(name, '=');
  size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
  int idx = find_option(cmd, name, name_len);
  if (idx < 0 || (short_form != (strlen(cmd->options[idx].name) == 1))) {
    cli_usage_error(cmd, "unknown option '%s%.*s'", short_form ? "-" : "--", (int)name_len, name);
    return CLI_PARSE_USAGE;
  }
  const cli_option *opt = &cmd->options[idx];
  const char *value = "";
  if (opt->metavar) {
    if (eq) {
      value = eq + 1;
    } else if (*i + 1 < argc) {
      value = argv[++*i];
    } else {
      cli_usage_error(cmd, "option '%s%s' needs a value (%s)", cli_dashes(opt->name), opt->name,
                      opt->metavar);
      return CLI_PARSE_USAGE;
    }
  } else if (eq) {
    cli_usage_error(cmd, "option '%s%s' takes no value", cli_dashes(opt->name), opt->name);
    return CLI_PARSE_USAGE;
  }
  for (int k = 0; !opt->repeatable && k < out->num_given; k++) {
    if (out->given[k].option == idx) {
      cli_usage_error(cmd, "option '%s%s' given more than once", cli_dashes(opt->name),
                      opt->name);
      return CLI_PARSE_USAGE;
    }
  }
  out->given[out->num_given].option = idx;
  out->given[out->num_given].value = value;
  out->num_given++;
  return CLI_PARSE_OK;
}

/* The positional arguments' count against the command's bounds. */
static cli_parse_result check_positional(const cli_command *cmd, const cli_args *out) {
  if (out->num_positional < cmd->min_positional) {
    cli_usage_error(cmd, "missing %s", cmd->positional_name ? cmd->positional_name : "argument");
    return CLI_PARSE_USAGE;
  }
  if (cmd->max_positional >= 0 && out->num_positional > cmd->max_positional) {
    cli_usage_error(cmd, "unexpected argument '%s'", out->positional[cmd->max_positional]);
    return CLI_PARSE_USAGE;
  }
  return CLI_PARSE_OK;
}

cli_parse_result cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *out) {
  memset(out, 0, sizeof(*out));
  out->cmd = cmd;
  /* argc bounds both arrays, so no reallocation is needed while parsing. */
  size_t cap = argc > 0 ? (size_t)argc : 1;
  out->positional = calloc(cap, sizeof(*out->positional));
  out->given = calloc(cap, sizeof(*out->given));
  if (!out->positional || !out->given) {
    cli_args_free(out);
    fprintf(stderr, "htpu %s: out of memory\n", cmd->name);
    return CLI_PARSE_USAGE;
  }
  cli_parse_result rc = CLI_PARSE_OK;
  int options_done = 0;
  for (int i = 1; i < argc && rc == CLI_PARSE_OK; i++) {
    const char *a = argv[i];
    if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
      out->positional[out->num_positional++] = a;
    } else if (strcmp(a, "--") == 0) {
      options_done = 1;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cli_args_free(out);
      cli_print_command_help(cmd, stdout);
      return CLI_PARSE_HELP;
    } else {
      rc = take_option(cmd, argc, argv, &i, out);
    }
  }
  if (rc == CLI_PARSE_OK) rc = check_positional(cmd, out);
  if (rc != CLI_PARSE_OK) cli_args_free(out);
  return rc;
}

void cli_args_free(cli_args *args) {
  if (!args) return;
  free(args->positional);
  free(args->given);
  args->positional = NULL;
  args->given = NULL;
  args->num_positional = 0;
  args->num_given = 0;
}

size_t cli_count(const cli_args *args, const char *name) {
  int idx = option_index(args, name);
  size_t n = 0;
  for (int k = 0; k < args->num_given; k++) n += args->given[k].option == idx;
  return n;
}

int cli_has(const cli_args *args, const char *name) { return cli_count(args, name) > 0; }

const char *cli_nth(const cli_args *args, const char *name, size_t i) {
  int idx = option_index(args, name);
  for (int k = 0; k < args->num_given; k++) {
    if (args->given[k].option == idx && i-- == 0) return args->given[k].value;
  }
  return NULL;
}

const char *cli_get(const cli_args *args, const char *name) {
  size_t n = cli_count(args, name);
  return n ? cli_nth(args, name, n - 1) : NULL;
}

int cli_get_u64(const cli_args *args, const char *name, uint64_t dflt, uint64_t min,
                uint64_t max, uint64_t *out) {
  const char *s = cli_get(args, name);
  if (!s) {
    *out = dflt;
    return 0;
  }
  /* strtoul accepts leading blanks and a minus sign ("-1" -> ULONG_MAX): reject both. */
  char *end = NULL;
  errno = 0;
  unsigned long long v = (s[0] >= '0' && s[0] <= '9') ? strtoull(s, &end, 10) : 0;
  if (!end || end == s || *end != '\0' || errno == ERANGE || v < min || v > max)
    return cli_usage_error(args->cmd,
                           "option '%s%s' wants an integer from %" PRIu64 " to %" PRIu64
                           ", not '%s'",
                           cli_dashes(name), name, min, max, s);
  *out = (uint64_t)v;
  return 0;
}

int cli_get_u32(const cli_args *args, const char *name, uint32_t dflt, uint32_t min,
                uint32_t max, uint32_t *out) {
  uint64_t v = 0;
  int rc = cli_get_u64(args, name, dflt, min, max, &v);
  *out = (uint32_t)v;
  return rc;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "htpu %s: ", cmd->name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  cli_print_usage_line(cmd, stderr);
  fprintf(stderr, "Run 'htpu help %s' for details.\n", cmd->name);
  return CLI_EXIT_USAGE;
}

int cli_fail(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "htpu %s: ", cmd->name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return CLI_EXIT_FAIL;
}
