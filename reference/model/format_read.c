/*
 * format_read.c - ref_model_parse: the bounds-checked reader of the binary format
 * (docs/reference-format.md). Every offset and count is checked against the file size in 64-bit
 * arithmetic before it is used; semantic rules are those of validate.c. The model owns a copy
 * of the file, so the caller may free its buffer right after the call (QNN's rule for
 * contextCreateFromBinary), unless it is parsed in place (a persistent binary).
 */
#include <stdlib.h>
#include <string.h>

#include "refmodel_priv.h"

typedef struct parsed_storage {
  uint8_t *file;
  ref_tensor *tensors;
  ref_graph *graphs;
  ref_op *ops;       /* the ops of all graphs, graph after graph */
  uint32_t *indices; /* graph input and output lists, graph after graph */
} parsed_storage;

typedef struct id_index {
  uint32_t id, index;
} id_index;

typedef struct reader {
  const uint8_t *file;
  size_t len;
  uint32_t strings_off, strings_size;
  uint32_t lists_off, lists_size;
  uint32_t data_off, data_size;
  id_index *by_id; /* sorted by id */
  uint32_t num_ids;
  uint32_t version;  /* 1 or 2 */
  uint32_t op_size;  /* REFF_OP_SIZE or REFF_OP_SIZE_V2 */
  char *err;
  size_t errlen;
} reader;

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v); /* host is little-endian (see refmodel_priv.h) */
  return v;
}

static float rdf32(const uint8_t *p) {
  float v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Checks a region [off, off+size) of an area of `limit` bytes: the file itself (section NULL) or
 * a section whose offsets are relative to its start. */
static int need(reader *r, const char *what, const char *section, uint64_t off, uint64_t size,
                uint64_t limit, uint32_t align) {
  if (off > limit || size > limit - off) {
    if (!section)
      return refm_err(r->err, r->errlen, "truncated: %s needs %llu bytes at offset %llu, file has %llu",
                      what, (unsigned long long)size, (unsigned long long)off,
                      (unsigned long long)limit);
    return refm_err(r->err, r->errlen, "%s needs %llu bytes at offset %llu of the %s, which has %llu",
                    what, (unsigned long long)size, (unsigned long long)off, section,
                    (unsigned long long)limit);
  }
  /* section starts are themselves aligned, so relative alignment is absolute alignment */
  if (align && off % align != 0)
    return refm_err(r->err, r->errlen, "%s at offset %llu%s%s is not %u-byte aligned", what,
                    (unsigned long long)off, section ? " of the " : "", section ? section : "",
                    align);
  return 0;
}

static int str_at(reader *r, uint32_t ref, const char *what, const char **out) {
  if (ref >= r->strings_size)
    return refm_err(r->err, r->errlen, "%s: string offset %u outside the string table (%u bytes)",
                    what, ref, r->strings_size);
  /* the table's last byte is NUL (checked), so every string in it is terminated */
  *out = (const char *)r->file + r->strings_off + ref;
  return 0;
}

static int cmp_id(const void *a, const void *b) {
  uint32_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
  return (x > y) - (x < y);
}

static int resolve(reader *r, uint32_t id, uint32_t *index) {
  id_index key = {id, 0};
  const id_index *hit = id ? bsearch(&key, r->by_id, r->num_ids, sizeof key, cmp_id) : NULL;
  if (!hit) return -1;
  *index = hit->index;
  return 0;
}

static int read_header(reader *r, ref_model *m, uint32_t counts[2], uint32_t offs[2]) {
  const uint8_t *h = r->file;
  uint32_t file_size = rd32(h + REFF_H_FILE_SIZE);
  if (rd32(h + REFF_H_HEADER_SIZE) != REFF_HEADER_SIZE)
    return refm_err(r->err, r->errlen, "header size %u (format 1 has %u)",
                    rd32(h + REFF_H_HEADER_SIZE), REFF_HEADER_SIZE);
  if (file_size > r->len)
    return refm_err(r->err, r->errlen, "truncated: header says the file has %u bytes, got %zu",
                    file_size, r->len);
  if (file_size < r->len)
    return refm_err(r->err, r->errlen, "%zu bytes of trailing data after the %u-byte file",
                    r->len - file_size, file_size);
  if (rd32(h + REFF_H_FLAGS) & ~REFF_HFLAG_GRAPH_BLOB_V2)
    return refm_err(r->err, r->errlen, "unknown header flags 0x%x (known: 0x%x)",
                    rd32(h + REFF_H_FLAGS), REFF_HFLAG_GRAPH_BLOB_V2);

  r->strings_off = rd32(h + REFF_H_STRINGS_OFF);
  r->strings_size = rd32(h + REFF_H_STRINGS_SIZE);
  offs[0] = rd32(h + REFF_H_TENSORS_OFF);
  counts[0] = rd32(h + REFF_H_NUM_TENSORS);
  offs[1] = rd32(h + REFF_H_GRAPHS_OFF);
  counts[1] = rd32(h + REFF_H_NUM_GRAPHS);
  r->lists_off = rd32(h + REFF_H_LISTS_OFF);
  r->lists_size = rd32(h + REFF_H_LISTS_SIZE);
  r->data_off = rd32(h + REFF_H_DATA_OFF);
  r->data_size = rd32(h + REFF_H_DATA_SIZE);
  if (need(r, "string table", NULL, r->strings_off, r->strings_size, r->len, 0) ||
      need(r, "tensor table", NULL, offs[0], (uint64_t)counts[0] * REFF_TENSOR_SIZE, r->len,
           REFF_ALIGN) ||
      need(r, "graph table", NULL, offs[1], (uint64_t)counts[1] * REFF_GRAPH_SIZE, r->len,
           REFF_ALIGN) ||
      need(r, "list section", NULL, r->lists_off, r->lists_size, r->len, REFF_ALIGN) ||
      need(r, "data section", NULL, r->data_off, r->data_size, r->len, REFF_ALIGN))
    return -1;
  if (r->strings_size == 0 || r->file[r->strings_off + r->strings_size - 1] != '\0')
    return refm_err(r->err, r->errlen, "string table does not end with a NUL byte");

  ref_model_meta *mt = &m->meta;
  mt->binary_info_version = rd32(h + REFF_H_BINARY_INFO);
  mt->graph_info_version = rd32(h + REFF_H_GRAPH_INFO);
  mt->tensor_version = rd32(h + REFF_H_TENSOR_VERSION);
  mt->backend_id = rd32(h + REFF_H_BACKEND_ID);
  for (int i = 0; i < 3; i++) {
    mt->core_api[i] = rd32(h + REFF_H_CORE_API + 4 * i);
    mt->backend_api[i] = rd32(h + REFF_H_BACKEND_API + 4 * i);
    mt->context_blob_version[i] = rd32(h + REFF_H_BLOB_VERSION + 4 * i);
  }
  mt->soc_model = rd32(h + REFF_H_SOC_MODEL);
  mt->dsp_arch = rd32(h + REFF_H_DSP_ARCH);
  mt->vtcm_blob = rd32(h + REFF_H_VTCM_BLOB);
  mt->graph_blob_version = rd32(h + REFF_H_FLAGS) & REFF_HFLAG_GRAPH_BLOB_V2 ? 2 : 1;
  if (str_at(r, rd32(h + REFF_H_BUILD_ID), "build id", &mt->build_id) ||
      str_at(r, rd32(h + REFF_H_SOC_VERSION), "soc version", &mt->soc_version))
    return -1;
  return refm_check_meta(mt, r->err, r->errlen);
}

static int read_tensor(reader *r, const uint8_t *rec, ref_tensor *t) {
  const uint8_t *data = r->file + r->data_off;
  t->id = rd32(rec + REFF_T_ID);
  if (str_at(r, rd32(rec + REFF_T_NAME), "name", &t->name)) return -1;
  uint32_t kind = rd32(rec + REFF_T_KIND), quant = rd32(rec + REFF_T_QUANT);
  if (kind > REF_TENSOR_STATIC) return refm_err(r->err, r->errlen, "unknown tensor kind %u", kind);
  if (quant > REF_QUANT_AXIS_SCALE_OFFSET)
    return refm_err(r->err, r->errlen, "unknown quantization encoding %u", quant);
  t->kind = (ref_tensor_kind)kind;
  t->quant = (ref_quant_encoding)quant;
  t->data_type = rd32(rec + REFF_T_DATA_TYPE);
  t->rank = rd32(rec + REFF_T_RANK);
  if (t->rank > REF_MAX_RANK)
    return refm_err(r->err, r->errlen, "rank %u > %u", t->rank, (unsigned)REF_MAX_RANK);
  for (uint32_t i = 0; i < REF_MAX_RANK; i++) {
    uint32_t d = rd32(rec + REFF_T_DIMS + 4 * i);
    if (i >= t->rank && d != 0)
      return refm_err(r->err, r->errlen, "dimension %u beyond rank %u is %u (must be 0)", i,
                      t->rank, d);
    t->dims[i] = d;
  }
  t->scale = rdf32(rec + REFF_T_SCALE);
  t->offset = (int32_t)rd32(rec + REFF_T_OFFSET);
  t->axis = (int32_t)rd32(rec + REFF_T_AXIS);
  t->num_axis = rd32(rec + REFF_T_NUM_AXIS);
  uint32_t axis_off = rd32(rec + REFF_T_AXIS_PARAMS);
  uint32_t data_off = rd32(rec + REFF_T_DATA_OFF), data_size = rd32(rec + REFF_T_DATA_SIZE);
  uint32_t flags = rd32(rec + REFF_T_FLAGS);
  if (flags & REFF_T_FLAGS_UNUSED)
    return refm_err(r->err, r->errlen, "flags 0x%x: unused bits set", flags);
  t->data_format = REFF_T_FLAGS_FORMAT(flags);
  t->dynamic_mask = REFF_T_FLAGS_DYNAMIC(flags);

  /* fields an encoding does not use must be 0, so a corrupted record is caught early */
  if (t->quant != REF_QUANT_SCALE_OFFSET && (rd32(rec + REFF_T_SCALE) != 0 || t->offset != 0))
    return refm_err(r->err, r->errlen, "scale/offset set without per-tensor quantization");
  if (t->quant != REF_QUANT_AXIS_SCALE_OFFSET) {
    if (t->axis != 0 || t->num_axis != 0 || axis_off != 0)
      return refm_err(r->err, r->errlen, "axis parameters set without per-axis quantization");
  } else {
    if (need(r, "per-axis parameters", "data section", axis_off, (uint64_t)t->num_axis * 8,
             r->data_size, REFF_ALIGN))
      return -1;
    t->scales = (const float *)(const void *)(data + axis_off);
    t->offsets = (const int32_t *)(const void *)(data + axis_off + (size_t)t->num_axis * 4);
  }

  if (t->kind == REF_TENSOR_STATIC) {
    if (need(r, "static data", "data section", data_off, data_size, r->data_size, REFF_ALIGN))
      return -1;
    t->data = data + data_off;
    t->nbytes = data_size;
  } else {
    if (data_off != 0 || data_size != 0)
      return refm_err(r->err, r->errlen, "non-static tensor with a data range");
    uint64_t n = 0;
    /* an overflowing or absurd size is reported by refm_check_tensor from the dims */
    if (refm_elements(t->rank, t->dims, &n) == 0 && n <= REFM_MAX_TENSOR_BYTES)
      t->nbytes = (size_t)n * ref_dtype_size(t->data_type);
  }
  return refm_check_tensor(t, r->err, r->errlen);
}

static int read_tensors(reader *r, uint32_t off, uint32_t n, ref_tensor *tensors) {
  for (uint32_t i = 0; i < n; i++) {
    ref_tensor *t = &tensors[i];
    if (read_tensor(r, r->file + off + (size_t)i * REFF_TENSOR_SIZE, t)) {
      refm_err_prefix(r->err, r->errlen, "tensor %u ('%s', id %u): ", i, t->name ? t->name : "",
                      t->id);
      return -1;
    }
  }
  r->by_id = malloc(((size_t)n + 1) * sizeof *r->by_id);
  if (!r->by_id) return refm_err(r->err, r->errlen, "out of memory");
  for (uint32_t i = 0; i < n; i++) r->by_id[i] = (id_index){tensors[i].id, i};
  qsort(r->by_id, n, sizeof *r->by_id, cmp_id);
  r->num_ids = n;
  for (uint32_t i = 0; i < n; i++) {
    if (r->by_id[i].id == 0)
      return refm_err(r->err, r->errlen, "tensor '%s' has id 0", tensors[r->by_id[i].index].name);
    if (i && r->by_id[i].id == r->by_id[i - 1].id)
      return refm_err(r->err, r->errlen, "duplicate tensor id %u", r->by_id[i].id);
  }
  return 0;
}

/* Reads `count` tensor ids at lists-section offset `off` into indices. */
static int read_id_list(reader *r, const char *graph, const char *what, uint32_t off,
                        uint32_t count, uint32_t *indices) {
  const uint8_t *p = r->file + r->lists_off + off;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t id = rd32(p + 4 * (size_t)i);
    if (resolve(r, id, &indices[i]))
      return refm_err(r->err, r->errlen, "graph '%s': %s %u has tensor id %u, which is not defined",
                      graph, what, i, id);
  }
  return 0;
}

/* The parameter word and values of a version 2 record, where the op type gives them meaning;
 * the rest must be 0 (validate.c then checks the values against the shapes). */
static int read_op_v2(reader *r, const uint8_t *rec, ref_op *op) {
  uint32_t param = rd32(rec + REFF_O_PARAM), v[8];
  for (int i = 0; i < 8; i++) v[i] = rd32(rec + REFF_O_VALUES + 4 * i);
  unsigned used = 0; /* values used */
  switch (op->type) {
  case REF_OP_CONCAT:
    op->axis = param;
    param = 0;
    break;
  case REF_OP_POOL_MAX_2D:
    op->ceil_mode = param;
    param = 0;
    op->filter[0] = v[0], op->filter[1] = v[1];
    used = 2;
    break;
  case REF_OP_RESIZE_NEAREST:
    op->align_corners = (param & REFF_RESIZE_ALIGN_CORNERS) != 0;
    op->half_pixel_centers = (param & REFF_RESIZE_HALF_PIXEL) != 0;
    param &= ~(REFF_RESIZE_ALIGN_CORNERS | REFF_RESIZE_HALF_PIXEL);
    break;
  case REF_OP_TRANSPOSE:
    memcpy(op->perm, v, sizeof op->perm);
    used = 8; /* entries past the rank are checked to be 0 by validate.c */
    break;
  default:
    break;
  }
  if (param) return refm_err(r->err, r->errlen, "parameter word 0x%x is not used by this op", param);
  for (unsigned i = used; i < 8; i++)
    if (v[i]) return refm_err(r->err, r->errlen, "value %u is not used by this op and must be 0", i);
  return 0;
}

static int read_op(reader *r, const uint8_t *rec, ref_op *op) {
  uint32_t type = rd32(rec + REFF_O_TYPE);
  if (!refm_op_name(type)) return refm_err(r->err, r->errlen, "unknown op type %u", type);
  op->type = (ref_op_type)type;
  if (str_at(r, rd32(rec + REFF_O_NAME), "op name", &op->name)) return -1;
  op->num_inputs = rd32(rec + REFF_O_NUM_INPUTS);
  op->num_outputs = rd32(rec + REFF_O_NUM_OUTPUTS);
  if (op->num_inputs > REF_MAX_OP_IO || op->num_outputs > REF_MAX_OP_IO)
    return refm_err(r->err, r->errlen, "%u inputs / %u outputs (at most %u each)", op->num_inputs,
                    op->num_outputs, (unsigned)REF_MAX_OP_IO);
  for (uint32_t i = 0; i < REF_MAX_OP_IO; i++) {
    uint32_t in_id = rd32(rec + REFF_O_INPUTS + 4 * i), out_id = rd32(rec + REFF_O_OUTPUTS + 4 * i);
    if (i >= op->num_inputs ? in_id != 0 : resolve(r, in_id, &op->inputs[i]) != 0)
      return refm_err(r->err, r->errlen, "input slot %u: tensor id %u %s", i, in_id,
                      i >= op->num_inputs ? "in an unused slot" : "is not defined");
    if (i >= op->num_outputs ? out_id != 0 : resolve(r, out_id, &op->outputs[i]) != 0)
      return refm_err(r->err, r->errlen, "output slot %u: tensor id %u %s", i, out_id,
                      i >= op->num_outputs ? "in an unused slot" : "is not defined");
  }
  for (int i = 0; i < 2; i++) op->stride[i] = rd32(rec + REFF_O_STRIDE + 4 * i);
  for (int i = 0; i < 4; i++) op->pad[i] = rd32(rec + REFF_O_PAD + 4 * i);
  op->beta = rdf32(rec + REFF_O_BETA);
  if (r->version == REFF_VERSION) {
    if (type >= REF_OP_FIRST_V2)
      return refm_err(r->err, r->errlen, "op type %u (%s) needs format version 2", type,
                      refm_op_name(type));
    if (rd32(rec + REFF_O_RESERVED) != 0)
      return refm_err(r->err, r->errlen, "reserved field is not 0");
    return 0;
  }
  return read_op_v2(r, rec, op);
}

/* Graph records are read in two passes: the first checks every range and sums the list and op
 * counts, so that the arrays are allocated once and cannot exceed the list section (ranges of
 * different graphs may not be made to overlap to inflate the allocation). */
static int read_graphs(reader *r, uint32_t off, uint32_t n, ref_model *m, parsed_storage *st) {
  uint64_t total_ids = 0, total_ops = 0;
  for (uint32_t g = 0; g < n; g++) {
    const uint8_t *rec = r->file + off + (size_t)g * REFF_GRAPH_SIZE;
    ref_graph *gr = &st->graphs[g];
    if (str_at(r, rd32(rec + REFF_G_NAME), "graph name", &gr->name)) return -1;
    gr->num_inputs = rd32(rec + REFF_G_NUM_INPUTS);
    gr->num_outputs = rd32(rec + REFF_G_NUM_OUTPUTS);
    gr->num_ops = rd32(rec + REFF_G_NUM_OPS);
    if (need(r, "graph input list", "list section", rd32(rec + REFF_G_INPUTS),
             (uint64_t)gr->num_inputs * 4, r->lists_size, 4) ||
        need(r, "graph output list", "list section", rd32(rec + REFF_G_OUTPUTS),
             (uint64_t)gr->num_outputs * 4, r->lists_size, 4) ||
        need(r, "op list", "list section", rd32(rec + REFF_G_OPS), (uint64_t)gr->num_ops * r->op_size,
             r->lists_size, 4)) {
      refm_err_prefix(r->err, r->errlen, "graph '%s': ", gr->name);
      return -1;
    }
    gr->flags = rd32(rec + REFF_G_FLAGS);
    if (gr->flags & ~REF_GRAPH_FLAGS_KNOWN)
      return refm_err(r->err, r->errlen, "graph '%s': unknown flags 0x%x (known: 0x%x)", gr->name,
                      gr->flags & ~REF_GRAPH_FLAGS_KNOWN, REF_GRAPH_FLAGS_KNOWN);
    total_ids += (uint64_t)gr->num_inputs + gr->num_outputs;
    total_ops += gr->num_ops;
  }
  if (total_ids * 4 + total_ops * r->op_size > r->lists_size)
    return refm_err(r->err, r->errlen, "graph lists overlap: %llu ids and %llu ops need more than "
                    "the %u-byte list section", (unsigned long long)total_ids,
                    (unsigned long long)total_ops, r->lists_size);
  st->indices = malloc((size_t)(total_ids + 1) * sizeof *st->indices);
  st->ops = calloc((size_t)(total_ops + 1), sizeof *st->ops);
  if (!st->indices || !st->ops) return refm_err(r->err, r->errlen, "out of memory");

  uint32_t *next_index = st->indices;
  ref_op *next_op = st->ops;
  for (uint32_t g = 0; g < n; g++) {
    const uint8_t *rec = r->file + off + (size_t)g * REFF_GRAPH_SIZE;
    ref_graph *gr = &st->graphs[g];
    gr->inputs = next_index;
    next_index += gr->num_inputs;
    gr->outputs = next_index;
    next_index += gr->num_outputs;
    gr->ops = next_op;
    next_op += gr->num_ops;
    if (read_id_list(r, gr->name, "input", rd32(rec + REFF_G_INPUTS), gr->num_inputs, gr->inputs) ||
        read_id_list(r, gr->name, "output", rd32(rec + REFF_G_OUTPUTS), gr->num_outputs,
                     gr->outputs))
      return -1;
    const uint8_t *ops = r->file + r->lists_off + rd32(rec + REFF_G_OPS);
    for (uint32_t o = 0; o < gr->num_ops; o++) {
      if (read_op(r, ops + (size_t)o * r->op_size, &gr->ops[o])) {
        refm_err_prefix(r->err, r->errlen, "graph '%s' op %u: ", gr->name, o);
        return -1;
      }
    }
  }
  m->graphs = st->graphs;
  m->num_graphs = n;
  uint32_t bg, bo;
  if (refm_check_unique(m, r->err, r->errlen)) return -1;
  return refm_check_graphs(m, &bg, &bo, r->err, r->errlen);
}

static void storage_free(parsed_storage *st) {
  if (!st) return;
  free(st->file);
  free(st->tensors);
  free(st->graphs);
  free(st->ops);
  free(st->indices);
  free(st);
}

static int parse(const void *buf, size_t len, int copy, ref_model **out, char *err,
                 size_t errlen) {
  if (!out) return refm_err(err, errlen, "no output pointer");
  *out = NULL;
  if (!buf) return refm_err(err, errlen, "no buffer");
  if (len < REFF_MAGIC_LEN)
    return refm_err(err, errlen, "truncated: magic needs %u bytes at offset 0, file has %zu",
                    REFF_MAGIC_LEN, len);
  if (!ref_model_has_magic(buf, len))
    return refm_err(err, errlen, "bad magic (not a reference model: expected \"%s\")", REFF_MAGIC);
  if (len < REFF_H_VERSION + 4)
    return refm_err(err, errlen, "truncated: version needs 4 bytes at offset %u, file has %zu",
                    REFF_H_VERSION, len);
  uint32_t version = rd32((const uint8_t *)buf + REFF_H_VERSION);
  if (version != REFF_VERSION && version != REFF_VERSION_2)
    return refm_err(err, errlen, "unknown format version %u (supported: %u, %u)", version,
                    REFF_VERSION, REFF_VERSION_2);
  if (len < REFF_HEADER_SIZE)
    return refm_err(err, errlen, "truncated: header needs %u bytes at offset 0, file has %zu",
                    REFF_HEADER_SIZE, len);
  if (len > UINT32_MAX) return refm_err(err, errlen, "file of %zu bytes is too large", len);

  ref_model *m = calloc(1, sizeof *m);
  parsed_storage *st = calloc(1, sizeof *st);
  reader r = {.len = len, .err = err, .errlen = errlen, .version = version,
              .op_size = version == REFF_VERSION ? REFF_OP_SIZE : REFF_OP_SIZE_V2};
  uint32_t counts[2] = {0, 0}, offs[2] = {0, 0};
  int rc = -1;
  if (!m || !st || (copy && !(st->file = malloc(len)))) {
    refm_err(err, errlen, "out of memory");
    goto out;
  }
  if (copy) memcpy(st->file, buf, len);
  r.file = copy ? st->file : buf;
  if (read_header(&r, m, counts, offs)) goto out;
  st->tensors = calloc((size_t)counts[0] + 1, sizeof *st->tensors);
  st->graphs = calloc((size_t)counts[1] + 1, sizeof *st->graphs);
  if (!st->tensors || !st->graphs) {
    refm_err(err, errlen, "out of memory");
    goto out;
  }
  m->tensors = st->tensors;
  m->num_tensors = counts[0];
  if (read_tensors(&r, offs[0], counts[0], st->tensors)) goto out;
  if (read_graphs(&r, offs[1], counts[1], m, st)) goto out;
  m->storage_ = st;
  *out = m;
  rc = 0;
out:
  free(r.by_id);
  if (rc) {
    storage_free(st);
    free(m);
  }
  return rc;
}

int ref_model_parse(const void *buf, size_t len, ref_model **out, char *err, size_t errlen) {
  return parse(buf, len, 1, out, err, errlen);
}

int ref_model_parse_in_place(const void *buf, size_t len, ref_model **out, char *err,
                             size_t errlen) {
  /* sections are 8-byte aligned within the file and read as typed arrays where they lie */
  if ((uintptr_t)buf % REFF_ALIGN != 0) {
    if (out) *out = NULL;
    return refm_err(err, errlen, "the buffer at %p is not %u-byte aligned (read in place)", buf,
                    REFF_ALIGN);
  }
  return parse(buf, len, 0, out, err, errlen);
}

void ref_model_free(ref_model *m) {
  if (!m) return;
  storage_free(m->storage_);
  free(m);
}
