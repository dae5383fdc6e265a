/* printable.c - see printable.h. */
#include "printable.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence of two bytes or more at p (n bytes left), or 0
 * (overlongs, surrogates and code points past U+10FFFF are not well-formed). */
static size_t utf8_seq(const uint8_t *p, size_t n) {
  size_t k = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
           : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
  if (!k || n < k) return 0;
  uint32_t cp = p[0] & (k == 2 ? 0x1fu : k == 3 ? 0x0fu : 0x07u);
  for (size_t j = 1; j < k; j++) {
    if ((p[j] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (p[j] & 0x3fu);
  }
  if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return k;
}

const char *printable(const void *s, size_t len, char *out, size_t out_len) {
  if (!out_len) return out;
  const uint8_t *p = s;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    char esc[8];
    size_t k = 1;
    const char *piece = esc;
    if (p[i] == '\\') {
      snprintf(esc, sizeof esc, "\\\\");
    } else if (p[i] == '\n' || p[i] == '\t' || p[i] == '\r') {
      snprintf(esc, sizeof esc, "\\%c", p[i] == '\n' ? 'n' : p[i] == '\t' ? 't' : 'r');
    } else if (p[i] < 0x20 || p[i] == 0x7f) {
      snprintf(esc, sizeof esc, "\\x%02x", p[i]);
    } else if (p[i] < 0x80) {
      piece = (const char *)p + i;
    } else if ((k = utf8_seq(p + i, len - i)) != 0) {
      piece = (const char *)p + i;
    } else {
      k = 1;
      snprintf(esc, sizeof esc, "\\x%02x", p[i]);
    }
    size_t plen = piece == esc ? strlen(esc) : k;
    /* room for the piece and, should more follow, for "..." */
    if (o + plen + (i + k < len ? 3 : 0) >= out_len) {
      snprintf(out + o, out_len - o, "%s", out_len - o > 3 ? "..." : "");
      return out;
    }
    memcpy(out + o, piece, plen);
    o += plen;
    i += k;
  }
  out[o] = '\0';
  return out;
}

const char *printable_str(const char *s, char *out, size_t out_len) {
  return printable(s, strlen(s), out, out_len);
}
