/* main.c - htpu: top-level options and dispatch to the subcommand table (commands.c). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hexagon_tpu.h"

static int top_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int top_usage_error(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "htpu: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  cli_print_overview(stderr);
  return CLI_EXIT_USAGE;
}

/* `htpu help [COMMAND]` */
static int help_command(int argc, char **argv) {
  if (argc < 2) {
    cli_print_overview(stdout);
    return CLI_EXIT_OK;
  }
  if (argc > 2) return top_usage_error("help takes one command name, got extra '%s'", argv[2]);
  if (strcmp(argv[1], "help") == 0) {
    printf("usage: htpu help [COMMAND]\n\nShow the help of COMMAND, or the command overview.\n");
    return CLI_EXIT_OK;
  }
  const cli_command *cmd = cli_find_command(argv[1]);
  if (!cmd) return top_usage_error("unknown command '%s'", argv[1]);
  cli_print_command_help(cmd, stdout);
  return CLI_EXIT_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) return top_usage_error("%s", "missing command");
  const char *first = argv[1];
  if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0) {
    cli_print_overview(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(first, "-V") == 0 || strcmp(first, "--version") == 0) {
    /* The library is linked statically, so its version is the header's. */
    printf("htpu %s\n", HTPU_VERSION_STRING);
    return CLI_EXIT_OK;
  }
  if (first[0] == '-') return top_usage_error("unknown option '%s'", first);
  if (strcmp(first, "help") == 0) return help_command(argc - 1, argv + 1);

  const cli_command *cmd = cli_find_command(first);
  if (!cmd) return top_usage_error("unknown command '%s'", first);

  cli_args args;
  switch (cli_parse(cmd, argc - 1, argv + 1, &args)) {
  case CLI_PARSE_HELP: return CLI_EXIT_OK;
  case CLI_PARSE_USAGE: return CLI_EXIT_USAGE;
  case CLI_PARSE_OK: break;
  }
  int rc = cmd->run(&args);
  cli_args_free(&args);
  /* A report cut short by a full disk or closed pipe must not look like success. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "htpu %s: error writing the report to stdout\n", cmd->name);
    if (rc == CLI_EXIT_OK) rc = CLI_EXIT_FAIL;
  }
  return rc;
}
