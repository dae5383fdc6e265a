/*
 * build_op.c - the text builder's op statement (build_text.h): `op TYPE inputs... ->
 * outputs... [params]`, the tensors named in the current graph and each op type's parameters.
 */
#include <stdio.h>
#include <string.h>

#include "build_text.h"

static int op_names(builder *b, const refm_lexer *lx, size_t *i, int outputs, uint32_t *idx,
                    uint32_t *count) {
  const refm_tok *t = lx->toks;
  *count = 0;
  while (*i < lx->ntoks && bt_is_name(&t[*i])) {
    if (!outputs && t[*i].kind == REFM_TK_WORD && strcmp(t[*i].text, "->") == 0) break;
    if (*i + 1 < lx->ntoks && t[*i + 1].kind == REFM_TK_EQ) {
      if (!outputs) return bt_line_err(b, t[*i].line, "expected '->' before parameters");
      break; /* parameters start */
    }
    if (*count == REF_MAX_OP_IO)
      return bt_line_err(b, t[*i].line, "more than %d %s", REF_MAX_OP_IO,
                         outputs ? "outputs" : "inputs");
    int64_t ti = bt_find_tensor(b, b->ng - 1, t[*i].text);
    if (ti < 0)
      return bt_line_err(b, t[*i].line, "unknown tensor '%s' in graph '%s'", t[*i].text,
                         b->graphs[b->ng - 1].name);
    idx[(*count)++] = (uint32_t)ti;
    (*i)++;
  }
  return 0;
}

/* yes/no flags and floor/ceil: a word of `two` (the second means 1). */
static int attr_choice(builder *b, const attr *a, const char *zero, const char *one,
                       uint32_t *out) {
  if (bt_scalar(b, a)) return -1;
  if (strcmp(a->scalar->text, zero) && strcmp(a->scalar->text, one))
    return bt_line_err(b, a->scalar->line, "%s: expected %s or %s, got '%s'", a->key->text, zero,
                       one, a->scalar->text);
  *out = strcmp(a->scalar->text, one) == 0;
  return 0;
}

/* The parameters of the ops of format version 2 (Concat's axis, PoolMax2d's filter and
 * rounding, ResizeNearestNeighbor's flags, Transpose's perm); stride and pad are the caller's. */
static int op_params_v2(builder *b, const refm_lexer *lx, attrs *as, ref_op *op,
                        const char **allowed) {
  if (op->type == REF_OP_CONCAT) {
    attr *axis = bt_take(as, "axis");
    *allowed = "name, axis";
    return axis ? bt_attr_u32(b, axis, &op->axis) : 0;
  }
  if (op->type == REF_OP_POOL_MAX_2D) {
    attr *filter = bt_take(as, "filter"), *rounding = bt_take(as, "rounding");
    *allowed = "name, filter, stride, pad, rounding";
    if (!filter) return bt_line_err(b, lx->toks[0].line, "PoolMax2d needs filter=[h,w]");
    if (bt_attr_u32_list(b, lx, filter, 2, op->filter)) return -1;
    return rounding ? attr_choice(b, rounding, "floor", "ceil", &op->ceil_mode) : 0;
  }
  if (op->type == REF_OP_RESIZE_NEAREST) {
    attr *ac = bt_take(as, "align_corners"), *hp = bt_take(as, "half_pixel_centers");
    *allowed = "name, align_corners, half_pixel_centers";
    if (ac && attr_choice(b, ac, "no", "yes", &op->align_corners)) return -1;
    return hp ? attr_choice(b, hp, "no", "yes", &op->half_pixel_centers) : 0;
  }
  if (op->type == REF_OP_TRANSPOSE) {
    attr *perm = bt_take(as, "perm");
    *allowed = "name, perm";
    if (!perm) return bt_line_err(b, lx->toks[0].line, "Transpose needs perm=[...]");
    if (perm->count < 1 || perm->count > REF_MAX_RANK)
      return bt_line_err(b, perm->key->line, "perm: 1 to %d entries", REF_MAX_RANK);
    return bt_attr_u32_list(b, lx, perm, perm->count, op->perm);
  }
  return 0;
}

static int op_params(builder *b, const refm_lexer *lx, attrs *as, ref_op *op, uint32_t index) {
  attr *name = bt_take(as, "name"), *stride = NULL, *pad = NULL, *beta = NULL;
  const char *allowed = "name";
  if (refm_op_takes_window(op->type)) {
    stride = bt_take(as, "stride");
    pad = bt_take(as, "pad");
    op->stride[0] = op->stride[1] = 1;
    allowed = "name, stride, pad";
    /* QNN's defaults for Conv2d and PoolMax2d alike: stride 1, no padding */
  } else if (op->type == REF_OP_SOFTMAX) {
    beta = bt_take(as, "beta");
    op->beta = 1.0f;
    allowed = "name, beta";
  }
  if (op->type >= REF_OP_FIRST_V2 && op_params_v2(b, lx, as, op, &allowed)) return -1;
  if (bt_no_unused(b, as, refm_op_name(op->type), allowed)) return -1;
  if (stride && bt_attr_u32_list(b, lx, stride, 2, op->stride)) return -1;
  if (pad && bt_attr_u32_list(b, lx, pad, 4, op->pad)) return -1;
  if (beta && bt_attr_f32(b, beta, &op->beta)) return -1;
  char dflt[64];
  snprintf(dflt, sizeof dflt, "%s_%u", refm_op_name(op->type), index);
  if (name && bt_scalar(b, name)) return -1;
  if (!(op->name = bt_keep_str(b, name ? name->scalar->text : dflt))) return bt_oom(b);
  return 0;
}

int bt_stmt_op(builder *b, const refm_lexer *lx) {
  const refm_tok *t = lx->toks;
  int line = t[0].line;
  bgraph *g = bt_current_graph(b, &t[0]);
  if (!g) return -1;
  if (lx->ntoks < 2 || t[1].kind != REFM_TK_WORD)
    return bt_line_err(b, line, "expected 'op TYPE inputs... -> outputs... [params]'");
  ref_op op;
  memset(&op, 0, sizeof op);
  op.type = (ref_op_type)refm_op_from_name(t[1].text);
  if (!op.type)
    return bt_line_err(b, t[1].line, "unknown op '%s' (ElementWiseAdd, ElementWiseMultiply, "
                       "FullyConnected, Conv2d, Relu, Reshape, Softmax, NonZero, Sigmoid, Concat, "
                       "PoolMax2d, ResizeNearestNeighbor, Transpose)", t[1].text);
  size_t i = 2;
  if (op_names(b, lx, &i, 0, op.inputs, &op.num_inputs)) return -1;
  if (i >= lx->ntoks || strcmp(t[i].text, "->") != 0)
    return bt_line_err(b, i < lx->ntoks ? t[i].line : line,
                       "expected '->' between the op's inputs and outputs");
  i++;
  if (op_names(b, lx, &i, 1, op.outputs, &op.num_outputs)) return -1;
  attrs as;
  if (bt_parse_attrs(b, lx, i, &as)) return -1;
  if (op_params(b, lx, &as, &op, g->nops)) return -1;
  ref_op *nops = bt_room_for(g->ops, g->nops, &g->cap_ops, sizeof *nops);
  if (!nops) return bt_oom(b);
  g->ops = nops;
  int *nl = bt_room_for(g->op_lines, g->nops, &g->cap_op_lines, sizeof *nl);
  if (!nl) return bt_oom(b);
  g->op_lines = nl;
  g->ops[g->nops] = op;
  g->op_lines[g->nops++] = line;
  return 0;
}
