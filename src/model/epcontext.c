/* epcontext.c - see epcontext.h. */
#include "epcontext.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "printable.h"

int epc_is_main(const epc_node *n) { return !n->has_main_context || n->main_context == 1; }
int epc_is_embedded(const epc_node *n) { return !n->has_embed_mode || n->embed_mode == 1; }

void epc_node_label(const onnx_model *m, uint32_t i, char *buf, size_t len) {
  const epc_node *n = &m->epc[i];
  char shown[128];
  if (n->name.len)
    snprintf(buf, len, "'%s'", printable(n->name.p, n->name.len, shown, sizeof shown));
  else
    snprintf(buf, len, "#%u (unnamed, at byte %zu)", i, n->offset);
}

static int same_ci(onnx_str s, const char *z) {
  size_t n = strlen(z);
  if (s.len != n) return 0;
  for (size_t i = 0; i < n; i++)
    if (tolower(s.p[i]) != z[i]) return 0;
  return 1;
}

/* A relative file name in the model's folder: not empty, no NUL, not absolute, no ".."
 * component (ONNX Runtime refuses any ".."; a name such as "a..b.bin" is no escape). */
static const char *bad_file_name(onnx_str s) {
  if (s.len == 0) return "is empty";
  if (s.len > ONNX_MAX_NAME_BYTES) return "is longer than 4096 bytes";
  if (memchr(s.p, 0, s.len)) return "holds a NUL byte";
  if (s.p[0] == '/') return "is an absolute path; it must name a file relative to the model";
  size_t start = 0;
  for (size_t i = 0; i <= s.len; i++) {
    if (i < s.len && s.p[i] != '/') continue;
    if (i - start == 2 && s.p[start] == '.' && s.p[start + 1] == '.')
      return "has a '..' component; it must name a file inside the model's folder";
    start = i + 1;
  }
  return NULL;
}

static int check_node(const onnx_model *m, uint32_t i, char *err, size_t n) {
  const epc_node *nd = &m->epc[i];
  char label[160];
  epc_node_label(m, i, label, sizeof label);
  if (nd->source.p && !same_ci(nd->source, "qnnexecutionprovider") && !same_ci(nd->source, "qnn") &&
      !same_ci(nd->source, "qairtexport")) {
    snprintf(err, n, "EPContext node %s comes from '%.*s', not from QNN (expected source "
             "QNNExecutionProvider, QNN or QAIRTExport)", label, (int)nd->source.len,
             (const char *)nd->source.p);
    return -1;
  }
  if (nd->ep_context_type.p && !same_ci(nd->ep_context_type, "bin")) {
    snprintf(err, n, "EPContext node %s holds a '%.*s' context (ep_context_type); only QNN "
             "context binaries ('bin') can be loaded", label, (int)nd->ep_context_type.len,
             (const char *)nd->ep_context_type.p);
    return -1;
  }
  if ((nd->has_main_context && nd->main_context != 0 && nd->main_context != 1) ||
      (nd->has_embed_mode && nd->embed_mode != 0 && nd->embed_mode != 1)) {
    int main_bad = nd->has_main_context && nd->main_context != 0 && nd->main_context != 1;
    snprintf(err, n, "EPContext node %s has %s %lld; expected 0 or 1", label,
             main_bad ? "main_context" : "embed_mode",
             (long long)(main_bad ? nd->main_context : nd->embed_mode));
    return -1;
  }
  if (!epc_is_main(nd)) return 0;
  if (!nd->has_cache || nd->cache.len == 0) {
    snprintf(err, n, "EPContext node %s is a main context (main_context 1) without its "
             "ep_cache_context: it carries no binary", label);
    return -1;
  }
  const char *why = epc_is_embedded(nd) ? NULL : bad_file_name(nd->cache);
  if (why) {
    snprintf(err, n, "EPContext node %s: the external binary's name in ep_cache_context %s",
             label, why);
    return -1;
  }
  return 0;
}

int epc_plan_make(const onnx_model *m, epc_plan *p, char *err, size_t n) {
  memset(p, 0, sizeof *p);
  if (m->num_epc == 0) return -2;
  for (uint32_t i = 0; i < m->num_epc; i++) {
    p->node_context[i] = -1;
    if (check_node(m, i, err, n)) return -1;
    const epc_node *nd = &m->epc[i];
    if (!epc_is_main(nd)) continue;
    /* one context per main node: nodes naming one file are merged once the file is found
     * (epc_plan_merge), by what file it is rather than by how it is spelt */
    p->node_context[i] = (int32_t)p->num_contexts;
    p->ctx[p->num_contexts++] = (epc_context){i, epc_is_embedded(nd), nd->cache};
  }
  if (p->num_contexts == 0) {
    snprintf(err, n, "none of the model's %u EPContext nodes is a main context (main_context "
             "1): no node carries a context binary", m->num_epc);
    return -1;
  }
  return 0;
}

void epc_plan_merge(epc_plan *p, uint32_t k, uint32_t into) {
  for (uint32_t i = 0; i < ONNX_MAX_EPCONTEXT_NODES; i++) {
    if (p->node_context[i] == (int32_t)k) p->node_context[i] = (int32_t)into;
    else if (p->node_context[i] > (int32_t)k) p->node_context[i]--;
  }
  memmove(&p->ctx[k], &p->ctx[k + 1], (p->num_contexts - k - 1) * sizeof p->ctx[0]);
  p->num_contexts--;
}
