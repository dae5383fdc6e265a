/* test_model_hostile.c - hostile ONNX files against the reader (src/model/): truncated at every
 * byte, varints that never end or overflow, lengths past the end, wire types ONNX never uses,
 * deep nesting, huge counts, text that is not UTF-8. Each is refused with a message naming the
 * place, or (deep nesting in a part the reader steps over) read without recursing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "epc_rig.h"
#include "fixture.h"
#include "test.h"

static uint8_t *one_node_model(size_t *len) {
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  static const char *const props[][2] = {{"names", "{0: 'a'}"}};
  ob_node node = OB_NODE(.name = "ctx", .cache = bin, .cache_len = n, .source = "QNN");
  ob_model m = {.num_props = 1, .props = props, .num_nodes = 1, .nodes = &node};
  return ob_build(&m, len);
}

/* Every prefix of a good model is refused (or, cut between whole top-level fields after the
 * graph, still a model) and never read past its end. */
TEST(epc_hostile_every_truncation) {
  fx_reset_env();
  size_t len = 0;
  uint8_t *full = one_node_model(&len);
  htpu_model_info *info = NULL;
  CHECK_MSG(epc_inspect_buffer(full, len, &info) == 0, "%s", epc_msg);
  htpu_model_info_free(info);
  int refused = 0;
  for (size_t cut = 2; cut < len; cut += cut < 400 ? 1 : 7) {
    /* an exact-size copy, so ASan sees any read past the cut */
    uint8_t *part = malloc(cut);
    memcpy(part, full, cut);
    int rc = epc_inspect_buffer(part, cut, &info);
    free(part);
    htpu_model_info_free(info);
    info = NULL;
    if (rc) {
      refused++;
      CHECK_MSG(epc_msg[0] != 0, "cut at %zu: an error without a message", cut);
    }
  }
  free(full);
  CHECK(refused > 100);
}

static int inspect_raw(pbw *w) {
  htpu_model_info *info = NULL;
  int rc = epc_inspect_buffer(w->p, w->len, &info);
  htpu_model_info_free(info);
  pbw_free(w);
  return rc;
}

TEST(epc_hostile_wire_format) {
  fx_reset_env();
  static const uint8_t never_ends[] = {0x08, 0x09, 0x3a, 0x80, 0x80, 0x80, 0x80, 0x80,
                                       0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  static const uint8_t overflow[] = {0x08, 0x09, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff, 0x02};
  static const uint8_t past_end[] = {0x08, 0x09, 0x3a, 0xff, 0xff, 0x03, 0x0a};
  static const uint8_t group[] = {0x08, 0x09, 0x3b, 0x00};
  static const uint8_t field0[] = {0x08, 0x09, 0x02, 0x00};
  static const struct {
    const uint8_t *b;
    size_t n;
    const char *msg;
  } cases[] = {
      {never_ends, sizeof never_ends, "length at byte 3 does not fit 64 bits"},
      {overflow, sizeof overflow, "does not fit 64 bits"},
      {past_end, sizeof past_end, "declares 65535 bytes, past the end of its message"},
      {group, sizeof group, "wire type 3 (a group)"},
      {field0, sizeof field0, "field number 0 at byte 2 is out of range"},
  };
  htpu_model_info *info = NULL;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_EQ(epc_inspect_buffer(cases[i].b, cases[i].n, &info), HTPU_EMODEL);
    CHECK_STR_CONTAINS(epc_msg, "is not a readable ONNX model");
    CHECK_STR_CONTAINS(epc_msg, cases[i].msg);
  }
  /* a graph given twice; ir_version as a string; a node name that is not UTF-8 */
  pbw w = {0}, g = {0};
  pbw_int(&w, 1, 9);
  pbw_msg(&w, 7, &g);
  pbw_msg(&w, 7, &(pbw){0});
  CHECK_EQ(inspect_raw(&w), HTPU_EMODEL);
  CHECK_STR_CONTAINS(epc_msg, "a second graph at byte 4");
  pbw_int(&w, 1, 9);
  pbw_str(&w, 1, "nine");
  CHECK_EQ(inspect_raw(&w), HTPU_EMODEL);
  CHECK_STR_CONTAINS(epc_msg, "ir_version at byte 2 has wire type 2; expected 0");
  pbw node = {0};
  pbw_bytes(&node, 3, "\xc3\x28", 2);
  pbw_str(&node, 4, "EPContext");
  pbw_int(&w, 1, 9);
  pbw_msg(&g, 1, &node);
  pbw_msg(&w, 7, &g);
  CHECK_EQ(inspect_raw(&w), HTPU_EMODEL);
  CHECK_STR_CONTAINS(epc_msg, "a node name at byte 6 is not UTF-8 text");
}

/* Prepends to a buffer written from its end (each level wraps everything after it). */
typedef struct back {
  uint8_t *buf;
  size_t pos;
} back;

static void back_put(back *b, const void *d, size_t n) {
  b->pos -= n;
  memcpy(b->buf + b->pos, d, n);
}

/* tag and length of a field whose body is everything from b->pos to `end` */
static void back_wrap(back *b, size_t end, uint32_t field) {
  uint8_t v[12];
  size_t n = 0, len = end - b->pos;
  do {
    v[n++] = (uint8_t)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
    len >>= 7;
  } while (len);
  back_put(b, v, n);
  uint8_t tag = (uint8_t)(field << 3 | 2);
  back_put(b, &tag, 1);
}

/* A node whose attribute holds a graph holding a node holding ... 100,000 levels deep: the
 * reader steps over it by its length (no recursion), and the model still loads. */
TEST(epc_hostile_deep_nesting_is_stepped_over) {
  fx_reset_env();
  enum { LEVELS = 100000 };
  back b = {malloc((size_t)LEVELS * 48), (size_t)LEVELS * 48};
  size_t end = b.pos;
  for (int level = 0; level < LEVELS; level++) {
    back_wrap(&b, end, 5);                         /* node.attribute = the deeper level */
    back_put(&b, "\x22\x08Identity", 10);          /* node.op_type */
    back_wrap(&b, end, 1);                         /* graph.node */
    back_wrap(&b, end, 6);                         /* attribute.g */
    back_put(&b, "\x0a\x04" "body" "\xa0\x01\x05", 9); /* attribute.name, .type = GRAPH */
  }
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  pbw w = {0}, g = {0}, loop = {0}, epc = {0}, a = {0};
  pbw_str(&loop, 4, "Loop");
  pbw_bytes(&loop, 5, b.buf + b.pos, end - b.pos);
  free(b.buf);
  pbw_msg(&g, 1, &loop);
  pbw_str(&a, 1, "ep_cache_context");
  pbw_bytes(&a, 4, bin, n);
  pbw_str(&epc, 4, "EPContext");
  pbw_str(&epc, 7, "com.microsoft");
  pbw_msg(&epc, 5, &a);
  pbw_msg(&g, 1, &epc);
  pbw_int(&w, 1, 9);
  pbw_msg(&w, 7, &g);
  CHECK_MSG(inspect_raw(&w) == 0, "%s", epc_msg);
}

TEST(epc_hostile_huge_counts) {
  fx_reset_env();
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  /* 257 EPContext nodes: one past the bound */
  ob_node *nodes = calloc(HTPU_MAX_EPCONTEXT_NODES + 1, sizeof *nodes);
  for (uint32_t i = 0; i <= HTPU_MAX_EPCONTEXT_NODES; i++)
    nodes[i] = OB_NODE(.name = "n", .cache = bin, .cache_len = 8, .main_context = OB_INT(0));
  nodes[0] = OB_NODE(.name = "n", .cache = bin, .cache_len = n);
  ob_model m = {.num_nodes = HTPU_MAX_EPCONTEXT_NODES + 1, .nodes = nodes};
  size_t mn = 0;
  uint8_t *mb = ob_build(&m, &mn);
  free(nodes);
  htpu_model_info *info = NULL;
  CHECK_EQ(epc_inspect_buffer(mb, mn, &info), HTPU_EMODEL);
  free(mb);
  CHECK_STR_CONTAINS(epc_msg, "more than 256 EPContext nodes");
  /* 1025 metadata entries */
  const char *(*props)[2] = calloc(1025, sizeof *props);
  for (int i = 0; i < 1025; i++) {
    props[i][0] = "k";
    props[i][1] = "v";
  }
  ob_node one = OB_NODE(.name = "n", .cache = bin, .cache_len = n);
  ob_model m2 = {.num_props = 1025, .props = (const char *const(*)[2])props, .num_nodes = 1,
                 .nodes = &one};
  mb = ob_build(&m2, &mn);
  free(props);
  CHECK_EQ(epc_inspect_buffer(mb, mn, &info), HTPU_EMODEL);
  free(mb);
  CHECK_STR_CONTAINS(epc_msg, "more than 1024 metadata_props entries");
}

/* Names that are not Ultralytics' dict form stay metadata, with no class list. */
TEST(epc_class_names_only_from_the_dict_form) {
  fx_reset_env();
  size_t n = 0;
  const uint8_t *bin = epc_add_bin(&n);
  static const char *const values[] = {"{1: 'a'}", "['a', 'b']", "{0: 'a', 0: 'b'}",
                                       "{0: 'a' 1: 'b'}", "{0: 'a\\q'}", "{0: 'a'}x", "{}"};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    const char *const props[][2] = {{"names", values[i]}};
    ob_node node = OB_NODE(.name = "n", .cache = bin, .cache_len = n);
    ob_model m = {.num_props = 1, .props = props, .num_nodes = 1, .nodes = &node};
    size_t mn = 0;
    uint8_t *mb = ob_build(&m, &mn);
    htpu_model_info *info = NULL;
    int rc = epc_inspect_buffer(mb, mn, &info);
    free(mb);
    CHECK_MSG(rc == 0, "%s", epc_msg);
    int none = info->source->num_class_names == 0 && info->source->class_names == NULL &&
               strcmp(info->source->props[0].value, values[i]) == 0;
    htpu_model_info_free(info);
    CHECK_MSG(none, "'%s' was taken as class names", values[i]);
  }
}
