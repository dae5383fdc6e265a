/*
 * onnx_read.c - the ONNX model walk (onnx.h): ModelProto, its graph's nodes, the EPContext
 * nodes' attributes. Field numbers are ONNX's (onnx/onnx.proto): ModelProto 1 ir_version,
 * 2 producer_name, 3 producer_version, 7 graph, 8 opset_import, 14 metadata_props; GraphProto
 * 1 node; NodeProto 3 name, 4 op_type, 5 attribute, 7 domain; AttributeProto 1 name, 3 i,
 * 4 s, 20 type; OperatorSetIdProto 1 domain, 2 version; StringStringEntryProto 1 key, 2 value.
 */
#include <stdio.h>
#include <string.h>

#include "onnx.h"
#include "pb.h"

enum { ATTR_INT = 2, ATTR_STRING = 3 };

int onnx_str_is(onnx_str s, const char *z) {
  size_t n = strlen(z);
  return s.len == n && (n == 0 || memcmp(s.p, z, n) == 0);
}

/* ModelProto's fields (onnx/onnx.proto) with their wire types: ir_version, producer_name,
 * producer_version, domain, model_version, doc_string, graph, opset_import, metadata_props,
 * training_info, functions, configuration. */
static const uint8_t model_fields[][2] = {{1, PB_VARINT}, {2, PB_LEN},  {3, PB_LEN},
                                          {4, PB_LEN},    {5, PB_VARINT}, {6, PB_LEN},
                                          {7, PB_LEN},    {8, PB_LEN},  {14, PB_LEN},
                                          {20, PB_LEN},   {25, PB_LEN}, {26, PB_LEN}};

int onnx_looks_like_model(const void *buf, size_t len) {
  /* The first field is one of ModelProto's, of its wire type, and its value starts in the
   * buffer: whatever order the writer chose (protobuf writers put ir_version first, but any
   * order is a valid model). Its length is not checked, so a cut-off model is still taken for
   * one and gets the reader's message naming the place. */
  const uint8_t *b = buf;
  uint64_t tag = 0;
  size_t i = 0;
  for (; i < len && i < 3; i++) {
    tag |= (uint64_t)(b[i] & 0x7f) << (7 * i);
    if (!(b[i] & 0x80)) break;
  }
  if (i >= len || i == 3 || i + 1 >= len) return 0;
  for (size_t k = 0; k < sizeof model_fields / sizeof model_fields[0]; k++)
    if (tag >> 3 == model_fields[k][0] && (tag & 7) == model_fields[k][1]) return 1;
  return 0;
}

/* Well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF) and no NUL. */
static int utf8_ok(const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    if (c == 0) return 0;
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      k = 1;
      cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
      k = 2;
      cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
      k = 3;
      cp = c & 0x07u;
    } else {
      return 0;
    }
    if (n - i <= k) return 0;
    for (size_t j = 1; j <= k; j++) {
      if ((p[i + j] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (p[i + j] & 0x3fu);
    }
    if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return 0;
    i += k + 1;
  }
  return 1;
}

/* A string field: length-delimited, within `max` bytes, UTF-8 without NUL. */
static int take_str(const pb_field *f, size_t max, const char *what, onnx_str *out, char *err,
                    size_t n) {
  if (f->wire != PB_LEN) {
    snprintf(err, n, "%s at byte %zu is not a string (wire type %u)", what, f->offset, f->wire);
    return -1;
  }
  if (f->len > max) {
    snprintf(err, n, "%s at byte %zu has %zu bytes, more than the %zu this reader takes", what,
             f->offset, f->len, max);
    return -1;
  }
  if (!utf8_ok(f->data, f->len)) {
    snprintf(err, n, "%s at byte %zu is not UTF-8 text (or holds a NUL byte)", what, f->offset);
    return -1;
  }
  out->p = f->data;
  out->len = f->len;
  return 0;
}

static int want_wire(const pb_field *f, uint32_t wire, const char *what, char *err, size_t n) {
  if (f->wire == wire) return 0;
  snprintf(err, n, "%s at byte %zu has wire type %u; expected %u", what, f->offset, f->wire,
           wire);
  return -1;
}

/* An attribute of an EPContext node: the known ones are kept, each at most once. */
static int read_attribute(pb_reader r, epc_node *nd, char *err, size_t n) {
  pb_field f;
  onnx_str name = {0}, s = {0};
  int has_i = 0, has_s = 0, rc;
  int64_t i = 0, type = 0;
  size_t at = (size_t)(r.pos - r.base);
  while ((rc = pb_next(&r, &f, err, n)) == 1) {
    if (f.number == 1 && take_str(&f, ONNX_MAX_NAME_BYTES, "an attribute name", &name, err, n))
      return -1;
    if (f.number == 20) {
      if (want_wire(&f, PB_VARINT, "an attribute type", err, n)) return -1;
      type = (int64_t)f.u;
    }
    if (f.number == 3) {
      if (want_wire(&f, PB_VARINT, "an attribute's integer", err, n)) return -1;
      has_i = 1;
      i = (int64_t)f.u;
    }
    if (f.number == 4) {
      if (want_wire(&f, PB_LEN, "an attribute's string", err, n)) return -1;
      has_s = 1;
      s = (onnx_str){f.data, f.len};
    }
  }
  if (rc < 0) return -1;
  static const char *const ints[] = {"main_context", "embed_mode", "max_size"};
  static const char *const strs[] = {"ep_cache_context", "partition_name", "ep_sdk_version",
                                     "source", "ep_context_type"};
  int *has_int[] = {&nd->has_main_context, &nd->has_embed_mode, &nd->has_max_size};
  int64_t *int_val[] = {&nd->main_context, &nd->embed_mode, &nd->max_size};
  onnx_str *str_val[] = {&nd->cache, &nd->partition_name, &nd->ep_sdk_version, &nd->source,
                         &nd->ep_context_type};
  for (size_t k = 0; k < 3; k++) {
    if (!onnx_str_is(name, ints[k])) continue;
    if (*has_int[k] || !has_i || (type && type != ATTR_INT)) {
      snprintf(err, n, "attribute '%s' at byte %zu %s", ints[k], at,
               *has_int[k] ? "is given twice" : "is not an integer (INT)");
      return -1;
    }
    *has_int[k] = 1;
    *int_val[k] = i;
  }
  for (size_t k = 0; k < 5; k++) {
    if (!onnx_str_is(name, strs[k])) continue;
    int *seen = k == 0 ? &nd->has_cache : NULL;
    if ((seen && *seen) || (!seen && str_val[k]->p) || !has_s || (type && type != ATTR_STRING)) {
      snprintf(err, n, "attribute '%s' at byte %zu %s", strs[k], at,
               (seen && *seen) || (!seen && str_val[k]->p) ? "is given twice"
                                                         : "is not a string (STRING)");
      return -1;
    }
    if (k == 0) {
      nd->has_cache = 1;
      nd->cache = s; /* bytes: a binary in embed mode, checked as a file name later */
    } else {
      pb_field sf = {.offset = at, .wire = PB_LEN, .data = s.p ? s.p : (const uint8_t *)"",
                     .len = s.len};
      char what[64];
      snprintf(what, sizeof what, "attribute '%s'", strs[k]);
      if (take_str(&sf, ONNX_MAX_NAME_BYTES, what, str_val[k], err, n)) return -1;
    }
  }
  return 0;
}

static void sample_op(onnx_model *m, onnx_str op) {
  if (op.len == 0) return; /* ONNX requires an op type; nothing to say about a node without */
  for (uint32_t k = 0; k < m->num_op_samples; k++)
    if (m->op_samples[k].len == op.len && memcmp(m->op_samples[k].p, op.p, op.len) == 0) return;
  if (m->num_op_samples < ONNX_OP_SAMPLES) m->op_samples[m->num_op_samples++] = op;
}

/* One node: name, op type, domain; the attributes only when it is an EPContext node. */
static int read_node(pb_reader r, onnx_model *m, char *err, size_t n) {
  epc_node nd;
  memset(&nd, 0, sizeof nd);
  nd.offset = (size_t)(r.pos - r.base);
  onnx_str op = {0};
  pb_reader scan = r;
  pb_field f;
  int rc;
  while ((rc = pb_next(&scan, &f, err, n)) == 1) {
    if (f.number == 3 && take_str(&f, ONNX_MAX_NAME_BYTES, "a node name", &nd.name, err, n))
      return -1;
    if (f.number == 4 && take_str(&f, ONNX_MAX_NAME_BYTES, "a node's op type", &op, err, n))
      return -1;
    if (f.number == 7 && take_str(&f, ONNX_MAX_NAME_BYTES, "a node's domain", &nd.domain, err, n))
      return -1;
  }
  if (rc < 0) return -1;
  m->num_nodes++;
  if (!onnx_str_is(op, "EPContext")) {
    sample_op(m, op);
    return 0;
  }
  if (!onnx_str_is(nd.domain, "com.microsoft")) {
    snprintf(err, n, "node '%.*s' at byte %zu is an EPContext node of domain '%.*s'; expected "
             "com.microsoft", (int)nd.name.len, (const char *)nd.name.p, nd.offset,
             (int)nd.domain.len, (const char *)nd.domain.p);
    return -1;
  }
  if (m->num_epc == ONNX_MAX_EPCONTEXT_NODES) {
    snprintf(err, n, "the model has more than %u EPContext nodes", ONNX_MAX_EPCONTEXT_NODES);
    return -1;
  }
  while ((rc = pb_next(&r, &f, err, n)) == 1) {
    if (f.number != 5) continue;
    if (want_wire(&f, PB_LEN, "an attribute", err, n)) return -1;
    if (read_attribute(pb_sub(&r, &f), &nd, err, n)) return -1;
  }
  if (rc < 0) return -1;
  m->epc[m->num_epc++] = nd;
  return 0;
}

static int read_graph(pb_reader r, onnx_model *m, char *err, size_t n) {
  pb_field f;
  int rc;
  while ((rc = pb_next(&r, &f, err, n)) == 1) {
    if (f.number != 1) continue;
    if (want_wire(&f, PB_LEN, "a node", err, n)) return -1;
    if (read_node(pb_sub(&r, &f), m, err, n)) return -1;
  }
  return rc < 0 ? -1 : 0;
}

static int read_opset(pb_reader r, onnx_model *m, char *err, size_t n) {
  pb_field f;
  onnx_str domain = {0};
  int64_t version = 0;
  int rc;
  while ((rc = pb_next(&r, &f, err, n)) == 1) {
    if (f.number == 1 && take_str(&f, ONNX_MAX_NAME_BYTES, "an opset domain", &domain, err, n))
      return -1;
    if (f.number == 2) {
      if (want_wire(&f, PB_VARINT, "an opset version", err, n)) return -1;
      version = (int64_t)f.u;
    }
  }
  if (rc < 0) return -1;
  if (domain.len == 0 || onnx_str_is(domain, "ai.onnx")) m->opset = version;
  return 0;
}

static int read_prop(pb_reader r, onnx_model *m, char *err, size_t n) {
  if (m->num_props == ONNX_MAX_PROPS) {
    snprintf(err, n, "the model has more than %u metadata_props entries", ONNX_MAX_PROPS);
    return -1;
  }
  onnx_prop *p = &m->props[m->num_props];
  memset(p, 0, sizeof *p);
  pb_field f;
  int rc;
  while ((rc = pb_next(&r, &f, err, n)) == 1) {
    if (f.number == 1 && take_str(&f, ONNX_MAX_NAME_BYTES, "a metadata key", &p->key, err, n))
      return -1;
    if (f.number == 2 &&
        take_str(&f, ONNX_MAX_PROP_VALUE_BYTES, "a metadata value", &p->value, err, n))
      return -1;
  }
  if (rc < 0) return -1;
  m->num_props++;
  return 0;
}

int onnx_read(const uint8_t *buf, size_t len, onnx_model *m, char *err, size_t n) {
  memset(m, 0, sizeof *m);
  pb_reader r;
  pb_init(&r, buf, len);
  pb_field f;
  int rc, graphs = 0;
  while ((rc = pb_next(&r, &f, err, n)) == 1) {
    int bad = 0;
    switch (f.number) {
      case 1:
        bad = want_wire(&f, PB_VARINT, "ir_version", err, n);
        m->has_ir_version = 1;
        m->ir_version = (int64_t)f.u;
        break;
      case 2:
        bad = take_str(&f, ONNX_MAX_NAME_BYTES, "producer_name", &m->producer_name, err, n);
        break;
      case 3:
        bad = take_str(&f, ONNX_MAX_NAME_BYTES, "producer_version", &m->producer_version, err, n);
        break;
      case 7:
        if (graphs++) {
          snprintf(err, n, "a second graph at byte %zu (a model has one)", f.offset);
          return -1;
        }
        bad = want_wire(&f, PB_LEN, "graph", err, n) || read_graph(pb_sub(&r, &f), m, err, n);
        break;
      case 8:
        bad = want_wire(&f, PB_LEN, "opset_import", err, n) || read_opset(pb_sub(&r, &f), m, err, n);
        break;
      case 14:
        bad = want_wire(&f, PB_LEN, "metadata_props", err, n) || read_prop(pb_sub(&r, &f), m, err, n);
        break;
      default:
        break;
    }
    if (bad) return -1;
  }
  if (rc < 0) return -1;
  if (!m->has_ir_version || !graphs) {
    snprintf(err, n, "no %s: not an ONNX model", !m->has_ir_version ? "ir_version" : "graph");
    return -1;
  }
  return 0;
}
