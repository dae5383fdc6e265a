/* build_id_scan.c - see build_id_scan.h. */
#include "build_id_scan.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 65536

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Digits at p (at most n), at least `min`; returns how many, 0 when fewer than min. */
static size_t digits(const char *p, size_t n, size_t min) {
  size_t i = 0;
  while (i < n && is_digit(p[i])) i++;
  return i >= min ? i : 0;
}

/* The length of a QAIRT build id at p: 'v', three numbers joined by '.', '.', the build's
 * date and time (at least 6 digits), '_', a build number; not followed by another digit. 0 when
 * there is none. `at_end`: the file ends after the n bytes. */
static size_t match_build_id(const char *p, size_t n, int at_end) {
  if (n > BUILD_ID_SCAN_MAX + 1) {
    n = BUILD_ID_SCAN_MAX + 1;
    at_end = 0;
  }
  if (n == 0 || p[0] != 'v') return 0;
  size_t i = 1, k;
  for (int part = 0; part < 4; part++) {
    if (!(k = digits(p + i, n - i, part == 3 ? 6 : 1))) return 0;
    i += k;
    if (i >= n || p[i] != (part == 3 ? '_' : '.')) return 0;
    i++;
  }
  if (!(k = digits(p + i, n - i, 1))) return 0;
  i += k;
  if (i > BUILD_ID_SCAN_MAX) return 0;
  return i < n || at_end ? i : 0; /* i < n: p[i] ended the digits */
}

int build_id_scan(FILE *f, char *out, size_t len) {
  const size_t size = CHUNK + BUILD_ID_SCAN_MAX + 1;
  char *buf = malloc(size);
  if (!buf) return 0;
  size_t have = 0;
  int found = 0;
  for (;;) {
    size_t r = fread(buf + have, 1, size - have, f);
    have += r;
    int eof = r == 0 || have < size;
    /* an id starting past `last` could run beyond the buffer: it waits for the next chunk */
    size_t last = eof ? have : have - (BUILD_ID_SCAN_MAX + 1);
    for (size_t i = 0; i < last && !found; i++) {
      size_t m = buf[i] == 'v' ? match_build_id(buf + i, have - i, eof) : 0;
      if (!m) continue;
      snprintf(out, len, "%.*s", (int)m, buf + i);
      found = 1;
    }
    if (found || eof) break;
    memmove(buf, buf + last, have - last);
    have -= last;
  }
  free(buf);
  return found;
}
