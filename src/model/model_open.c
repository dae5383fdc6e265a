/*
 * model_open.c - model_unwrap (model.h): an ONNX EPContext model's bytes in, the chosen
 * context binary out, with the model's facts (htpu_model_source) kept in an arena of their
 * own until model_source_attach moves them into the model info.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epcontext.h"
#include "base/base.h"
#include "external.h"
#include "printable.h"
#include "onnx_model.h"
#include "names.h"
#include "onnx.h"

struct model_source {
  model_info *arena; /* holds pub and everything it points to */
  htpu_model_source *pub;
  htpu_model_context *contexts; /* pub->contexts, writable; NULL unless all were inspected */
};

/* The contexts' files and bytes and, where needed, their graphs. */
typedef struct unwrap_state {
  const qnn_system_lib *sys;
  const char *path;
  char *origin;       /* the caller's, extended by unwrap_run */
  const uint8_t *buf; /* the model's bytes (the caller's) */
  size_t len;
  int allow_map;      /* external binaries may be mapped (binary_source.h), else read */
  onnx_model *om;
  epc_plan plan;
  external_file file[ONNX_MAX_EPCONTEXT_NODES]; /* an external context's file, once found */
  model_binary ext[ONNX_MAX_EPCONTEXT_NODES]; /* its bytes while needed (external_open) */
  size_t ext_len[ONNX_MAX_EPCONTEXT_NODES]; /* its size (kept when the bytes are dropped) */
  model_info *graphs[ONNX_MAX_EPCONTEXT_NODES]; /* introspected contexts, or NULL */
} unwrap_state;

static const uint8_t *ctx_bytes(const unwrap_state *s, uint32_t k, size_t *len) {
  if (s->plan.ctx[k].embedded) {
    *len = s->plan.ctx[k].bytes.len;
    return s->plan.ctx[k].bytes.p;
  }
  *len = s->ext[k].len;
  return s->ext[k].data;
}

/* Finds the file of external context k (nothing read yet). */
static int locate(unwrap_state *s, uint32_t k) {
  const epc_context *c = &s->plan.ctx[k];
  char label[160], name[ONNX_MAX_NAME_BYTES + 1], shown[1024];
  epc_node_label(s->om, c->node, label, sizeof label);
  snprintf(name, sizeof name, "%.*s", (int)c->bytes.len, (const char *)c->bytes.p);
  if (!s->path)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "EPContext node %s of %s names the external binary '%s' "
                          "(embed_mode 0), which can only be found beside the model's file: "
                          "open the model by its path",
                          label, s->origin, printable_str(name, shown, sizeof shown));
  int rc = external_locate(s->path, name, &s->file[k]);
  if (rc) htpu_append_error(" (EPContext node %s of %s)", label, s->origin);
  return rc;
}

/* Finds every external context's file and merges the contexts whose files are one file (the
 * same device and inode, however the nodes spell its name): a model naming one binary in 256
 * ways holds one context, and its file is opened (mapped or read) once. */
static int locate_files(unwrap_state *s) {
  for (uint32_t k = 0; k < s->plan.num_contexts;) {
    if (s->plan.ctx[k].embedded) {
      k++;
      continue;
    }
    int rc = locate(s, k);
    if (rc) return rc;
    const external_file *f = &s->file[k];
    uint32_t same = k;
    for (uint32_t j = 0; j < k && same == k; j++)
      if (!s->plan.ctx[j].embedded && s->file[j].dev == f->dev && s->file[j].ino == f->ino)
        same = j;
    if (same == k) {
      s->ext_len[k] = (size_t)f->size;
      k++;
      continue;
    }
    external_file_clear(&s->file[k]);
    epc_plan_merge(&s->plan, k, same);
    /* the files not found yet move down with their contexts (all empty) */
    memmove(&s->file[k], &s->file[k + 1], (s->plan.num_contexts - k) * sizeof s->file[0]);
    memset(&s->file[s->plan.num_contexts], 0, sizeof s->file[0]);
  }
  return 0;
}

/* The bytes of context k, from its file if it has one and they are not held: mapped or read
 * (external_open), the file checked to be the one located. */
static int read_external(unwrap_state *s, uint32_t k) {
  if (s->plan.ctx[k].embedded || s->ext[k].data) return 0;
  int rc = external_open(&s->file[k], s->allow_map, &s->ext[k]);
  if (!rc) s->ext_len[k] = s->ext[k].len;
  if (rc) {
    char label[160];
    epc_node_label(s->om, s->plan.ctx[k].node, label, sizeof label);
    htpu_append_error(" (EPContext node %s of %s)", label, s->origin);
  }
  return rc;
}

static void drop_external(unwrap_state *s, uint32_t k) { binary_release(&s->ext[k]); }

/* The graphs of context k, through the system library (once). */
static int introspect_ctx(unwrap_state *s, uint32_t k) {
  if (s->graphs[k]) return 0;
  int rc = read_external(s, k);
  size_t n = 0;
  const uint8_t *b = rc ? NULL : ctx_bytes(s, k, &n);
  if (!rc) rc = introspect_binary(s->sys, (void *)b, n, &s->graphs[k]);
  if (rc) {
    char label[160];
    epc_node_label(s->om, s->plan.ctx[k].node, label, sizeof label);
    htpu_append_error(" (the context binary of EPContext node %s in %s)", label, s->origin);
  }
  return rc;
}

/* "embedded in node 'x'" or "file 'dir/x.bin'": where context k's bytes are. */
static void ctx_where(const unwrap_state *s, uint32_t k, char *out, size_t len) {
  char label[160];
  epc_node_label(s->om, s->plan.ctx[k].node, label, sizeof label);
  if (s->plan.ctx[k].embedded)
    snprintf(out, len, "embedded in node %s", label);
  else
    snprintf(out, len, "file '%s'", s->file[k].shown);
}

static int ctx_has_graph(const unwrap_state *s, uint32_t k, const char *name, size_t len) {
  const htpu_model_info *mi = &s->graphs[k]->pub;
  for (uint32_t g = 0; g < mi->num_graphs; g++)
    if (strlen(mi->graphs[g].name) == len && memcmp(mi->graphs[g].name, name, len) == 0) return 1;
  return 0;
}

/* "context 0 (node 'a'): g1, g2; context 1 (...): g3" for messages. */
static void list_contexts(const unwrap_state *s, char *out, size_t len) {
  size_t used = 0;
  out[0] = 0;
  for (uint32_t k = 0; k < s->plan.num_contexts && used < len; k++) {
    char label[160];
    epc_node_label(s->om, s->plan.ctx[k].node, label, sizeof label);
    used += (size_t)snprintf(out + used, len - used, "%scontext %u (node %s): ", k ? "; " : "",
                             k, label);
    const htpu_model_info *mi = &s->graphs[k]->pub;
    for (uint32_t g = 0; g < mi->num_graphs && used < len; g++)
      used += (size_t)snprintf(out + used, len - used, "%s%s", g ? ", " : "", mi->graphs[g].name);
  }
}

/* The main_context rule's other half: a node with main_context 0 names a graph some main
 * node's binary holds (by its name, as ONNX Runtime looks it up, or its partition_name). */
static int match_nodes(unwrap_state *s, int32_t *node_ctx) {
  for (uint32_t i = 0; i < s->om->num_epc; i++) {
    node_ctx[i] = s->plan.node_context[i];
    if (node_ctx[i] >= 0) continue;
    const epc_node *nd = &s->om->epc[i];
    for (uint32_t k = 0; k < s->plan.num_contexts && node_ctx[i] < 0; k++)
      if (ctx_has_graph(s, k, (const char *)nd->name.p, nd->name.len) ||
          (nd->partition_name.len &&
           ctx_has_graph(s, k, (const char *)nd->partition_name.p, nd->partition_name.len)))
        node_ctx[i] = (int32_t)k;
    if (node_ctx[i] >= 0) continue;
    char label[160], list[2048], want[160];
    epc_node_label(s->om, i, label, sizeof label);
    list_contexts(s, list, sizeof list);
    onnx_str w = nd->partition_name.len ? nd->partition_name : nd->name;
    return htpu_set_error(HTPU_EMODEL, 0,
                          "EPContext node %s of %s has main_context 0, so its graph must be in "
                          "a main node's binary, but no context holds a graph named '%s' (%s)",
                          label, s->origin, printable(w.p, w.len, want, sizeof want), list);
  }
  return 0;
}

/* A load's graphs all in context k, the one its first graph chose: one load makes one QNN
 * context, so a graph that another context holds is an error naming both contexts (a graph no
 * context holds is left to the load, which lists the chosen binary's graphs). */
static int same_context(unwrap_state *s, const model_pick *pick, uint32_t k) {
  for (uint32_t i = 0; i < pick->num_graphs; i++) {
    const char *want = pick->graphs[i];
    if (!want || ctx_has_graph(s, k, want, strlen(want))) continue;
    for (uint32_t j = 0; j < s->plan.num_contexts; j++) {
      if (j == k || !ctx_has_graph(s, j, want, strlen(want))) continue;
      char first[160], other[160], list[2048];
      epc_node_label(s->om, s->plan.ctx[k].node, first, sizeof first);
      epc_node_label(s->om, s->plan.ctx[j].node, other, sizeof other);
      list_contexts(s, list, sizeof list);
      return htpu_set_error(HTPU_ENOT_FOUND, 0,
                            "%s: graph '%s' (entry %u of the graphs option) is in context %u "
                            "(node %s), not in context %u (node %s), which holds '%s' (%s) and "
                            "is the one this load takes: one load makes one context, so load "
                            "each context on its own (%s)",
                            s->origin, want, i, j, other, k, first, pick->graph,
                            pick->graph_in_list ? "entry 0 of the graphs option"
                                                : "the graph option", list);
    }
  }
  return 0;
}

static int choose(unwrap_state *s, const model_pick *pick, uint32_t *chosen) {
  uint32_t nc = s->plan.num_contexts;
  char list[2048];
  if (pick->graph && nc > 1) {
    for (uint32_t k = 0; k < nc; k++)
      if (ctx_has_graph(s, k, pick->graph, strlen(pick->graph))) {
        *chosen = k;
        return same_context(s, pick, k);
      }
    list_contexts(s, list, sizeof list);
    return htpu_set_error(HTPU_ENOT_FOUND, 0, "no context of %s holds a graph named '%s' (%s)",
                          s->origin, pick->graph, list);
  }
  if (!pick->graph && pick->need_choice && nc > 1) {
    list_contexts(s, list, sizeof list);
    return htpu_set_error(HTPU_EINVAL, 0,
                          "%s holds %u context binaries; name the graph to load with the "
                          "graph option (%s)",
                          s->origin, nc, list);
  }
  if (pick->index >= nc)
    return htpu_set_error(HTPU_EINVAL, 0, "%s holds %u context binar%s; there is no context %u",
                          s->origin, nc, nc == 1 ? "y" : "ies", pick->index);
  *chosen = pick->index;
  return 0;
}

static const char *arena_str(model_info *a, onnx_str v) {
  char *d = model_info_alloc(a, v.len + 1);
  if (d && v.len) memcpy(d, v.p, v.len);
  return d;
}

static int fill_nodes(const unwrap_state *s, model_info *a, htpu_model_source *src,
                      const int32_t *node_ctx) {
  const onnx_model *om = s->om;
  htpu_epcontext_node *nodes = model_info_alloc(a, (om->num_epc + 1) * sizeof *nodes);
  if (!nodes) return -1;
  for (uint32_t i = 0; i < om->num_epc; i++) {
    const epc_node *nd = &om->epc[i];
    htpu_epcontext_node *o = &nodes[i];
    int main = epc_is_main(nd), emb = epc_is_embedded(nd);
    o->name = arena_str(a, nd->name);
    o->main_context = main;
    o->embed_mode = emb;
    o->cache_file = arena_str(a, main && !emb ? nd->cache : (onnx_str){0});
    int32_t own = s->plan.node_context[i];
    o->cache_bytes = own < 0 ? 0 : emb ? nd->cache.len : s->ext_len[own];
    o->partition_name = arena_str(a, nd->partition_name);
    o->ep_sdk_version = arena_str(a, nd->ep_sdk_version);
    o->source = arena_str(a, nd->source);
    o->max_size = nd->has_max_size ? nd->max_size : 0;
    o->context = node_ctx[i];
    if (!o->name || !o->cache_file || !o->partition_name || !o->ep_sdk_version || !o->source)
      return -1;
  }
  src->nodes = nodes;
  src->num_nodes = om->num_epc;
  return 0;
}

/* The props in file order, duplicates included; a key given twice means its last value (as
 * JSON readers and Elixir maps take it), so the class names come from the last "names". */
static int fill_props(const onnx_model *om, model_info *a, htpu_model_source *src) {
  htpu_model_prop *props = model_info_alloc(a, (om->num_props + 1) * sizeof *props);
  if (!props) return -1;
  int64_t names = -1;
  for (uint32_t i = 0; i < om->num_props; i++) {
    props[i].key = arena_str(a, om->props[i].key);
    props[i].value = arena_str(a, om->props[i].value);
    if (!props[i].key || !props[i].value) return -1;
    if (onnx_str_is(om->props[i].key, "names")) names = i;
  }
  if (names >= 0 && names_parse(props[names].value, om->props[names].value.len, a,
                                &src->class_names, &src->num_class_names) < 0)
    return -1;
  src->props = props;
  src->num_props = om->num_props;
  return 0;
}

/* Every context's metadata and origin for an inspection of them all (model_pick.all): the
 * chosen context's info is the one the caller makes (model_source_attach), the others' are
 * the introspections made here, moved into the arena. */
static int fill_contexts(unwrap_state *s, model_info *a, struct model_source *ms,
                         uint32_t chosen) {
  uint32_t nc = s->plan.num_contexts;
  htpu_model_context *ctxs = model_info_alloc(a, nc * sizeof *ctxs);
  if (!ctxs) return -1;
  for (uint32_t k = 0; k < nc; k++) {
    char where[1200];
    ctx_where(s, k, where, sizeof where);
    ctxs[k].origin = model_info_strdup(a, where);
    if (!ctxs[k].origin) return -1;
    if (k == chosen || !s->graphs[k]) continue;
    htpu_model_info *pub = model_info_alloc(a, sizeof *pub);
    if (!pub) return -1;
    *pub = s->graphs[k]->pub;
    model_info_adopt(a, s->graphs[k]);
    s->graphs[k] = NULL;
    ctxs[k].info = pub;
  }
  ms->contexts = ctxs;
  ms->pub->contexts = ctxs;
  return 0;
}

/* The model's facts in an arena of their own. */
static int make_source(unwrap_state *s, const int32_t *node_ctx, uint32_t chosen, int all,
                       struct model_source **out) {
  struct model_source *ms = calloc(1, sizeof *ms);
  model_info *a = calloc(1, sizeof *a);
  htpu_model_source *src = a ? model_info_alloc(a, sizeof *src) : NULL;
  int ok = ms && src;
  if (ok) {
    char where[1200];
    ctx_where(s, chosen, where, sizeof where);
    ms->pub = src;
    src->format = "onnx-epcontext";
    src->ir_version = s->om->ir_version;
    src->opset = s->om->opset;
    src->producer_name = arena_str(a, s->om->producer_name);
    src->producer_version = arena_str(a, s->om->producer_version);
    src->num_contexts = s->plan.num_contexts;
    src->context = chosen;
    src->origin = model_info_strdup(a, where);
    ok = src->producer_name && src->producer_version && src->origin &&
         fill_props(s->om, a, src) == 0 && fill_nodes(s, a, src, node_ctx) == 0 &&
         (!all || fill_contexts(s, a, ms, chosen) == 0);
  }
  if (!ok) {
    model_info_free(a);
    free(ms);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  ms->arena = a;
  *out = ms;
  return 0;
}

void model_source_free(struct model_source *src) {
  if (!src) return;
  model_info_free(src->arena);
  free(src);
}

void model_source_attach(model_info *m, struct model_source *src) {
  m->pub.source = src->pub;
  if (src->contexts) src->contexts[src->pub->context].info = &m->pub;
  model_info_adopt(m, src->arena);
  free(src);
}

/* The chosen binary as the caller's malloc'd buffer: the embedded bytes moved to the front of
 * the model's buffer (no second copy of a large model), or the external file's bytes (read,
 * never mapped: model_unwrap opens them so). */
static void take_binary(unwrap_state *s, uint32_t k, void **buf, size_t *len) {
  if (s->plan.ctx[k].embedded) {
    size_t n = s->plan.ctx[k].bytes.len;
    memmove(*buf, s->plan.ctx[k].bytes.p, n);
    void *shrunk = realloc(*buf, n);
    if (shrunk) *buf = shrunk;
    *len = n;
  } else {
    free(*buf);
    *buf = s->ext[k].base;
    *len = s->ext[k].len;
    memset(&s->ext[k], 0, sizeof s->ext[k]);
  }
}

/* The chosen binary as the load's: the embedded bytes where they lie in the model's (a copy
 * shrunk to them as take_binary does; a mapping or a lent buffer pointed into, not copied),
 * or the external file's, mapped or read as external_open chose. */
static void take_model_binary(unwrap_state *s, uint32_t k, model_binary *bin) {
  if (!s->plan.ctx[k].embedded) {
    binary_release(bin);
    *bin = s->ext[k];
    memset(&s->ext[k], 0, sizeof s->ext[k]);
    return;
  }
  size_t n = s->plan.ctx[k].bytes.len;
  const uint8_t *p = s->plan.ctx[k].bytes.p;
  if (bin->kind == BINARY_COPIED) {
    memmove(bin->base, p, n);
    void *shrunk = realloc(bin->base, n);
    if (shrunk) bin->base = shrunk;
    bin->base_len = n;
    p = bin->base;
  }
  bin->data = p;
  bin->len = n;
  size_t used = strlen(bin->note);
  if (bin->kind == BINARY_MAPPED) /* the mapping is the model's, as htpu_stats counts it */
    snprintf(bin->note + used, sizeof bin->note - used, " (the binary embedded in the ONNX "
             "model: its whole %zu-byte file is mapped)", bin->base_len);
  else
    snprintf(bin->note + used, sizeof bin->note - used, " (the binary embedded in the ONNX model)");
}

static void state_free(unwrap_state *s) {
  for (uint32_t k = 0; k < ONNX_MAX_EPCONTEXT_NODES; k++) {
    binary_release(&s->ext[k]);
    external_file_clear(&s->file[k]);
    model_info_free(s->graphs[k]);
  }
  free(s->om);
  free(s);
}

/* An ONNX model that is not an EPContext model: say what it is and what to do. */
static int not_epcontext(const unwrap_state *s) {
  char ops[512] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < s->om->num_op_samples && used < sizeof ops; i++) {
    char op[80];
    used += (size_t)snprintf(ops + used, sizeof ops - used, "%s%s", i ? ", " : "",
                             printable(s->om->op_samples[i].p, s->om->op_samples[i].len, op,
                                       sizeof op));
  }
  return htpu_set_error(HTPU_EUNSUPPORTED, 0,
                        "%s is an ONNX model without an EPContext node (%llu nodes: %s%s), such "
                        "as a QDQ model: hexagon_tpu runs compiled QNN context binaries. Compile "
                        "it for the board with Qualcomm AI Hub (--target_runtime "
                        "qnn_context_binary), Ultralytics (format=\"qnn\", name=\"68\") or ONNX "
                        "Runtime's QNN execution provider (ep.context_enable=1); "
                        "docs/context-binaries.md says how",
                        s->origin, (unsigned long long)s->om->num_nodes, ops,
                        s->om->num_nodes > s->om->num_op_samples ? ", ..." : "");
}

/* Whether context k's bytes are kept once its graphs are known: only those of the context the
 * pick will take (the first holding pick->graph, else context pick->index). The others are
 * dropped, so that however many contexts a model has, at most two binaries are held at once. */
static int keeps(const unwrap_state *s, const model_pick *pick, uint32_t k, int32_t kept) {
  if (pick->graph && s->plan.num_contexts > 1)
    return kept < 0 && ctx_has_graph(s, k, pick->graph, strlen(pick->graph));
  return k == pick->index;
}

/* Reads and checks the model, finds its contexts' files, then, where the choice, the
 * main_context rule or an inspection of every context needs them, each context's graphs. */
static int prepare(unwrap_state *s, const model_pick *pick) {
  char err[600];
  s->om = malloc(sizeof *s->om);
  if (!s->om) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  if (onnx_read(s->buf, s->len, s->om, err, sizeof err))
    return htpu_set_error(HTPU_EMODEL, 0, "%s is not a readable ONNX model: %s", s->origin, err);
  int rc = epc_plan_make(s->om, &s->plan, err, sizeof err);
  if (rc == -2) return not_epcontext(s);
  if (rc) return htpu_set_error(HTPU_EMODEL, 0, "%s: %s", s->origin, err);
  rc = locate_files(s);
  if (rc) return rc;
  int need_graphs = pick->all || s->plan.num_contexts > 1;
  for (uint32_t i = 0; i < s->om->num_epc; i++)
    if (s->plan.node_context[i] < 0) need_graphs = 1;
  int32_t kept = -1;
  for (uint32_t k = 0; need_graphs && k < s->plan.num_contexts; k++) {
    rc = introspect_ctx(s, k);
    if (rc) return rc;
    if (keeps(s, pick, k, kept))
      kept = (int32_t)k;
    else
      drop_external(s, k);
  }
  return 0;
}

/* The model in s->buf read and its context chosen (*k), its facts in *src and s->origin
 * (origin_len bytes) extended to name the context. The model's bytes stay the caller's. */
static int unwrap_run(unwrap_state *s, const model_pick *pick, size_t origin_len, uint32_t *k,
                      struct model_source **src) {
  int32_t node_ctx[ONNX_MAX_EPCONTEXT_NODES];
  *k = 0;
  int rc = prepare(s, pick);
  if (!rc && (s->plan.num_contexts > 1 || pick->index)) rc = choose(s, pick, k);
  if (!rc) rc = read_external(s, *k); /* the chosen one's bytes: held already, or opened now */
  if (!rc && s->graphs[0]) /* introspected: some node's graph is to be found */
    rc = match_nodes(s, node_ctx);
  else if (!rc)
    memcpy(node_ctx, s->plan.node_context, sizeof node_ctx);
  if (!rc) rc = make_source(s, node_ctx, *k, pick->all, src);
  if (rc) return rc;
  size_t used = strlen(s->origin);
  snprintf(s->origin + used, origin_len > used ? origin_len - used : 0,
           " (EPContext binary %s)", (*src)->pub->origin);
  return 0;
}

int model_unwrap(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                 void **buf, size_t *len, char *origin, size_t origin_len,
                 struct model_source **src) {
  *src = NULL;
  if (!onnx_looks_like_model(*buf, *len)) return 0;
  unwrap_state *s = calloc(1, sizeof *s);
  if (!s) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  *s = (unwrap_state){.sys = sys, .path = path, .origin = origin, .buf = *buf, .len = *len};
  uint32_t k = 0;
  int rc = unwrap_run(s, pick, origin_len, &k, src);
  if (rc) {
    free(*buf);
    *buf = NULL;
    *len = 0;
  } else {
    take_binary(s, k, buf, len);
  }
  state_free(s);
  return rc;
}

int model_unwrap_binary(const qnn_system_lib *sys, const char *path, const model_pick *pick,
                        model_binary *bin, int allow_map, char *origin, size_t origin_len,
                        struct model_source **src) {
  *src = NULL;
  if (!onnx_looks_like_model(bin->data, bin->len)) return 0;
  unwrap_state *s = calloc(1, sizeof *s);
  if (!s) {
    binary_release(bin);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  }
  *s = (unwrap_state){.sys = sys, .path = path, .origin = origin, .buf = bin->data,
                      .len = bin->len, .allow_map = allow_map};
  uint32_t k = 0;
  int rc = unwrap_run(s, pick, origin_len, &k, src);
  if (rc)
    binary_release(bin);
  else
    take_model_binary(s, k, bin);
  state_free(s);
  return rc;
}
