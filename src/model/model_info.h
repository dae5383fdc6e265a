/*
 * model_info.h - a context binary's metadata, copied out of the QNN system library.
 *
 * Everything the system library returns lives only until systemContextFree, so introspection
 * copies every string and array into memory owned by the model_info (one allocation list,
 * freed at once). Besides the public view it keeps, per graph, a QNN tensor template for each
 * input and output: execute copies these and points them at the caller's buffers.
 */
#ifndef HTPU_MODEL_INFO_H
#define HTPU_MODEL_INFO_H

#include "hexagon_tpu.h"
#include "loader/loader.h"
#include "qnn/qnn_abi.h"

typedef struct graph_templates {
  qnn_tensor_t *inputs;  /* num_inputs, in graph-input order */
  qnn_tensor_t *outputs; /* num_outputs */
} graph_templates;

typedef struct model_info {
  htpu_model_info pub; /* first member: htpu_model_info_free casts back */
  graph_templates *templates; /* pub.num_graphs entries */
  struct alloc_node *allocations;
} model_info;

/* Zeroed memory owned by the model_info; NULL when out of memory. */
void *model_info_alloc(model_info *m, size_t size);
char *model_info_strdup(model_info *m, const char *s);
void model_info_free(model_info *m);
/* Moves every allocation of `from` (a model_info used only as an arena) into m and frees the
 * empty shell: what from's memory held now lives as long as m. */
void model_info_adopt(model_info *m, model_info *from);

/* "'a', 'b'": the names of info's graphs (those marked in `only`; NULL: all), for messages;
 * truncated at len. */
void model_info_graph_names(const htpu_model_info *info, const uint8_t *only, char *buf,
                            size_t len);

/* Reads the metadata of the binary in buf through the system library. buf is not modified but
 * the QNN call takes a non-const pointer. Returns 0 or an HTPU_E* code with the error set. */
int introspect_binary(const qnn_system_lib *sys, void *buf, size_t len, model_info **out);

#endif
