/*
 * build_text.c - ref_build_from_text: the text description (docs/reference-format.md) to the
 * binary format. Statements are checked as they are read so that errors name their line;
 * the whole model then goes through the same checks as the parser (validate.c), whose
 * messages are mapped back to the line of the op or graph at fault, and is written by
 * ref_model_write.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_open.h"
#include "qnn/qnn_abi.h"
#include "refmodel_priv.h"

#define MAX_ATTRS 16

typedef struct btensor {
  ref_tensor t;
  uint32_t graph;
  int line;
} btensor;

typedef struct bgraph {
  char *name;
  int line;
  uint32_t *inputs, *outputs;
  uint32_t nin, nout, cap_in, cap_out;
  ref_op *ops;
  int *op_lines;
  uint32_t nops, cap_ops, cap_op_lines;
  uint32_t flags; /* REF_GRAPH_* from the graph statement's parameters */
} bgraph;

typedef struct builder {
  ref_model_meta meta;
  unsigned meta_seen; /* bit per entry of k_meta_keys */
  uint32_t vtcm_bytes; /* meta vtcm_bytes; meta.vtcm_blob is derived from it in finish */
  int vtcm_mb_form;    /* meta vtcm_blob_unit=mb */
  int vtcm_line;       /* the line of the last vtcm_* key, for finish's message */
  btensor *tensors;
  uint32_t nt, cap_t;
  bgraph *graphs;
  uint32_t ng, cap_g;
  void **allocs; /* strings and arrays the tensors, ops and meta point to */
  uint32_t nallocs, cap_allocs;
  const char *base_dir;
  char *err;
  size_t errlen;
} builder;

/* One `key=value` of a statement; value is a scalar token or the token range of a list. */
typedef struct attr {
  const refm_tok *key;
  const refm_tok *scalar; /* NULL for a list */
  size_t first, end;      /* list: tokens between the brackets */
  size_t count;           /* list: number of items */
  int used;
} attr;

typedef struct attrs {
  attr v[MAX_ATTRS];
  size_t n;
} attrs;

/* ---- small utilities -------------------------------------------------------------------- */

static int oom(builder *b) { return refm_err(b->err, b->errlen, "out of memory"); }

static int line_err(builder *b, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int line_err(builder *b, int line, const char *fmt, ...) {
  if (b->err && b->errlen) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(b->err, b->errlen, "line %d: %s", line, msg);
  }
  return -1;
}

/* Returns arr with room for element n (growing *cap), or NULL (arr is then still valid). */
static void *room_for(void *arr, uint32_t n, uint32_t *cap, size_t elem) {
  if (n < *cap) return arr;
  if (*cap > UINT32_MAX / 2) return NULL;
  uint32_t nc = *cap ? *cap * 2 : 8;
  void *np = realloc(arr, (size_t)nc * elem);
  if (np) *cap = nc;
  return np;
}

/* Takes ownership of p (freed with the builder); returns p, or NULL after freeing it. */
static void *keep(builder *b, void *p) {
  if (!p) return NULL;
  void **na = room_for(b->allocs, b->nallocs, &b->cap_allocs, sizeof *na);
  if (!na) {
    free(p);
    return NULL;
  }
  b->allocs = na;
  b->allocs[b->nallocs++] = p;
  return p;
}

static char *keep_str(builder *b, const char *s) { return keep(b, strdup(s)); }

static int parse_u32(const char *s, uint32_t *out) {
  char *end;
  if (*s < '0' || *s > '9') return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v > UINT32_MAX) return -1;
  *out = (uint32_t)v;
  return 0;
}

static int parse_i64(const char *s, int64_t *out) {
  char *end;
  if (!*s) return -1;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

/* A decimal or special (inf, nan) float that fits f32's range. */
static int parse_f32(const char *s, float *out) {
  char *end;
  if (!*s) return -1;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || (errno && fabs(v) > 1.0) || (isfinite(v) && fabs(v) > FLT_MAX)) return -1;
  *out = (float)v;
  return 0;
}

static int parse_version(const char *s, uint32_t v[3]) {
  char part[3][16];
  int len[3] = {0, 0, 0}, k = 0;
  for (const char *p = s; *p; p++) {
    if (*p == '.') {
      if (++k > 2) return -1;
    } else if (len[k] < 15) {
      part[k][len[k]++] = *p;
    } else {
      return -1;
    }
  }
  if (k != 2) return -1;
  for (int i = 0; i < 3; i++) {
    part[i][len[i]] = '\0';
    if (parse_u32(part[i], &v[i])) return -1;
  }
  return 0;
}

static int is_name_tok(const refm_tok *t) {
  return t->kind == REFM_TK_WORD || t->kind == REFM_TK_STRING;
}

/* ---- attributes ------------------------------------------------------------------------- */

/* Parses `[ items ]` starting at toks[*i]; items are words separated by optional commas. */
static int parse_list(builder *b, const refm_lexer *lx, size_t *i, size_t *first, size_t *end,
                      size_t *count) {
  const refm_tok *t = lx->toks;
  if (*i >= lx->ntoks || t[*i].kind != REFM_TK_LBRACK)
    return line_err(b, *i < lx->ntoks ? t[*i].line : t[lx->ntoks - 1].line,
                    "expected a list like [1,2]");
  size_t k = *i + 1;
  *first = k;
  *count = 0;
  for (; k < lx->ntoks && t[k].kind != REFM_TK_RBRACK; k++) {
    if (t[k].kind == REFM_TK_COMMA) continue;
    if (t[k].kind != REFM_TK_WORD)
      return line_err(b, t[k].line, "unexpected '%s' in a list", t[k].text);
    (*count)++;
  }
  *end = k; /* the lexer guarantees the closing bracket */
  *i = k + 1;
  return 0;
}

static int parse_attrs(builder *b, const refm_lexer *lx, size_t i, attrs *as) {
  const refm_tok *t = lx->toks;
  as->n = 0;
  while (i < lx->ntoks) {
    if (t[i].kind != REFM_TK_WORD || i + 2 > lx->ntoks || t[i + 1].kind != REFM_TK_EQ)
      return line_err(b, t[i].line, "expected key=value, got '%s'", t[i].text);
    for (size_t k = 0; k < as->n; k++)
      if (strcmp(as->v[k].key->text, t[i].text) == 0)
        return line_err(b, t[i].line, "'%s' given twice", t[i].text);
    if (as->n == MAX_ATTRS) return line_err(b, t[i].line, "too many parameters");
    attr *a = &as->v[as->n++];
    memset(a, 0, sizeof *a);
    a->key = &t[i];
    i += 2;
    if (i >= lx->ntoks) return line_err(b, a->key->line, "'%s=' without a value", a->key->text);
    if (t[i].kind == REFM_TK_LBRACK) {
      if (parse_list(b, lx, &i, &a->first, &a->end, &a->count)) return -1;
    } else if (is_name_tok(&t[i])) {
      a->scalar = &t[i++];
    } else {
      return line_err(b, t[i].line, "bad value '%s' for '%s'", t[i].text, a->key->text);
    }
  }
  return 0;
}

static attr *take(attrs *as, const char *key) {
  for (size_t k = 0; k < as->n; k++)
    if (strcmp(as->v[k].key->text, key) == 0) {
      as->v[k].used = 1;
      return &as->v[k];
    }
  return NULL;
}

/* After a statement took what it knows: anything left is a misspelled or misplaced key. */
static int no_unused(builder *b, const attrs *as, const char *what, const char *allowed) {
  for (size_t k = 0; k < as->n; k++)
    if (!as->v[k].used)
      return line_err(b, as->v[k].key->line, "%s takes no parameter '%s' (%s)", what,
                      as->v[k].key->text, allowed);
  return 0;
}

static int scalar(builder *b, const attr *a) {
  if (!a->scalar) return line_err(b, a->key->line, "'%s' takes a single value, not a list", a->key->text);
  return 0;
}

static int attr_u32(builder *b, const attr *a, uint32_t *out) {
  if (scalar(b, a)) return -1;
  if (parse_u32(a->scalar->text, out))
    return line_err(b, a->scalar->line, "%s: '%s' is not an unsigned 32-bit integer",
                    a->key->text, a->scalar->text);
  return 0;
}

static int attr_f32(builder *b, const attr *a, float *out) {
  if (scalar(b, a)) return -1;
  if (parse_f32(a->scalar->text, out))
    return line_err(b, a->scalar->line, "%s: '%s' is not a number in f32 range", a->key->text,
                    a->scalar->text);
  return 0;
}

/* The u32 items of the list in toks[first, end), at most max of them. */
static size_t list_u32(builder *b, const refm_lexer *lx, size_t first, size_t end,
                       const char *label, uint32_t *out) {
  size_t k = 0;
  for (size_t i = first; i < end; i++) {
    const refm_tok *t = &lx->toks[i];
    if (t->kind != REFM_TK_WORD) continue;
    if (parse_u32(t->text, &out[k++])) {
      line_err(b, t->line, "%s: '%s' is not an unsigned 32-bit integer", label, t->text);
      return SIZE_MAX;
    }
  }
  return k;
}

/* A list of exactly `want` u32. */
static int attr_u32_list(builder *b, const refm_lexer *lx, const attr *a, size_t want,
                         uint32_t *out) {
  if (a->scalar || a->count != want)
    return line_err(b, a->key->line, "'%s' takes a list of %zu values like [%s]", a->key->text,
                    want, want == 2 ? "1,1" : "0,0,0,0");
  return list_u32(b, lx, a->first, a->end, a->key->text, out) == SIZE_MAX ? -1 : 0;
}

/* ---- meta ------------------------------------------------------------------------------- */

#define REF_MIB 1048576u
/* The board's usable VTCM (docs/board.md), in bytes as real binaries carry it. */
#define REF_DEFAULT_VTCM_BYTES (2u * REF_MIB)

enum {
  META_BUILD_ID = 4,
  META_CORE_API = 5,
  META_CONTEXT_BLOB = 7,
  META_SOC_VERSION = 8,
  META_VTCM_BYTES = 11,
  META_VTCM_BLOB_UNIT = 12,
  META_GRAPH_BLOB = 13
};
static const char *const k_meta_keys[] = {
    "binary_info", "graph_info", "tensor", "backend_id", "build_id", "core_api", "backend_api",
    "context_blob", "soc_version", "soc_model", "dsp_arch", "vtcm_bytes", "vtcm_blob_unit",
    "graph_blob"};
#define NUM_META_KEYS (sizeof k_meta_keys / sizeof k_meta_keys[0])

static void meta_defaults(ref_model_meta *m) {
  *m = (ref_model_meta){.binary_info_version = 3,
                        .graph_info_version = 3,
                        .tensor_version = 2,
                        .backend_id = QNN_BACKEND_ID_HTP,
                        .build_id = "htpu-ref",
                        .core_api = {2, 32, 0},
                        .backend_api = {5, 42, 0},
                        .context_blob_version = {3, 2, 0},
                        .soc_version = "v68",
                        .soc_model = 35,
                        .dsp_arch = 68,
                        .vtcm_blob = REF_DEFAULT_VTCM_BYTES,
                        .graph_blob_version = 1};
}

static int meta_value(builder *b, size_t key, const attr *a) {
  ref_model_meta *m = &b->meta;
  uint32_t *u32_fields[NUM_META_KEYS] = {
      &m->binary_info_version, &m->graph_info_version, &m->tensor_version, &m->backend_id, NULL,
      m->core_api, m->backend_api, m->context_blob_version, NULL, &m->soc_model, &m->dsp_arch,
      &b->vtcm_bytes, NULL, &m->graph_blob_version};
  if (scalar(b, a)) return -1;
  const char *v = a->scalar->text;
  if (key == META_VTCM_BYTES || key == META_VTCM_BLOB_UNIT) b->vtcm_line = a->key->line;
  if (key == META_VTCM_BLOB_UNIT) {
    if (strcmp(v, "bytes") != 0 && strcmp(v, "mb") != 0)
      return line_err(b, a->scalar->line, "vtcm_blob_unit: '%s' is not bytes or mb", v);
    b->vtcm_mb_form = v[0] == 'm';
    return 0;
  }
  if (key == META_BUILD_ID || key == META_SOC_VERSION) {
    char *s = keep_str(b, v);
    if (!s) return oom(b);
    *(key == META_BUILD_ID ? &m->build_id : &m->soc_version) = s;
    return 0;
  }
  if (key >= META_CORE_API && key <= META_CONTEXT_BLOB) {
    if (parse_version(v, u32_fields[key]))
      return line_err(b, a->scalar->line, "%s: '%s' is not a version like 2.32.0", a->key->text, v);
    return 0;
  }
  if (attr_u32(b, a, u32_fields[key])) return -1;
  if (key == META_GRAPH_BLOB && m->graph_blob_version != 1 && m->graph_blob_version != 2)
    return line_err(b, a->scalar->line, "graph_blob: %u is not a graph blob info version (1 or "
                    "2)", m->graph_blob_version);
  /* A small figure is surely meant as MB, and readers would take it so: say what is wanted. */
  if (key == META_VTCM_BYTES && b->vtcm_bytes && b->vtcm_bytes < REF_MIB)
    return line_err(b, a->scalar->line, "vtcm_bytes: %u is below 1 MiB (1048576); give the "
                    "VTCM in bytes (2097152 for 2 MB), or 0 for unknown", b->vtcm_bytes);
  return 0;
}

/* The blob info's value from vtcm_bytes and vtcm_blob_unit, which may come in any order. */
static int resolve_vtcm(builder *b) {
  b->meta.vtcm_blob = b->vtcm_bytes;
  if (!b->vtcm_mb_form) return 0;
  if (b->vtcm_bytes % REF_MIB)
    return line_err(b, b->vtcm_line, "vtcm_blob_unit=mb writes whole MB, but vtcm_bytes %u is "
                    "not a multiple of 1048576", b->vtcm_bytes);
  b->meta.vtcm_blob = b->vtcm_bytes / REF_MIB;
  return 0;
}

static int stmt_meta(builder *b, const refm_lexer *lx) {
  attrs as;
  if (parse_attrs(b, lx, 1, &as)) return -1;
  for (size_t k = 0; k < as.n; k++) {
    size_t key = 0;
    while (key < NUM_META_KEYS && strcmp(k_meta_keys[key], as.v[k].key->text) != 0) key++;
    if (key == NUM_META_KEYS)
      return line_err(b, as.v[k].key->line, "unknown meta key '%s' (binary_info, graph_info, "
                      "tensor, backend_id, build_id, core_api, backend_api, context_blob, "
                      "soc_version, soc_model, dsp_arch, vtcm_bytes, vtcm_blob_unit, graph_blob)",
                      as.v[k].key->text);
    if (b->meta_seen & (1u << key))
      return line_err(b, as.v[k].key->line, "meta '%s' given twice", as.v[k].key->text);
    b->meta_seen |= 1u << key;
    if (meta_value(b, key, &as.v[k])) return -1;
  }
  char msg[256];
  if (refm_check_meta(&b->meta, msg, sizeof msg)) return line_err(b, lx->toks[0].line, "%s", msg);
  return 0;
}

/* ---- graph ------------------------------------------------------------------------------ */

/* `graph NAME [batch_multiple=yes|no]` */
static int stmt_graph(builder *b, const refm_lexer *lx) {
  const refm_tok *t = lx->toks;
  if (lx->ntoks < 2 || !is_name_tok(&t[1]) ||
      (lx->ntoks > 2 && (lx->ntoks < 4 || t[2].kind != REFM_TK_WORD ||
                         t[3].kind != REFM_TK_EQ)))
    return line_err(b, t[0].line, "expected 'graph NAME' or 'graph NAME batch_multiple=no'");
  attrs as;
  if (parse_attrs(b, lx, 2, &as)) return -1;
  uint32_t flags = 0;
  attr *bm = take(&as, "batch_multiple");
  if (bm) {
    if (scalar(b, bm)) return -1;
    if (strcmp(bm->scalar->text, "no") == 0)
      flags |= REF_GRAPH_NO_BATCH_MULTIPLE;
    else if (strcmp(bm->scalar->text, "yes") != 0)
      return line_err(b, bm->scalar->line, "batch_multiple: '%s' (expected yes or no)",
                      bm->scalar->text);
  }
  if (no_unused(b, &as, "graph", "batch_multiple")) return -1;
  if (!t[1].text[0]) return line_err(b, t[1].line, "empty graph name");
  for (uint32_t g = 0; g < b->ng; g++)
    if (strcmp(b->graphs[g].name, t[1].text) == 0)
      return line_err(b, t[1].line, "graph '%s' already defined on line %d", t[1].text,
                      b->graphs[g].line);
  bgraph *ng = room_for(b->graphs, b->ng, &b->cap_g, sizeof *ng);
  if (!ng) return oom(b);
  b->graphs = ng;
  bgraph *g = &b->graphs[b->ng];
  memset(g, 0, sizeof *g);
  g->line = t[0].line;
  g->flags = flags;
  if (!(g->name = strdup(t[1].text))) return oom(b);
  b->ng++;
  return 0;
}

static bgraph *current_graph(builder *b, const refm_tok *kw) {
  if (b->ng == 0) {
    line_err(b, kw->line, "'%s' outside a graph (start one with 'graph NAME')", kw->text);
    return NULL;
  }
  return &b->graphs[b->ng - 1];
}

/* Index of the tensor called name in graph g, or -1. */
static int64_t find_tensor(const builder *b, uint32_t g, const char *name) {
  for (uint32_t i = b->nt; i-- > 0;)
    if (b->tensors[i].graph == g && strcmp(b->tensors[i].t.name, name) == 0) return i;
  return -1;
}

static int add_index(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v) {
  uint32_t *na = room_for(*arr, *n, cap, sizeof *na);
  if (!na) return -1;
  *arr = na;
  na[(*n)++] = v;
  return 0;
}

/* ---- tensors ---------------------------------------------------------------------------- */

typedef struct type_row {
  const char *name;
  uint32_t plain, quantized; /* quantized 0: cannot carry quantization (floats) */
} type_row;

static const type_row k_types[] = {
    {"f32", QNN_DATATYPE_FLOAT_32, 0},
    {"f16", QNN_DATATYPE_FLOAT_16, 0},
    {"u8", QNN_DATATYPE_UINT_8, QNN_DATATYPE_UFIXED_POINT_8},
    {"i8", QNN_DATATYPE_INT_8, QNN_DATATYPE_SFIXED_POINT_8},
    {"u16", QNN_DATATYPE_UINT_16, QNN_DATATYPE_UFIXED_POINT_16},
    {"i16", QNN_DATATYPE_INT_16, QNN_DATATYPE_SFIXED_POINT_16},
    {"i32", QNN_DATATYPE_INT_32, QNN_DATATYPE_SFIXED_POINT_32},
    {"u32", QNN_DATATYPE_UINT_32, QNN_DATATYPE_UFIXED_POINT_32},
};

static const type_row *find_type(const char *name) {
  for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
    if (strcmp(k_types[i].name, name) == 0) return &k_types[i];
  return NULL;
}

/* Reads the quantization attributes into t (data type decided here too). */
static int tensor_quant(builder *b, const refm_lexer *lx, attrs *as, const type_row *ty,
                        const refm_tok *type_tok, ref_tensor *t) {
  attr *scale = take(as, "scale"), *zp = take(as, "zero_point"), *axis = take(as, "axis");
  attr *scales = take(as, "scales"), *zps = take(as, "zero_points");
  int line = type_tok->line;
  t->data_type = ty->plain;
  if (!scale && !zp && !axis && !scales && !zps) return 0;
  if (!ty->quantized)
    return line_err(b, line, "%s tensors cannot carry quantization parameters", ty->name);
  if (zp && !scale) return line_err(b, zp->key->line, "zero_point= needs scale=");
  if (scale && (axis || scales || zps))
    return line_err(b, scale->key->line, "scale= (per-tensor) cannot be mixed with axis=, "
                    "scales= or zero_points= (per-axis)");
  t->data_type = ty->quantized;
  if (scale) {
    int64_t z = 0;
    t->quant = REF_QUANT_SCALE_OFFSET;
    if (attr_f32(b, scale, &t->scale)) return -1;
    if (zp && (scalar(b, zp) || parse_i64(zp->scalar->text, &z) || z < -INT32_MAX || z > INT32_MAX))
      return line_err(b, zp->key->line, "zero_point: not a 32-bit integer");
    t->offset = (int32_t)-z; /* QNN stores the negated zero point */
    return 0;
  }
  if (!scales || !axis) return line_err(b, line, "per-axis quantization needs both axis= and scales=");
  if (scales->scalar) return line_err(b, scales->key->line, "scales= takes a list");
  if (zps && (zps->scalar || zps->count != scales->count))
    return line_err(b, zps->key->line, "zero_points= needs a list of %zu values like scales=",
                    scales->count);
  uint32_t ax;
  if (attr_u32(b, axis, &ax)) return -1;
  if (ax > INT32_MAX) return line_err(b, axis->key->line, "axis %u out of range", ax);
  float *sv = keep(b, calloc(scales->count + 1, sizeof *sv));
  int32_t *ov = keep(b, calloc(scales->count + 1, sizeof *ov));
  if (!sv || !ov) return oom(b);
  size_t k = 0;
  for (size_t i = scales->first; i < scales->end; i++) {
    const refm_tok *tk = &lx->toks[i];
    if (tk->kind == REFM_TK_WORD && parse_f32(tk->text, &sv[k++]))
      return line_err(b, tk->line, "scales: '%s' is not a number in f32 range", tk->text);
  }
  if (zps) {
    k = 0;
    for (size_t i = zps->first; i < zps->end; i++) {
      const refm_tok *tk = &lx->toks[i];
      int64_t z;
      if (tk->kind != REFM_TK_WORD) continue;
      if (parse_i64(tk->text, &z) || z < -INT32_MAX || z > INT32_MAX)
        return line_err(b, tk->line, "zero_points: '%s' is not a 32-bit integer", tk->text);
      ov[k++] = (int32_t)-z;
    }
  }
  t->quant = REF_QUANT_AXIS_SCALE_OFFSET;
  t->axis = (int32_t)ax;
  t->num_axis = (uint32_t)scales->count;
  t->scales = sv;
  t->offsets = ov;
  return 0;
}

static void store_int(void *dst, htpu_dtype dt, size_t i, int64_t v) {
  uint8_t *p = dst;
  switch (dt) {
  case HTPU_U8:
  case HTPU_I8:
    p[i] = (uint8_t)v;
    break;
  case HTPU_U16:
  case HTPU_I16: {
    uint16_t x = (uint16_t)v;
    memcpy(p + 2 * i, &x, 2);
    break;
  }
  default: {
    uint32_t x = (uint32_t)v;
    memcpy(p + 4 * i, &x, 4);
    break;
  }
  }
}

static void int_range(htpu_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
  case HTPU_U8:
    *lo = 0, *hi = UINT8_MAX;
    break;
  case HTPU_I8:
    *lo = INT8_MIN, *hi = INT8_MAX;
    break;
  case HTPU_U16:
    *lo = 0, *hi = UINT16_MAX;
    break;
  case HTPU_I16:
    *lo = INT16_MIN, *hi = INT16_MAX;
    break;
  case HTPU_U32:
    *lo = 0, *hi = UINT32_MAX;
    break;
  default:
    *lo = INT32_MIN, *hi = INT32_MAX;
    break;
  }
}

/* Whether data=[...] / data_f32=[...] fits the tensor: a list of exactly its element count. */
static int values_fit(builder *b, const attr *a, int as_f32, const ref_tensor *t, size_t n) {
  htpu_dtype dt = refm_storage_dtype(t->data_type);
  if (a->scalar) return line_err(b, a->key->line, "'%s' takes a list of values", a->key->text);
  if (a->count != n)
    return line_err(b, a->key->line, "tensor '%s' has %zu elements, %s has %zu values", t->name,
                    n, a->key->text, a->count);
  if (as_f32 && dt != HTPU_F32 && dt != HTPU_F16 && t->quant == REF_QUANT_NONE)
    return line_err(b, a->key->line, "data_f32= needs a float or quantized tensor; '%s' is a "
                    "plain %s tensor (use data=)", t->name, refm_dtype_name(t->data_type));
  return 0;
}

/* data=[...]: floats for float tensors, the stored integers for integer tensors (quantized
 * ones included); data_f32=[...]: floats that are quantized with the tensor's own params.
 * values_fit has accepted the list. */
static int tensor_values(builder *b, const refm_lexer *lx, const attr *a, int as_f32,
                         ref_tensor *t, void *dst, size_t n) {
  htpu_dtype dt = refm_storage_dtype(t->data_type);
  int floats = as_f32 || dt == HTPU_F32 || dt == HTPU_F16;
  float *f = floats ? malloc((n + 1) * sizeof *f) : NULL;
  if (floats && !f) return oom(b);
  int64_t lo, hi;
  int_range(dt, &lo, &hi);
  size_t k = 0;
  for (size_t i = a->first; i < a->end; i++) {
    const refm_tok *tk = &lx->toks[i];
    if (tk->kind != REFM_TK_WORD) continue;
    if (floats) {
      if (parse_f32(tk->text, &f[k])) {
        free(f);
        return line_err(b, tk->line, "%s: '%s' is not a number in f32 range", a->key->text, tk->text);
      }
    } else {
      int64_t v;
      if (parse_i64(tk->text, &v) || v < lo || v > hi)
        return line_err(b, tk->line, "%s: '%s' is not an integer in %s's range [%lld, %lld]",
                        a->key->text, tk->text, refm_dtype_name(t->data_type), (long long)lo,
                        (long long)hi);
      store_int(dst, dt, k, v);
    }
    k++;
  }
  if (!floats) return 0;
  refm_qparams q;
  if (refm_qparams_init(t, &q)) {
    free(f);
    return oom(b);
  }
  ptrdiff_t bad = qc_quantize(dt, &q.p, f, dst, n);
  refm_qparams_free(&q);
  free(f);
  if (bad >= 0)
    return line_err(b, a->key->line, "%s: value %td is NaN, which %s cannot hold", a->key->text,
                    bad, refm_dtype_name(t->data_type));
  return 0;
}

static int tensor_file(builder *b, const attr *a, const ref_tensor *t, void **out) {
  if (scalar(b, a)) return -1;
  const char *name = a->scalar->text;
  char path[4096];
  int w = name[0] == '/' || !b->base_dir || !b->base_dir[0]
              ? snprintf(path, sizeof path, "%s", name)
              : snprintf(path, sizeof path, "%s/%s", b->base_dir, name);
  if (w < 0 || (size_t)w >= sizeof path) return line_err(b, a->key->line, "data_file: path too long");
  char err[1024];
  uint64_t size = 0;
  /* never blocks on a FIFO or device, and the size is checked before anything is read */
  int fd = file_open_regular(path, &size, err, sizeof err);
  if (fd < 0) return line_err(b, a->key->line, "data_file: %s", err);
  if (size != t->nbytes) {
    close(fd);
    return line_err(b, a->key->line, "data_file '%s' has %llu bytes, tensor '%s' needs %zu", path,
                    (unsigned long long)size, t->name, t->nbytes);
  }
  void *dst = keep(b, calloc(t->nbytes + 1, 1));
  if (!dst) {
    close(fd);
    return oom(b);
  }
  int rc = file_read_exact(fd, path, dst, t->nbytes, err, sizeof err);
  close(fd);
  if (rc) return line_err(b, a->key->line, "data_file: %s", err);
  *out = dst;
  return 0;
}

static int tensor_data(builder *b, const refm_lexer *lx, attrs *as, ref_tensor *t, int line) {
  attr *data = take(as, "data"), *f32 = take(as, "data_f32"), *file = take(as, "data_file");
  int given = !!data + !!f32 + !!file;
  if (t->kind != REF_TENSOR_STATIC) {
    if (given) {
      const attr *a = data ? data : f32 ? f32 : file;
      return line_err(b, a->key->line, "%s= is only for static tensors", a->key->text);
    }
    return 0;
  }
  if (given != 1)
    return line_err(b, line, "static tensor '%s' needs exactly one of data=, data_f32=, "
                    "data_file=", t->name);
  /* The buffer (up to 2 GiB) is allocated only once the source is known to hold exactly the
   * tensor: a mistyped dim ([2,55555552]) is an error message, not a 400 MB allocation. */
  void *dst = NULL;
  if (file) {
    if (tensor_file(b, file, t, &dst)) return -1;
  } else {
    const attr *values = data ? data : f32;
    size_t n = ref_tensor_elements(t);
    if (values_fit(b, values, f32 != NULL, t, n)) return -1;
    dst = keep(b, calloc(t->nbytes + 1, 1));
    if (!dst) return oom(b);
    if (tensor_values(b, lx, values, f32 != NULL, t, dst, n)) return -1;
  }
  t->data = dst;
  return 0;
}

/* `format=dense|sparse` and `dynamic=[axes]` (docs/reference-format.md). */
static int tensor_layout(builder *b, const refm_lexer *lx, attrs *as, ref_tensor *t) {
  attr *format = take(as, "format"), *dynamic = take(as, "dynamic");
  if (format) {
    if (scalar(b, format)) return -1;
    if (strcmp(format->scalar->text, "sparse") == 0)
      t->data_format = QNN_TENSOR_DATA_FORMAT_SPARSE;
    else if (strcmp(format->scalar->text, "dense") != 0)
      return line_err(b, format->scalar->line, "format: '%s' (expected dense or sparse)",
                      format->scalar->text);
  }
  if (!dynamic) return 0;
  uint32_t axes[REF_MAX_RANK];
  if (dynamic->scalar || dynamic->count == 0 || dynamic->count > t->rank)
    return line_err(b, dynamic->key->line, "dynamic: expected a list of 1 to %u axes like [0]",
                    t->rank);
  if (list_u32(b, lx, dynamic->first, dynamic->end, "dynamic", axes) == SIZE_MAX) return -1;
  for (size_t k = 0; k < dynamic->count; k++) {
    if (axes[k] >= t->rank || (t->dynamic_mask & (1u << axes[k])))
      return line_err(b, dynamic->key->line, "dynamic: axis %u is %s", axes[k],
                      axes[k] >= t->rank ? "beyond the tensor's rank" : "given twice");
    t->dynamic_mask |= 1u << axes[k];
  }
  return 0;
}

static int stmt_tensor(builder *b, const refm_lexer *lx, ref_tensor_kind kind) {
  const refm_tok *t = lx->toks;
  int line = t[0].line;
  bgraph *g = current_graph(b, &t[0]);
  if (!g) return -1;
  if (lx->ntoks < 4 || !is_name_tok(&t[1]) || t[2].kind != REFM_TK_WORD)
    return line_err(b, line, "expected '%s NAME TYPE [dims] ...'", t[0].text);
  const type_row *ty = find_type(t[2].text);
  if (!ty)
    return line_err(b, t[2].line, "unknown type '%s' (f32, f16, u8, i8, u16, i16, i32, u32)",
                    t[2].text);
  int64_t prev = find_tensor(b, b->ng - 1, t[1].text);
  if (prev >= 0)
    return line_err(b, t[1].line, "tensor '%s' already declared on line %d", t[1].text,
                    b->tensors[prev].line);

  ref_tensor rt;
  memset(&rt, 0, sizeof rt);
  size_t i = 3, first, end, count;
  if (parse_list(b, lx, &i, &first, &end, &count)) return -1;
  if (count == 0 || count > REF_MAX_RANK)
    return line_err(b, t[3].line, "dims need 1 to %d values, got %zu", REF_MAX_RANK, count);
  if (list_u32(b, lx, first, end, "dims", rt.dims) == SIZE_MAX) return -1;
  rt.rank = (uint32_t)count;
  attrs as;
  if (parse_attrs(b, lx, i, &as)) return -1;
  if (!(rt.name = keep_str(b, t[1].text))) return oom(b);
  if (tensor_quant(b, lx, &as, ty, &t[2], &rt)) return -1;

  /* check the description first as a non-static tensor, so the data is parsed against dims
   * and quantization already known to be sane, then again with the data in place */
  char msg[256];
  rt.kind = REF_TENSOR_NATIVE;
  uint64_t n = 0;
  if (refm_elements(rt.rank, rt.dims, &n) == 0 && n <= REFM_MAX_TENSOR_BYTES)
    rt.nbytes = (size_t)n * ref_dtype_size(rt.data_type);
  if (refm_check_tensor(&rt, msg, sizeof msg))
    return line_err(b, line, "tensor '%s': %s", rt.name, msg);
  rt.kind = kind;
  if (tensor_data(b, lx, &as, &rt, line)) return -1;
  if (refm_check_tensor(&rt, msg, sizeof msg))
    return line_err(b, line, "tensor '%s': %s", rt.name, msg);
  if (tensor_layout(b, lx, &as, &rt)) return -1;
  if (refm_check_tensor(&rt, msg, sizeof msg))
    return line_err(b, line, "tensor '%s': %s", rt.name, msg);
  if (no_unused(b, &as, "a tensor",
                "scale, zero_point, axis, scales, zero_points, data, data_f32, data_file, "
                "format, dynamic"))
    return -1;

  btensor *nt = room_for(b->tensors, b->nt, &b->cap_t, sizeof *nt);
  if (!nt) return oom(b);
  b->tensors = nt;
  if (b->nt == UINT32_MAX - 1) return line_err(b, line, "too many tensors");
  rt.id = b->nt + 1; /* ids 1..N in declaration order, unique across graphs */
  uint32_t index = b->nt;
  b->tensors[b->nt++] = (btensor){rt, b->ng - 1, line};
  if (kind == REF_TENSOR_INPUT && add_index(&g->inputs, &g->nin, &g->cap_in, index)) return oom(b);
  if (kind == REF_TENSOR_OUTPUT && add_index(&g->outputs, &g->nout, &g->cap_out, index))
    return oom(b);
  return 0;
}

/* ---- ops -------------------------------------------------------------------------------- */

static int op_names(builder *b, const refm_lexer *lx, size_t *i, int outputs, uint32_t *idx,
                    uint32_t *count) {
  const refm_tok *t = lx->toks;
  *count = 0;
  while (*i < lx->ntoks && is_name_tok(&t[*i])) {
    if (!outputs && t[*i].kind == REFM_TK_WORD && strcmp(t[*i].text, "->") == 0) break;
    if (*i + 1 < lx->ntoks && t[*i + 1].kind == REFM_TK_EQ) {
      if (!outputs) return line_err(b, t[*i].line, "expected '->' before parameters");
      break; /* parameters start */
    }
    if (*count == REF_MAX_OP_IO)
      return line_err(b, t[*i].line, "more than %d %s", REF_MAX_OP_IO, outputs ? "outputs" : "inputs");
    int64_t ti = find_tensor(b, b->ng - 1, t[*i].text);
    if (ti < 0)
      return line_err(b, t[*i].line, "unknown tensor '%s' in graph '%s'", t[*i].text,
                      b->graphs[b->ng - 1].name);
    idx[(*count)++] = (uint32_t)ti;
    (*i)++;
  }
  return 0;
}

/* yes/no flags and floor/ceil: a word of `two` (the second means 1). */
static int attr_choice(builder *b, const attr *a, const char *zero, const char *one,
                       uint32_t *out) {
  if (scalar(b, a)) return -1;
  if (strcmp(a->scalar->text, zero) && strcmp(a->scalar->text, one))
    return line_err(b, a->scalar->line, "%s: expected %s or %s, got '%s'", a->key->text, zero, one,
                    a->scalar->text);
  *out = strcmp(a->scalar->text, one) == 0;
  return 0;
}

/* The parameters of the ops of format version 2 (Concat's axis, PoolMax2d's filter and
 * rounding, ResizeNearestNeighbor's flags, Transpose's perm); stride and pad are the caller's. */
static int op_params_v2(builder *b, const refm_lexer *lx, attrs *as, ref_op *op,
                        const char **allowed) {
  if (op->type == REF_OP_CONCAT) {
    attr *axis = take(as, "axis");
    *allowed = "name, axis";
    return axis ? attr_u32(b, axis, &op->axis) : 0;
  }
  if (op->type == REF_OP_POOL_MAX_2D) {
    attr *filter = take(as, "filter"), *rounding = take(as, "rounding");
    *allowed = "name, filter, stride, pad, rounding";
    if (!filter) return line_err(b, lx->toks[0].line, "PoolMax2d needs filter=[h,w]");
    if (attr_u32_list(b, lx, filter, 2, op->filter)) return -1;
    return rounding ? attr_choice(b, rounding, "floor", "ceil", &op->ceil_mode) : 0;
  }
  if (op->type == REF_OP_RESIZE_NEAREST) {
    attr *ac = take(as, "align_corners"), *hp = take(as, "half_pixel_centers");
    *allowed = "name, align_corners, half_pixel_centers";
    if (ac && attr_choice(b, ac, "no", "yes", &op->align_corners)) return -1;
    return hp ? attr_choice(b, hp, "no", "yes", &op->half_pixel_centers) : 0;
  }
  if (op->type == REF_OP_TRANSPOSE) {
    attr *perm = take(as, "perm");
    *allowed = "name, perm";
    if (!perm) return line_err(b, lx->toks[0].line, "Transpose needs perm=[...]");
    if (perm->count < 1 || perm->count > REF_MAX_RANK)
      return line_err(b, perm->key->line, "perm: 1 to %d entries", REF_MAX_RANK);
    return attr_u32_list(b, lx, perm, perm->count, op->perm);
  }
  return 0;
}

static int op_params(builder *b, const refm_lexer *lx, attrs *as, ref_op *op, uint32_t index) {
  attr *name = take(as, "name"), *stride = NULL, *pad = NULL, *beta = NULL;
  const char *allowed = "name";
  if (refm_op_takes_window(op->type)) {
    stride = take(as, "stride");
    pad = take(as, "pad");
    op->stride[0] = op->stride[1] = 1;
    allowed = "name, stride, pad";
    /* QNN's defaults for Conv2d and PoolMax2d alike: stride 1, no padding */
  } else if (op->type == REF_OP_SOFTMAX) {
    beta = take(as, "beta");
    op->beta = 1.0f;
    allowed = "name, beta";
  }
  if (op->type >= REF_OP_FIRST_V2 && op_params_v2(b, lx, as, op, &allowed)) return -1;
  if (no_unused(b, as, refm_op_name(op->type), allowed)) return -1;
  if (stride && attr_u32_list(b, lx, stride, 2, op->stride)) return -1;
  if (pad && attr_u32_list(b, lx, pad, 4, op->pad)) return -1;
  if (beta && attr_f32(b, beta, &op->beta)) return -1;
  char dflt[64];
  snprintf(dflt, sizeof dflt, "%s_%u", refm_op_name(op->type), index);
  if (name && scalar(b, name)) return -1;
  if (!(op->name = keep_str(b, name ? name->scalar->text : dflt))) return oom(b);
  return 0;
}

static int stmt_op(builder *b, const refm_lexer *lx) {
  const refm_tok *t = lx->toks;
  int line = t[0].line;
  bgraph *g = current_graph(b, &t[0]);
  if (!g) return -1;
  if (lx->ntoks < 2 || t[1].kind != REFM_TK_WORD)
    return line_err(b, line, "expected 'op TYPE inputs... -> outputs... [params]'");
  ref_op op;
  memset(&op, 0, sizeof op);
  op.type = (ref_op_type)refm_op_from_name(t[1].text);
  if (!op.type)
    return line_err(b, t[1].line, "unknown op '%s' (ElementWiseAdd, ElementWiseMultiply, "
                    "FullyConnected, Conv2d, Relu, Reshape, Softmax, NonZero, Sigmoid, Concat, "
                    "PoolMax2d, ResizeNearestNeighbor, Transpose)", t[1].text);
  size_t i = 2;
  if (op_names(b, lx, &i, 0, op.inputs, &op.num_inputs)) return -1;
  if (i >= lx->ntoks || strcmp(t[i].text, "->") != 0)
    return line_err(b, i < lx->ntoks ? t[i].line : line,
                    "expected '->' between the op's inputs and outputs");
  i++;
  if (op_names(b, lx, &i, 1, op.outputs, &op.num_outputs)) return -1;
  attrs as;
  if (parse_attrs(b, lx, i, &as)) return -1;
  if (op_params(b, lx, &as, &op, g->nops)) return -1;
  ref_op *nops = room_for(g->ops, g->nops, &g->cap_ops, sizeof *nops);
  if (!nops) return oom(b);
  g->ops = nops;
  int *nl = room_for(g->op_lines, g->nops, &g->cap_op_lines, sizeof *nl);
  if (!nl) return oom(b);
  g->op_lines = nl;
  g->ops[g->nops] = op;
  g->op_lines[g->nops++] = line;
  return 0;
}

/* ---- driver ----------------------------------------------------------------------------- */

static int statement(builder *b, const refm_lexer *lx) {
  const refm_tok *kw = &lx->toks[0];
  if (kw->kind != REFM_TK_WORD) return line_err(b, kw->line, "unexpected '%s'", kw->text);
  if (strcmp(kw->text, "meta") == 0) return stmt_meta(b, lx);
  if (strcmp(kw->text, "graph") == 0) return stmt_graph(b, lx);
  if (strcmp(kw->text, "op") == 0) return stmt_op(b, lx);
  static const struct {
    const char *word;
    ref_tensor_kind kind;
  } kinds[] = {{"input", REF_TENSOR_INPUT},
               {"output", REF_TENSOR_OUTPUT},
               {"native", REF_TENSOR_NATIVE},
               {"static", REF_TENSOR_STATIC}};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    if (strcmp(kw->text, kinds[k].word) == 0) return stmt_tensor(b, lx, kinds[k].kind);
  return line_err(b, kw->line, "unknown statement '%s' (meta, graph, input, output, native, "
                  "static, op)", kw->text);
}

/* Checks the whole model with the parser's rules and writes it. */
static int finish(builder *b, void **out, size_t *out_len) {
  if (b->ng == 0) return refm_err(b->err, b->errlen, "no graph defined");
  if (resolve_vtcm(b)) return -1;
  ref_model m;
  memset(&m, 0, sizeof m);
  m.meta = b->meta;
  m.num_tensors = b->nt;
  m.tensors = calloc((size_t)b->nt + 1, sizeof *m.tensors);
  m.num_graphs = b->ng;
  m.graphs = calloc((size_t)b->ng + 1, sizeof *m.graphs);
  int rc = -1;
  if (!m.tensors || !m.graphs) {
    oom(b);
    goto out;
  }
  for (uint32_t i = 0; i < b->nt; i++) m.tensors[i] = b->tensors[i].t;
  for (uint32_t g = 0; g < b->ng; g++) {
    const bgraph *bg = &b->graphs[g];
    m.graphs[g] = (ref_graph){bg->name,  bg->nin, bg->inputs, bg->nout,
                              bg->outputs, bg->nops, bg->ops, bg->flags};
  }
  uint32_t bad_graph, bad_op;
  char msg[512];
  if (refm_check_graphs(&m, &bad_graph, &bad_op, msg, sizeof msg)) {
    const bgraph *bg = &b->graphs[bad_graph];
    line_err(b, bad_op == UINT32_MAX ? bg->line : bg->op_lines[bad_op], "%s", msg);
    goto out;
  }
  rc = ref_model_write(&m, out, out_len, b->err, b->errlen);
out:
  free(m.tensors);
  free(m.graphs);
  return rc;
}

static void builder_free(builder *b) {
  for (uint32_t i = 0; i < b->nallocs; i++) free(b->allocs[i]);
  free(b->allocs);
  for (uint32_t g = 0; g < b->ng; g++) {
    free(b->graphs[g].name);
    free(b->graphs[g].inputs);
    free(b->graphs[g].outputs);
    free(b->graphs[g].ops);
    free(b->graphs[g].op_lines);
  }
  free(b->graphs);
  free(b->tensors);
}

int ref_build_from_text_at(const char *text, const char *base_dir, void **out, size_t *out_len,
                           char *err, size_t errlen) {
  if (!text || !out || !out_len) return refm_err(err, errlen, "invalid argument");
  *out = NULL;
  *out_len = 0;
  builder b;
  memset(&b, 0, sizeof b);
  meta_defaults(&b.meta);
  b.vtcm_bytes = REF_DEFAULT_VTCM_BYTES;
  b.base_dir = base_dir;
  b.err = err;
  b.errlen = errlen;
  refm_lexer lx;
  refm_lex_init(&lx, text);
  int rc, more;
  while ((more = refm_lex_next(&lx, err, errlen)) == 1)
    if (statement(&b, &lx)) break;
  rc = more == 0 ? finish(&b, out, out_len) : -1;
  refm_lex_free(&lx);
  builder_free(&b);
  return rc;
}

int ref_build_from_text(const char *text, void **out, size_t *out_len, char *err, size_t errlen) {
  return ref_build_from_text_at(text, NULL, out, out_len, err, errlen);
}
