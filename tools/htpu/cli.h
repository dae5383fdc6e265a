/*
 * cli.h - the htpu command's subcommand table and option parsing.
 *
 * A subcommand is one cli_command: its options are declared as data, so parsing, usage lines
 * and `htpu help CMD` all come from the same table and cannot drift apart. Adding a subcommand
 * is one file with a `const cli_command` and one line in commands.c.
 *
 * Exit codes of every subcommand: 0 success, 1 the operation failed, 2 usage error.
 * Only the report goes to stdout; errors, warnings and usage go to stderr.
 */
#ifndef HTPU_CLI_H
#define HTPU_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

typedef struct cli_option {
  const char *name;    /* long name without the dashes: "json" for --json */
  const char *metavar; /* value placeholder such as "PATH"; NULL for a flag */
  const char *help;
  int repeatable; /* may be given several times and every value is kept; otherwise a
                     repeated option is a usage error (silently taking the last one hides
                     typos in scripts) */
} cli_option;

typedef struct cli_command cli_command;

/* One occurrence of an option on the command line. */
typedef struct cli_given {
  int option;        /* index into cmd->options */
  const char *value; /* "" for a flag */
} cli_given;

typedef struct cli_args {
  const cli_command *cmd;
  int num_positional;
  const char **positional; /* borrowed from argv */
  int num_given;
  cli_given *given; /* in command-line order */
} cli_args;

struct cli_command {
  const char *name;
  const char *synopsis;        /* what follows "htpu NAME" in the usage line */
  const char *summary;         /* one line, for the command overview */
  const char *description;     /* shown by `htpu help NAME`; may hold several lines */
  const cli_option *options;   /* terminated by an entry whose name is NULL; may be NULL */
  const char *positional_name; /* "MODEL", for "missing MODEL" */
  int min_positional;
  int max_positional;               /* -1: unlimited */
  int (*run)(const cli_args *args); /* returns a CLI_EXIT_* code */
};

/* The subcommands (commands.c), terminated by a NULL entry. */
extern const cli_command *const cli_commands[];
const cli_command *cli_find_command(const char *name);

typedef enum cli_parse_result {
  CLI_PARSE_OK = 0,
  CLI_PARSE_HELP, /* -h/--help was given: help went to stdout, exit 0 */
  CLI_PARSE_USAGE /* a usage error was printed to stderr, exit 2 */
} cli_parse_result;

/* Parses argv[1..argc-1] (argv[0] is the subcommand name) against cmd's options. Options and
 * positionals may be mixed; "--" ends the options; "--name=value" and "--name value" both work;
 * a lone "-" is a positional (conventionally stdin). On CLI_PARSE_OK free with cli_args_free. */
cli_parse_result cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *out);
void cli_args_free(cli_args *args);

/* Accessors by option name. A name the command does not declare is a programming error and
 * aborts, so a typo cannot silently read as "option not given". */
int cli_has(const cli_args *args, const char *name);
const char *cli_get(const cli_args *args, const char *name); /* last value, NULL if absent */
size_t cli_count(const cli_args *args, const char *name);
const char *cli_nth(const cli_args *args, const char *name, size_t i);

/* Parses an unsigned option value ("--iterations 100") that must lie in min..max. Absent:
 * *out = dflt. Malformed or out of range: prints a usage error naming the option as it is
 * written ("-n", "--iterations") and the range, and returns CLI_EXIT_USAGE; otherwise 0. */
int cli_get_u32(const cli_args *args, const char *name, uint32_t dflt, uint32_t min,
                uint32_t max, uint32_t *out);
int cli_get_u64(const cli_args *args, const char *name, uint64_t dflt, uint64_t min,
                uint64_t max, uint64_t *out);

/* The dashes an option is written with: "-" for a one-letter name (bench's -n), else "--"
 * (help.c). */
const char *cli_dashes(const char *name);

/* Prints "htpu NAME: <message>", the usage line and a pointer to the help to stderr. Returns
 * CLI_EXIT_USAGE so callers can `return cli_usage_error(...)`. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "htpu NAME: <message>" to stderr, for failures of the operation. Returns CLI_EXIT_FAIL. */
int cli_fail(const cli_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* help.c */
void cli_print_usage_line(const cli_command *cmd, FILE *f);
void cli_print_command_help(const cli_command *cmd, FILE *f);
/* commands.c: every command of the table, for `htpu --help` */
void cli_print_overview(FILE *f);

#endif /* HTPU_CLI_H */
