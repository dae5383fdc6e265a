/* names.c - see names.h. A small recursive-descent reader over one flat dict: no nesting. */
#include "names.h"

#include <stdlib.h>
#include <string.h>

typedef struct cursor {
  const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
    c->p++;
}

static int eat(cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

static int read_key(cursor *c, uint32_t *key) {
  skip_ws(c);
  uint64_t v = 0;
  const char *start = c->p;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    v = v * 10 + (uint64_t)(*c->p++ - '0');
    if (v >= NAMES_MAX_CLASSES) return 0;
  }
  *key = (uint32_t)v;
  return c->p > start;
}

static int hex_value(cursor *c, int digits, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < digits; i++) {
    if (c->p >= c->end) return 0;
    char h = *c->p++;
    int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
            : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
    if (d < 0) return 0;
    v = v * 16 + (uint32_t)d;
  }
  *out = v;
  return 1;
}

/* Appends code point cp as UTF-8; 0 for a surrogate, NUL or beyond U+10FFFF. */
static int put_utf8(char *dst, size_t *n, uint32_t cp) {
  if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  if (cp < 0x80) {
    dst[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    dst[(*n)++] = (char)(0xc0 | (cp >> 6));
    dst[(*n)++] = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    dst[(*n)++] = (char)(0xe0 | (cp >> 12));
    dst[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
    dst[(*n)++] = (char)(0x80 | (cp & 0x3f));
  } else {
    dst[(*n)++] = (char)(0xf0 | (cp >> 18));
    dst[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
    dst[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
    dst[(*n)++] = (char)(0x80 | (cp & 0x3f));
  }
  return 1;
}

/* One escape after the backslash; 0 for one Python has but a class name would not use. */
static int read_escape(cursor *c, char *dst, size_t *n) {
  if (c->p >= c->end) return 0;
  char e = *c->p++;
  const char *simple = strchr("\\'\"ntr", e);
  if (simple && e) {
    dst[(*n)++] = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
    return 1;
  }
  uint32_t cp;
  int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
  return digits && hex_value(c, digits, &cp) && put_utf8(dst, n, cp);
}

/* A quoted string into dst (at least as long as the rest of the text); 0 when malformed. */
static int read_string(cursor *c, char *dst, size_t *n) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
  char q = *c->p++;
  *n = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\n' || *c->p == 0) return 0;
    if (*c->p == '\\') {
      c->p++;
      if (!read_escape(c, dst, n)) return 0;
    } else {
      dst[(*n)++] = *c->p++;
    }
  }
  if (c->p >= c->end) return 0;
  c->p++;
  dst[*n] = 0;
  return 1;
}

/* The entries up to the closing brace: their count (> 0), 0 when not the form, -1 out of
 * memory. Each name goes to names[key], copied into m. */
static int parse_entries(cursor *c, const char **names, size_t max, char *scratch,
                         model_info *m) {
  uint32_t n = 0;
  while (!eat(c, '}')) {
    uint32_t key;
    size_t sl;
    if (n == max || !read_key(c, &key) || key >= max || names[key] || !eat(c, ':') ||
        !read_string(c, scratch, &sl))
      return 0;
    names[key] = model_info_strdup(m, scratch);
    if (!names[key]) return -1;
    n++;
    if (!eat(c, ',')) {
      if (!eat(c, '}')) return 0;
      break;
    }
  }
  skip_ws(c);
  return c->p == c->end ? (int)n : 0;
}

int names_parse(const char *text, size_t len, model_info *m, const char *const **out,
                uint32_t *count) {
  *out = NULL;
  *count = 0;
  cursor c = {text, text + len};
  if (!eat(&c, '{')) return 0;
  /* at most one entry per 4 bytes ("0:''"): a bound for the table, known before parsing */
  size_t max = len / 4 + 1;
  if (max > NAMES_MAX_CLASSES) max = NAMES_MAX_CLASSES;
  const char **names = calloc(max, sizeof *names);
  char *scratch = malloc(len + 8); /* an escape never writes more bytes than it reads */
  int rc = names && scratch ? parse_entries(&c, names, max, scratch, m) : -1;
  uint32_t n = rc > 0 ? (uint32_t)rc : 0;
  for (uint32_t i = 0; i < n && rc > 0; i++)
    if (!names[i]) rc = 0; /* keys 0..n-1, each once */
  const char **kept = rc > 0 ? model_info_alloc(m, n * sizeof *kept) : NULL;
  if (rc > 0 && !kept) rc = -1;
  if (kept) memcpy(kept, names, n * sizeof *kept);
  free(names);
  free(scratch);
  if (rc <= 0) return rc < 0 ? -1 : 0;
  *out = kept;
  *count = n;
  return 1;
}
