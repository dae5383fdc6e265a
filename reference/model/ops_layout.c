/*
 * ops_layout.c - the ops that move values without computing new ones: Concat, Transpose and
 * ResizeNearestNeighbor (QNN's semantics, docs/reference-format.md). Shapes were checked by
 * validate_ops.c.
 */
#include <math.h>
#include <string.h>

#include "refmodel_priv.h"

/* Along `axis`: outer blocks of the dims before it, each holding every input's slab in turn. */
static void op_concat(const ref_model *m, const ref_op *op, const float *const *in, float *y) {
  const ref_tensor *t0 = &m->tensors[op->inputs[0]];
  size_t outer = 1, inner = 1;
  for (uint32_t d = 0; d < op->axis; d++) outer *= t0->dims[d];
  for (uint32_t d = op->axis + 1; d < t0->rank; d++) inner *= t0->dims[d];
  for (size_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < op->num_inputs; i++) {
      size_t slab = (size_t)m->tensors[op->inputs[i]].dims[op->axis] * inner;
      memcpy(y, in[i] + o * slab, slab * sizeof *y);
      y += slab;
    }
}

/* y[i0..] = x[index with dim perm[k] at position k]: walk y in order, stepping x by strides. */
static void op_transpose(const ref_op *op, const ref_tensor *tx, const ref_tensor *ty,
                         const float *x, float *y) {
  uint32_t rank = tx->rank;
  size_t xs[REF_MAX_RANK], step[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
  size_t s = 1;
  for (uint32_t d = rank; d-- > 0;) xs[d] = s, s *= tx->dims[d];
  for (uint32_t k = 0; k < rank; k++) step[k] = xs[op->perm[k]];
  size_t n = ref_tensor_elements(ty), at = 0;
  for (size_t e = 0; e < n; e++) {
    y[e] = x[at];
    for (uint32_t k = rank; k-- > 0;) {
      at += step[k];
      if (++idx[k] < ty->dims[k]) break;
      at -= step[k] * ty->dims[k];
      idx[k] = 0;
    }
  }
}

/* The source index of output index o (TensorFlow's ResizeNearestNeighbor, which QNN follows):
 * align_corners: round(o (in - 1) / (out - 1)); half_pixel_centers: floor((o + 0.5) in / out);
 * else floor(o in / out); clamped to in - 1. In float, as TensorFlow's kernel computes it. */
static size_t nearest(size_t o, size_t in, size_t out, const ref_op *op) {
  float scale = op->align_corners && out > 1 ? (float)(in - 1) / (float)(out - 1)
                                             : (float)in / (float)out;
  float f = op->align_corners        ? roundf((float)o * scale)
            : op->half_pixel_centers ? floorf(((float)o + 0.5f) * scale)
                                     : floorf((float)o * scale);
  size_t i = f < 0.0f ? 0 : (size_t)f;
  return i < in - 1 ? i : in - 1;
}

static void op_resize(const ref_op *op, const ref_tensor *tx, const ref_tensor *ty,
                      const float *x, float *y) {
  size_t nb = tx->dims[0], h = tx->dims[1], w = tx->dims[2], c = tx->dims[3];
  size_t oh = ty->dims[1], ow = ty->dims[2];
  for (size_t n = 0; n < nb; n++)
    for (size_t oy = 0; oy < oh; oy++) {
      size_t iy = nearest(oy, h, oh, op);
      for (size_t ox = 0; ox < ow; ox++) {
        size_t ix = nearest(ox, w, ow, op);
        memcpy(y + ((n * oh + oy) * ow + ox) * c, x + ((n * h + iy) * w + ix) * c, c * sizeof *y);
      }
    }
}

void refm_op_layout(const ref_model *m, const ref_op *op, const float *const *in, float *out) {
  const ref_tensor *tx = &m->tensors[op->inputs[0]], *ty = &m->tensors[op->outputs[0]];
  switch (op->type) {
  case REF_OP_CONCAT:
    op_concat(m, op, in, out);
    break;
  case REF_OP_TRANSPOSE:
    op_transpose(op, tx, ty, in[0], out);
    break;
  case REF_OP_RESIZE_NEAREST:
    op_resize(op, tx, ty, in[0], out);
    break;
  default:
    break; /* validate.c refused any other type */
  }
}
