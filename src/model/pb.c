/* pb.c - see pb.h. */
#include "pb.h"

#include <stdio.h>

void pb_init(pb_reader *r, const uint8_t *buf, size_t len) {
  r->base = buf;
  r->pos = buf;
  r->end = buf + len;
}

pb_reader pb_sub(const pb_reader *parent, const pb_field *f) {
  pb_reader r = {parent->base, f->data, f->data + f->len};
  return r;
}

/* A varint of at most ten bytes whose value fits 64 bits. */
static int read_varint(pb_reader *r, uint64_t *out, const char *what, char *err, size_t n) {
  uint64_t v = 0;
  const uint8_t *start = r->pos;
  for (unsigned i = 0; i < 10; i++) {
    if (r->pos >= r->end) {
      snprintf(err, n, "truncated %s at byte %zu (the data ends inside it)", what,
               (size_t)(start - r->base));
      return -1;
    }
    uint8_t b = *r->pos++;
    if (i == 9 && b > 1) {
      snprintf(err, n, "%s at byte %zu does not fit 64 bits", what, (size_t)(start - r->base));
      return -1;
    }
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1; /* not reached: the tenth byte either ends the varint or overflows */
}

static int read_fixed(pb_reader *r, pb_field *f, size_t width, char *err, size_t n) {
  if ((size_t)(r->end - r->pos) < width) {
    snprintf(err, n, "field %u at byte %zu: a %zu-byte value runs past the end of its message",
             f->number, f->offset, width);
    return -1;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < width; i++) v |= (uint64_t)r->pos[i] << (8 * i);
  r->pos += width;
  f->u = v;
  return 0;
}

int pb_next(pb_reader *r, pb_field *f, char *err, size_t n) {
  if (r->pos >= r->end) return 0;
  f->offset = (size_t)(r->pos - r->base);
  f->data = NULL;
  f->len = 0;
  f->u = 0;
  uint64_t tag;
  if (read_varint(r, &tag, "field tag", err, n)) return -1;
  f->number = (uint32_t)(tag >> 3);
  f->wire = (uint32_t)(tag & 7);
  if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
    snprintf(err, n, "field number %llu at byte %zu is out of range (1 to 536870911)",
             (unsigned long long)(tag >> 3), f->offset);
    return -1;
  }
  switch (f->wire) {
    case PB_VARINT:
      return read_varint(r, &f->u, "varint", err, n) ? -1 : 1;
    case PB_FIXED64:
      return read_fixed(r, f, 8, err, n) ? -1 : 1;
    case PB_FIXED32:
      return read_fixed(r, f, 4, err, n) ? -1 : 1;
    case PB_LEN: {
      uint64_t len;
      if (read_varint(r, &len, "length", err, n)) return -1;
      if (len > (uint64_t)(r->end - r->pos)) {
        snprintf(err, n,
                 "field %u at byte %zu declares %llu bytes, past the end of its message "
                 "(%zu bytes left)",
                 f->number, f->offset, (unsigned long long)len, (size_t)(r->end - r->pos));
        return -1;
      }
      f->data = r->pos;
      f->len = (size_t)len;
      r->pos += len;
      return 1;
    }
    default:
      snprintf(err, n,
               "field %u at byte %zu has wire type %u (%s); ONNX uses only varint, 64-bit, "
               "length-delimited and 32-bit fields",
               f->number, f->offset, f->wire, f->wire == 3 || f->wire == 4 ? "a group" : "unknown");
      return -1;
  }
}
