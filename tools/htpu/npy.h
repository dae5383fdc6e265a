/*
 * npy.h - NumPy .npy headers: a bounds-checked parser and a writer.
 *
 * Format (numpy.lib.format): the magic "\x93NUMPY", a major and minor version byte, the header
 * length (u16 LE for 1.0, u32 LE for 2.0 and 3.0), then the header: a Python dict literal such
 * as {'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), } padded with spaces to end in
 * '\n'. The raw array data follows. 3.0 only differs in allowing UTF-8 in the header.
 *
 * The parser never reads outside the buffer it is given and never trusts a length field: the
 * header length is checked against the buffer and against NPY_MAX_HEADER before use.
 */
#ifndef HTPU_NPY_H
#define HTPU_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hexagon_tpu.h"

/* The preamble (magic, version, length field) of a 2.0/3.0 file; 1.0 needs 10 bytes. */
#define NPY_PREAMBLE_MAX 12
/* numpy itself refuses headers above 10000 bytes unless told otherwise (max_header_size); a
 * tensor header of rank <= 8 needs about 120. Anything larger is corruption or an attack. */
#define NPY_MAX_HEADER 65536
/* More than HTPU_MAX_RANK so a file with too many dimensions gets a precise message. */
#define NPY_MAX_RANK 32

typedef struct npy_header {
  htpu_dtype dtype; /* HTPU_DTYPE_INVALID when the descr names a type htpu has no mapping for */
  char descr[16];   /* as written in the file, for messages; truncated if longer */
  int fortran_order;
  uint32_t rank;
  uint64_t dims[NPY_MAX_RANK];
  uint64_t num_elements;
  size_t data_offset; /* bytes from the start of the file to the array data */
} npy_header;

/* Checks the preamble in buf[0, len) and sets *header_end to the offset where the header (and
 * with it the whole preamble+header block) ends, i.e. the data offset. Needs at least
 * NPY_PREAMBLE_MAX bytes or the whole file when it is shorter. Returns 0, or -1 with a message
 * in err. */
int npy_preamble(const unsigned char *buf, size_t len, size_t *header_end, char *err,
                 size_t errlen);

/* Parses a complete preamble + header in buf[0, len) (len >= the header_end npy_preamble
 * reported). An unsupported descr is not an error here (h->dtype = HTPU_DTYPE_INVALID, the
 * caller words the message), but a malformed dict is. Returns 0, or -1 with a message in err. */
int npy_parse(const unsigned char *buf, size_t len, npy_header *h, char *err, size_t errlen);

/* The descr htpu writes for a dtype ("<f4", "|u1", ...), NULL for HTPU_DTYPE_INVALID. */
const char *npy_descr(htpu_dtype t);

/* Writes a version 1.0 header for a C-order array of `dtype` with the given shape, padded so
 * the data starts at a multiple of 64 bytes as numpy does. Returns 0, or -1 on a write error. */
int npy_write_header(FILE *f, htpu_dtype dtype, const uint32_t *dims, uint32_t rank);

/* "(1, 4)", "(4,)" or "()" as Python prints a shape tuple; truncated to fit. */
void npy_format_shape64(const uint64_t *dims, uint32_t rank, char *buf, size_t len);
void npy_format_shape32(const uint32_t *dims, uint32_t rank, char *buf, size_t len);

#endif /* HTPU_NPY_H */
