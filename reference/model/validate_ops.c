/*
 * validate_ops.c - the shape rules and parameters of the ops of format version 2 (Sigmoid,
 * Concat, PoolMax2d, ResizeNearestNeighbor, Transpose), with QNN's meanings
 * (docs/reference-format.md). validate.c calls refm_check_op_v2 for them after the arity.
 */
#include <stdio.h>
#include <string.h>

#include "refmodel_priv.h"

static const char *dims_text(char *buf, size_t len, const ref_tensor *t) {
  size_t at = (size_t)snprintf(buf, len, "[");
  for (uint32_t i = 0; i < t->rank && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, i ? ",%u" : "%u", t->dims[i]);
  if (at < len) snprintf(buf + at, len - at, "]");
  return buf;
}

int refm_op_takes_window(uint32_t op_type) {
  return op_type == REF_OP_CONV2D || op_type == REF_OP_POOL_MAX_2D;
}

static int same_shape(const ref_tensor *x, const ref_tensor *y, char *err, size_t errlen) {
  char a[128], b[128];
  if (x->rank == y->rank && !memcmp(x->dims, y->dims, x->rank * sizeof x->dims[0])) return 0;
  return refm_err(err, errlen, "output shape %s != input shape %s", dims_text(a, sizeof a, y),
                  dims_text(b, sizeof b, x));
}

static int check_concat(const ref_op *op, const ref_tensor *const *in, const ref_tensor *y,
                        char *err, size_t errlen) {
  char a[128], b[128];
  uint32_t axis = op->axis, rank = in[0]->rank;
  if (axis >= rank) return refm_err(err, errlen, "axis %u is out of range for rank %u", axis, rank);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < op->num_inputs; i++) {
    for (uint32_t d = 0; d < rank; d++)
      if (in[i]->rank != rank || (d != axis && in[i]->dims[d] != in[0]->dims[d]))
        return refm_err(err, errlen, "input '%s' %s does not match '%s' %s off axis %u",
                        in[i]->name, dims_text(a, sizeof a, in[i]), in[0]->name,
                        dims_text(b, sizeof b, in[0]), axis);
    sum += in[i]->dims[axis];
  }
  for (uint32_t d = 0; d < rank; d++)
    if (y->rank != rank || y->dims[d] != (d == axis ? sum : in[0]->dims[d]))
      return refm_err(err, errlen, "output shape %s: expected the inputs' shape with %llu on axis %u",
                      dims_text(a, sizeof a, y), (unsigned long long)sum, axis);
  return 0;
}

/* Output size of one pooled axis: floor or ceil of (padded - filter) / stride, plus 1. */
static uint64_t pooled(uint64_t in, uint32_t before, uint32_t after, uint32_t f, uint32_t s,
                       int ceil_mode) {
  uint64_t span = in + before + after - f;
  return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static int check_pool(const ref_op *op, const ref_tensor *x, const ref_tensor *y, char *err,
                      size_t errlen) {
  char a[128];
  const uint32_t *f = op->filter, *s = op->stride, *p = op->pad;
  if (x->rank != 4) return refm_err(err, errlen, "input '%s' %s, expected NHWC", x->name, dims_text(a, sizeof a, x));
  if (!f[0] || !f[1] || !s[0] || !s[1] || op->ceil_mode > 1)
    return refm_err(err, errlen, "filter [%u,%u] and stride [%u,%u] must be >= 1, rounding floor "
                    "or ceil", f[0], f[1], s[0], s[1]);
  if (p[0] >= f[0] || p[2] >= f[0] || p[1] >= f[1] || p[3] >= f[1])
    return refm_err(err, errlen, "pad [%u,%u,%u,%u] must be smaller than the filter [%u,%u] (a "
                    "window of padding alone has no maximum)", p[0], p[1], p[2], p[3], f[0], f[1]);
  uint64_t H = x->dims[1], W = x->dims[2];
  if (H + p[0] + p[2] < f[0] || W + p[1] + p[3] < f[1])
    return refm_err(err, errlen, "filter %ux%u larger than the padded input", f[0], f[1]);
  uint64_t oh = pooled(H, p[0], p[2], f[0], s[0], (int)op->ceil_mode);
  uint64_t ow = pooled(W, p[1], p[3], f[1], s[1], (int)op->ceil_mode);
  if ((oh - 1) * s[0] >= H + p[0] || (ow - 1) * s[1] >= W + p[1])
    return refm_err(err, errlen, "the last window starts past the input (ceil rounding)");
  if (y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[1] != oh || y->dims[2] != ow ||
      y->dims[3] != x->dims[3])
    return refm_err(err, errlen, "output shape %s, expected [%u,%llu,%llu,%u]",
                    dims_text(a, sizeof a, y), x->dims[0], (unsigned long long)oh,
                    (unsigned long long)ow, x->dims[3]);
  return 0;
}

static int check_resize(const ref_op *op, const ref_tensor *x, const ref_tensor *y, char *err,
                        size_t errlen) {
  char a[128], b[128];
  if (x->rank != 4 || y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[3] != x->dims[3])
    return refm_err(err, errlen, "input %s and output %s: both NHWC, with the same N and C",
                    dims_text(a, sizeof a, x), dims_text(b, sizeof b, y));
  if (op->align_corners && op->half_pixel_centers)
    return refm_err(err, errlen, "align_corners and half_pixel_centers cannot both be set");
  return 0;
}

static int check_transpose(const ref_op *op, const ref_tensor *x, const ref_tensor *y, char *err,
                           size_t errlen) {
  char a[128];
  uint32_t seen = 0;
  for (uint32_t i = 0; i < REF_MAX_RANK; i++) {
    uint32_t p = op->perm[i];
    if (i >= x->rank) {
      if (p) return refm_err(err, errlen, "perm has more than %u entries", x->rank);
      continue;
    }
    if (p >= x->rank || (seen & (1u << p)))
      return refm_err(err, errlen, "perm is not a permutation of 0..%u", x->rank - 1);
    seen |= 1u << p;
  }
  for (uint32_t i = 0; i < x->rank; i++)
    if (y->rank != x->rank || y->dims[i] != x->dims[op->perm[i]])
      return refm_err(err, errlen, "output shape %s, expected input dim perm[i] at each i",
                      dims_text(a, sizeof a, y));
  return 0;
}

int refm_check_op_v2(const ref_op *op, const ref_tensor *const *in, const ref_tensor *y,
                     char *err, size_t errlen) {
  int takes_axis = op->type == REF_OP_CONCAT, is_pool = op->type == REF_OP_POOL_MAX_2D;
  int is_resize = op->type == REF_OP_RESIZE_NEAREST;
  if ((!takes_axis && op->axis) || (!is_pool && (op->filter[0] | op->filter[1] | op->ceil_mode)) ||
      (!is_resize && (op->align_corners | op->half_pixel_centers)))
    return refm_err(err, errlen, "%s takes no such parameter", refm_op_name(op->type));
  for (uint32_t i = 0; op->type != REF_OP_TRANSPOSE && i < REF_MAX_RANK; i++)
    if (op->perm[i]) return refm_err(err, errlen, "%s takes no perm", refm_op_name(op->type));
  switch (op->type) {
  case REF_OP_SIGMOID:
    return same_shape(in[0], y, err, errlen);
  case REF_OP_CONCAT:
    return check_concat(op, in, y, err, errlen);
  case REF_OP_POOL_MAX_2D:
    return check_pool(op, in[0], y, err, errlen);
  case REF_OP_RESIZE_NEAREST:
    return check_resize(op, in[0], y, err, errlen);
  case REF_OP_TRANSPOSE:
    return check_transpose(op, in[0], y, err, errlen);
  default:
    return refm_err(err, errlen, "unknown op type %u", (unsigned)op->type);
  }
}
