/*
 * png.c - an RGB image as a PNG (ISO/IEC 15948): signature, IHDR (8-bit truecolor), one IDAT
 * holding a zlib stream of stored deflate blocks (RFC 1950/1951: no compression, so no zlib
 * to link), IEND. Each row is a filter byte of 0 then its pixels. Chunks carry a CRC-32 of
 * their type and data; the zlib stream ends with the Adler-32 of the uncompressed bytes.
 */
#include "png.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint32_t cli_crc32(uint32_t c, const uint8_t *p, size_t n) {
  c = ~c;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

uint32_t cli_adler32(uint32_t a, const uint8_t *p, size_t n) {
  uint32_t s1 = a & 0xffff, s2 = a >> 16;
  while (n) {
    size_t k = n < 5552 ? n : 5552; /* the most bytes before s2 can overflow 32 bits */
    n -= k;
    while (k--) {
      s1 += *p++;
      s2 += s1;
    }
    s1 %= 65521;
    s2 %= 65521;
  }
  return s2 << 16 | s1;
}

static void be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* A chunk: length, type, data, CRC of type and data. */
static int chunk(FILE *f, const char *type, const uint8_t *data, size_t len) {
  uint8_t head[8], crc[4];
  be32(head, (uint32_t)len);
  memcpy(head + 4, type, 4);
  uint32_t c = cli_crc32(cli_crc32(0, head + 4, 4), data, len);
  be32(crc, c);
  return fwrite(head, 1, 8, f) == 8 && (!len || fwrite(data, 1, len, f) == len) &&
                 fwrite(crc, 1, 4, f) == 4
             ? 0
             : -1;
}

/* The zlib stream of the filtered rows, in stored blocks of at most 65535 bytes. */
static uint8_t *zlib_stored(const uint8_t *rgb, uint32_t w, uint32_t h, size_t *out_len) {
  size_t row = (size_t)w * 3 + 1, raw = row * h;
  size_t blocks = raw / 65535 + 1;
  size_t len = 2 + raw + blocks * 5 + 4;
  uint8_t *z = malloc(len), *p = z;
  if (!z) return NULL;
  *p++ = 0x78, *p++ = 0x01; /* deflate, 32 KiB window, no dictionary, fastest */
  uint32_t adler = 1;
  size_t left = raw, pos = 0; /* pos: position in the filtered rows */
  do {
    uint16_t n = (uint16_t)(left < 65535 ? left : 65535);
    *p++ = left <= 65535 ? 1 : 0; /* BFINAL on the last block, BTYPE 00 (stored) */
    p[0] = (uint8_t)n, p[1] = (uint8_t)(n >> 8), p[2] = (uint8_t)~n, p[3] = (uint8_t)(~n >> 8);
    p += 4;
    for (size_t i = 0; i < n; i++, pos++) {
      size_t r = pos / row, c = pos % row;
      *p++ = c == 0 ? 0 : rgb[r * (row - 1) + c - 1]; /* filter type 0, then the pixels */
    }
    adler = cli_adler32(adler, p - n, n);
    left -= n;
  } while (left);
  be32(p, adler);
  *out_len = (size_t)(p + 4 - z);
  return z;
}

int cli_png_write(const char *path, const uint8_t *rgb, uint32_t width, uint32_t height) {
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  uint8_t ihdr[13];
  be32(ihdr, width);
  be32(ihdr + 4, height);
  ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0; /* 8-bit RGB */
  size_t zlen = 0;
  uint8_t *z = zlib_stored(rgb, width, height, &zlen);
  if (!z) return -1;
  FILE *f = fopen(path, "wb");
  int rc = -1;
  if (f) {
    rc = fwrite(sig, 1, 8, f) == 8 && !chunk(f, "IHDR", ihdr, 13) && !chunk(f, "IDAT", z, zlen) &&
                 !chunk(f, "IEND", NULL, 0)
             ? 0
             : -1;
    int saved = errno;
    if (fclose(f) != 0) rc = -1;
    if (rc) {
      unlink(path);
      errno = saved ? saved : EIO;
    }
  }
  free(z);
  return rc;
}
