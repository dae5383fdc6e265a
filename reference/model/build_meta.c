/*
 * build_meta.c - the text builder's meta statement (build_text.h): the context's header fields
 * (format versions, API versions, SoC, VTCM), their defaults, each key once.
 */
#include <string.h>

#include "build_text.h"
#include "qnn/qnn_abi.h"

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
    if (bt_parse_u32(part[i], &v[i])) return -1;
  }
  return 0;
}

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

void bt_meta_defaults(builder *b) {
  b->vtcm_bytes = REF_DEFAULT_VTCM_BYTES;
  b->meta = (ref_model_meta){.binary_info_version = 3,
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
  if (bt_scalar(b, a)) return -1;
  const char *v = a->scalar->text;
  if (key == META_VTCM_BYTES || key == META_VTCM_BLOB_UNIT) b->vtcm_line = a->key->line;
  if (key == META_VTCM_BLOB_UNIT) {
    if (strcmp(v, "bytes") != 0 && strcmp(v, "mb") != 0)
      return bt_line_err(b, a->scalar->line, "vtcm_blob_unit: '%s' is not bytes or mb", v);
    b->vtcm_mb_form = v[0] == 'm';
    return 0;
  }
  if (key == META_BUILD_ID || key == META_SOC_VERSION) {
    char *s = bt_keep_str(b, v);
    if (!s) return bt_oom(b);
    *(key == META_BUILD_ID ? &m->build_id : &m->soc_version) = s;
    return 0;
  }
  if (key >= META_CORE_API && key <= META_CONTEXT_BLOB) {
    if (parse_version(v, u32_fields[key]))
      return bt_line_err(b, a->scalar->line, "%s: '%s' is not a version like 2.32.0",
                         a->key->text, v);
    return 0;
  }
  if (bt_attr_u32(b, a, u32_fields[key])) return -1;
  if (key == META_GRAPH_BLOB && m->graph_blob_version != 1 && m->graph_blob_version != 2)
    return bt_line_err(b, a->scalar->line, "graph_blob: %u is not a graph blob info version (1 or "
                       "2)", m->graph_blob_version);
  /* A small figure is surely meant as MB, and readers would take it so: say what is wanted. */
  if (key == META_VTCM_BYTES && b->vtcm_bytes && b->vtcm_bytes < REF_MIB)
    return bt_line_err(b, a->scalar->line, "vtcm_bytes: %u is below 1 MiB (1048576); give the "
                       "VTCM in bytes (2097152 for 2 MB), or 0 for unknown", b->vtcm_bytes);
  return 0;
}

/* The blob info's value from vtcm_bytes and vtcm_blob_unit, which may come in any order. */
int bt_resolve_vtcm(builder *b) {
  b->meta.vtcm_blob = b->vtcm_bytes;
  if (!b->vtcm_mb_form) return 0;
  if (b->vtcm_bytes % REF_MIB)
    return bt_line_err(b, b->vtcm_line, "vtcm_blob_unit=mb writes whole MB, but vtcm_bytes %u is "
                       "not a multiple of 1048576", b->vtcm_bytes);
  b->meta.vtcm_blob = b->vtcm_bytes / REF_MIB;
  return 0;
}

int bt_stmt_meta(builder *b, const refm_lexer *lx) {
  attrs as;
  if (bt_parse_attrs(b, lx, 1, &as)) return -1;
  for (size_t k = 0; k < as.n; k++) {
    size_t key = 0;
    while (key < NUM_META_KEYS && strcmp(k_meta_keys[key], as.v[k].key->text) != 0) key++;
    if (key == NUM_META_KEYS)
      return bt_line_err(b, as.v[k].key->line, "unknown meta key '%s' (binary_info, graph_info, "
                         "tensor, backend_id, build_id, core_api, backend_api, context_blob, "
                         "soc_version, soc_model, dsp_arch, vtcm_bytes, vtcm_blob_unit, "
                         "graph_blob)", as.v[k].key->text);
    if (b->meta_seen & (1u << key))
      return bt_line_err(b, as.v[k].key->line, "meta '%s' given twice", as.v[k].key->text);
    b->meta_seen |= 1u << key;
    if (meta_value(b, key, &as.v[k])) return -1;
  }
  char msg[256];
  if (refm_check_meta(&b->meta, msg, sizeof msg))
    return bt_line_err(b, lx->toks[0].line, "%s", msg);
  return 0;
}
