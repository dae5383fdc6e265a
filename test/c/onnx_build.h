/*
 * onnx_build.h - a protobuf writer for the tests' own ONNX EPContext models: what ONNX
 * Runtime's QNN execution provider and Ultralytics write (a model with metadata_props and a
 * graph of EPContext nodes), every attribute optional so a test can leave one out, and the raw
 * writer for hostile files (fields of any number and wire type, lengths that lie).
 */
#ifndef HTPU_TEST_ONNX_BUILD_H
#define HTPU_TEST_ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>

typedef struct pbw {
  uint8_t *p;
  size_t len, cap;
} pbw;

void pbw_varint(pbw *w, uint64_t v);
void pbw_tag(pbw *w, uint32_t field, uint32_t wire);
void pbw_bytes(pbw *w, uint32_t field, const void *data, size_t len);
void pbw_str(pbw *w, uint32_t field, const char *s);
void pbw_int(pbw *w, uint32_t field, uint64_t v);
void pbw_msg(pbw *w, uint32_t field, const pbw *sub); /* sub is freed */
void pbw_free(pbw *w);

/* One node; NULL strings and 0 integers are left out of the file: an integer attribute is
 * written with OB_INT(v) (v + 1, so that a zero-initialized node has none). */
#define OB_INT(v) ((int64_t)(v) + 1)
typedef struct ob_node {
  const char *name;
  const char *op_type;       /* NULL: "EPContext" */
  const char *domain;        /* NULL: "com.microsoft" (use "" for none) */
  int64_t main_context, embed_mode, max_size;
  const void *cache;         /* ep_cache_context bytes; NULL: absent */
  size_t cache_len;          /* 0 with cache set: strlen(cache) */
  const char *partition_name, *ep_sdk_version, *source, *ep_context_type;
} ob_node;
#define OB_NODE(...) ((ob_node){__VA_ARGS__})

typedef struct ob_model {
  int64_t ir_version;        /* 0: 9 */
  const char *producer;      /* NULL: "onnx_build" */
  int64_t opset;             /* 0: 17 */
  uint32_t num_props;
  const char *const (*props)[2];
  uint32_t num_nodes;
  const ob_node *nodes;
} ob_model;

/* The model's bytes (malloc'd: free()). */
uint8_t *ob_build(const ob_model *m, size_t *len);

#endif
