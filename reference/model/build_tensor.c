/*
 * build_tensor.c - the text builder's tensor statements (build_text.h): `input`, `output`,
 * `native` and `static NAME TYPE [dims] ...`, their quantization, a static tensor's data (a
 * list of values or a file) and layout, each checked as read so errors name their line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_text.h"
#include "file_open.h"
#include "qnn/qnn_abi.h"

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
  attr *scale = bt_take(as, "scale"), *zp = bt_take(as, "zero_point");
  attr *axis = bt_take(as, "axis");
  attr *scales = bt_take(as, "scales"), *zps = bt_take(as, "zero_points");
  int line = type_tok->line;
  t->data_type = ty->plain;
  if (!scale && !zp && !axis && !scales && !zps) return 0;
  if (!ty->quantized)
    return bt_line_err(b, line, "%s tensors cannot carry quantization parameters", ty->name);
  if (zp && !scale) return bt_line_err(b, zp->key->line, "zero_point= needs scale=");
  if (scale && (axis || scales || zps))
    return bt_line_err(b, scale->key->line, "scale= (per-tensor) cannot be mixed with axis=, "
                       "scales= or zero_points= (per-axis)");
  t->data_type = ty->quantized;
  if (scale) {
    int64_t z = 0;
    t->quant = REF_QUANT_SCALE_OFFSET;
    if (bt_attr_f32(b, scale, &t->scale)) return -1;
    if (zp && (bt_scalar(b, zp) || bt_parse_i64(zp->scalar->text, &z) || z < -INT32_MAX ||
               z > INT32_MAX))
      return bt_line_err(b, zp->key->line, "zero_point: not a 32-bit integer");
    t->offset = (int32_t)-z; /* QNN stores the negated zero point */
    return 0;
  }
  if (!scales || !axis)
    return bt_line_err(b, line, "per-axis quantization needs both axis= and scales=");
  if (scales->scalar) return bt_line_err(b, scales->key->line, "scales= takes a list");
  if (zps && (zps->scalar || zps->count != scales->count))
    return bt_line_err(b, zps->key->line, "zero_points= needs a list of %zu values like scales=",
                       scales->count);
  uint32_t ax;
  if (bt_attr_u32(b, axis, &ax)) return -1;
  if (ax > INT32_MAX) return bt_line_err(b, axis->key->line, "axis %u out of range", ax);
  float *sv = bt_keep(b, calloc(scales->count + 1, sizeof *sv));
  int32_t *ov = bt_keep(b, calloc(scales->count + 1, sizeof *ov));
  if (!sv || !ov) return bt_oom(b);
  size_t k = 0;
  for (size_t i = scales->first; i < scales->end; i++) {
    const refm_tok *tk = &lx->toks[i];
    if (tk->kind == REFM_TK_WORD && bt_parse_f32(tk->text, &sv[k++]))
      return bt_line_err(b, tk->line, "scales: '%s' is not a number in f32 range", tk->text);
  }
  if (zps) {
    k = 0;
    for (size_t i = zps->first; i < zps->end; i++) {
      const refm_tok *tk = &lx->toks[i];
      int64_t z;
      if (tk->kind != REFM_TK_WORD) continue;
      if (bt_parse_i64(tk->text, &z) || z < -INT32_MAX || z > INT32_MAX)
        return bt_line_err(b, tk->line, "zero_points: '%s' is not a 32-bit integer", tk->text);
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
  if (a->scalar) return bt_line_err(b, a->key->line, "'%s' takes a list of values", a->key->text);
  if (a->count != n)
    return bt_line_err(b, a->key->line, "tensor '%s' has %zu elements, %s has %zu values", t->name,
                       n, a->key->text, a->count);
  if (as_f32 && dt != HTPU_F32 && dt != HTPU_F16 && t->quant == REF_QUANT_NONE)
    return bt_line_err(b, a->key->line, "data_f32= needs a float or quantized tensor; '%s' is a "
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
  if (floats && !f) return bt_oom(b);
  int64_t lo, hi;
  int_range(dt, &lo, &hi);
  size_t k = 0;
  for (size_t i = a->first; i < a->end; i++) {
    const refm_tok *tk = &lx->toks[i];
    if (tk->kind != REFM_TK_WORD) continue;
    if (floats) {
      if (bt_parse_f32(tk->text, &f[k])) {
        free(f);
        return bt_line_err(b, tk->line, "%s: '%s' is not a number in f32 range", a->key->text,
                           tk->text);
      }
    } else {
      int64_t v;
      if (bt_parse_i64(tk->text, &v) || v < lo || v > hi)
        return bt_line_err(b, tk->line, "%s: '%s' is not an integer in %s's range [%lld, %lld]",
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
    return bt_oom(b);
  }
  ptrdiff_t bad = qc_quantize(dt, &q.p, f, dst, n);
  refm_qparams_free(&q);
  free(f);
  if (bad >= 0)
    return bt_line_err(b, a->key->line, "%s: value %td is NaN, which %s cannot hold", a->key->text,
                       bad, refm_dtype_name(t->data_type));
  return 0;
}

static int tensor_file(builder *b, const attr *a, const ref_tensor *t, void **out) {
  if (bt_scalar(b, a)) return -1;
  const char *name = a->scalar->text;
  char path[4096];
  int w = name[0] == '/' || !b->base_dir || !b->base_dir[0]
              ? snprintf(path, sizeof path, "%s", name)
              : snprintf(path, sizeof path, "%s/%s", b->base_dir, name);
  if (w < 0 || (size_t)w >= sizeof path)
    return bt_line_err(b, a->key->line, "data_file: path too long");
  char err[1024];
  uint64_t size = 0;
  /* never blocks on a FIFO or device, and the size is checked before anything is read */
  int fd = file_open_regular(path, &size, err, sizeof err);
  if (fd < 0) return bt_line_err(b, a->key->line, "data_file: %s", err);
  if (size != t->nbytes) {
    close(fd);
    return bt_line_err(b, a->key->line, "data_file '%s' has %llu bytes, tensor '%s' needs %zu",
                       path, (unsigned long long)size, t->name, t->nbytes);
  }
  void *dst = bt_keep(b, calloc(t->nbytes + 1, 1));
  if (!dst) {
    close(fd);
    return bt_oom(b);
  }
  int rc = file_read_exact(fd, path, dst, t->nbytes, err, sizeof err);
  close(fd);
  if (rc) return bt_line_err(b, a->key->line, "data_file: %s", err);
  *out = dst;
  return 0;
}

static int tensor_data(builder *b, const refm_lexer *lx, attrs *as, ref_tensor *t, int line) {
  attr *data = bt_take(as, "data"), *f32 = bt_take(as, "data_f32");
  attr *file = bt_take(as, "data_file");
  int given = !!data + !!f32 + !!file;
  if (t->kind != REF_TENSOR_STATIC) {
    if (given) {
      const attr *a = data ? data : f32 ? f32 : file;
      return bt_line_err(b, a->key->line, "%s= is only for static tensors", a->key->text);
    }
    return 0;
  }
  if (given != 1)
    return bt_line_err(b, line, "static tensor '%s' needs exactly one of data=, data_f32=, "
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
    dst = bt_keep(b, calloc(t->nbytes + 1, 1));
    if (!dst) return bt_oom(b);
    if (tensor_values(b, lx, values, f32 != NULL, t, dst, n)) return -1;
  }
  t->data = dst;
  return 0;
}

/* `format=dense|sparse` and `dynamic=[axes]` (docs/reference-format.md). */
static int tensor_layout(builder *b, const refm_lexer *lx, attrs *as, ref_tensor *t) {
  attr *format = bt_take(as, "format"), *dynamic = bt_take(as, "dynamic");
  if (format) {
    if (bt_scalar(b, format)) return -1;
    if (strcmp(format->scalar->text, "sparse") == 0)
      t->data_format = QNN_TENSOR_DATA_FORMAT_SPARSE;
    else if (strcmp(format->scalar->text, "dense") != 0)
      return bt_line_err(b, format->scalar->line, "format: '%s' (expected dense or sparse)",
                         format->scalar->text);
  }
  if (!dynamic) return 0;
  uint32_t axes[REF_MAX_RANK];
  if (dynamic->scalar || dynamic->count == 0 || dynamic->count > t->rank)
    return bt_line_err(b, dynamic->key->line, "dynamic: expected a list of 1 to %u axes like [0]",
                       t->rank);
  if (bt_list_u32(b, lx, dynamic->first, dynamic->end, "dynamic", axes) == SIZE_MAX) return -1;
  for (size_t k = 0; k < dynamic->count; k++) {
    if (axes[k] >= t->rank || (t->dynamic_mask & (1u << axes[k])))
      return bt_line_err(b, dynamic->key->line, "dynamic: axis %u is %s", axes[k],
                         axes[k] >= t->rank ? "beyond the tensor's rank" : "given twice");
    t->dynamic_mask |= 1u << axes[k];
  }
  return 0;
}

int bt_stmt_tensor(builder *b, const refm_lexer *lx, ref_tensor_kind kind) {
  const refm_tok *t = lx->toks;
  int line = t[0].line;
  bgraph *g = bt_current_graph(b, &t[0]);
  if (!g) return -1;
  if (lx->ntoks < 4 || !bt_is_name(&t[1]) || t[2].kind != REFM_TK_WORD)
    return bt_line_err(b, line, "expected '%s NAME TYPE [dims] ...'", t[0].text);
  const type_row *ty = find_type(t[2].text);
  if (!ty)
    return bt_line_err(b, t[2].line, "unknown type '%s' (f32, f16, u8, i8, u16, i16, i32, u32)",
                       t[2].text);
  int64_t prev = bt_find_tensor(b, b->ng - 1, t[1].text);
  if (prev >= 0)
    return bt_line_err(b, t[1].line, "tensor '%s' already declared on line %d", t[1].text,
                       b->tensors[prev].line);

  ref_tensor rt;
  memset(&rt, 0, sizeof rt);
  size_t i = 3, first, end, count;
  if (bt_parse_list(b, lx, &i, &first, &end, &count)) return -1;
  if (count == 0 || count > REF_MAX_RANK)
    return bt_line_err(b, t[3].line, "dims need 1 to %d values, got %zu", REF_MAX_RANK, count);
  if (bt_list_u32(b, lx, first, end, "dims", rt.dims) == SIZE_MAX) return -1;
  rt.rank = (uint32_t)count;
  attrs as;
  if (bt_parse_attrs(b, lx, i, &as)) return -1;
  if (!(rt.name = bt_keep_str(b, t[1].text))) return bt_oom(b);
  if (tensor_quant(b, lx, &as, ty, &t[2], &rt)) return -1;

  /* check the description first as a non-static tensor, so the data is parsed against dims
   * and quantization already known to be sane, then again with the data in place */
  char msg[256];
  rt.kind = REF_TENSOR_NATIVE;
  uint64_t n = 0;
  if (refm_elements(rt.rank, rt.dims, &n) == 0 && n <= REFM_MAX_TENSOR_BYTES)
    rt.nbytes = (size_t)n * ref_dtype_size(rt.data_type);
  if (refm_check_tensor(&rt, msg, sizeof msg))
    return bt_line_err(b, line, "tensor '%s': %s", rt.name, msg);
  rt.kind = kind;
  if (tensor_data(b, lx, &as, &rt, line)) return -1;
  if (refm_check_tensor(&rt, msg, sizeof msg))
    return bt_line_err(b, line, "tensor '%s': %s", rt.name, msg);
  if (tensor_layout(b, lx, &as, &rt)) return -1;
  if (refm_check_tensor(&rt, msg, sizeof msg))
    return bt_line_err(b, line, "tensor '%s': %s", rt.name, msg);
  if (bt_no_unused(b, &as, "a tensor",
                   "scale, zero_point, axis, scales, zero_points, data, data_f32, data_file, "
                   "format, dynamic"))
    return -1;

  btensor *nt = bt_room_for(b->tensors, b->nt, &b->cap_t, sizeof *nt);
  if (!nt) return bt_oom(b);
  b->tensors = nt;
  if (b->nt == UINT32_MAX - 1) return bt_line_err(b, line, "too many tensors");
  rt.id = b->nt + 1; /* ids 1..N in declaration order, unique across graphs */
  uint32_t index = b->nt;
  b->tensors[b->nt++] = (btensor){rt, b->ng - 1, line};
  if (kind == REF_TENSOR_INPUT && bt_add_index(&g->inputs, &g->nin, &g->cap_in, index))
    return bt_oom(b);
  if (kind == REF_TENSOR_OUTPUT && bt_add_index(&g->outputs, &g->nout, &g->cap_out, index))
    return bt_oom(b);
  return 0;
}
