/*
 * ops.c - the interpreter's kernels, one function per op, all in f32 (QNN's reference semantics:
 * operands arrive dequantized, results are requantized by the caller). Dot products accumulate
 * in double so that results do not depend on summation order details and match hand-computed
 * expectations. Shapes were checked by validate.c, so kernels do no checking.
 */
#include <math.h>
#include <string.h>

#include "refmodel_priv.h"

/* numpy-style broadcasting: walks the output in row-major order and moves each operand by its
 * stride in that dimension, which is 0 where the operand has no such dimension or a 1 there. */
static void op_elementwise(const ref_tensor *ta, const ref_tensor *tb, const ref_tensor *ty,
                           const float *a, const float *b, float *y, int multiply) {
  uint32_t rank = ty->rank;
  size_t sa[REF_MAX_RANK], sb[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
  size_t stride_a = 1, stride_b = 1;
  for (uint32_t i = rank; i-- > 0;) {
    sa[i] = sb[i] = 0;
    if (i + ta->rank >= rank) {
      uint32_t d = ta->dims[i + ta->rank - rank];
      sa[i] = d != 1 ? stride_a : 0;
      stride_a *= d;
    }
    if (i + tb->rank >= rank) {
      uint32_t d = tb->dims[i + tb->rank - rank];
      sb[i] = d != 1 ? stride_b : 0;
      stride_b *= d;
    }
  }
  size_t n = ref_tensor_elements(ty), ia = 0, ib = 0;
  for (size_t e = 0; e < n; e++) {
    y[e] = multiply ? a[ia] * b[ib] : a[ia] + b[ib];
    for (uint32_t d = rank; d-- > 0;) {
      ia += sa[d];
      ib += sb[d];
      if (++idx[d] < ty->dims[d]) break;
      ia -= sa[d] * ty->dims[d];
      ib -= sb[d] * ty->dims[d];
      idx[d] = 0;
    }
  }
}

/* y[N,M] = x[N,K] . w[M,K]^T + bias[M] (QNN keeps FullyConnected weights output-major). */
static void op_fully_connected(const ref_tensor *tx, const ref_tensor *tw, const float *x,
                               const float *w, const float *bias, float *y) {
  size_t m_out = tw->dims[0], k = tw->dims[1];
  size_t n = ref_tensor_elements(tx) / k;
  for (size_t r = 0; r < n; r++) {
    const float *xr = x + r * k;
    for (size_t m = 0; m < m_out; m++) {
      const float *wr = w + m * k;
      double acc = bias ? bias[m] : 0.0;
      for (size_t i = 0; i < k; i++) acc += (double)xr[i] * wr[i];
      y[r * m_out + m] = (float)acc;
    }
  }
}

/* NHWC input, HWIO weights [KH,KW,Cin,Cout]; padding contributes real zeros (for a quantized
 * input that is the zero point, as on QNN). */
static void op_conv2d(const ref_op *op, const ref_tensor *tx, const ref_tensor *tw,
                      const ref_tensor *ty, const float *x, const float *w, const float *bias,
                      float *y) {
  size_t nb = tx->dims[0], h = tx->dims[1], wd = tx->dims[2], cin = tx->dims[3];
  size_t kh = tw->dims[0], kw = tw->dims[1], cout = tw->dims[3];
  size_t oh = ty->dims[1], ow = ty->dims[2];
  int64_t sh = op->stride[0], sw = op->stride[1], pt = op->pad[0], pl = op->pad[1];
  for (size_t n = 0; n < nb; n++)
    for (size_t oy = 0; oy < oh; oy++)
      for (size_t ox = 0; ox < ow; ox++)
        for (size_t co = 0; co < cout; co++) {
          double acc = bias ? bias[co] : 0.0;
          for (size_t ky = 0; ky < kh; ky++) {
            int64_t iy = (int64_t)oy * sh + (int64_t)ky - pt;
            if (iy < 0 || iy >= (int64_t)h) continue;
            for (size_t kx = 0; kx < kw; kx++) {
              int64_t ix = (int64_t)ox * sw + (int64_t)kx - pl;
              if (ix < 0 || ix >= (int64_t)wd) continue;
              const float *xp = x + ((n * h + (size_t)iy) * wd + (size_t)ix) * cin;
              const float *wp = w + (ky * kw + kx) * cin * cout + co;
              for (size_t ci = 0; ci < cin; ci++) acc += (double)xp[ci] * wp[ci * cout];
            }
          }
          y[((n * oh + oy) * ow + ox) * cout + co] = (float)acc;
        }
}

static void op_relu(const ref_tensor *tx, const float *x, float *y) {
  size_t n = ref_tensor_elements(tx);
  for (size_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes through */
}

static void op_reshape(const ref_tensor *tx, const float *x, float *y) {
  memcpy(y, x, ref_tensor_elements(tx) * sizeof *x);
}

/* y = exp(beta*x - max) / sum over the last axis; subtracting the row maximum keeps exp finite. */
static void op_softmax(const ref_op *op, const ref_tensor *tx, const float *x, float *y) {
  size_t len = tx->dims[tx->rank - 1], rows = ref_tensor_elements(tx) / len;
  double beta = op->beta;
  for (size_t r = 0; r < rows; r++) {
    const float *xr = x + r * len;
    float *yr = y + r * len;
    double mx = -INFINITY, sum = 0.0;
    for (size_t i = 0; i < len; i++)
      if (beta * xr[i] > mx) mx = beta * xr[i];
    for (size_t i = 0; i < len; i++) sum += exp(beta * xr[i] - mx);
    for (size_t i = 0; i < len; i++) yr[i] = (float)(exp(beta * xr[i] - mx) / sum);
  }
}

/* In double, then rounded once: exp's own error stays far below an f32 ulp. */
static void op_sigmoid(const ref_tensor *tx, const float *x, float *y) {
  size_t n = ref_tensor_elements(tx);
  for (size_t i = 0; i < n; i++) y[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
}

/* NHWC max over each window; padded positions are not values (QNN's PoolMax2d), and validate.c
 * makes sure every window holds at least one real element. NaN propagates. */
static void op_pool_max(const ref_op *op, const ref_tensor *tx, const ref_tensor *ty,
                        const float *x, float *y) {
  size_t nb = tx->dims[0], h = tx->dims[1], w = tx->dims[2], c = tx->dims[3];
  size_t oh = ty->dims[1], ow = ty->dims[2];
  for (size_t n = 0; n < nb; n++)
    for (size_t oy = 0; oy < oh; oy++)
      for (size_t ox = 0; ox < ow; ox++)
        for (size_t ch = 0; ch < c; ch++) {
          float m = -INFINITY;
          int nan = 0;
          for (uint32_t ky = 0; ky < op->filter[0]; ky++) {
            int64_t iy = (int64_t)(oy * op->stride[0] + ky) - op->pad[0];
            for (uint32_t kx = 0; iy >= 0 && iy < (int64_t)h && kx < op->filter[1]; kx++) {
              int64_t ix = (int64_t)(ox * op->stride[1] + kx) - op->pad[1];
              if (ix < 0 || ix >= (int64_t)w) continue;
              float v = x[((n * h + (size_t)iy) * w + (size_t)ix) * c + ch];
              nan |= v != v;
              m = v > m ? v : m;
            }
          }
          y[((n * oh + oy) * ow + ox) * c + ch] = nan ? NAN : m;
        }
}

void refm_op_compute(const ref_model *m, const ref_op *op, const float *const *in, float *out) {
  const ref_tensor *t0 = &m->tensors[op->inputs[0]];
  const ref_tensor *t1 = op->num_inputs > 1 ? &m->tensors[op->inputs[1]] : NULL;
  const ref_tensor *ty = &m->tensors[op->outputs[0]];
  const float *bias = op->num_inputs > 2 ? in[2] : NULL;
  switch (op->type) {
  case REF_OP_ADD:
  case REF_OP_MUL:
    op_elementwise(t0, t1, ty, in[0], in[1], out, op->type == REF_OP_MUL);
    break;
  case REF_OP_FULLY_CONNECTED:
    op_fully_connected(t0, t1, in[0], in[1], bias, out);
    break;
  case REF_OP_CONV2D:
    op_conv2d(op, t0, t1, ty, in[0], in[1], bias, out);
    break;
  case REF_OP_RELU:
    op_relu(t0, in[0], out);
    break;
  case REF_OP_RESHAPE:
    op_reshape(t0, in[0], out);
    break;
  case REF_OP_SOFTMAX:
    op_softmax(op, t0, in[0], out);
    break;
  case REF_OP_NON_ZERO: /* integer output: refm_op_non_zero */
    break;
  case REF_OP_SIGMOID:
    op_sigmoid(t0, in[0], out);
    break;
  case REF_OP_POOL_MAX_2D:
    op_pool_max(op, t0, ty, in[0], out);
    break;
  default:
    refm_op_layout(m, op, in, out); /* Concat, Transpose, ResizeNearestNeighbor */
    break;
  }
}

uint32_t refm_op_non_zero(const ref_tensor *tx, const float *x, const ref_tensor *ty, void *y) {
  (void)ty; /* i32 or u32: indices are never negative, so both take the same bits */
  uint32_t *out = y, idx[REF_MAX_RANK] = {0}, k = 0, r = tx->rank;
  size_t n = ref_tensor_elements(tx);
  for (size_t e = 0; e < n; e++) {
    if (x[e] != 0.0f) { /* NaN is nonzero, -0 is zero, as numpy.nonzero has them */
      memcpy(out + (size_t)k * r, idx, r * sizeof *idx);
      k++;
    }
    for (uint32_t d = r; d-- > 0;) { /* the next index, last dimension fastest */
      if (++idx[d] < tx->dims[d]) break;
      idx[d] = 0;
    }
  }
  return k;
}
