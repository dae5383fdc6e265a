/*
 * format_write.c - ref_model_write: serializes an in-memory model into the binary format
 * (docs/reference-format.md). The model is checked with the parser's rules first, so every file
 * written here parses back, and parsing then writing a file written here reproduces its bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "refmodel_priv.h"

/* A growable byte buffer; `failed` latches the first allocation or size failure so the
 * serializer can write unconditionally and check once. */
typedef struct bytes {
  uint8_t *p;
  size_t len, cap;
  int failed;
} bytes;

static size_t bytes_reserve(bytes *b, size_t n) {
  if (b->failed) return SIZE_MAX;
  if (n > UINT32_MAX - b->len) {
    b->failed = 1;
    return SIZE_MAX;
  }
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) {
      b->failed = 1;
      return SIZE_MAX;
    }
    b->p = np;
    b->cap = cap;
  }
  size_t at = b->len;
  memset(b->p + at, 0, n);
  b->len += n;
  return at;
}

static void put_bytes(bytes *b, const void *src, size_t n) {
  size_t at = bytes_reserve(b, n);
  if (at != SIZE_MAX && n) memcpy(b->p + at, src, n);
}

static void align_to(bytes *b, size_t a) {
  if (b->len % a) bytes_reserve(b, a - b->len % a);
}

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof v); }
static void wrf32(uint8_t *p, float v) { memcpy(p, &v, sizeof v); }

/* String reference for s; the table starts with the empty string at offset 0. */
static uint32_t put_string(bytes *strings, const char *s) {
  if (!s || !*s) return 0;
  size_t at = strings->len;
  put_bytes(strings, s, strlen(s) + 1);
  return (uint32_t)at;
}

static void put_tensor(bytes *tab, bytes *strings, bytes *data, const ref_tensor *t) {
  size_t at = bytes_reserve(tab, REFF_TENSOR_SIZE);
  uint32_t name = put_string(strings, t->name);
  uint32_t axis_off = 0, data_off = 0;
  if (t->quant == REF_QUANT_AXIS_SCALE_OFFSET) {
    align_to(data, REFF_ALIGN);
    axis_off = (uint32_t)data->len;
    put_bytes(data, t->scales, (size_t)t->num_axis * 4);
    put_bytes(data, t->offsets, (size_t)t->num_axis * 4);
  }
  if (t->kind == REF_TENSOR_STATIC) {
    align_to(data, REFF_ALIGN);
    data_off = (uint32_t)data->len;
    put_bytes(data, t->data, t->nbytes);
  }
  if (at == SIZE_MAX) return;
  uint8_t *r = tab->p + at;
  wr32(r + REFF_T_ID, t->id);
  wr32(r + REFF_T_NAME, name);
  wr32(r + REFF_T_KIND, (uint32_t)t->kind);
  wr32(r + REFF_T_DATA_TYPE, t->data_type);
  wr32(r + REFF_T_RANK, t->rank);
  for (uint32_t i = 0; i < t->rank; i++) wr32(r + REFF_T_DIMS + 4 * i, t->dims[i]);
  wr32(r + REFF_T_FLAGS, REFF_T_FLAGS_MAKE(t->data_format, t->dynamic_mask));
  wr32(r + REFF_T_QUANT, (uint32_t)t->quant);
  if (t->quant == REF_QUANT_SCALE_OFFSET) {
    wrf32(r + REFF_T_SCALE, t->scale);
    wr32(r + REFF_T_OFFSET, (uint32_t)t->offset);
  } else if (t->quant == REF_QUANT_AXIS_SCALE_OFFSET) {
    wr32(r + REFF_T_AXIS, (uint32_t)t->axis);
    wr32(r + REFF_T_NUM_AXIS, t->num_axis);
    wr32(r + REFF_T_AXIS_PARAMS, axis_off);
  }
  if (t->kind == REF_TENSOR_STATIC) {
    wr32(r + REFF_T_DATA_OFF, data_off);
    wr32(r + REFF_T_DATA_SIZE, (uint32_t)t->nbytes);
  }
}

/* Version 2's parameter word and values (format_read.c's read_op_v2, the other way). */
static void put_op_v2(uint8_t *r, const ref_op *op) {
  uint32_t param = 0;
  if (op->type == REF_OP_CONCAT) param = op->axis;
  if (op->type == REF_OP_POOL_MAX_2D) {
    param = op->ceil_mode;
    wr32(r + REFF_O_VALUES, op->filter[0]);
    wr32(r + REFF_O_VALUES + 4, op->filter[1]);
  }
  if (op->type == REF_OP_RESIZE_NEAREST)
    param = (op->align_corners ? REFF_RESIZE_ALIGN_CORNERS : 0) |
            (op->half_pixel_centers ? REFF_RESIZE_HALF_PIXEL : 0);
  if (op->type == REF_OP_TRANSPOSE)
    for (int i = 0; i < REF_MAX_RANK; i++) wr32(r + REFF_O_VALUES + 4 * i, op->perm[i]);
  wr32(r + REFF_O_PARAM, param);
}

/* Version 2 only when an op needs it, so version 1 models keep their bytes. */
static uint32_t format_version(const ref_model *m) {
  for (uint32_t g = 0; g < m->num_graphs; g++)
    for (uint32_t o = 0; o < m->graphs[g].num_ops; o++)
      if (m->graphs[g].ops[o].type >= REF_OP_FIRST_V2) return REFF_VERSION_2;
  return REFF_VERSION;
}

static void put_op(bytes *lists, bytes *strings, const ref_model *m, const ref_op *op,
                   uint32_t version) {
  uint32_t name = put_string(strings, op->name);
  size_t at = bytes_reserve(lists, version == REFF_VERSION ? REFF_OP_SIZE : REFF_OP_SIZE_V2);
  if (at == SIZE_MAX) return;
  uint8_t *r = lists->p + at;
  wr32(r + REFF_O_TYPE, (uint32_t)op->type);
  wr32(r + REFF_O_NAME, name);
  wr32(r + REFF_O_NUM_INPUTS, op->num_inputs);
  for (uint32_t i = 0; i < op->num_inputs; i++)
    wr32(r + REFF_O_INPUTS + 4 * i, m->tensors[op->inputs[i]].id);
  wr32(r + REFF_O_NUM_OUTPUTS, op->num_outputs);
  for (uint32_t i = 0; i < op->num_outputs; i++)
    wr32(r + REFF_O_OUTPUTS + 4 * i, m->tensors[op->outputs[i]].id);
  for (int i = 0; i < 2; i++) wr32(r + REFF_O_STRIDE + 4 * i, op->stride[i]);
  for (int i = 0; i < 4; i++) wr32(r + REFF_O_PAD + 4 * i, op->pad[i]);
  wrf32(r + REFF_O_BETA, op->beta);
  if (version != REFF_VERSION) put_op_v2(r, op);
}

static uint32_t put_id_list(bytes *lists, const ref_model *m, const uint32_t *idx, uint32_t n) {
  uint32_t at = (uint32_t)lists->len;
  for (uint32_t i = 0; i < n; i++) {
    uint8_t v[4];
    wr32(v, m->tensors[idx[i]].id);
    put_bytes(lists, v, 4);
  }
  return at;
}

static void put_graph(bytes *tab, bytes *strings, bytes *lists, const ref_model *m,
                      const ref_graph *g, uint32_t version) {
  uint32_t name = put_string(strings, g->name);
  uint32_t in_off = put_id_list(lists, m, g->inputs, g->num_inputs);
  uint32_t out_off = put_id_list(lists, m, g->outputs, g->num_outputs);
  uint32_t ops_off = (uint32_t)lists->len;
  for (uint32_t o = 0; o < g->num_ops; o++) put_op(lists, strings, m, &g->ops[o], version);
  size_t at = bytes_reserve(tab, REFF_GRAPH_SIZE);
  if (at == SIZE_MAX) return;
  uint8_t *r = tab->p + at;
  wr32(r + REFF_G_NAME, name);
  wr32(r + REFF_G_NUM_INPUTS, g->num_inputs);
  wr32(r + REFF_G_INPUTS, in_off);
  wr32(r + REFF_G_NUM_OUTPUTS, g->num_outputs);
  wr32(r + REFF_G_OUTPUTS, out_off);
  wr32(r + REFF_G_NUM_OPS, g->num_ops);
  wr32(r + REFF_G_OPS, ops_off);
  wr32(r + REFF_G_FLAGS, g->flags);
}

/* Appends a section to the file (8-byte aligned) and records its offset and size. */
static void put_section(bytes *file, const bytes *sec, uint32_t *off, uint32_t *size) {
  align_to(file, REFF_ALIGN);
  *off = (uint32_t)file->len;
  *size = (uint32_t)sec->len;
  put_bytes(file, sec->p, sec->len);
}

int ref_model_write(const ref_model *m, void **out, size_t *out_len, char *err, size_t errlen) {
  if (!m || !out || !out_len) return refm_err(err, errlen, "invalid argument");
  *out = NULL;
  *out_len = 0;
  if (refm_check_model(m, err, errlen)) return -1;

  bytes file = {0}, strings = {0}, tensors = {0}, graphs = {0}, lists = {0}, data = {0};
  uint32_t version = format_version(m);
  const ref_model_meta *mt = &m->meta;
  bytes_reserve(&strings, 1); /* offset 0: the empty string */
  uint32_t build_id = put_string(&strings, mt->build_id);
  uint32_t soc_version = put_string(&strings, mt->soc_version);
  for (uint32_t i = 0; i < m->num_tensors; i++)
    put_tensor(&tensors, &strings, &data, &m->tensors[i]);
  for (uint32_t g = 0; g < m->num_graphs; g++)
    put_graph(&graphs, &strings, &lists, m, &m->graphs[g], version);

  uint32_t sec[5][2] = {{0}};
  size_t hdr = bytes_reserve(&file, REFF_HEADER_SIZE);
  put_section(&file, &strings, &sec[0][0], &sec[0][1]);
  put_section(&file, &tensors, &sec[1][0], &sec[1][1]);
  put_section(&file, &graphs, &sec[2][0], &sec[2][1]);
  put_section(&file, &lists, &sec[3][0], &sec[3][1]);
  put_section(&file, &data, &sec[4][0], &sec[4][1]);

  int failed = file.failed || strings.failed || tensors.failed || graphs.failed || lists.failed ||
               data.failed;
  if (!failed && hdr != SIZE_MAX) {
    uint8_t *h = file.p;
    memcpy(h + REFF_H_MAGIC, REFF_MAGIC, REFF_MAGIC_LEN);
    wr32(h + REFF_H_VERSION, version);
    wr32(h + REFF_H_HEADER_SIZE, REFF_HEADER_SIZE);
    wr32(h + REFF_H_FILE_SIZE, (uint32_t)file.len);
    wr32(h + REFF_H_BINARY_INFO, mt->binary_info_version);
    wr32(h + REFF_H_GRAPH_INFO, mt->graph_info_version);
    wr32(h + REFF_H_TENSOR_VERSION, mt->tensor_version);
    wr32(h + REFF_H_BACKEND_ID, mt->backend_id);
    for (int i = 0; i < 3; i++) {
      wr32(h + REFF_H_CORE_API + 4 * i, mt->core_api[i]);
      wr32(h + REFF_H_BACKEND_API + 4 * i, mt->backend_api[i]);
      wr32(h + REFF_H_BLOB_VERSION + 4 * i, mt->context_blob_version[i]);
    }
    wr32(h + REFF_H_SOC_MODEL, mt->soc_model);
    wr32(h + REFF_H_DSP_ARCH, mt->dsp_arch);
    wr32(h + REFF_H_VTCM_BLOB, mt->vtcm_blob);
    wr32(h + REFF_H_FLAGS, mt->graph_blob_version == 2 ? REFF_HFLAG_GRAPH_BLOB_V2 : 0);
    wr32(h + REFF_H_BUILD_ID, build_id);
    wr32(h + REFF_H_SOC_VERSION, soc_version);
    wr32(h + REFF_H_STRINGS_OFF, sec[0][0]);
    wr32(h + REFF_H_STRINGS_SIZE, sec[0][1]);
    wr32(h + REFF_H_TENSORS_OFF, sec[1][0]);
    wr32(h + REFF_H_NUM_TENSORS, m->num_tensors);
    wr32(h + REFF_H_GRAPHS_OFF, sec[2][0]);
    wr32(h + REFF_H_NUM_GRAPHS, m->num_graphs);
    wr32(h + REFF_H_LISTS_OFF, sec[3][0]);
    wr32(h + REFF_H_LISTS_SIZE, sec[3][1]);
    wr32(h + REFF_H_DATA_OFF, sec[4][0]);
    wr32(h + REFF_H_DATA_SIZE, sec[4][1]);
  }
  free(strings.p);
  free(tensors.p);
  free(graphs.p);
  free(lists.p);
  free(data.p);
  if (failed || hdr == SIZE_MAX) {
    free(file.p);
    return refm_err(err, errlen, "out of memory or model larger than 4 GiB");
  }
  *out = file.p;
  *out_len = file.len;
  return 0;
}
