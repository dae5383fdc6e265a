/* png.h - writing an RGB image as a PNG file anyone can open, without zlib (png.c). */
#ifndef HTPU_PNG_H
#define HTPU_PNG_H

#include <stddef.h>
#include <stdint.h>

/* Writes width x height RGB pixels (rows packed, 3 bytes a pixel) to `path` as an 8-bit RGB
 * PNG: the rows in stored (uncompressed) deflate blocks. Returns 0, or -1 with errno set by
 * the failing call (the file is then removed). */
int cli_png_write(const char *path, const uint8_t *rgb, uint32_t width, uint32_t height);

/* CRC-32 (ISO 3309, as PNG's chunks use) and Adler-32 (zlib's), continued from `c`: start
 * with 0 and 1. For png.c and its test. */
uint32_t cli_crc32(uint32_t c, const uint8_t *p, size_t n);
uint32_t cli_adler32(uint32_t a, const uint8_t *p, size_t n);

#endif
