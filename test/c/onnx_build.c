/* onnx_build.c - see onnx_build.h. Field numbers are ONNX's (onnx/onnx.proto). */
#include "onnx_build.h"

#include <stdlib.h>
#include <string.h>

static void put(pbw *w, const void *d, size_t n) {
  if (w->len + n > w->cap) {
    w->cap = (w->len + n) * 2 + 64;
    w->p = realloc(w->p, w->cap);
    if (!w->p) abort();
  }
  if (n) memcpy(w->p + w->len, d, n);
  w->len += n;
}

void pbw_varint(pbw *w, uint64_t v) {
  do {
    uint8_t b = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) b |= 0x80;
    put(w, &b, 1);
  } while (v);
}

void pbw_tag(pbw *w, uint32_t field, uint32_t wire) { pbw_varint(w, ((uint64_t)field << 3) | wire); }

void pbw_bytes(pbw *w, uint32_t field, const void *data, size_t len) {
  pbw_tag(w, field, 2);
  pbw_varint(w, len);
  put(w, data, len);
}

void pbw_str(pbw *w, uint32_t field, const char *s) { pbw_bytes(w, field, s, strlen(s)); }

void pbw_int(pbw *w, uint32_t field, uint64_t v) {
  pbw_tag(w, field, 0);
  pbw_varint(w, v);
}

void pbw_msg(pbw *w, uint32_t field, const pbw *sub) {
  pbw_bytes(w, field, sub->p, sub->len);
  free(sub->p);
}

void pbw_free(pbw *w) {
  free(w->p);
  memset(w, 0, sizeof *w);
}

/* AttributeProto: 1 name, 20 type (INT 2, STRING 3), 3 i, 4 s. */
static void attr_int(pbw *node, const char *name, int64_t v_plus_one) {
  if (v_plus_one == 0) return;
  int64_t v = v_plus_one - 1;
  pbw a = {0};
  pbw_str(&a, 1, name);
  pbw_int(&a, 20, 2);
  pbw_int(&a, 3, (uint64_t)v);
  pbw_msg(node, 5, &a);
}

static void attr_bytes(pbw *node, const char *name, const void *v, size_t n) {
  if (!v) return;
  pbw a = {0};
  pbw_str(&a, 1, name);
  pbw_int(&a, 20, 3);
  pbw_bytes(&a, 4, v, n ? n : strlen(v));
  pbw_msg(node, 5, &a);
}

/* NodeProto: 1 input, 2 output, 3 name, 4 op_type, 5 attribute, 7 domain. */
static void node(pbw *graph, const ob_node *n) {
  pbw w = {0};
  pbw_str(&w, 1, "images");
  pbw_str(&w, 2, "output0");
  if (n->name) pbw_str(&w, 3, n->name);
  pbw_str(&w, 4, n->op_type ? n->op_type : "EPContext");
  attr_bytes(&w, "ep_cache_context", n->cache, n->cache_len);
  attr_int(&w, "main_context", n->main_context);
  attr_int(&w, "embed_mode", n->embed_mode);
  attr_int(&w, "max_size", n->max_size);
  attr_bytes(&w, "partition_name", n->partition_name, 0);
  attr_bytes(&w, "ep_sdk_version", n->ep_sdk_version, 0);
  attr_bytes(&w, "source", n->source, 0);
  attr_bytes(&w, "ep_context_type", n->ep_context_type, 0);
  const char *domain = n->domain ? n->domain : "com.microsoft";
  if (*domain) pbw_str(&w, 7, domain);
  pbw_msg(graph, 1, &w);
}

uint8_t *ob_build(const ob_model *m, size_t *len) {
  pbw w = {0}, graph = {0}, opset = {0};
  pbw_int(&w, 1, (uint64_t)(m->ir_version ? m->ir_version : 9));
  pbw_str(&w, 2, m->producer ? m->producer : "onnx_build");
  pbw_str(&w, 3, "1.0");
  for (uint32_t i = 0; i < m->num_nodes; i++) node(&graph, &m->nodes[i]);
  pbw_str(&graph, 2, "main_graph");
  pbw_msg(&w, 7, &graph);
  pbw_str(&opset, 1, "");
  pbw_int(&opset, 2, (uint64_t)(m->opset ? m->opset : 17));
  pbw_msg(&w, 8, &opset);
  for (uint32_t i = 0; i < m->num_props; i++) {
    pbw p = {0};
    pbw_str(&p, 1, m->props[i][0]);
    pbw_str(&p, 2, m->props[i][1]);
    pbw_msg(&w, 14, &p);
  }
  *len = w.len;
  return w.p;
}
