/* help.c - usage lines and per-command help, from a command's tables (the overview of all
 * commands lives with their table, commands.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "-" for a one-letter option, "--" for the others (args.c's messages and the help alike). */
const char *cli_dashes(const char *name) { return strlen(name) == 1 ? "-" : "--"; }

void cli_print_usage_line(const cli_command *cmd, FILE *f) {
  fprintf(f, "usage: htpu %s %s\n", cmd->name, cmd->synopsis ? cmd->synopsis : "");
}

/* Prints `text` word-wrapped to HELP_COLUMNS, continuation lines indented by `indent`. */
#define HELP_COLUMNS 96
static void print_wrapped(FILE *f, const char *text, size_t indent, size_t first_col) {
  size_t col = first_col;
  const char *p = text;
  while (*p) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, " ");
    if (n == 0) break;
    if (col > indent && col + 1 + n > HELP_COLUMNS) {
      fprintf(f, "\n%*s", (int)indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', f);
      col++;
    }
    fwrite(p, 1, n, f);
    col += n;
    p += n;
  }
  fputc('\n', f);
}

void cli_print_command_help(const cli_command *cmd, FILE *f) {
  cli_print_usage_line(cmd, f);
  fprintf(f, "\n%s\n", cmd->summary);
  if (cmd->description && cmd->description[0]) fprintf(f, "\n%s", cmd->description);
  if (cmd->description && cmd->description[0] &&
      cmd->description[strlen(cmd->description) - 1] != '\n')
    fputc('\n', f);

  /* Align the help texts on the widest "--name METAVAR". */
  size_t width = strlen("-h, --help");
  for (int i = 0; cmd->options && cmd->options[i].name; i++) {
    const cli_option *o = &cmd->options[i];
    size_t w = strlen(cli_dashes(o->name)) + strlen(o->name) + (o->metavar ? 1 + strlen(o->metavar) : 0);
    if (w > width) width = w;
  }
  fprintf(f, "\noptions:\n");
  for (int i = 0; cmd->options && cmd->options[i].name; i++) {
    const cli_option *o = &cmd->options[i];
    char lhs[128];
    snprintf(lhs, sizeof(lhs), "%s%s%s%s", cli_dashes(o->name), o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
    char text[512];
    snprintf(text, sizeof(text), "%s%s", o->help, o->repeatable ? " (repeatable)" : "");
    fprintf(f, "  %-*s  ", (int)width, lhs);
    print_wrapped(f, text, width + 4, width + 4);
  }
  fprintf(f, "  %-*s  %s\n", (int)width, "-h, --help", "show this help");
}
