/*
 * json.h - a small streaming JSON writer for the --json reports.
 *
 * Output is indented by two spaces; containers opened "inline" (shapes, scale lists) stay on one
 * line. Strings are escaped per RFC 8259 and bytes that are not valid UTF-8 are written as
 * \ufffd, so the output parses even when a binary holds a garbage tensor name. Non-finite
 * doubles become null (JSON has no NaN). Misuse (unbalanced ends, nesting deeper than
 * CLI_JSON_MAX_DEPTH, a key missing inside an object) is recorded and reported by
 * cli_json_finish rather than producing silently broken output.
 */
#ifndef HTPU_JSON_H
#define HTPU_JSON_H

#include <stdint.h>
#include <stdio.h>

#define CLI_JSON_MAX_DEPTH 16

typedef struct cli_json {
  FILE *f;
  int depth;
  int error;
  unsigned char count[CLI_JSON_MAX_DEPTH]; /* items written at each level (saturating) */
  unsigned char is_object[CLI_JSON_MAX_DEPTH];
  unsigned char is_inline[CLI_JSON_MAX_DEPTH];
} cli_json;

void cli_json_init(cli_json *j, FILE *f);

/* `key` names the member inside an object and must be NULL at the top level and in arrays. */
void cli_json_object_begin(cli_json *j, const char *key);
void cli_json_object_end(cli_json *j);
void cli_json_array_begin(cli_json *j, const char *key, int is_inline);
void cli_json_array_end(cli_json *j);

void cli_json_string(cli_json *j, const char *key, const char *value); /* NULL -> null */
void cli_json_uint(cli_json *j, const char *key, uint64_t value);
void cli_json_int(cli_json *j, const char *key, int64_t value);
void cli_json_double(cli_json *j, const char *key, double value);
void cli_json_bool(cli_json *j, const char *key, int value);
void cli_json_null(cli_json *j, const char *key);

/* Ends the document with a newline. Returns 0, or -1 if the writer was misused or the stream
 * reported an error. */
int cli_json_finish(cli_json *j);

/* Writes `s` as a quoted, escaped JSON string (exposed for tests and one-off uses). */
void cli_json_write_string(FILE *f, const char *s);

#endif /* HTPU_JSON_H */
