/* model_source.c - a context's model info as a term (Context.info/1): the binary's facts and
 * graphs (their terms from convert.c), an ONNX EPContext model's facts (htpu_model_source; the
 * `:source`, nil for a raw context binary) and each graph's memory figures
 * (htpu_graph_memory). */
#include "atoms.h"
#include "terms.h"

static ERL_NIF_TERM node_term(ErlNifEnv *env, const htpu_epcontext_node *n) {
  ERL_NIF_TERM k[] = {ATOMS.name,        ATOMS.main_context,   ATOMS.embed_mode,
                      ATOMS.cache_file,  ATOMS.cache_bytes,    ATOMS.partition_name,
                      ATOMS.ep_sdk_version, ATOMS.source,      ATOMS.max_size,
                      ATOMS.context};
  ERL_NIF_TERM v[] = {nif_make_string(env, n->name),
                      n->main_context ? ATOMS.true_ : ATOMS.false_,
                      n->embed_mode ? ATOMS.true_ : ATOMS.false_,
                      n->cache_file[0] ? nif_make_string(env, n->cache_file) : ATOMS.nil,
                      enif_make_uint64(env, n->cache_bytes),
                      nif_make_string(env, n->partition_name),
                      nif_make_string(env, n->ep_sdk_version),
                      nif_make_string(env, n->source),
                      enif_make_int64(env, n->max_size),
                      n->context < 0 ? ATOMS.nil : enif_make_int(env, n->context)};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}

/* metadata_props as a map (a key given twice keeps its last value, as ONNX readers do) */
static ERL_NIF_TERM props_term(ErlNifEnv *env, const htpu_model_source *s) {
  ERL_NIF_TERM map = enif_make_new_map(env);
  for (uint32_t i = 0; i < s->num_props; i++) {
    ERL_NIF_TERM next;
    if (enif_make_map_put(env, map, nif_make_string(env, s->props[i].key),
                          nif_make_string(env, s->props[i].value), &next))
      map = next;
  }
  return map;
}

ERL_NIF_TERM nif_make_model_source(ErlNifEnv *env, const htpu_model_source *s) {
  if (!s) return ATOMS.nil;
  ERL_NIF_TERM nodes = enif_make_list(env, 0), names = enif_make_list(env, 0);
  for (uint32_t i = s->num_nodes; i-- > 0;)
    nodes = enif_make_list_cell(env, node_term(env, &s->nodes[i]), nodes);
  for (uint32_t i = s->num_class_names; i-- > 0;)
    names = enif_make_list_cell(env, nif_make_string(env, s->class_names[i]), names);
  ERL_NIF_TERM k[] = {ATOMS.format,   ATOMS.ir_version, ATOMS.opset,    ATOMS.producer_name,
                      ATOMS.producer_version, ATOMS.metadata, ATOMS.class_names, ATOMS.nodes,
                      ATOMS.contexts, ATOMS.context,    ATOMS.origin};
  ERL_NIF_TERM v[] = {nif_make_string(env, s->format),
                      enif_make_int64(env, s->ir_version),
                      enif_make_int64(env, s->opset),
                      nif_make_string(env, s->producer_name),
                      nif_make_string(env, s->producer_version),
                      props_term(env, s),
                      s->class_names ? names : ATOMS.nil,
                      nodes,
                      enif_make_uint(env, s->num_contexts),
                      enif_make_uint(env, s->context),
                      nif_make_string(env, s->origin)};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}

/* A figure of blob info version `from`: nil in another version's answer (each version has
 * only its own fields), so a V1 graph's V2 sizes do not read as measured zeros. */
static ERL_NIF_TERM figure(ErlNifEnv *env, const htpu_graph_memory *m, uint32_t from,
                           uint64_t value) {
  return m->blob_info_version == from ? enif_make_uint64(env, value) : ATOMS.nil;
}

ERL_NIF_TERM nif_make_graph_memory(ErlNifEnv *env, const htpu_graph_memory *m) {
  ERL_NIF_TERM k[] = {ATOMS.blob_info_version, ATOMS.spill_fill_bytes,   ATOMS.optimization_level,
                      ATOMS.hvx_threads,       ATOMS.io_tensor_bytes,    ATOMS.op_data_bytes,
                      ATOMS.const_bytes,       ATOMS.ddr_tensor_bytes,   ATOMS.shared_weights_bytes,
                      ATOMS.safe_share_io};
  ERL_NIF_TERM share = m->safe_share_io ? ATOMS.true_ : ATOMS.false_;
  ERL_NIF_TERM v[] = {enif_make_uint(env, m->blob_info_version),
                      figure(env, m, 1, m->spill_fill_bytes),
                      figure(env, m, 1, m->optimization_level),
                      figure(env, m, 1, m->hvx_threads),
                      figure(env, m, 2, m->io_tensor_bytes),
                      figure(env, m, 2, m->op_data_bytes),
                      figure(env, m, 2, m->const_bytes),
                      figure(env, m, 2, m->ddr_tensor_bytes),
                      figure(env, m, 2, m->shared_weights_bytes),
                      m->blob_info_version == 2 ? share : ATOMS.nil};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}

ERL_NIF_TERM nif_make_model_info(ErlNifEnv *env, const htpu_model_info *m) {
  ERL_NIF_TERM graphs = enif_make_list(env, 0), mem = enif_make_list(env, 0);
  for (uint32_t i = m->num_graphs; i-- > 0;) {
    graphs = enif_make_list_cell(env, nif_make_graph_info(env, &m->graphs[i]), graphs);
    mem = enif_make_list_cell(env, nif_make_graph_memory(env, &m->graph_memory[i]), mem);
  }
  ERL_NIF_TERM k[] = {ATOMS.binary_info_version, ATOMS.backend_id,          ATOMS.build_id,
                      ATOMS.core_api_version,    ATOMS.backend_api_version, ATOMS.context_blob_version,
                      ATOMS.soc_version,         ATOMS.soc_model,           ATOMS.dsp_arch,
                      ATOMS.context_blob_size,   ATOMS.graphs,              ATOMS.source,
                      ATOMS.graph_memory,        ATOMS.binary_bytes,        ATOMS.load_estimate_bytes};
  ERL_NIF_TERM v[] = {enif_make_uint(env, m->binary_info_version),
                      enif_make_uint(env, m->backend_id),
                      nif_make_string(env, m->build_id),
                      nif_make_version(env, m->core_api_version),
                      nif_make_version(env, m->backend_api_version),
                      nif_make_version(env, m->context_blob_version),
                      nif_make_string(env, m->soc_version),
                      enif_make_uint(env, m->soc_model),
                      enif_make_uint(env, m->dsp_arch),
                      enif_make_uint64(env, m->context_blob_size),
                      graphs,
                      nif_make_model_source(env, m->source),
                      mem,
                      enif_make_uint64(env, m->binary_bytes),
                      enif_make_uint64(env, m->load_estimate_bytes)};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}
