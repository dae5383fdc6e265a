/*
 * onnx_model.h - models that come wrapped in a file format rather than as a raw QNN context
 * binary (src/model/, behind its door model.h). Today that is ONNX with EPContext nodes (ONNX
 * Runtime's QNN execution provider, Ultralytics' format="qnn"):
 *
 *   pb.c          a bounded protobuf wire-format reader (no recursion, every length checked)
 *   onnx_read.c   the ONNX walk: model identity, metadata_props, EPContext nodes
 *   epcontext.c   ONNX Runtime's rules for those nodes: main_context, embed_mode, sources
 *   external.c    an external binary read from the model's folder, never outside it
 *   names.c       Ultralytics' class-name dict ("{0: 'person', ...}") as a list
 *   model_open.c  a file's bytes in, one context binary out (malloc'd, or where a load's
 *                 binary lies: binary_source.h), with the model's facts for the model info
 *                 (htpu_model_source)
 *   inspect.c     model_read_binary_info, the top's one call (context_load.c), and
 *                 htpu_inspect_* (model_read_info)
 *   memory.c      what a model costs: the HTP graph blob info (V1/V2, read by introspect.c),
 *                 the load estimate, htpu_context_get_memory (memory.h)
 *
 * The top reads every model it loads through model_read_binary_info; nothing else of these files is used
 * outside the room.
 */
#ifndef HTPU_MODEL_ONNX_MODEL_H
#define HTPU_MODEL_ONNX_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "binary_source.h"
#include "loader/loader.h"
#include "model_info.h"

/* An ONNX model's facts on their way to the model info (model_open.c). */
typedef struct model_source model_source;

/* Which context of a model holding several: by a graph it holds (graph non-NULL), else by
 * index; `need_choice`: several contexts and neither given is an error (a load), else the
 * first is taken (an inspection). `all`: every context is introspected and the source gets
 * their metadata (htpu_model_source.contexts: htpu_inspect_file_all). */
typedef struct model_pick {
  const char *graph;
  uint32_t index;
  int need_choice;
  int all;
  /* A load's graphs option (or none): each must be in the context `graph` picks; a graph in
   * another context is an error naming it. graph_in_list: `graph` is its entry 0, not the
   * graph option (for the message). */
  const char *const *graphs;
  uint32_t num_graphs;
  int graph_in_list;
} model_pick;

/* When *buf (malloc'd, *len bytes) is an ONNX model: the chosen context's binary replaces it
 * (the model's bytes are freed, the binary is malloc'd; on failure *buf is freed and NULL),
 * *src gets the model's facts (attach them with model_source_attach, or model_source_free),
 * and `origin` (the caller's description of where the bytes came from, "file 'x.onnx'") is
 * extended to name the context. `path`: the model file, or NULL for a buffer (then an
 * external binary is refused). Nodes whose external files are one file share one context,
 * read once. The system library reads the binaries' graphs where the choice or the
 * main_context rule needs them; then only the chosen binary is kept, so at most two binaries
 * are held at once whatever the number of contexts. Anything else: untouched, *src NULL, 0.
 * Errors are set (htpu_set_error) and returned as HTPU_E* codes. */
int model_unwrap(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                 void **buf, size_t *len, char *origin, size_t origin_len,
                 model_source **src);

/* model_unwrap for a load's binary (binary_source.h): when bin holds an ONNX model, the chosen
 * context's binary replaces it where it lies: an embedded one is pointed into (a mapping, a
 * lent buffer) or moved to the front of the copy, an external one is opened beside the model,
 * mapped where that is safe and allow_map is nonzero. As model_unwrap, one file is one context
 * opened once, and at most two binaries (mapped or read) are held at once. On failure *bin is
 * released. */
int model_unwrap_binary(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                        model_binary *bin, int allow_map, char *origin, size_t origin_len,
                        model_source **src);

/* model_unwrap, then the binary's metadata (introspect_binary) with the model's facts
 * attached (the inspections: htpu_inspect_*, htpu_model_binary). On failure *buf is freed and
 * NULL, the error set and returned. */
int model_read_info(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                    void **buf, size_t *len, char *origin, size_t origin_len, model_info **out);

/* The same for a load (the core's one call, context_load.c): model_unwrap_binary, then the
 * metadata of the binary QNN is given. On failure *bin is released. */
int model_read_binary_info(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                           model_binary *bin, int allow_map, char *origin, size_t origin_len,
                           model_info **out);

/* Moves the model's facts into the model info (m->pub.source); src is consumed. */
void model_source_attach(model_info *m, model_source *src);
void model_source_free(model_source *src);

#endif
