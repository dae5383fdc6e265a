/*
 * build_attrs.c - a statement's tokens read as the text builder wants them (build_text.h):
 * numbers in range, `[a, b]` lists and `key=value` parameters, each error naming its line and
 * what was expected.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build_text.h"

int bt_parse_u32(const char *s, uint32_t *out) {
  char *end;
  if (*s < '0' || *s > '9') return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v > UINT32_MAX) return -1;
  *out = (uint32_t)v;
  return 0;
}

int bt_parse_i64(const char *s, int64_t *out) {
  char *end;
  if (!*s) return -1;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

/* A decimal or special (inf, nan) float that fits f32's range. */
int bt_parse_f32(const char *s, float *out) {
  char *end;
  if (!*s) return -1;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || (errno && fabs(v) > 1.0) || (isfinite(v) && fabs(v) > FLT_MAX)) return -1;
  *out = (float)v;
  return 0;
}

int bt_is_name(const refm_tok *t) {
  return t->kind == REFM_TK_WORD || t->kind == REFM_TK_STRING;
}

/* ---- attributes ------------------------------------------------------------------------- */

/* Parses `[ items ]` starting at toks[*i]; items are words separated by optional commas. */
int bt_parse_list(builder *b, const refm_lexer *lx, size_t *i, size_t *first, size_t *end,
                  size_t *count) {
  const refm_tok *t = lx->toks;
  if (*i >= lx->ntoks || t[*i].kind != REFM_TK_LBRACK)
    return bt_line_err(b, *i < lx->ntoks ? t[*i].line : t[lx->ntoks - 1].line,
                       "expected a list like [1,2]");
  size_t k = *i + 1;
  *first = k;
  *count = 0;
  for (; k < lx->ntoks && t[k].kind != REFM_TK_RBRACK; k++) {
    if (t[k].kind == REFM_TK_COMMA) continue;
    if (t[k].kind != REFM_TK_WORD)
      return bt_line_err(b, t[k].line, "unexpected '%s' in a list", t[k].text);
    (*count)++;
  }
  *end = k; /* the lexer guarantees the closing bracket */
  *i = k + 1;
  return 0;
}

int bt_parse_attrs(builder *b, const refm_lexer *lx, size_t i, attrs *as) {
  const refm_tok *t = lx->toks;
  as->n = 0;
  while (i < lx->ntoks) {
    if (t[i].kind != REFM_TK_WORD || i + 2 > lx->ntoks || t[i + 1].kind != REFM_TK_EQ)
      return bt_line_err(b, t[i].line, "expected key=value, got '%s'", t[i].text);
    for (size_t k = 0; k < as->n; k++)
      if (strcmp(as->v[k].key->text, t[i].text) == 0)
        return bt_line_err(b, t[i].line, "'%s' given twice", t[i].text);
    if (as->n == MAX_ATTRS) return bt_line_err(b, t[i].line, "too many parameters");
    attr *a = &as->v[as->n++];
    memset(a, 0, sizeof *a);
    a->key = &t[i];
    i += 2;
    if (i >= lx->ntoks) return bt_line_err(b, a->key->line, "'%s=' without a value", a->key->text);
    if (t[i].kind == REFM_TK_LBRACK) {
      if (bt_parse_list(b, lx, &i, &a->first, &a->end, &a->count)) return -1;
    } else if (bt_is_name(&t[i])) {
      a->scalar = &t[i++];
    } else {
      return bt_line_err(b, t[i].line, "bad value '%s' for '%s'", t[i].text, a->key->text);
    }
  }
  return 0;
}

attr *bt_take(attrs *as, const char *key) {
  for (size_t k = 0; k < as->n; k++)
    if (strcmp(as->v[k].key->text, key) == 0) {
      as->v[k].used = 1;
      return &as->v[k];
    }
  return NULL;
}

/* After a statement took what it knows: anything left is a misspelled or misplaced key. */
int bt_no_unused(builder *b, const attrs *as, const char *what, const char *allowed) {
  for (size_t k = 0; k < as->n; k++)
    if (!as->v[k].used)
      return bt_line_err(b, as->v[k].key->line, "%s takes no parameter '%s' (%s)", what,
                         as->v[k].key->text, allowed);
  return 0;
}

int bt_scalar(builder *b, const attr *a) {
  if (!a->scalar)
    return bt_line_err(b, a->key->line, "'%s' takes a single value, not a list", a->key->text);
  return 0;
}

int bt_attr_u32(builder *b, const attr *a, uint32_t *out) {
  if (bt_scalar(b, a)) return -1;
  if (bt_parse_u32(a->scalar->text, out))
    return bt_line_err(b, a->scalar->line, "%s: '%s' is not an unsigned 32-bit integer",
                       a->key->text, a->scalar->text);
  return 0;
}

int bt_attr_f32(builder *b, const attr *a, float *out) {
  if (bt_scalar(b, a)) return -1;
  if (bt_parse_f32(a->scalar->text, out))
    return bt_line_err(b, a->scalar->line, "%s: '%s' is not a number in f32 range", a->key->text,
                       a->scalar->text);
  return 0;
}

/* The u32 items of the list in toks[first, end), at most max of them. */
size_t bt_list_u32(builder *b, const refm_lexer *lx, size_t first, size_t end,
                   const char *label, uint32_t *out) {
  size_t k = 0;
  for (size_t i = first; i < end; i++) {
    const refm_tok *t = &lx->toks[i];
    if (t->kind != REFM_TK_WORD) continue;
    if (bt_parse_u32(t->text, &out[k++])) {
      bt_line_err(b, t->line, "%s: '%s' is not an unsigned 32-bit integer", label, t->text);
      return SIZE_MAX;
    }
  }
  return k;
}

/* A list of exactly `want` u32. */
int bt_attr_u32_list(builder *b, const refm_lexer *lx, const attr *a, size_t want,
                     uint32_t *out) {
  if (a->scalar || a->count != want)
    return bt_line_err(b, a->key->line, "'%s' takes a list of %zu values like [%s]", a->key->text,
                       want, want == 2 ? "1,1" : "0,0,0,0");
  return bt_list_u32(b, lx, a->first, a->end, a->key->text, out) == SIZE_MAX ? -1 : 0;
}
