/* build_lex.c - splits the text description into statements of tokens (see refmodel_priv.h). */
#include <stdlib.h>
#include <string.h>

#include "refmodel_priv.h"

void refm_lex_init(refm_lexer *lx, const char *text) {
  memset(lx, 0, sizeof *lx);
  lx->p = text;
  lx->line = 1;
}

void refm_lex_free(refm_lexer *lx) {
  free(lx->toks);
  free(lx->buf);
  memset(lx, 0, sizeof *lx);
}

static int put_char(refm_lexer *lx, char c) {
  if (lx->blen == lx->bcap) {
    size_t cap = lx->bcap ? lx->bcap * 2 : 256;
    char *nb = realloc(lx->buf, cap);
    if (!nb) return -1;
    lx->buf = nb;
    lx->bcap = cap;
  }
  lx->buf[lx->blen++] = c;
  return 0;
}

/* Starts a token whose text will be appended to the buffer. */
static refm_tok *new_tok(refm_lexer *lx, refm_tok_kind kind) {
  if (lx->ntoks == lx->cap) {
    size_t cap = lx->cap ? lx->cap * 2 : 32;
    refm_tok *nt = realloc(lx->toks, cap * sizeof *nt);
    if (!nt) return NULL;
    lx->toks = nt;
    lx->cap = cap;
  }
  refm_tok *t = &lx->toks[lx->ntoks++];
  t->kind = kind;
  t->line = lx->line;
  t->text = NULL;
  t->off_ = lx->blen;
  return t;
}

static int is_word_char(char c) {
  return c && !strchr(" \t\r\n[],=\"#\\", c);
}

static int lex_string(refm_lexer *lx, char *err, size_t errlen) {
  int start_line = lx->line;
  lx->p++; /* opening quote */
  for (;;) {
    char c = *lx->p;
    if (c == '\0' || c == '\n')
      return refm_err(err, errlen, "line %d: unterminated string", start_line);
    lx->p++;
    if (c == '"') break;
    if (c == '\\' && (*lx->p == '"' || *lx->p == '\\')) c = *lx->p++;
    if (put_char(lx, c)) return refm_err(err, errlen, "out of memory");
  }
  return 0;
}

int refm_lex_next(refm_lexer *lx, char *err, size_t errlen) {
  lx->ntoks = 0;
  lx->blen = 0;
  int depth = 0, open_line = 0;
  for (;;) {
    char c = *lx->p;
    if (c == '\0') {
      if (depth) return refm_err(err, errlen, "line %d: '[' is never closed", open_line);
      break;
    }
    if (c == '#') {
      while (*lx->p && *lx->p != '\n') lx->p++;
      continue;
    }
    if (c == '\n') {
      lx->p++;
      lx->line++;
      if (depth == 0 && lx->ntoks) break; /* a statement ends at a newline outside brackets */
      continue;
    }
    if (c == '\\') { /* a backslash before the end of the line continues the statement */
      const char *q = lx->p + 1;
      while (*q == ' ' || *q == '\t' || *q == '\r') q++;
      if (*q != '\n' && *q != '\0')
        return refm_err(err, errlen, "line %d: '\\' must end the line (continuation)", lx->line);
      if (*q == '\n') lx->line++;
      lx->p = *q ? q + 1 : q;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      lx->p++;
      continue;
    }
    refm_tok_kind kind = c == '[' ? REFM_TK_LBRACK
                         : c == ']' ? REFM_TK_RBRACK
                         : c == '=' ? REFM_TK_EQ
                         : c == ',' ? REFM_TK_COMMA
                         : c == '"' ? REFM_TK_STRING
                                    : REFM_TK_WORD;
    if (!new_tok(lx, kind)) return refm_err(err, errlen, "out of memory");
    if (kind == REFM_TK_STRING) {
      if (lex_string(lx, err, errlen)) return -1;
    } else if (kind == REFM_TK_WORD) {
      while (is_word_char(*lx->p))
        if (put_char(lx, *lx->p++)) return refm_err(err, errlen, "out of memory");
    } else {
      if (put_char(lx, c)) return refm_err(err, errlen, "out of memory");
      lx->p++;
      if (kind == REFM_TK_LBRACK && depth++ == 0) open_line = lx->line;
      if (kind == REFM_TK_RBRACK && depth-- == 0)
        return refm_err(err, errlen, "line %d: ']' without '['", lx->line);
    }
    if (put_char(lx, '\0')) return refm_err(err, errlen, "out of memory");
  }
  for (size_t i = 0; i < lx->ntoks; i++) lx->toks[i].text = lx->buf + lx->toks[i].off_;
  return lx->ntoks ? 1 : 0;
}
