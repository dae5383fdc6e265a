/*
 * board_record.h - what `htpu bench` records of the board around its timed run: the NSP and
 * CPU temperatures, each cpufreq policy's governor and frequency at the start and at the end,
 * the NPU's busy share over the run (from the library's own execute times), and whether the
 * run was hot (the NSP at or above its hot trip point, where the NPU throttles itself).
 */
#ifndef HTPU_BOARD_RECORD_H
#define HTPU_BOARD_RECORD_H

#include <stdio.h>

#include "hexagon_tpu.h"
#include "json.h"

typedef struct cli_board_record {
  htpu_board *start, *end; /* NULL when a reading failed (out of memory, a bad root) */
  char error[512];         /* why, when one failed */
} cli_board_record;

/* Readings under `root` (NULL: this machine's /sys). */
void cli_board_record_start(cli_board_record *r, const char *root);
void cli_board_record_end(cli_board_record *r, const char *root);
/* Whether the NSP was at or above its hot trip point at the start or the end. */
int cli_board_record_hot(const cli_board_record *r);
/* Rows of the human report's head table ("board start", "board end", "NPU load") and, for
 * a hot run, a warning line on stderr. */
struct cli_table;
void cli_board_record_rows(const cli_board_record *r, struct cli_table *t);
void cli_board_record_warn(const cli_board_record *r, const char *cmd_name);
/* The "board" member of the JSON report. */
void cli_board_record_json(const cli_board_record *r, cli_json *j);
void cli_board_record_free(cli_board_record *r);

#endif /* HTPU_BOARD_RECORD_H */
