/* test_core_load_binary.c - how a loaded model holds its binary: mapped where the file cannot
 * change (a sealed memfd here; squashfs on the board), copied elsewhere, lent by the caller;
 * told to QNN as persistent where announced (capability 208), so the reference backend keeps
 * pointers into it instead of a copy and checks every use. A file truncated and rewritten
 * under a loaded model, and a DSP restart after it, change nothing; nor does a restart of a
 * mapped model (the recovery creates the context from the same mapping). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epc_rig.h"
#include "fixture.h"
#include "load_rig.h"
#include "test.h"

static htpu_ref_context_state ref_state(void) {
  htpu_ref_context_state s;
  memset(&s, 0, sizeof s);
  if (fx_ref_context_state("weighted", &s) != 0) s.num_graphs = 999; /* shows in a CHECK */
  return s;
}

/* A file on a writable file system is copied: truncating it to nothing and writing garbage
 * over it while the model is loaded changes no answer, not even after a DSP restart, whose
 * recovery creates the context again from the copy. */
TEST(load_file_truncated_and_rewritten_under_a_loaded_model) {
  fx_reset_env();
  const char *path = fx_build_model_file("truncated.bin", LR_WEIGHTED);
  CHECK(path);
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "weighted", &g), HTPU_OK);
  htpu_context_load_info li = lr_info(ctx);
  CHECK(strcmp(li.binary, "copied") == 0);
  CHECK_STR_CONTAINS(li.binary_note, "copied: on ");
  CHECK_EQ(li.binary_copy_bytes, li.binary_bytes);
  CHECK_EQ(li.persistent_binary, 1);
  unsigned long v0 = fx_ref_violations();
  CHECK_EQ(lr_weighted_check(g, 1), 0);
  CHECK_EQ(truncate(path, 0), 0);
  CHECK_EQ(lr_weighted_check(g, 2), 0);
  CHECK_EQ(test_write_file(path, "garbage, not a model", 20), 0);
  CHECK_EQ(lr_weighted_check(g, 3), 0);
  htpu_stats before, after;
  htpu_stats_get(&before);
  CHECK_EQ(fx_ref_trigger_ssr(), 1);
  CHECK_EQ(lr_weighted_check(g, 4), 0);
  htpu_stats_get(&after);
  CHECK_EQ(after.recoveries, before.recoveries + 1);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

/* A memfd sealed against writing and shrinking is mapped: no copy in the library or in the
 * backend (it is told the binary persists), the kernel refuses the truncate, and a DSP
 * restart's recovery creates the context from the same mapping. */
TEST(load_sealed_memfd_is_mapped_and_recovered_from_the_mapping) {
  fx_reset_env();
  char path[64];
  size_t len = 0;
  int fd = lr_memfd(LR_WEIGHTED, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, path,
                    &len);
  CHECK(fd >= 0);
  htpu_runtime *rt = lr_runtime(1);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  htpu_stats s0, s1, s2;
  htpu_stats_get(&s0);
  int rc = rt ? htpu_context_open_file(rt, path, &ctx) : -1;
  if (!rc) rc = htpu_graph_open(ctx, "weighted", &g);
  htpu_context_load_info li = lr_info(ctx);
  htpu_ref_context_state rs = ref_state();
  htpu_stats_get(&s1);
  int trunc = ftruncate(fd, 0), trunc_errno = errno;
  int answers = rc ? rc : lr_weighted_check(g, 1);
  uint32_t stale = fx_ref_trigger_ssr();
  int recovered = rc ? rc : lr_weighted_check(g, 5);
  unsigned long violations = fx_ref_violations();
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  htpu_stats_get(&s2);
  close(fd);
  CHECK_EQ(rc, HTPU_OK);
  CHECK(strcmp(li.binary, "mapped") == 0);
  CHECK_STR_CONTAINS(li.binary_note, "memfd sealed");
  CHECK_EQ(li.binary_bytes, len);
  CHECK_EQ(li.binary_copy_bytes, 0);
  CHECK_EQ(rs.persistent, 1);
  CHECK_EQ(rs.binary_copy_bytes, 0);
  CHECK_EQ(s1.binary_bytes_mapped - s0.binary_bytes_mapped, len);
  CHECK_EQ(s1.binary_bytes_copied, s0.binary_bytes_copied);
  CHECK_EQ(s2.binary_bytes_mapped, s0.binary_bytes_mapped);
  CHECK_EQ(trunc, -1);
  CHECK_EQ(trunc_errno, EPERM);
  CHECK_EQ(answers, 0);
  CHECK_EQ(stale, 1);
  CHECK_EQ(recovered, 0);
  CHECK_EQ(violations, 0);
}

/* A memfd that may still be written is copied: writing over it changes no answer. A sealed
 * one is copied too when the load asks (copy_binary). */
TEST(load_memfd_that_can_change_is_copied) {
  fx_reset_env();
  char path[64];
  size_t len = 0;
  int fd = lr_memfd(LR_WEIGHTED, F_SEAL_SHRINK, path, &len);
  CHECK(fd >= 0);
  htpu_runtime *rt = lr_runtime(1);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  int rc = rt ? htpu_context_open_file(rt, path, &ctx) : -1;
  if (!rc) rc = htpu_graph_open(ctx, "weighted", &g);
  htpu_context_load_info li = lr_info(ctx);
  char junk[256];
  memset(junk, 0x5a, sizeof junk);
  int wrote = pwrite(fd, junk, sizeof junk, 0) == (ssize_t)sizeof junk;
  int answers = rc ? rc : lr_weighted_check(g, 1);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  close(fd);
  CHECK_EQ(rc, HTPU_OK);
  CHECK(strcmp(li.binary, "copied") == 0);
  CHECK(wrote);
  CHECK_EQ(answers, 0);
  fd = lr_memfd(LR_WEIGHTED, F_SEAL_WRITE | F_SEAL_SHRINK, path, &len);
  CHECK(fd >= 0);
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.copy_binary = 1;
  rc = htpu_context_open_file_ex(rt, path, &lo, &ctx);
  li = lr_info(ctx);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  close(fd);
  CHECK_EQ(rc, HTPU_OK);
  CHECK(strcmp(li.binary, "copied") == 0);
  CHECK_STR_CONTAINS(li.binary_note, "asked for a copy");
}

typedef struct lent {
  void *buf;
  int released;
} lent;

static void release_lent(void *arg) {
  lent *l = arg;
  l->released++;
  free(l->buf);
  l->buf = NULL;
}

/* A lent buffer is referenced, never copied, and released exactly once: when the context's
 * last reference goes (here the graph's, after the context handle), or at once when the load
 * fails. */
TEST(load_lent_buffer_is_kept_until_the_context_goes) {
  fx_reset_env();
  lent l = {NULL, 0};
  size_t len = 0;
  l.buf = fx_build_model(LR_WEIGHTED, &len);
  CHECK(l.buf);
  htpu_runtime *rt = lr_runtime(1);
  CHECK(rt);
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.buffer_release = release_lent;
  lo.buffer_release_arg = &l;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_buffer_ex(rt, l.buf, len, &lo, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "weighted", &g), HTPU_OK);
  htpu_context_load_info li = lr_info(ctx);
  CHECK(strcmp(li.binary, "lent") == 0);
  CHECK_EQ(li.binary_copy_bytes, 0);
  CHECK_EQ(ref_state().binary_copy_bytes, 0);
  htpu_context_close(&ctx);
  CHECK_EQ(l.released, 0);
  CHECK_EQ(lr_weighted_check(g, 7), 0);
  htpu_graph_close(&g);
  CHECK_EQ(l.released, 1);
  /* a failed load releases too, once */
  lent bad = {malloc(64), 0};
  CHECK(bad.buf);
  memset(bad.buf, 0, 64);
  lo.buffer_release_arg = &bad;
  CHECK_EQ(htpu_context_open_buffer_ex(rt, bad.buf, 64, &lo, &ctx), HTPU_EMODEL);
  CHECK_EQ(bad.released, 1);
  CHECK_EQ(htpu_context_open_buffer_ex(rt, NULL, 0, &lo, &ctx), HTPU_EINVAL);
  CHECK_EQ(bad.released, 2); /* its own second lend: released although nothing was read */
  htpu_runtime_close(&rt);
}

/* The first place `n` bytes like `pat` sit in buf, or NULL. */
static unsigned char *find_bytes(void *buf, size_t len, const void *pat, size_t n) {
  unsigned char *p = buf;
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(p + i, pat, n) == 0) return p + i;
  return NULL;
}

/* l's len bytes lent to a new reference runtime (persistent where announced), then `graph`
 * opened: HTPU_OK or the first error (what was opened is set either way). */
static int open_lent(lent *l, size_t len, const char *graph, htpu_runtime **rt,
                     htpu_context **ctx, htpu_graph **g) {
  *rt = lr_runtime(1);
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.buffer_release = release_lent;
  lo.buffer_release_arg = l;
  int rc = *rt ? htpu_context_open_buffer_ex(*rt, l->buf, len, &lo, ctx) : -1;
  return rc ? rc : htpu_graph_open(*ctx, graph, g);
}

/* The persistent binary's promise checked by the reference backend: a lent buffer whose
 * weights change under the loaded model is refused at the next execute, never read. */
TEST(load_persistent_binary_changed_is_refused_by_the_backend) {
  fx_reset_env();
  lent l = {NULL, 0};
  size_t len = 0;
  l.buf = fx_build_model(LR_WEIGHTED, &len);
  CHECK(l.buf);
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(open_lent(&l, len, "weighted", &rt, &ctx, &g), HTPU_OK);
  CHECK_EQ(lr_weighted_check(g, 1), 0);
  /* the static weights 0.5, 2, -1, 3 are in the binary: change the 2 into a 3 */
  float two = 2, three = 3;
  unsigned char *hit = find_bytes(l.buf, len, &two, 4);
  CHECK(hit);
  unsigned long v0 = fx_ref_violations();
  memcpy(hit, &three, 4);
  CHECK_EQ(lr_weighted_check(g, 1), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), QNN_COMMON_ERROR_GENERAL);
  CHECK_EQ(fx_ref_violations(), v0 + 1);
  CHECK_STR_CONTAINS(fx_ref_last_violation(), "changed after createFromBinary");
  memcpy(hit, &two, 4); /* put back: the context can be freed without another violation */
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_EQ(fx_ref_violations(), v0 + 1);
  CHECK_EQ(l.released, 1);
  const ref_ctl *c = ref_ctl_get(); /* the tests after this one count violations from 0 */
  if (c) c->reset_stats();
}

/* The check misses no small change: 64 weights (256 bytes, eight of the hash's 32-byte
 * blocks) lent as a persistent binary, then each byte changed in its low bit, its top bit
 * and all its bits, and each pair of weights' signs flipped (a change confined to the top
 * bits of words is what a plain sum or FNV chain lets cancel): every one refused at the next
 * execute, and the weights put back run again. */
static int wide_check(htpu_graph *g, const float *w) {
  float x[64], y[64];
  for (int i = 0; i < 64; i++) x[i] = (float)(i % 7) - 3.0f;
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  int rc = htpu_graph_execute(g, &in, 1, &out, 1, NULL);
  for (int i = 0; !rc && i < 64; i++)
    if (y[i] != x[i] * w[i]) rc = -100;
  return rc;
}

static int refused_after(htpu_graph *g, const float *w, unsigned char *at, unsigned char v) {
  unsigned char was = *at;
  *at = v;
  int rc = wide_check(g, w);
  *at = was;
  return rc == HTPU_EQNN;
}

TEST(load_persistent_binary_every_small_change_is_refused) {
  fx_reset_env();
  char text[1400];
  float w[64];
  int n = snprintf(text, sizeof text, "graph wide\n  input x f32 [1,64]\n  static w f32 [1,64] data=[");
  for (int i = 0; i < 64; i++) {
    w[i] = (float)(i + 1) * (i % 2 ? -0.75f : 1.25f);
    n += snprintf(text + n, sizeof text - (size_t)n, "%s%g", i ? "," : "", (double)w[i]);
  }
  snprintf(text + n, sizeof text - (size_t)n,
           "]\n  output y f32 [1,64]\n  op ElementWiseMultiply x w -> y\n");
  lent l = {NULL, 0};
  size_t len = 0;
  l.buf = fx_build_model(text, &len);
  CHECK(l.buf);
  unsigned char *at = find_bytes(l.buf, len, w, sizeof w);
  CHECK(at);
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(open_lent(&l, len, "wide", &rt, &ctx, &g), HTPU_OK);
  CHECK_EQ(lr_info(ctx).persistent_binary, 1);
  CHECK_EQ(wide_check(g, w), 0);
  int missed = 0, tried = 0;
  for (size_t b = 0; b < sizeof w; b++) {
    const unsigned char v[3] = {(unsigned char)(at[b] ^ 0x01), (unsigned char)(at[b] ^ 0x80),
                                (unsigned char)~at[b]};
    for (int k = 0; k < 3; k++, tried++) missed += !refused_after(g, w, at + b, v[k]);
  }
  for (int i = 0; i < 64; i++)
    for (int j = i + 1; j < 64; j++, tried++) {
      at[4 * i + 3] ^= 0x80; /* little-endian f32: the sign is byte 3's top bit */
      missed += !refused_after(g, w, at + 4 * j + 3, (unsigned char)(at[4 * j + 3] ^ 0x80));
      at[4 * i + 3] ^= 0x80;
    }
  CHECK_EQ(missed, 0);
  CHECK_EQ(tried, 768 + 2016);
  CHECK_EQ(wide_check(g, w), 0); /* put back, the same weights run */
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_EQ(l.released, 1);
  const ref_ctl *c = ref_ctl_get(); /* the tests after this one count violations from 0 */
  if (c) c->reset_stats();
}

/* Without capability 208 the binary is not announced as persistent: the backend keeps a copy
 * of its own (what it did for every load before), and the answers are the same. */
TEST(load_persistent_binary_capability_off) {
  fx_reset_env();
  CHECK_EQ(fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CONFIG_PERSISTENT_BINARY, 1000), 0);
  const char *path = fx_build_model_file("nopersist.bin", LR_WEIGHTED);
  htpu_runtime *rt = lr_runtime(1);
  htpu_runtime_info ri;
  memset(&ri, 0, sizeof ri);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  int rc = rt && path ? htpu_runtime_get_info(rt, &ri) : -1;
  if (!rc) rc = htpu_context_open_file(rt, path, &ctx);
  if (!rc) rc = htpu_graph_open(ctx, "weighted", &g);
  htpu_context_load_info li = lr_info(ctx);
  htpu_ref_context_state rs = ref_state();
  int answers = rc ? rc : lr_weighted_check(g, 3);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  fx_ref_reset_capabilities();
  CHECK_EQ(rc, HTPU_OK);
  CHECK_EQ(ri.persistent_binary, 0);
  CHECK_EQ(li.persistent_binary, 0);
  CHECK_EQ(rs.persistent, 0);
  CHECK_EQ(rs.binary_copy_bytes, li.binary_bytes);
  CHECK_EQ(answers, 0);
}

/* Opens the two-context model in a memfd (sealed or not) twice in one call, once per context
 * (graphs add_f32 and add_two), and reads the stats before, while loaded and after. */
static int load_both_contexts(unsigned seals, size_t *model_len, htpu_context_load_info li[2],
                              htpu_stats s[3]) {
  size_t n1 = 0, n2 = 0;
  const uint8_t *b1 = epc_add_bin(&n1), *b2 = epc_add_two_bin(&n2);
  ob_node nodes[2] = {OB_NODE(.name = "first", .cache = b1, .cache_len = n1),
                      OB_NODE(.name = "second", .cache = b2, .cache_len = n2)};
  ob_model m = {.num_nodes = 2, .nodes = nodes};
  uint8_t *onnx = ob_build(&m, model_len);
  char path[64];
  int fd = onnx ? lr_memfd_bytes(onnx, *model_len, seals, path) : -1;
  free(onnx);
  if (fd < 0) return -1;
  htpu_runtime *rt = lr_runtime(0);
  const char *graphs[2] = {"add_f32", "add_two"};
  htpu_load_options lo[2];
  htpu_load_request req[2];
  memset(lo, 0, sizeof lo);
  memset(req, 0, sizeof req);
  for (int i = 0; i < 2; i++) {
    lo[i].graph = graphs[i];
    req[i].path = path;
    req[i].opts = &lo[i];
  }
  htpu_stats_get(&s[0]);
  int rc = rt ? htpu_context_open_many(rt, req, 2) : -1;
  htpu_stats_get(&s[1]);
  for (int i = 0; i < 2; i++) {
    li[i] = lr_info(req[i].ctx);
    htpu_context_close(&req[i].ctx);
  }
  htpu_runtime_close(&rt);
  htpu_stats_get(&s[2]);
  close(fd);
  return rc;
}

/* A binary embedded in an ONNX model in a sealed memfd is mapped with its whole model: each
 * load maps the file, and the stats count what is mapped (the file each time), not the
 * embedded slice; the load info keeps the binary's own size and says the file is mapped. A
 * copy holds the slice alone, and the stats count that. */
TEST(load_embedded_binary_counts_the_whole_mapped_model) {
  fx_reset_env();
  size_t n1 = 0, n2 = 0, len = 0;
  epc_add_bin(&n1), epc_add_two_bin(&n2);
  htpu_context_load_info li[2];
  htpu_stats s[3];
  CHECK_EQ(load_both_contexts(F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, &len, li,
                              s),
           HTPU_OK);
  char whole[96];
  snprintf(whole, sizeof whole, "its whole %zu-byte file is mapped", len);
  CHECK(strcmp(li[0].binary, "mapped") == 0 && strcmp(li[1].binary, "mapped") == 0);
  CHECK_STR_CONTAINS(li[0].binary_note, whole);
  CHECK_STR_CONTAINS(li[1].binary_note, whole);
  CHECK_EQ(li[0].binary_bytes, n1);
  CHECK_EQ(li[1].binary_bytes, n2);
  CHECK_EQ(li[0].binary_copy_bytes + li[1].binary_copy_bytes, 0);
  CHECK_EQ(s[1].binary_bytes_mapped - s[0].binary_bytes_mapped, 2 * len);
  CHECK_EQ(s[1].binary_bytes_copied, s[0].binary_bytes_copied);
  CHECK_EQ(s[2].binary_bytes_mapped, s[0].binary_bytes_mapped);

  CHECK_EQ(load_both_contexts(0, &len, li, s), HTPU_OK);
  CHECK(strcmp(li[0].binary, "copied") == 0 && strcmp(li[1].binary, "copied") == 0);
  CHECK_EQ(li[0].binary_copy_bytes, n1);
  CHECK_EQ(li[1].binary_copy_bytes, n2);
  CHECK_EQ(s[1].binary_bytes_copied - s[0].binary_bytes_copied, n1 + n2);
  CHECK_EQ(s[1].binary_bytes_mapped, s[0].binary_bytes_mapped);
  CHECK_EQ(s[2].binary_bytes_copied, s[0].binary_bytes_copied);
}
