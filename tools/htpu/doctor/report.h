/*
 * report.h - the one way a doctor check reports: steps with a status, facts and a hint.
 *
 * A check opens a step (report_begin), sets its status and message, adds facts (each with a
 * human label and a JSON key) and maybe a hint, and closes it (report_end). Human output is
 * printed at report_end, so a hang or crash in the QNN libraries shows where it happened;
 * --json collects the steps and prints one document at the end (report_print_json).
 */
#ifndef HTPU_DOCTOR_REPORT_H
#define HTPU_DOCTOR_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"

typedef enum { ST_OK, ST_WARN, ST_FAIL, ST_SKIP } step_status;

/* D_ROWS: the step's rows, a JSON array of objects (one human line each). */
typedef enum { D_STR, D_NULL, D_UINT, D_BOOL, D_ROWS } detail_kind;

#define REPORT_MAX_DETAILS 16
#define REPORT_MAX_STEPS 24
#define REPORT_ROW_FIELDS 8

/* One fact of a step: `label` is shown to humans, `key` (snake_case) is the JSON member. */
typedef struct detail {
  const char *label;
  const char *key;
  detail_kind kind;
  char str[1024]; /* human rendering (and the JSON value of D_STR) */
  char shown[64]; /* when not "": what humans see instead of str, e.g. "(none)" for "" */
  uint64_t u;
} detail;

/* One member of a row's JSON object: a string or a bool. */
typedef struct row_field {
  const char *key;
  detail_kind kind; /* D_STR or D_BOOL */
  char str[512];
  int b;
} row_field;

typedef struct report_row {
  char shown[1200]; /* the human line */
  int num_fields;
  row_field fields[REPORT_ROW_FIELDS];
} report_row;

typedef struct step {
  const char *key;  /* stable snake_case id, the JSON "name" */
  const char *name; /* shown to humans */
  step_status status;
  char message[8192]; /* the staged runtime message may carry several QNN log lines */
  char hint[2048];
  int num_details;
  detail details[REPORT_MAX_DETAILS];
  int num_rows, cap_rows, rows_lost; /* rows_lost: not stored (out of memory) */
  report_row *rows;
} step;

typedef struct report {
  int json;
  int num_steps;
  int num_failed, num_warned;
  step steps[REPORT_MAX_STEPS];
} report;

/* A new step, status ok and no message yet. The list of checks is fixed: more than
 * REPORT_MAX_STEPS is a bug and aborts. */
step *report_begin(report *r, const char *key, const char *name);
/* Counts the step and, for humans, prints it. */
void report_end(report *r, step *s);
/* The whole report as one JSON document (`schema` is its first member). Returns 0 or -1. */
int report_print_json(const report *r, const char *schema);
void report_free(report *r);

void step_set(step *s, step_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void step_hint(step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A string fact; NULL value: JSON null, "(unset)" for humans. */
void step_str(step *s, const char *label, const char *key, const char *value);
/* A string fact shown to humans as `shown` (short, e.g. "(none)" for a JSON "" or null). */
void step_str_shown(step *s, const char *label, const char *key, const char *value,
                    const char *shown);
/* A number in JSON, `shown` for humans. */
void step_uint(step *s, const char *label, const char *key, uint64_t v, const char *shown);
void step_bool(step *s, const char *label, const char *key, int v);
void step_version(step *s, const char *label, const char *key, htpu_version3 v);

/* Rows: add them with step_row and fill their fields, then place them among the facts with
 * step_rows (one rows fact per step). step_row returns NULL when out of memory (the row is
 * then counted as lost and the output says so). */
report_row *step_row(step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void row_str(report_row *row, const char *key, const char *value);
void row_bool(report_row *row, const char *key, int v);
void step_rows(step *s, const char *label, const char *key);

/* Truncating copy: text longer than a buffer is cut, never overflows. */
void report_copy(char *dst, size_t len, const char *src);

#endif /* HTPU_DOCTOR_REPORT_H */
