/*
 * build_text.c - ref_build_from_text: the text description (docs/reference-format.md) to the
 * binary format. Statements are checked as they are read so that errors name their line (the
 * statements' files: build_text.h); the whole model then goes through the same checks as the
 * parser (validate.c), whose messages are mapped back to the line of the op or graph at
 * fault, and is written by ref_model_write.
 */
#include <stdlib.h>
#include <string.h>

#include "build_text.h"

/* ---- graph ------------------------------------------------------------------------------ */

/* `graph NAME [batch_multiple=yes|no]` */
static int stmt_graph(builder *b, const refm_lexer *lx) {
  const refm_tok *t = lx->toks;
  if (lx->ntoks < 2 || !bt_is_name(&t[1]) ||
      (lx->ntoks > 2 && (lx->ntoks < 4 || t[2].kind != REFM_TK_WORD ||
                         t[3].kind != REFM_TK_EQ)))
    return bt_line_err(b, t[0].line, "expected 'graph NAME' or 'graph NAME batch_multiple=no'");
  attrs as;
  if (bt_parse_attrs(b, lx, 2, &as)) return -1;
  uint32_t flags = 0;
  attr *bm = bt_take(&as, "batch_multiple");
  if (bm) {
    if (bt_scalar(b, bm)) return -1;
    if (strcmp(bm->scalar->text, "no") == 0)
      flags |= REF_GRAPH_NO_BATCH_MULTIPLE;
    else if (strcmp(bm->scalar->text, "yes") != 0)
      return bt_line_err(b, bm->scalar->line, "batch_multiple: '%s' (expected yes or no)",
                         bm->scalar->text);
  }
  if (bt_no_unused(b, &as, "graph", "batch_multiple")) return -1;
  if (!t[1].text[0]) return bt_line_err(b, t[1].line, "empty graph name");
  for (uint32_t g = 0; g < b->ng; g++)
    if (strcmp(b->graphs[g].name, t[1].text) == 0)
      return bt_line_err(b, t[1].line, "graph '%s' already defined on line %d", t[1].text,
                         b->graphs[g].line);
  bgraph *ng = bt_room_for(b->graphs, b->ng, &b->cap_g, sizeof *ng);
  if (!ng) return bt_oom(b);
  b->graphs = ng;
  bgraph *g = &b->graphs[b->ng];
  memset(g, 0, sizeof *g);
  g->line = t[0].line;
  g->flags = flags;
  if (!(g->name = strdup(t[1].text))) return bt_oom(b);
  b->ng++;
  return 0;
}

/* ---- driver ----------------------------------------------------------------------------- */

static int statement(builder *b, const refm_lexer *lx) {
  const refm_tok *kw = &lx->toks[0];
  if (kw->kind != REFM_TK_WORD) return bt_line_err(b, kw->line, "unexpected '%s'", kw->text);
  if (strcmp(kw->text, "meta") == 0) return bt_stmt_meta(b, lx);
  if (strcmp(kw->text, "graph") == 0) return stmt_graph(b, lx);
  if (strcmp(kw->text, "op") == 0) return bt_stmt_op(b, lx);
  static const struct {
    const char *word;
    ref_tensor_kind kind;
  } kinds[] = {{"input", REF_TENSOR_INPUT},
               {"output", REF_TENSOR_OUTPUT},
               {"native", REF_TENSOR_NATIVE},
               {"static", REF_TENSOR_STATIC}};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    if (strcmp(kw->text, kinds[k].word) == 0) return bt_stmt_tensor(b, lx, kinds[k].kind);
  return bt_line_err(b, kw->line, "unknown statement '%s' (meta, graph, input, output, native, "
                     "static, op)", kw->text);
}

/* Checks the whole model with the parser's rules and writes it. */
static int finish(builder *b, void **out, size_t *out_len) {
  if (b->ng == 0) return refm_err(b->err, b->errlen, "no graph defined");
  if (bt_resolve_vtcm(b)) return -1;
  ref_model m;
  memset(&m, 0, sizeof m);
  m.meta = b->meta;
  m.num_tensors = b->nt;
  m.tensors = calloc((size_t)b->nt + 1, sizeof *m.tensors);
  m.num_graphs = b->ng;
  m.graphs = calloc((size_t)b->ng + 1, sizeof *m.graphs);
  int rc = -1;
  if (!m.tensors || !m.graphs) {
    bt_oom(b);
    goto out;
  }
  for (uint32_t i = 0; i < b->nt; i++) m.tensors[i] = b->tensors[i].t;
  for (uint32_t g = 0; g < b->ng; g++) {
    const bgraph *bg = &b->graphs[g];
    m.graphs[g] = (ref_graph){bg->name,  bg->nin, bg->inputs, bg->nout,
                              bg->outputs, bg->nops, bg->ops, bg->flags};
  }
  uint32_t bad_graph, bad_op;
  char msg[512];
  if (refm_check_graphs(&m, &bad_graph, &bad_op, msg, sizeof msg)) {
    const bgraph *bg = &b->graphs[bad_graph];
    bt_line_err(b, bad_op == UINT32_MAX ? bg->line : bg->op_lines[bad_op], "%s", msg);
    goto out;
  }
  rc = ref_model_write(&m, out, out_len, b->err, b->errlen);
out:
  free(m.tensors);
  free(m.graphs);
  return rc;
}

static void builder_free(builder *b) {
  for (uint32_t i = 0; i < b->nallocs; i++) free(b->allocs[i]);
  free(b->allocs);
  for (uint32_t g = 0; g < b->ng; g++) {
    free(b->graphs[g].name);
    free(b->graphs[g].inputs);
    free(b->graphs[g].outputs);
    free(b->graphs[g].ops);
    free(b->graphs[g].op_lines);
  }
  free(b->graphs);
  free(b->tensors);
}

int ref_build_from_text_at(const char *text, const char *base_dir, void **out, size_t *out_len,
                           char *err, size_t errlen) {
  if (!text || !out || !out_len) return refm_err(err, errlen, "invalid argument");
  *out = NULL;
  *out_len = 0;
  builder b;
  memset(&b, 0, sizeof b);
  bt_meta_defaults(&b);
  b.base_dir = base_dir;
  b.err = err;
  b.errlen = errlen;
  refm_lexer lx;
  refm_lex_init(&lx, text);
  int rc, more;
  while ((more = refm_lex_next(&lx, err, errlen)) == 1)
    if (statement(&b, &lx)) break;
  rc = more == 0 ? finish(&b, out, out_len) : -1;
  refm_lex_free(&lx);
  builder_free(&b);
  return rc;
}

int ref_build_from_text(const char *text, void **out, size_t *out_len, char *err, size_t errlen) {
  return ref_build_from_text_at(text, NULL, out, out_len, err, errlen);
}
