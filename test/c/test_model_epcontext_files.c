/* test_model_epcontext_files.c - an EPContext model's external binaries as files: nodes that
 * name one file, however they spell it, share one context and the file is read once, so that a
 * small model cannot make the loader read a large binary hundreds of times. What the process
 * read is the kernel's count (/proc/self/io, rchar), not a figure of the library's own. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epc_rig.h"
#include "fixture.h"
#include "model/external.h"
#include "test.h"

#define MANY 256

/* Bytes this process has read through read() and the like so far; 0 when unknown. */
static uint64_t bytes_read(void) {
  FILE *f = fopen("/proc/self/io", "r");
  if (!f) return 0;
  char line[128];
  uint64_t v = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "rchar: %" SCNu64, &v) == 1) break;
  fclose(f);
  return v;
}

/* A binary of about 64 KiB: a graph adding a static tensor of 65536 bytes. */
static uint8_t *big_binary(size_t *len) {
  size_t cap = 65536 * 2 + 512;
  char *text = malloc(cap);
  if (!text) return NULL;
  size_t o = (size_t)snprintf(text, cap,
                              "graph g\n  input x u8 [65536] scale=1 zero_point=0\n"
                              "  static w u8 [65536] scale=1 zero_point=0 data=[");
  for (int i = 0; i < 65536; i++) o += (size_t)snprintf(text + o, cap - o, i ? ",1" : "1");
  snprintf(text + o, cap - o, "]\n  output y u8 [65536] scale=1 zero_point=0\n"
                              "  op ElementWiseAdd x w -> y\n");
  uint8_t *bin = fx_build_model(text, len);
  free(text);
  return bin;
}

typedef struct files_rig {
  char dir[600], model[700];
  size_t bin_len, model_len;
} files_rig;

/* dir/big.bin, a hard link to it (hard.bin) and a symlink in the folder (near.bin); the model
 * names it MANY ways: big.bin, ./big.bin, ././big.bin, ..., hard.bin, near.bin. */
static int make_many_names(files_rig *r) {
  snprintf(r->dir, sizeof r->dir, "%s", test_tmp_path("many_names"));
  mkdir(r->dir, 0700);
  char big[700], hard[700], near[700];
  snprintf(big, sizeof big, "%s/big.bin", r->dir);
  snprintf(hard, sizeof hard, "%s/hard.bin", r->dir);
  snprintf(near, sizeof near, "%s/near.bin", r->dir);
  uint8_t *bin = big_binary(&r->bin_len);
  if (!bin || test_write_file(big, bin, r->bin_len)) return -1;
  free(bin);
  unlink(hard);
  unlink(near);
  if (link(big, hard) || symlink("big.bin", near)) return -1;
  static char names[MANY][2 * MANY + 16];
  static ob_node nodes[MANY];
  for (int i = 0; i < MANY; i++) {
    size_t o = 0;
    for (int k = 0; k < i && i < MANY - 2; k++) o += (size_t)snprintf(names[i] + o, 8, "./");
    snprintf(names[i] + o, sizeof names[i] - o, "%s",
             i == MANY - 2 ? "hard.bin" : i == MANY - 1 ? "near.bin" : "big.bin");
    char *label = malloc(16);
    snprintf(label, 16, "n%d", i);
    nodes[i] = OB_NODE(.name = label, .cache = names[i], .embed_mode = OB_INT(0),
                       .source = "QNN");
  }
  ob_model m = {.num_nodes = MANY, .nodes = nodes};
  snprintf(r->model, sizeof r->model, "%s/model.onnx", r->dir);
  uint8_t *b = ob_build(&m, &r->model_len);
  for (int i = 0; i < MANY; i++) free((char *)nodes[i].name);
  int rc = b ? test_write_file(r->model, b, r->model_len) : -1;
  free(b);
  return rc;
}

TEST(epc_one_file_named_many_ways_is_one_context_read_once) {
  fx_reset_env();
  files_rig r;
  CHECK_EQ(make_many_names(&r), 0);
  CHECK_MSG(bytes_read() > 0, "no rchar in /proc/self/io");
  /* what a reading may cost besides the binary once: the model, the system library's
   * headers, /proc reads; far below a second reading of the binary */
  uint64_t allowed = r.model_len + r.bin_len + r.bin_len / 2;
  htpu_model_info *info = NULL;
  uint64_t r0 = bytes_read();
  int rc = htpu_inspect_file_all(test_build_path("libhtpu_refsystem.so"), r.model, &info);
  uint64_t got = bytes_read() - r0;
  CHECK_MSG(rc == 0, "%s", htpu_last_error());
  const htpu_model_source *s = info->source;
  int ok = s && s->num_contexts == 1 && s->num_nodes == MANY && s->contexts &&
           s->contexts[0].info == info && strstr(s->contexts[0].origin, "big.bin");
  for (uint32_t i = 0; ok && i < MANY; i++)
    ok = s->nodes[i].context == 0 && s->nodes[i].cache_bytes == r.bin_len;
  htpu_model_info_free(info);
  CHECK_MSG(ok, "the nodes naming one file are not one context");
  CHECK_MSG(got <= allowed, "inspecting read %" PRIu64 " bytes for a %zu-byte binary and a "
            "%zu-byte model", got, r.bin_len, r.model_len);
  CHECK_MSG(got >= r.bin_len, "read %" PRIu64 " bytes: the count does not see the reads", got);
  /* a load reads it once too */
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  r0 = bytes_read();
  rc = htpu_context_open_file(rt, r.model, &ctx);
  got = bytes_read() - r0;
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(rc == 0, "%s", htpu_last_error());
  CHECK_MSG(got <= allowed, "loading read %" PRIu64 " bytes", got);
}

/* Three files with the same bytes are three contexts (files, not contents, are merged); each
 * is read once by an inspection of every context and by a load that chooses by graph. */
TEST(epc_distinct_files_are_contexts_each_read_once) {
  fx_reset_env();
  const char *dir = test_tmp_path("three_files");
  mkdir(dir, 0700);
  size_t bin_len = 0;
  uint8_t *bin = big_binary(&bin_len);
  CHECK(bin);
  static const char *const names[3] = {"a.bin", "b.bin", "c.bin"};
  ob_node nodes[3];
  for (int i = 0; i < 3; i++) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    CHECK_EQ(test_write_file(p, bin, bin_len), 0);
    nodes[i] = OB_NODE(.name = names[i], .cache = names[i], .embed_mode = OB_INT(0));
  }
  free(bin);
  char model[700];
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  ob_model m = {.num_nodes = 3, .nodes = nodes};
  CHECK_EQ(epc_write(model, &m), 0);
  uint64_t allowed = 3 * bin_len + bin_len / 2;
  htpu_model_info *info = NULL;
  uint64_t r0 = bytes_read();
  int rc = htpu_inspect_file_all(test_build_path("libhtpu_refsystem.so"), model, &info);
  uint64_t got = bytes_read() - r0;
  CHECK_MSG(rc == 0, "%s", htpu_last_error());
  const htpu_model_source *s = info->source;
  int ok = s->num_contexts == 3 && s->contexts[0].info == info && s->contexts[1].info &&
           s->contexts[2].info && s->contexts[2].info->source == NULL &&
           strcmp(s->contexts[2].info->graphs[0].name, "g") == 0 &&
           strstr(s->contexts[1].origin, "b.bin") && s->nodes[2].context == 2;
  htpu_model_info_free(info);
  CHECK_MSG(ok, "the contexts are not as written");
  CHECK_MSG(got <= allowed && got >= 3 * bin_len, "read %" PRIu64 " bytes for three %zu-byte "
            "binaries", got, bin_len);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.graph = "g";
  htpu_context *ctx = NULL;
  r0 = bytes_read();
  rc = htpu_context_open_file_ex(rt, model, &lo, &ctx);
  got = bytes_read() - r0;
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(rc == 0, "%s", htpu_last_error());
  CHECK_MSG(got <= allowed, "loading read %" PRIu64 " bytes", got);
}

/* The name "." is the model's folder, not a file outside it; a name holding control bytes is
 * shown escaped, so that it cannot forge lines in a terminal or a log. */
TEST(epc_external_names_are_shown_escaped_with_the_right_reason) {
  fx_reset_env();
  const char *dir = test_tmp_path("odd_names");
  mkdir(dir, 0700);
  char model[700];
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  static const struct {
    const char *name, *msg;
  } cases[] = {
      {".", "is the model's folder itself; expected the name of a file in it"},
      {"./.", "is the model's folder itself"},
      {"dig\nits\x01\x1b[31m\".bin", "odd_names/dig\\nits\\x01\\x1b[31m\".bin' that the model"},
      {"caf\xc3\xa9\xff.bin", "caf\xc3\xa9\\xff.bin"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ob_node node = OB_NODE(.name = "x\ny", .cache = cases[i].name, .embed_mode = OB_INT(0));
    ob_model m = {.num_nodes = 1, .nodes = &node};
    CHECK_EQ(epc_write(model, &m), 0);
    htpu_model_info *info = NULL;
    int rc = epc_inspect_file(model, 0, &info);
    htpu_model_info_free(info);
    CHECK_MSG(rc == (i < 2 ? HTPU_EMODEL : HTPU_EIO), "case %zu: %s (%s)", i, htpu_err_name(rc),
              epc_msg);
    CHECK_STR_CONTAINS(epc_msg, cases[i].msg);
    CHECK_STR_CONTAINS(epc_msg, "EPContext node 'x\\ny'");
    for (const char *p = epc_msg; *p; p++)
      CHECK_MSG((unsigned char)*p >= 0x20 && *p != 0x7f, "case %zu: a control byte at %zu of "
                "'%s'", i, (size_t)(p - epc_msg), epc_msg);
  }
}

/* external.c: a file is opened (mapped or read, binary_source.h) only if it is still the file
 * located, whichever way it would be held: one put in its place since (a new inode under the
 * same name, as an editor or a firmware update writes it) is refused before a byte is mapped
 * or read. A file rewritten in place is the same file: it is opened (copied here, on a file
 * system that can change it). */
TEST(epc_external_file_replaced_after_it_was_located_is_refused) {
  fx_reset_env();
  const char *dir = test_tmp_path("replaced");
  mkdir(dir, 0700);
  char model[700], bin[700], other[700];
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  snprintf(bin, sizeof bin, "%s/a.bin", dir);
  snprintf(other, sizeof other, "%s/b.bin", dir);
  static const char first[] = "first bytes", second[] = "other bytes, longer";
  for (int allow_map = 0; allow_map < 2; allow_map++) {
    CHECK_EQ(test_write_file(bin, first, sizeof first), 0);
    external_file f;
    CHECK_MSG(external_locate(model, "./a.bin", &f) == 0, "%s", htpu_last_error());
    CHECK_EQ(f.size, sizeof first);
    /* rewritten in place: the same file */
    CHECK_EQ(test_write_file(bin, second, sizeof second), 0);
    model_binary b;
    int rc = external_open(&f, allow_map, &b);
    int same = !rc && b.len == sizeof second && b.kind == BINARY_COPIED &&
               memcmp(b.data, second, sizeof second) == 0 && strstr(b.note, "copied");
    binary_release(&b);
    if (!same) external_file_clear(&f);
    CHECK_MSG(rc == 0, "%s", htpu_last_error());
    CHECK_MSG(same, "allow_map %d: not the rewritten bytes, copied", allow_map);
    /* replaced: another file renamed over the name */
    CHECK_EQ(test_write_file(other, first, sizeof first), 0);
    CHECK_EQ(rename(other, bin), 0);
    rc = external_open(&f, allow_map, &b);
    external_file_clear(&f);
    CHECK_MSG(rc == HTPU_EMODEL, "allow_map %d: %s (%s)", allow_map, htpu_err_name(rc),
              htpu_last_error());
    CHECK_STR_CONTAINS(htpu_last_error(), "replaced/./a.bin' was replaced by another file");
    CHECK(b.data == NULL && b.len == 0);
  }
}
