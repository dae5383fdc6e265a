/*
 * write.c - resized rows into the input: NHWC or NCHW, the model's channel order, the element
 * type through the LUT (lut.c), and the letterbox border. The common cases are copies: a u8
 * input with an identity table and the frame's own channel order takes memcpy per row.
 */
#include <string.h>

#include "vision.h"

static size_t pix_index(const vis_dst *d, uint32_t y, uint32_t x) {
  return (size_t)y * d->width + x;
}

/* Element e of model channel k's table, stored at dst[i] (an element index). */
static void put(const vis_dst *d, void *dst, size_t i, unsigned k, uint8_t p) {
  const vis_lut *l = d->lut;
  if (l->elem == 1) ((uint8_t *)dst)[i] = l->b[k][p];
  else if (l->elem == 2) ((uint16_t *)dst)[i] = l->h[k][p];
  else ((uint32_t *)dst)[i] = l->w[k][p];
}

/* o[i] = s[i] x m, in fixed chunks so that GCC vectorizes it at -O2. */
static void mul16(uint16_t *restrict o, const uint8_t *restrict s, size_t n, uint16_t m) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (size_t j = 0; j < 16; j++) o[i + j] = (uint16_t)(s[i + j] * m);
  for (; i < n; i++) o[i] = (uint16_t)(s[i] * m);
}

static int plain_copy(const vis_dst *d) {
  if (!d->lut->identity || d->nchw || d->channels != d->fetch_cn) return 0;
  for (unsigned k = 0; k < d->channels; k++)
    if (d->src_of[k] != k) return 0;
  return 1;
}

static void write_nhwc(const vis_dst *d, const uint8_t *row, uint32_t y, uint32_t x, uint32_t n) {
  unsigned C = d->channels, fcn = d->fetch_cn;
  size_t at = pix_index(d, y, x) * C;
  if (plain_copy(d)) {
    memcpy(d->base + at, row, (size_t)n * C);
    return;
  }
  const vis_lut *l = d->lut;
  if (l->elem == 1 && C == 3) { /* the swapped or mapped u8 case, unrolled */
    uint8_t *o = d->base + at;
    unsigned s0 = d->src_of[0], s1 = d->src_of[1], s2 = d->src_of[2];
    for (uint32_t i = 0; i < n; i++, o += 3, row += fcn) {
      o[0] = l->b[0][row[s0]];
      o[1] = l->b[1][row[s1]];
      o[2] = l->b[2][row[s2]];
    }
    return;
  }
  if (C == 3 && l->mul16 && fcn == 3 && d->src_of[0] == 0 && d->src_of[1] == 1 &&
      d->src_of[2] == 2) { /* a linear 16-bit table in the frame's order: vectorized */
    mul16((uint16_t *)(void *)d->base + at, row, (size_t)n * 3, (uint16_t)l->mul16);
    return;
  }
  if (C == 3 && l->elem == 2) { /* u16 / f16 inputs */
    uint16_t *o = (uint16_t *)(void *)d->base + at;
    const uint16_t *h0 = l->h[0], *h1 = l->h[1], *h2 = l->h[2];
    unsigned s0 = d->src_of[0], s1 = d->src_of[1], s2 = d->src_of[2];
    for (uint32_t i = 0; i < n; i++, o += 3, row += fcn)
      o[0] = h0[row[s0]], o[1] = h1[row[s1]], o[2] = h2[row[s2]];
    return;
  }
  if (C == 3 && l->elem == 4) { /* f32 / 32-bit inputs */
    uint32_t *o = (uint32_t *)(void *)d->base + at;
    const uint32_t *w0 = l->w[0], *w1 = l->w[1], *w2 = l->w[2];
    unsigned s0 = d->src_of[0], s1 = d->src_of[1], s2 = d->src_of[2];
    for (uint32_t i = 0; i < n; i++, o += 3, row += fcn)
      o[0] = w0[row[s0]], o[1] = w1[row[s1]], o[2] = w2[row[s2]];
    return;
  }
  for (uint32_t i = 0; i < n; i++)
    for (unsigned k = 0; k < C; k++)
      put(d, d->base, at + (size_t)i * C + k, k, row[(size_t)i * fcn + d->src_of[k]]);
}

static void write_nchw(const vis_dst *d, const uint8_t *row, uint32_t y, uint32_t x, uint32_t n) {
  size_t plane = (size_t)d->width * d->height, at = pix_index(d, y, x);
  unsigned fcn = d->fetch_cn;
  for (unsigned k = 0; k < d->channels; k++) {
    const uint8_t *s = row + d->src_of[k];
    size_t base = k * plane + at;
    const vis_lut *l = d->lut;
    if (l->elem == 1) {
      uint8_t *o = d->base + base;
      for (uint32_t i = 0; i < n; i++) o[i] = l->b[k][s[(size_t)i * fcn]];
    } else if (l->elem == 2) {
      uint16_t *o = (uint16_t *)(void *)d->base + base;
      for (uint32_t i = 0; i < n; i++) o[i] = l->h[k][s[(size_t)i * fcn]];
    } else {
      uint32_t *o = (uint32_t *)(void *)d->base + base;
      for (uint32_t i = 0; i < n; i++) o[i] = l->w[k][s[(size_t)i * fcn]];
    }
  }
}

void vis_write_row(const vis_dst *d, const uint8_t *row, uint32_t y, uint32_t x, uint32_t n) {
  if (!n) return;
  if (d->nchw)
    write_nchw(d, row, y, x, n);
  else
    write_nhwc(d, row, y, x, n);
}

void vis_write_rows(const vis_dst *d, const uint8_t *row, size_t stride, uint32_t y, uint32_t x,
                    uint32_t n, uint32_t count) {
  size_t bytes = (size_t)n * d->channels;
  if (plain_copy(d) && x == 0 && n == d->width && stride == bytes) {
    /* the rows lie back to back in the frame and in the input: one copy */
    memcpy(d->base + pix_index(d, y, 0) * d->channels, row, bytes * count);
    return;
  }
  for (uint32_t i = 0; i < count; i++) vis_write_row(d, row + i * stride, y + i, x, n);
}

/* count units of `unit` bytes at p, the first already written: copies of what is there,
 * doubling. */
static void replicate(uint8_t *p, size_t unit, size_t count) {
  size_t done = 1;
  while (done < count) {
    size_t k = done < count - done ? done : count - done;
    memcpy(p + done * unit, p, k * unit);
    done += k;
  }
}

/* n pixels of the border from (y, x) on (through the next rows when n is more than the rest of
 * the row: they are contiguous in both layouts): the pad value's element in every channel. */
static void fill(const vis_dst *d, uint32_t y, uint32_t x, size_t n, uint8_t pad) {
  if (!n) return;
  unsigned C = d->channels, e = d->lut->elem;
  size_t at = pix_index(d, y, x);
  if (d->nchw) {
    size_t plane = (size_t)d->width * d->height;
    for (unsigned k = 0; k < C; k++) {
      put(d, d->base, k * plane + at, k, pad);
      replicate(d->base + (k * plane + at) * e, e, n);
    }
    return;
  }
  const vis_lut *l = d->lut;
  int same = e == 1;
  for (unsigned k = 1; same && k < C; k++) same = l->b[k][pad] == l->b[0][pad];
  if (same) {
    memset(d->base + at * C, l->b[0][pad], (size_t)n * C);
    return;
  }
  for (unsigned k = 0; k < C; k++) put(d, d->base, at * C + k, k, pad);
  replicate(d->base + at * C * e, (size_t)C * e, n);
}

void vis_write_border(const vis_dst *d, const htpu_geometry *g, uint8_t pad) {
  uint32_t top = g->pad_top, rows = g->resized_height, left = g->pad_left;
  uint32_t cols = g->resized_width, right = d->width - left - cols;
  /* the rows above and below the image in one run each */
  fill(d, 0, 0, (size_t)top * d->width, pad);
  fill(d, top + rows, 0, (size_t)(d->height - top - rows) * d->width, pad);
  for (uint32_t y = top; y < top + rows && (left || right); y++) {
    fill(d, y, 0, left, pad);
    fill(d, y, left + cols, right, pad);
  }
}
