/*
 * onnx.h - what the ONNX reader takes out of a model file: the model's identity, its
 * metadata_props and its EPContext nodes (every other node is only counted, its op type kept
 * for the message that says what the file is). Strings point into the caller's buffer, which
 * must outlive the onnx_model; they are checked UTF-8 without NUL bytes, within the limits
 * below, so they can be copied out as C strings and written to JSON as they are.
 *
 * The walk is fixed in depth (model -> graph -> node -> attribute): everything else in the file,
 * subgraphs, initializers and their tensors included, is stepped over by its length without
 * being parsed, so a deeply nested or huge part of a file costs no recursion and no memory.
 */
#ifndef HTPU_MODEL_ONNX_H
#define HTPU_MODEL_ONNX_H

#include <stddef.h>
#include <stdint.h>

#define ONNX_MAX_EPCONTEXT_NODES 256u
#define ONNX_MAX_PROPS 1024u
#define ONNX_MAX_NAME_BYTES 4096u       /* names, op types, domains, attribute strings */
#define ONNX_MAX_PROP_VALUE_BYTES (1u << 20)
#define ONNX_OP_SAMPLES 6u              /* distinct op types kept for the "not EPContext" message */

typedef struct onnx_str {
  const uint8_t *p;
  size_t len;
} onnx_str;

typedef struct epc_node {
  size_t offset; /* where the node starts in the file */
  onnx_str name, domain;
  int has_main_context, has_embed_mode, has_cache, has_max_size;
  int64_t main_context, embed_mode, max_size;
  onnx_str cache; /* ep_cache_context: the binary (embed_mode 1) or a file name (0) */
  onnx_str partition_name, ep_sdk_version, source, ep_context_type;
} epc_node;

typedef struct onnx_prop {
  onnx_str key, value;
} onnx_prop;

typedef struct onnx_model {
  int has_ir_version;
  int64_t ir_version;
  int64_t opset;          /* of the default (ai.onnx) domain; 0 when not imported */
  onnx_str producer_name, producer_version;
  uint32_t num_props;
  onnx_prop props[ONNX_MAX_PROPS];
  uint64_t num_nodes;     /* every node of the main graph */
  uint32_t num_op_samples;
  onnx_str op_samples[ONNX_OP_SAMPLES];
  uint32_t num_epc;
  epc_node epc[ONNX_MAX_EPCONTEXT_NODES];
} onnx_model;

/* 1 when buf starts as an ONNX ModelProto does: its first field is one of ModelProto's with
 * that field's wire type (any of them, not only ir_version: field order is the writer's);
 * 0 otherwise. A QNN context binary starts with a 32-bit version word whose first byte is 0
 * (field 0, never valid), the reference format with "HTPUREFM" (field 9, not ModelProto's).
 * Cheap; onnx_read decides the rest. */
int onnx_looks_like_model(const void *buf, size_t len);

/* Reads the model into *m (zeroed first; heap-allocate it: it is large). Returns 0, or -1 with
 * `err` set to a sentence saying what was wrong and where (byte offsets). */
int onnx_read(const uint8_t *buf, size_t len, onnx_model *m, char *err, size_t err_len);

/* 1 when s equals the C string z. */
int onnx_str_is(onnx_str s, const char *z);

#endif
