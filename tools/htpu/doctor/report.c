/* report.c - doctor's steps: building them, printing them for humans and as JSON. */
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../json.h"
#include "../util.h"

static const char *status_tag(step_status s) {
  static const char *const tags[] = {"[ ok ]", "[warn]", "[FAIL]", "[skip]"};
  return tags[s];
}

static const char *status_word(step_status s) {
  static const char *const words[] = {"ok", "warn", "fail", "skip"};
  return words[s];
}

void report_copy(char *dst, size_t len, const char *src) {
  size_t n = strlen(src);
  if (n >= len) n = len - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

step *report_begin(report *r, const char *key, const char *name) {
  if (r->num_steps == REPORT_MAX_STEPS) abort(); /* a fixed list of checks: a bug if exceeded */
  step *s = &r->steps[r->num_steps++];
  memset(s, 0, sizeof(*s));
  s->key = key;
  s->name = name;
  s->status = ST_OK;
  return s;
}

void step_set(step *s, step_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->message, sizeof(s->message), fmt, ap);
  va_end(ap);
  s->status = st;
}

void step_hint(step *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->hint, sizeof(s->hint), fmt, ap);
  va_end(ap);
}

static detail *add_detail(step *s, const char *label, const char *key, detail_kind kind) {
  if (s->num_details == REPORT_MAX_DETAILS) abort(); /* fixed keys per check: a bug */
  detail *x = &s->details[s->num_details++];
  x->label = label;
  x->key = key;
  x->kind = kind;
  return x;
}

void step_str_shown(step *s, const char *label, const char *key, const char *value,
                    const char *shown) {
  detail *x = add_detail(s, label, key, value ? D_STR : D_NULL);
  report_copy(x->str, sizeof(x->str), value ? value : shown);
  if (value && strcmp(value, shown) != 0) report_copy(x->shown, sizeof(x->shown), shown);
}

void step_str(step *s, const char *label, const char *key, const char *value) {
  step_str_shown(s, label, key, value, value ? value : "(unset)");
}

void step_uint(step *s, const char *label, const char *key, uint64_t v, const char *shown) {
  detail *x = add_detail(s, label, key, D_UINT);
  x->u = v;
  report_copy(x->str, sizeof(x->str), shown);
}

void step_bool(step *s, const char *label, const char *key, int v) {
  detail *x = add_detail(s, label, key, D_BOOL);
  x->u = v != 0;
  report_copy(x->str, sizeof(x->str), v ? "yes" : "no");
}

void step_version(step *s, const char *label, const char *key, htpu_version3 v) {
  char buf[48];
  cli_format_version(v, buf, sizeof(buf));
  step_str(s, label, key, buf);
}

report_row *step_row(step *s, const char *fmt, ...) {
  if (s->num_rows == s->cap_rows) {
    int cap = s->cap_rows ? s->cap_rows * 2 : 4;
    report_row *grown = realloc(s->rows, (size_t)cap * sizeof(*grown));
    if (!grown) {
      s->rows_lost++;
      return NULL;
    }
    s->rows = grown;
    s->cap_rows = cap;
  }
  report_row *row = &s->rows[s->num_rows++];
  memset(row, 0, sizeof(*row));
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(row->shown, sizeof(row->shown), fmt, ap);
  va_end(ap);
  return row;
}

static row_field *add_field(report_row *row, const char *key, detail_kind kind) {
  if (row->num_fields == REPORT_ROW_FIELDS) abort(); /* fixed fields per row: a bug */
  row_field *f = &row->fields[row->num_fields++];
  f->key = key;
  f->kind = kind;
  return f;
}

void row_str(report_row *row, const char *key, const char *value) {
  report_copy(add_field(row, key, D_STR)->str, sizeof(row->fields[0].str), value);
}

void row_bool(report_row *row, const char *key, int v) { add_field(row, key, D_BOOL)->b = v != 0; }

void step_rows(step *s, const char *label, const char *key) { add_detail(s, label, key, D_ROWS); }

void report_free(report *r) {
  for (int i = 0; i < r->num_steps; i++) {
    free(r->steps[i].rows);
    r->steps[i].rows = NULL;
  }
}

/* ---- human output ---- */

static const char *shown_text(const detail *x) { return x->shown[0] ? x->shown : x->str; }

/* Prints continuation lines of a multi-line text under the step, indented. */
static void print_indented(const char *label, const char *text) {
  const char *p = text;
  int first = 1;
  while (*p) {
    const char *nl = strchr(p, '\n');
    int n = nl ? (int)(nl - p) : (int)strlen(p);
    printf("       %s%.*s\n", first ? label : "", n, p);
    if (first) label = "";
    first = 0;
    p += n + (nl ? 1 : 0);
  }
}

static void print_rows(const step *s, const detail *x, int w) {
  for (int k = 0; k < s->num_rows; k++)
    printf("       %-*s  %s\n", w, k ? "" : x->label, s->rows[k].shown);
  if (s->rows_lost)
    printf("       %-*s  (%d more not shown: out of memory)\n", w, s->num_rows ? "" : x->label,
           s->rows_lost);
  else if (!s->num_rows)
    printf("       %-*s  (empty)\n", w, x->label);
}

static void print_step(const step *s) {
  const char *nl = strchr(s->message, '\n');
  int first_len = nl ? (int)(nl - s->message) : (int)strlen(s->message);
  printf("%s %s: %.*s\n", status_tag(s->status), s->name, first_len, s->message);
  if (nl) print_indented("", nl + 1);
  int w = 0;
  for (int i = 0; i < s->num_details; i++)
    if ((int)strlen(s->details[i].label) > w) w = (int)strlen(s->details[i].label);
  for (int i = 0; i < s->num_details; i++) {
    const detail *x = &s->details[i];
    if (x->kind == D_ROWS)
      print_rows(s, x, w);
    else
      printf("       %-*s  %s\n", w, x->label, shown_text(x));
  }
  if (s->hint[0]) print_indented("hint: ", s->hint);
  fflush(stdout);
}

void report_end(report *r, step *s) {
  if (s->status == ST_FAIL) r->num_failed++;
  if (s->status == ST_WARN) r->num_warned++;
  if (!r->json) print_step(s);
}

/* ---- JSON ---- */

static void json_rows(cli_json *j, const step *s, const char *key) {
  cli_json_array_begin(j, key, 0);
  for (int n = 0; n < s->num_rows; n++) {
    const report_row *row = &s->rows[n];
    cli_json_object_begin(j, NULL);
    for (int f = 0; f < row->num_fields; f++) {
      const row_field *x = &row->fields[f];
      if (x->kind == D_BOOL)
        cli_json_bool(j, x->key, x->b);
      else
        cli_json_string(j, x->key, x->str);
    }
    cli_json_object_end(j);
  }
  cli_json_array_end(j);
}

static void json_step(cli_json *j, const step *s) {
  cli_json_object_begin(j, NULL);
  cli_json_string(j, "name", s->key);
  cli_json_string(j, "status", status_word(s->status));
  cli_json_string(j, "message", s->message);
  cli_json_string(j, "hint", s->hint[0] ? s->hint : NULL);
  cli_json_object_begin(j, "details");
  for (int k = 0; k < s->num_details; k++) {
    const detail *x = &s->details[k];
    switch (x->kind) {
    case D_STR: cli_json_string(j, x->key, x->str); break;
    case D_NULL: cli_json_null(j, x->key); break;
    case D_UINT: cli_json_uint(j, x->key, x->u); break;
    case D_BOOL: cli_json_bool(j, x->key, (int)x->u); break;
    case D_ROWS: json_rows(j, s, x->key); break;
    }
  }
  cli_json_object_end(j);
  cli_json_object_end(j);
}

int report_print_json(const report *r, const char *schema) {
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_object_begin(&j, NULL);
  cli_json_string(&j, "schema", schema);
  cli_json_string(&j, "htpu_version", HTPU_VERSION_STRING);
  cli_json_bool(&j, "ok", r->num_failed == 0);
  cli_json_uint(&j, "failed", (uint64_t)r->num_failed);
  cli_json_uint(&j, "warnings", (uint64_t)r->num_warned);
  cli_json_array_begin(&j, "steps", 0);
  for (int i = 0; i < r->num_steps; i++) json_step(&j, &r->steps[i]);
  cli_json_array_end(&j);
  cli_json_object_end(&j);
  return cli_json_finish(&j);
}
