/*
 * npy.c - libFuzzer target for the .npy header reader, npy_preamble / npy_parse
 * (tools/htpu/npy.c), which `htpu run --input` uses on whatever file it is given.
 *
 * Per input: both must agree (the preamble's header end is the parsed data offset, never past
 * the buffer); every message and the stored descr are printable ASCII (the reader promises
 * never to echo raw bytes from a file); the element count is the product of the dims. A header
 * htpu could write (a known dtype, C order, rank <= 8, dims that fit u32) is written with
 * npy_write_header and parsed back to the same dtype and shape, with the data 64-byte aligned.
 */
#include <string.h>

#include "fuzz.h"
#include "npy.h"

static void check_printable(const char *s, const char *what) {
  for (const char *p = s; *p; p++)
    FUZZ_CHECK((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f,
               "%s holds the byte 0x%02x at %td: \"%s\"", what, (unsigned char)*p, p - s, s);
}

static void check_rewrite(const npy_header *h) {
  if (h->dtype == HTPU_DTYPE_INVALID || h->fortran_order || h->rank > HTPU_MAX_RANK) return;
  uint32_t dims[HTPU_MAX_RANK];
  for (uint32_t i = 0; i < h->rank; i++) {
    if (h->dims[i] > UINT32_MAX) return;
    dims[i] = (uint32_t)h->dims[i];
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  FUZZ_CHECK(f != NULL, "open_memstream failed");
  FUZZ_CHECK(npy_write_header(f, h->dtype, dims, h->rank) == 0, "npy_write_header failed");
  FUZZ_CHECK(fclose(f) == 0, "fclose of the memory stream failed");

  npy_header back;
  char err[256] = "";
  FUZZ_CHECK(npy_parse((const unsigned char *)buf, len, &back, err, sizeof err) == 0,
             "a header npy_write_header wrote does not parse: %s", err);
  FUZZ_CHECK(back.dtype == h->dtype && back.rank == h->rank && !back.fortran_order,
             "rewritten header differs: dtype %d/%d rank %u/%u", (int)back.dtype, (int)h->dtype,
             back.rank, h->rank);
  for (uint32_t i = 0; i < h->rank; i++)
    FUZZ_CHECK(back.dims[i] == h->dims[i], "rewritten dim %u: %llu, was %llu", i,
               (unsigned long long)back.dims[i], (unsigned long long)h->dims[i]);
  FUZZ_CHECK(back.data_offset == len && len % 64 == 0,
             "rewritten data offset %zu, header length %zu (want equal, multiple of 64)",
             back.data_offset, len);
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[256] = "";
  size_t header_end = 0;
  int pre = npy_preamble(data, size, &header_end, err, sizeof err);
  if (pre != 0) {
    FUZZ_CHECK(err[0] != '\0', "a failed preamble gave no message");
    check_printable(err, "the preamble message");
  }

  npy_header h;
  err[0] = '\0';
  if (npy_parse(data, size, &h, err, sizeof err) != 0) {
    FUZZ_CHECK(err[0] != '\0', "a failed parse gave no message");
    check_printable(err, "the parse message");
    return 0;
  }
  FUZZ_CHECK(pre == 0, "npy_parse accepted what npy_preamble refused");
  FUZZ_CHECK(h.data_offset == header_end && h.data_offset <= size,
             "data offset %zu, preamble said %zu, buffer %zu", h.data_offset, header_end, size);
  FUZZ_CHECK(h.rank <= NPY_MAX_RANK, "rank %u", h.rank);
  FUZZ_CHECK(memchr(h.descr, '\0', sizeof h.descr) != NULL, "descr is not terminated");
  check_printable(h.descr, "the descr");
  uint64_t n = 1;
  for (uint32_t i = 0; i < h.rank; i++) n *= h.dims[i]; /* npy_parse refused an overflow */
  FUZZ_CHECK(n == h.num_elements, "num_elements %llu, dims give %llu",
             (unsigned long long)h.num_elements, (unsigned long long)n);
  check_rewrite(&h);
  return 0;
}
