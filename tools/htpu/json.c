/* json.c - the streaming JSON writer (see json.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

void cli_json_init(cli_json *j, FILE *f) {
  memset(j, 0, sizeof(*j));
  j->f = f;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, nothing
 * above U+10FFFF), or 0 when the bytes there are not one. Never reads past a NUL: a NUL
 * fails every continuation-byte test, and the tests run in order. */
static size_t utf8_sequence(const unsigned char *s) {
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
    return 4;
  }
  return 0;
}

/* RFC 8259's two-character escapes; other control characters get \u00XX. */
static const char *short_escape(unsigned char c) {
  switch (c) {
  case '"': return "\\\"";
  case '\\': return "\\\\";
  case '\b': return "\\b";
  case '\f': return "\\f";
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  default: return NULL;
  }
}

void cli_json_write_string(FILE *f, const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  fputc('"', f);
  while (*s) {
    unsigned char c = *s;
    const char *esc = short_escape(c);
    if (esc) {
      fputs(esc, f);
      s++;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      fprintf(f, "\\u%04x", c);
      s++;
      continue;
    }
    size_t n = utf8_sequence(s);
    if (n == 0) {
      fputs("\\ufffd", f);
      s++;
      continue;
    }
    fwrite(s, 1, n, f);
    s += n;
  }
  fputc('"', f);
}

static void newline_indent(cli_json *j) {
  fputc('\n', j->f);
  for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
}

/* Separator, indentation and key before a value at the current level. */
static void begin_value(cli_json *j, const char *key) {
  if (j->depth == 0) {
    if (key) j->error = 1;
    return;
  }
  int lvl = j->depth - 1;
  if ((key != NULL) != (j->is_object[lvl] != 0)) j->error = 1;
  if (j->count[lvl]) fputc(',', j->f);
  if (j->is_inline[lvl]) {
    if (j->count[lvl]) fputc(' ', j->f);
  } else {
    newline_indent(j);
  }
  if (j->count[lvl] < 255) j->count[lvl]++;
  if (key) {
    cli_json_write_string(j->f, key);
    fputs(": ", j->f);
  }
}

static void open_container(cli_json *j, const char *key, int is_object, int is_inline, char c) {
  begin_value(j, key);
  fputc(c, j->f);
  if (j->depth >= CLI_JSON_MAX_DEPTH) {
    j->error = 1;
    return;
  }
  int parent_inline = j->depth > 0 && j->is_inline[j->depth - 1];
  j->count[j->depth] = 0;
  j->is_object[j->depth] = (unsigned char)is_object;
  j->is_inline[j->depth] = (unsigned char)(is_inline || parent_inline);
  j->depth++;
}

static void close_container(cli_json *j, int is_object, char c) {
  if (j->depth == 0 || j->is_object[j->depth - 1] != is_object) {
    j->error = 1;
    return;
  }
  int had_items = j->count[j->depth - 1] != 0;
  int was_inline = j->is_inline[j->depth - 1];
  j->depth--;
  if (had_items && !was_inline) newline_indent(j);
  fputc(c, j->f);
}

void cli_json_object_begin(cli_json *j, const char *key) { open_container(j, key, 1, 0, '{'); }
void cli_json_object_end(cli_json *j) { close_container(j, 1, '}'); }
void cli_json_array_begin(cli_json *j, const char *key, int is_inline) {
  open_container(j, key, 0, is_inline, '[');
}
void cli_json_array_end(cli_json *j) { close_container(j, 0, ']'); }

void cli_json_string(cli_json *j, const char *key, const char *value) {
  begin_value(j, key);
  if (value)
    cli_json_write_string(j->f, value);
  else
    fputs("null", j->f);
}

void cli_json_uint(cli_json *j, const char *key, uint64_t value) {
  begin_value(j, key);
  fprintf(j->f, "%" PRIu64, value);
}

void cli_json_int(cli_json *j, const char *key, int64_t value) {
  begin_value(j, key);
  fprintf(j->f, "%" PRId64, value);
}

void cli_json_double(cli_json *j, const char *key, double value) {
  begin_value(j, key);
  /* %.9g round-trips every float (the values here are floats); %g never prints a bare "."
   * or a leading "+", so its output is a valid JSON number. */
  if (isfinite(value))
    fprintf(j->f, "%.9g", value);
  else
    fputs("null", j->f);
}

void cli_json_bool(cli_json *j, const char *key, int value) {
  begin_value(j, key);
  fputs(value ? "true" : "false", j->f);
}

void cli_json_null(cli_json *j, const char *key) {
  begin_value(j, key);
  fputs("null", j->f);
}

int cli_json_finish(cli_json *j) {
  fputc('\n', j->f);
  if (j->depth != 0) j->error = 1;
  return (j->error || ferror(j->f)) ? -1 : 0;
}
