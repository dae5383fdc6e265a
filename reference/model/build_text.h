/*
 * build_text.h - the text builder's own header (ref_build_from_text, refmodel.h): the state of
 * one build and what its files share. Files, each calling only those below it:
 *   build_text.c    the driver: statements in order, the graph statement, the final check
 *   build_meta.c    the meta statement: the context's header fields, VTCM
 *   build_tensor.c  input/output/native/static statements: types, quantization, data
 *   build_op.c      the op statement: inputs -> outputs and each op's parameters
 *   build_attrs.c   numbers, lists and key=value parameters, as tokens of a statement
 *   build_store.c   errors naming their line, the allocations kept, graphs and tensors found
 *   build_lex.c     the lexer (refmodel_priv.h)
 * The bt_ names are the builder's only; nothing outside build_*.c uses them.
 */
#ifndef HTPU_REF_BUILD_TEXT_H
#define HTPU_REF_BUILD_TEXT_H

#include "refmodel_priv.h"

#define MAX_ATTRS 16

typedef struct btensor {
  ref_tensor t;
  uint32_t graph;
  int line;
} btensor;

typedef struct bgraph {
  char *name;
  int line;
  uint32_t *inputs, *outputs;
  uint32_t nin, nout, cap_in, cap_out;
  ref_op *ops;
  int *op_lines;
  uint32_t nops, cap_ops, cap_op_lines;
  uint32_t flags; /* REF_GRAPH_* from the graph statement's parameters */
} bgraph;

typedef struct builder {
  ref_model_meta meta;
  unsigned meta_seen; /* bit per meta key (build_meta.c) */
  uint32_t vtcm_bytes; /* meta vtcm_bytes; meta.vtcm_blob is derived from it in finish */
  int vtcm_mb_form;    /* meta vtcm_blob_unit=mb */
  int vtcm_line;       /* the line of the last vtcm_* key, for finish's message */
  btensor *tensors;
  uint32_t nt, cap_t;
  bgraph *graphs;
  uint32_t ng, cap_g;
  void **allocs; /* strings and arrays the tensors, ops and meta point to */
  uint32_t nallocs, cap_allocs;
  const char *base_dir;
  char *err;
  size_t errlen;
} builder;

/* One `key=value` of a statement; value is a scalar token or the token range of a list. */
typedef struct attr {
  const refm_tok *key;
  const refm_tok *scalar; /* NULL for a list */
  size_t first, end;      /* list: tokens between the brackets */
  size_t count;           /* list: number of items */
  int used;
} attr;

typedef struct attrs {
  attr v[MAX_ATTRS];
  size_t n;
} attrs;

/* ---- the builder's state (build_store.c) -------------------------------------------------
 * The error functions write b->err and return -1, so callers can `return bt_line_err(..)`. */
int bt_oom(builder *b);
int bt_line_err(builder *b, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Returns arr with room for element n (growing *cap), or NULL (arr is then still valid). */
void *bt_room_for(void *arr, uint32_t n, uint32_t *cap, size_t elem);
/* Takes ownership of p (freed with the builder); returns p, or NULL after freeing it. */
void *bt_keep(builder *b, void *p);
char *bt_keep_str(builder *b, const char *s);
/* The graph being described, or NULL and an error naming the keyword kw outside one. */
bgraph *bt_current_graph(builder *b, const refm_tok *kw);
/* Index of the tensor called name in graph g, or -1. */
int64_t bt_find_tensor(const builder *b, uint32_t g, const char *name);
/* Appends v to *arr (n entries, room for *cap). 0, or -1 out of memory. */
int bt_add_index(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v);

/* ---- tokens and parameters (build_attrs.c) -----------------------------------------------
 * Numbers from a token's text: 0, or -1 for text that is not one in range. */
int bt_parse_u32(const char *s, uint32_t *out);
int bt_parse_i64(const char *s, int64_t *out);
int bt_parse_f32(const char *s, float *out);
/* A word or a quoted string: what may name a graph or a tensor. */
int bt_is_name(const refm_tok *t);
/* `[ items ]` at toks[*i]: its items' token range and count; *i moves past it. */
int bt_parse_list(builder *b, const refm_lexer *lx, size_t *i, size_t *first, size_t *end,
                  size_t *count);
/* The key=value parameters from toks[i] to the statement's end. */
int bt_parse_attrs(builder *b, const refm_lexer *lx, size_t i, attrs *as);
/* The parameter called key, marked used, or NULL. */
attr *bt_take(attrs *as, const char *key);
/* An error for the first parameter nobody took: `what` takes only `allowed`. */
int bt_no_unused(builder *b, const attrs *as, const char *what, const char *allowed);
/* An error unless a is a single value. */
int bt_scalar(builder *b, const attr *a);
int bt_attr_u32(builder *b, const attr *a, uint32_t *out);
int bt_attr_f32(builder *b, const attr *a, float *out);
/* The u32 items of the list in toks[first, end) into out (room for all), their count, or
 * SIZE_MAX after an error naming label. */
size_t bt_list_u32(builder *b, const refm_lexer *lx, size_t first, size_t end, const char *label,
                   uint32_t *out);
/* A list of exactly `want` u32. */
int bt_attr_u32_list(builder *b, const refm_lexer *lx, const attr *a, size_t want,
                     uint32_t *out);

/* ---- statements (build_meta.c, build_tensor.c, build_op.c) ---------------------------------
 * Each reads the statement in lx's tokens into b: 0, or -1 with the error in b->err. */
/* The meta fields and VTCM a text without meta statements gets. */
void bt_meta_defaults(builder *b);
int bt_stmt_meta(builder *b, const refm_lexer *lx);
/* meta.vtcm_blob from vtcm_bytes and vtcm_blob_unit, which may come in any order. */
int bt_resolve_vtcm(builder *b);
int bt_stmt_tensor(builder *b, const refm_lexer *lx, ref_tensor_kind kind);
int bt_stmt_op(builder *b, const refm_lexer *lx);

#endif
