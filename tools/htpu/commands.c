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
    &cmd_bench,
    &cmd_profile,
    NULL,
};

const cli_command *cli_find_command(const char *name) {
  for (size_t i = 0; cli_commands[i]; i++)
    if (strcmp(cli_commands[i]->name, name) == 0) return cli_commands[i];
  return NULL;
}
