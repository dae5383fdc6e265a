/* npy.c - NumPy .npy header parsing and writing (see npy.h). */
#include <stdarg.h>
#include <string.h>

#include "npy.h"

/* The writer emits '<' and the reader maps '=' and a missing byte-order mark to little-endian:
 * both are only right on a little-endian host (every target of this project: aarch64, x86-64). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

static const unsigned char NPY_MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static int npy_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int npy_error(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- descr <-> dtype ---- */

static const struct {
  htpu_dtype dtype;
  const char *code; /* kind + item size, without the byte-order mark */
  const char *descr;
} DESCRS[] = {
    {HTPU_F32, "f4", "<f4"},  {HTPU_F16, "f2", "<f2"},  {HTPU_U8, "u1", "|u1"},
    {HTPU_I8, "i1", "|i1"},   {HTPU_U16, "u2", "<u2"},  {HTPU_I16, "i2", "<i2"},
    {HTPU_U32, "u4", "<u4"},  {HTPU_I32, "i4", "<i4"},  {HTPU_U64, "u8", "<u8"},
    {HTPU_I64, "i8", "<i8"},  {HTPU_BOOL8, "b1", "|b1"},
};

const char *npy_descr(htpu_dtype t) {
  for (size_t i = 0; i < sizeof(DESCRS) / sizeof(DESCRS[0]); i++)
    if (DESCRS[i].dtype == t) return DESCRS[i].descr;
  return NULL;
}

/* '<' and '=' (native) are little-endian here; '|' (not applicable) and '>' only make sense
 * for one-byte types, where the order does not matter. A big-endian multi-byte descr maps to
 * nothing, and the caller reports it as unsupported. */
static htpu_dtype dtype_of_descr(const char *d) {
  char order = d[0];
  const char *code = d;
  if (order == '<' || order == '>' || order == '|' || order == '=') code = d + 1;
  for (size_t i = 0; i < sizeof(DESCRS) / sizeof(DESCRS[0]); i++) {
    if (strcmp(code, DESCRS[i].code) != 0) continue;
    int one_byte = code[1] == '1';
    if (order == '>' && !one_byte) return HTPU_DTYPE_INVALID;
    if (order == '|' && !one_byte) return HTPU_DTYPE_INVALID;
    return DESCRS[i].dtype;
  }
  return HTPU_DTYPE_INVALID;
}

/* ---- preamble ---- */

int npy_preamble(const unsigned char *buf, size_t len, size_t *header_end, char *err,
                 size_t errlen) {
  if (len < sizeof(NPY_MAGIC) || memcmp(buf, NPY_MAGIC, sizeof(NPY_MAGIC)) != 0)
    return npy_error(err, errlen, "not a .npy file (no \\x93NUMPY magic)");
  if (len < 8) return npy_error(err, errlen, "truncated .npy file: no version after the magic");
  unsigned major = buf[6], minor = buf[7];
  if (major < 1 || major > 3 || minor != 0)
    return npy_error(err, errlen, "unsupported .npy version %u.%u (1.0, 2.0 and 3.0 are known)",
                     major, minor);
  size_t field = major == 1 ? 2 : 4;
  if (len < 8 + field)
    return npy_error(err, errlen, "truncated .npy file: the header length field is cut off");
  uint32_t hlen = (uint32_t)buf[8] | (uint32_t)buf[9] << 8;
  if (field == 4) hlen |= (uint32_t)buf[10] << 16 | (uint32_t)buf[11] << 24;
  if (hlen > NPY_MAX_HEADER)
    return npy_error(err, errlen, ".npy header length %u exceeds the limit of %u bytes",
                     (unsigned)hlen, (unsigned)NPY_MAX_HEADER);
  *header_end = 8 + field + hlen;
  return 0;
}

/* ---- the header dict ---- */

typedef struct cursor {
  const unsigned char *p, *end;
} cursor;

static void skip_space(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static int eat(cursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == (unsigned char)ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A Python string literal in '...' or "..." without escapes (numpy never writes any in the
 * keys or the descrs we accept). Copies at most outlen-1 bytes; *too_long when it did not fit.
 * The copy is only ever compared with ASCII names or quoted in messages, so bytes >= 0x7F (DEL
 * and anything non-ASCII) are stored as "\xNN": a message never echoes raw bytes from a file. */
static int parse_string(cursor *c, char *out, size_t outlen, int *too_long) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return -1;
  unsigned char quote = *c->p++;
  size_t n = 0;
  *too_long = 0;
  while (c->p < c->end && *c->p != quote) {
    unsigned char ch = *c->p;
    if (ch == '\\' || ch < 0x20) return -1;
    char esc[5];
    size_t w = 1;
    esc[0] = (char)ch;
    if (ch >= 0x7F) w = (size_t)snprintf(esc, sizeof esc, "\\x%02x", ch);
    if (!*too_long && n + w < outlen) {
      memcpy(out + n, esc, w);
      n += w;
    } else {
      *too_long = 1;
    }
    c->p++;
  }
  if (c->p >= c->end) return -1;
  c->p++;
  out[n] = '\0';
  return 0;
}

static int parse_word(cursor *c, const char *word) {
  skip_space(c);
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
  /* "Falsey" must not read as False */
  if ((size_t)(c->end - c->p) > n) {
    unsigned char next = c->p[n];
    if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || next == '_' ||
        (next >= '0' && next <= '9'))
      return 0;
  }
  c->p += n;
  return 1;
}

/* A non-negative decimal integer (Python 2 numpy wrote a trailing L). */
static int parse_uint(cursor *c, uint64_t *out) {
  skip_space(c);
  if (c->p >= c->end || *c->p < '0' || *c->p > '9') return -1;
  uint64_t v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*c->p - '0'), &v))
      return -1;
    c->p++;
  }
  if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
  *out = v;
  return 0;
}

/* (), (4,), (1, 4), (1, 4,) */
static int parse_shape(cursor *c, npy_header *h, char *err, size_t errlen) {
  if (!eat(c, '(')) return npy_error(err, errlen, "'shape' is not a tuple");
  h->rank = 0;
  if (eat(c, ')')) return 0;
  for (;;) {
    uint64_t d;
    if (parse_uint(c, &d) != 0)
      return npy_error(err, errlen, "'shape' holds something other than non-negative integers");
    if (h->rank == NPY_MAX_RANK)
      return npy_error(err, errlen, "'shape' has more than %d dimensions", NPY_MAX_RANK);
    h->dims[h->rank++] = d;
    int comma = eat(c, ',');
    if (eat(c, ')')) {
      /* (4) is an int in Python, not a tuple; numpy never writes it, accept it anyway */
      return 0;
    }
    if (!comma) return npy_error(err, errlen, "'shape' tuple is malformed");
  }
}

static int parse_dict(cursor *c, npy_header *h, char *err, size_t errlen) {
  int have_descr = 0, have_order = 0, have_shape = 0;
  if (!eat(c, '{')) return npy_error(err, errlen, ".npy header is not a dict");
  for (;;) {
    if (eat(c, '}')) break;
    char key[32];
    int too_long = 0;
    if (parse_string(c, key, sizeof(key), &too_long) != 0)
      return npy_error(err, errlen, ".npy header dict has a malformed key");
    if (!eat(c, ':')) return npy_error(err, errlen, ".npy header dict: ':' missing after a key");
    if (!too_long && strcmp(key, "descr") == 0) {
      if (have_descr++) return npy_error(err, errlen, ".npy header has 'descr' twice");
      skip_space(c);
      if (c->p < c->end && *c->p == '[')
        return npy_error(err, errlen, "structured arrays (a list 'descr') are not supported");
      if (parse_string(c, h->descr, sizeof(h->descr), &too_long) != 0)
        return npy_error(err, errlen, "'descr' is not a string");
      h->dtype = too_long ? HTPU_DTYPE_INVALID : dtype_of_descr(h->descr);
    } else if (!too_long && strcmp(key, "fortran_order") == 0) {
      if (have_order++) return npy_error(err, errlen, ".npy header has 'fortran_order' twice");
      if (parse_word(c, "True"))
        h->fortran_order = 1;
      else if (parse_word(c, "False"))
        h->fortran_order = 0;
      else
        return npy_error(err, errlen, "'fortran_order' is neither True nor False");
    } else if (!too_long && strcmp(key, "shape") == 0) {
      if (have_shape++) return npy_error(err, errlen, ".npy header has 'shape' twice");
      if (parse_shape(c, h, err, errlen) != 0) return -1;
    } else {
      /* numpy rejects unknown keys too; a file with them was not written by numpy */
      return npy_error(err, errlen, ".npy header has an unexpected key '%s%s'", key,
                       too_long ? "..." : "");
    }
    if (eat(c, ',')) continue;
    if (eat(c, '}')) break;
    return npy_error(err, errlen, ".npy header dict: ',' or '}' expected");
  }
  if (!have_descr || !have_order || !have_shape)
    return npy_error(err, errlen, ".npy header lacks '%s'",
                     !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
  skip_space(c);
  if (c->p != c->end) return npy_error(err, errlen, ".npy header has data after the dict");
  return 0;
}

int npy_parse(const unsigned char *buf, size_t len, npy_header *h, char *err, size_t errlen) {
  memset(h, 0, sizeof(*h));
  size_t end;
  if (npy_preamble(buf, len, &end, err, errlen) != 0) return -1;
  if (end > len)
    return npy_error(err, errlen, "truncated .npy file: the header needs %zu bytes, file has %zu",
                     end, len);
  size_t start = buf[6] == 1 ? 10 : 12;
  cursor c = {buf + start, buf + end};
  if (parse_dict(&c, h, err, errlen) != 0) return -1;
  uint64_t n = 1;
  for (uint32_t i = 0; i < h->rank; i++)
    if (__builtin_mul_overflow(n, h->dims[i], &n))
      return npy_error(err, errlen, "'shape' element count overflows");
  h->num_elements = n;
  h->data_offset = end;
  return 0;
}

/* ---- writing ---- */

void npy_format_shape64(const uint64_t *dims, uint32_t rank, char *buf, size_t len) {
  if (len == 0) return;
  buf[0] = '\0';
  size_t pos = 0;
  for (uint32_t i = 0; i <= rank; i++) {
    int w;
    if (i == rank)
      w = snprintf(buf + pos, len - pos, rank == 1 ? ",)" : ")");
    else
      w = snprintf(buf + pos, len - pos, "%s%llu", i ? ", " : "(", (unsigned long long)dims[i]);
    if (w < 0 || (size_t)w >= len - pos) return; /* truncated: snprintf kept it terminated */
    pos += (size_t)w;
  }
  if (rank == 0) snprintf(buf, len, "()");
}

void npy_format_shape32(const uint32_t *dims, uint32_t rank, char *buf, size_t len) {
  uint64_t d[NPY_MAX_RANK];
  if (rank > NPY_MAX_RANK) rank = NPY_MAX_RANK;
  for (uint32_t i = 0; i < rank; i++) d[i] = dims[i];
  npy_format_shape64(d, rank, buf, len);
}

int npy_write_header(FILE *f, htpu_dtype dtype, const uint32_t *dims, uint32_t rank) {
  const char *descr = npy_descr(dtype);
  if (!descr || rank > HTPU_MAX_RANK) return -1;
  char shape[160], dict[256];
  npy_format_shape32(dims, rank, shape, sizeof(shape));
  int n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   descr, shape);
  if (n < 0 || (size_t)n >= sizeof(dict)) return -1;
  /* preamble (10) + dict + padding + '\n' is a multiple of 64, as numpy writes it, so the
   * data is aligned for readers that map the file */
  size_t unpadded = 10 + (size_t)n + 1;
  size_t pad = (64 - unpadded % 64) % 64;
  size_t hlen = (size_t)n + pad + 1;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF),
                           (unsigned char)(hlen >> 8)};
  if (fwrite(pre, 1, sizeof(pre), f) != sizeof(pre)) return -1;
  if (fwrite(dict, 1, (size_t)n, f) != (size_t)n) return -1;
  for (size_t i = 0; i < pad; i++)
    if (fputc(' ', f) == EOF) return -1;
  return fputc('\n', f) == EOF ? -1 : 0;
}
