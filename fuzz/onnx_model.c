/*
 * onnx_model.c - libFuzzer target for the ONNX EPContext reader (src/model/): the protobuf
 * walk (onnx_read), ONNX Runtime's rules (epc_plan_make), Ultralytics' class names
 * (names_parse), and the whole path through the public API (htpu_inspect_buffer on the
 * reference system library in this executable's directory, or $HTPU_FUZZ_LIB_DIR); and, the
 * input written as a file into a folder of its own, the external binaries' path
 * (htpu_inspect_file_all): the folder holds a real binary as model.bin and sub/model.bin, a
 * hard link to it, a symlink to it and one out of the folder, a FIFO and a folder, so that the
 * names a mutated model carries reach every answer of the external files' code.
 *
 * Per input: a model the walk accepts has every string inside the input and within the
 * reader's limits, UTF-8 without NUL; a plan names only main nodes, embedded binaries inside
 * the input; class names, when taken, are n non-NULL strings; htpu_inspect_buffer and
 * htpu_inspect_file_all either answer (then with a source describing as many nodes as the walk
 * found and, from the file, every context with its origin and metadata; or none for a raw
 * binary) or fail with a message. Leaks are libFuzzer's to report.
 */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "hexagon_tpu.h"
#include "model/epcontext.h"
#include "model/names.h"
#include "model/onnx.h"
#include "refmodel.h"

static char system_lib[PATH_MAX];
static char model_dir[PATH_MAX - 64], model_path[PATH_MAX];
static onnx_model model;
static epc_plan plan;

static void put_file(const char *name, const void *data, size_t len) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", model_dir, name);
  FILE *f = fopen(path, "wb");
  FUZZ_CHECK(f && fwrite(data, 1, len, f) == len && fclose(f) == 0, "cannot write %s", path);
}

static void remove_model_dir(void) {
  static const char *const names[] = {"model.onnx", "model.bin", "sub/model.bin", "hard.bin",
                                      "near.bin", "escape.bin", "fifo.bin", "sub", "dir"};
  char path[PATH_MAX];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", model_dir, names[i]);
    if (unlink(path) != 0) rmdir(path);
  }
  rmdir(model_dir);
}

/* The model file's folder (see the top); removed at exit. */
static void make_model_dir(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(model_dir, sizeof model_dir, "%s/htpu_fuzz_onnx.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  FUZZ_CHECK(mkdtemp(model_dir) != NULL, "cannot make a folder in %s", model_dir);
  atexit(remove_model_dir);
  snprintf(model_path, sizeof model_path, "%s/model.onnx", model_dir);
  void *bin = NULL;
  size_t len = 0;
  char err[256], path[PATH_MAX], link_to[PATH_MAX];
  FUZZ_CHECK(ref_build_from_text("graph add_f32\n  input a f32 [1,4]\n  input b f32 [1,4]\n"
                                 "  output y f32 [1,4]\n  op ElementWiseAdd a b -> y\n",
                                 &bin, &len, err, sizeof err) == 0, "%s", err);
  snprintf(path, sizeof path, "%s/sub", model_dir);
  FUZZ_CHECK(mkdir(path, 0700) == 0, "cannot make %s", path);
  snprintf(path, sizeof path, "%s/dir", model_dir);
  FUZZ_CHECK(mkdir(path, 0700) == 0, "cannot make %s", path);
  put_file("model.bin", bin, len);
  put_file("sub/model.bin", bin, len);
  free(bin);
  snprintf(path, sizeof path, "%s/model.bin", model_dir);
  snprintf(link_to, sizeof link_to, "%s/hard.bin", model_dir);
  FUZZ_CHECK(link(path, link_to) == 0, "cannot link %s", link_to);
  snprintf(link_to, sizeof link_to, "%s/near.bin", model_dir);
  FUZZ_CHECK(symlink("sub/model.bin", link_to) == 0, "cannot link %s", link_to);
  snprintf(link_to, sizeof link_to, "%s/escape.bin", model_dir);
  FUZZ_CHECK(symlink(system_lib, link_to) == 0, "cannot link %s", link_to);
  snprintf(path, sizeof path, "%s/fifo.bin", model_dir);
  FUZZ_CHECK(mkfifo(path, 0600) == 0, "cannot make %s", path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  char dir[PATH_MAX];
  const char *env = getenv("HTPU_FUZZ_LIB_DIR");
  if (env && *env) {
    snprintf(dir, sizeof dir, "%s", env);
  } else {
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    FUZZ_CHECK(n > 0, "cannot read /proc/self/exe");
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
  }
  int w = snprintf(system_lib, sizeof system_lib, "%s/libhtpu_refsystem.so", dir);
  FUZZ_CHECK(w > 0 && w < (int)sizeof system_lib, "library path too long");
  /* Held open for the run: each inspection dlopens and dlcloses the library, and an
   * instrumented library unloaded under libFuzzer takes its coverage counters with it. */
  FUZZ_CHECK(dlopen(system_lib, RTLD_NOW) != NULL, "cannot load %s: %s", system_lib, dlerror());
  make_model_dir();
  return 0;
}

static void check_str(const uint8_t *d, size_t n, onnx_str s, size_t max) {
  if (!s.p) return;
  FUZZ_CHECK(s.p >= d && s.p + s.len <= d + n, "a string outside the input");
  FUZZ_CHECK(s.len <= max, "a string of %zu bytes past the limit %zu", s.len, max);
  FUZZ_CHECK(memchr(s.p, 0, s.len) == NULL, "a string with a NUL byte");
}

static void check_walk(const uint8_t *d, size_t n) {
  check_str(d, n, model.producer_name, ONNX_MAX_NAME_BYTES);
  FUZZ_CHECK(model.num_props <= ONNX_MAX_PROPS && model.num_epc <= ONNX_MAX_EPCONTEXT_NODES,
             "counts past the bounds");
  for (uint32_t i = 0; i < model.num_props; i++) {
    check_str(d, n, model.props[i].key, ONNX_MAX_NAME_BYTES);
    check_str(d, n, model.props[i].value, ONNX_MAX_PROP_VALUE_BYTES);
  }
  for (uint32_t i = 0; i < model.num_epc; i++) {
    const epc_node *e = &model.epc[i];
    check_str(d, n, e->name, ONNX_MAX_NAME_BYTES);
    check_str(d, n, e->source, ONNX_MAX_NAME_BYTES);
    FUZZ_CHECK(!e->cache.p || (e->cache.p >= d && e->cache.p + e->cache.len <= d + n),
               "node %u: ep_cache_context outside the input", i);
  }
}

static void check_plan(void) {
  FUZZ_CHECK(plan.num_contexts >= 1 && plan.num_contexts <= model.num_epc, "%u contexts of %u",
             plan.num_contexts, model.num_epc);
  for (uint32_t k = 0; k < plan.num_contexts; k++) {
    FUZZ_CHECK(plan.ctx[k].node < model.num_epc && epc_is_main(&model.epc[plan.ctx[k].node]),
               "context %u carried by node %u, not a main one", k, plan.ctx[k].node);
    FUZZ_CHECK(plan.ctx[k].bytes.len > 0, "context %u is empty", k);
  }
}

static void check_names(void) {
  for (uint32_t i = 0; i < model.num_props; i++) {
    if (!onnx_str_is(model.props[i].key, "names")) continue;
    model_info *arena = calloc(1, sizeof *arena);
    FUZZ_CHECK(arena != NULL, "out of memory");
    const char *const *names = NULL;
    uint32_t count = 0;
    int rc = names_parse((const char *)model.props[i].value.p, model.props[i].value.len, arena,
                         &names, &count);
    FUZZ_CHECK(rc >= 0, "names_parse ran out of memory");
    FUZZ_CHECK(rc == 0 || (count > 0 && names), "names taken without a list");
    for (uint32_t c = 0; rc == 1 && c < count; c++)
      FUZZ_CHECK(names[c] != NULL, "class %u has no name", c);
    model_info_free(arena);
  }
}

/* An inspection answers with a source true to the walk (every context listed, from a file),
 * or fails with a message. Frees the info. */
static void check_inspection(int rc, htpu_model_info *info, int walked) {
  if (rc) {
    FUZZ_CHECK(htpu_last_error()[0] != 0, "%s without a message", htpu_err_name(rc));
    FUZZ_CHECK(info == NULL, "a failed inspection gave an info");
    return;
  }
  const htpu_model_source *s = info->source;
  FUZZ_CHECK(!s || (walked && s->num_nodes == model.num_epc),
             "the source describes %u nodes, the walk found %u", s ? s->num_nodes : 0,
             model.num_epc);
  for (uint32_t k = 0; s && s->contexts && k < s->num_contexts; k++)
    FUZZ_CHECK(s->contexts[k].info && s->contexts[k].origin &&
                   (k != s->context || s->contexts[k].info == info),
               "context %u of %u is not listed", k, s->num_contexts);
  for (uint32_t i = 0; s && i < s->num_nodes; i++)
    FUZZ_CHECK(s->nodes[i].context < (int32_t)s->num_contexts, "node %u in context %d of %u", i,
               s->nodes[i].context, s->num_contexts);
  htpu_model_info_free(info);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
  char err[600];
  int walked = onnx_read(d, n, &model, err, sizeof err) == 0;
  if (walked) {
    check_walk(d, n);
    check_names();
    if (epc_plan_make(&model, &plan, err, sizeof err) == 0) check_plan();
  } else {
    FUZZ_CHECK(err[0] != 0, "a refused model without a message");
  }
  htpu_model_info *info = NULL;
  int rc = htpu_inspect_buffer(system_lib, d, n, &info);
  check_inspection(rc, info, walked);
  /* the same bytes as a file beside the folder's binaries: the external names' path */
  put_file("model.onnx", d, n);
  info = NULL;
  rc = htpu_inspect_file_all(system_lib, model_path, &info);
  check_inspection(rc, info, walked);
  return 0;
}
