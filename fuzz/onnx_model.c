/*
 * onnx_model.c - libFuzzer target for the ONNX EPContext reader (src/model/): the protobuf
 * walk (onnx_read), ONNX Runtime's rules (epc_plan_make), Ultralytics' class names
 * (names_parse), and the whole path through the public API (htpu_inspect_buffer on the
 * reference system library in this executable's directory, or $HTPU_FUZZ_LIB_DIR).
 *
 * Per input: a model the walk accepts has every string inside the input and within the
 * reader's limits, UTF-8 without NUL; a plan names only main nodes, embedded binaries inside
 * the input; class names, when taken, are n non-NULL strings; htpu_inspect_buffer either
 * answers (then with a source describing as many nodes as the walk found, or none for a raw
 * binary) or fails with a message. Leaks are libFuzzer's to report.
 */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "hexagon_tpu.h"
#include "model/epcontext.h"
#include "model/names.h"
#include "model/onnx.h"

static char system_lib[PATH_MAX];
static onnx_model model;
static epc_plan plan;

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
  if (rc) {
    FUZZ_CHECK(htpu_last_error()[0] != 0, "%s without a message", htpu_err_name(rc));
    FUZZ_CHECK(info == NULL, "a failed inspection gave an info");
    return 0;
  }
  FUZZ_CHECK(!info->source || (walked && info->source->num_nodes == model.num_epc),
             "the source describes %u nodes, the walk found %u",
             info->source ? info->source->num_nodes : 0, model.num_epc);
  htpu_model_info_free(info);
  return 0;
}
