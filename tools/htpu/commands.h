/* commands.h - the subcommands, each defined in its own file (info.c, doctor.c, ...). */
#ifndef HTPU_COMMANDS_H
#define HTPU_COMMANDS_H

#include "cli.h"

extern const cli_command cmd_info;
extern const cli_command cmd_import;
extern const cli_command cmd_doctor;
extern const cli_command cmd_run;
extern const cli_command cmd_detect;
extern const cli_command cmd_load;
extern const cli_command cmd_bench;
extern const cli_command cmd_profile;

#endif /* HTPU_COMMANDS_H */
