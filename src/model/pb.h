/*
 * pb.h - a bounded reader of protobuf wire format: the ONNX reader's only way into the bytes.
 *
 * A pb_reader is a window [pos, end) over a buffer it never copies. Every read checks the
 * window first: a varint longer than ten bytes or past 64 bits, a length past the window, a
 * group or unknown wire type, a field number of 0 are refused with the byte offset (from the
 * start of the whole buffer) where they stood, so an error can name the place. Nothing here
 * recurses: a message's body is a new window the caller walks, and the caller's code decides
 * how deep it goes.
 */
#ifndef HTPU_MODEL_PB_H
#define HTPU_MODEL_PB_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

typedef struct pb_reader {
  const uint8_t *base; /* start of the whole buffer: offsets in errors are from here */
  const uint8_t *pos, *end;
} pb_reader;

/* One field: its number and wire type, and its value (varint/fixed in u, bytes in data/len). */
typedef struct pb_field {
  uint32_t number;
  uint32_t wire;
  uint64_t u;
  const uint8_t *data;
  size_t len;
  size_t offset; /* where the field's tag starts, from base */
} pb_field;

void pb_init(pb_reader *r, const uint8_t *buf, size_t len);
/* A reader over one length-delimited field's body (offsets still from the same base). */
pb_reader pb_sub(const pb_reader *parent, const pb_field *f);

/* The next field: 1, 0 at the end of the window, -1 on malformed bytes with `err` set to a
 * sentence naming the offset ("truncated varint at byte 17"). */
int pb_next(pb_reader *r, pb_field *f, char *err, size_t err_len);

#endif
