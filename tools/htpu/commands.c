/* commands.c - the subcommand table. One line per subcommand, in the order `htpu --help`
 * lists them; each cli_command is defined in its own file. */
#include <stddef.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

const cli_command *const cli_commands[] = {
    &cmd_info,
    &cmd_import,
    &cmd_doctor,
    &cmd_run,
    &cmd_detect,
    &cmd_load,
    &cmd_bench,
    &cmd_profile,
    NULL,
};

const cli_command *cli_find_command(const char *name) {
  for (size_t i = 0; cli_commands[i]; i++)
    if (strcmp(cli_commands[i]->name, name) == 0) return cli_commands[i];
  return NULL;
}

/* The overview lists the table, so it lives with it: help.c, which args.c calls for a
 * command's help, then needs nothing of the table (and no command file is in a circle). */
void cli_print_overview(FILE *f) {
  fprintf(f, "usage: htpu [--help] [--version] COMMAND [ARGS]\n"
             "\n"
             "Run pre-compiled QNN context binaries on the Hexagon NPU.\n"
             "\n"
             "commands:\n");
  size_t width = strlen("help");
  for (size_t i = 0; cli_commands[i]; i++) {
    size_t w = strlen(cli_commands[i]->name);
    if (w > width) width = w;
  }
  for (size_t i = 0; cli_commands[i]; i++)
    fprintf(f, "  %-*s  %s\n", (int)width, cli_commands[i]->name, cli_commands[i]->summary);
  fprintf(f, "  %-*s  %s\n", (int)width, "help", "show the help of a command");
  fprintf(f, "\n"
             "Library paths given as 'reference' mean the reference libraries next to this\n"
             "executable (or in $HTPU_REFERENCE_DIR).\n"
             "Exit codes: 0 success, 1 the operation failed, 2 usage error.\n"
             "Run 'htpu help COMMAND' for a command's options.\n");
}
