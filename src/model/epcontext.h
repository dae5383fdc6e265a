/*
 * epcontext.h - ONNX Runtime's rules for EPContext nodes, applied to a read model (onnx.h):
 * which nodes carry a context binary, where each binary is, and what is refused.
 *
 * The rules are those of ONNX Runtime's QNN execution provider (onnx_ctx_model_helper.cc):
 * the source must be a QNN one ("QNNExecutionProvider", "QNN", "QAIRTExport", any case); a
 * node's main_context and embed_mode default to 1 (the op schema's defaults, which ONNX
 * Runtime's writer relies on: its first node carries neither); at least one node must be a
 * main one; a main node's ep_cache_context is the binary (embed_mode 1) or a relative file
 * name without ".." (0). Each main node starts as a context of its own; nodes whose file names
 * lead to one file (ONNX Runtime's shared-context models, or one file spelt two ways) are
 * merged into one context when the files are found (model_open.c, epc_plan_merge). A DLC context (ep_context_type "dlc") is refused: it needs QNN's
 * converter, not a context binary loader.
 */
#ifndef HTPU_MODEL_EPCONTEXT_H
#define HTPU_MODEL_EPCONTEXT_H

#include "onnx.h"

typedef struct epc_context {
  uint32_t node;        /* the first main node carrying it */
  int embedded;
  onnx_str bytes;       /* embedded: the binary; external: the file name */
} epc_context;

typedef struct epc_plan {
  uint32_t num_contexts;
  epc_context ctx[ONNX_MAX_EPCONTEXT_NODES];
  int32_t node_context[ONNX_MAX_EPCONTEXT_NODES]; /* a main node's context; -1 for the others */
} epc_plan;

/* 0, or -1 with err set: a node breaking a rule, named with its reason. With no EPContext node
 * at all, -2 (the caller says what the file is instead). */
int epc_plan_make(const onnx_model *m, epc_plan *p, char *err, size_t err_len);

/* Context k (external) is the file context `into` (< k) reads too: its nodes move to `into`,
 * the contexts after k move down one. */
void epc_plan_merge(epc_plan *p, uint32_t k, uint32_t into);

/* A node's name for messages: 'name', or "#<index> at byte <offset>" when it has none. */
void epc_node_label(const onnx_model *m, uint32_t i, char *buf, size_t len);

/* main_context and embed_mode as ONNX Runtime takes them (absent: 1). */
int epc_is_main(const epc_node *n);
int epc_is_embedded(const epc_node *n);

#endif
