/* model_source.c - an ONNX EPContext model's facts (htpu_model_source) as a term: the
 * `:source` of a context's info (nil for a raw context binary). */
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
