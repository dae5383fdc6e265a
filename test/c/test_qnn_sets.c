/* test_qnn_sets.c - QNN sets (src/qnnset/) against two fake releases of the reference backend
 * (mk/qnnsets.mk: 2.42 in QAIRT's layout, 2.48 flat; each checks that its stub and skel are of
 * its release, as a real backend fails with 14001 when they are not). The set of a process is
 * decided by its first runtime for the life of the process, so every scenario that opens a
 * runtime runs in a child process of its own. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "test.h"

#define ID_242 "v2.42.0.251225135753_193295"
#define ID_248 "v2.48.40.260301120000_197354"

static const char *set_dir(const char *release) { return test_build_path(release); }

/* add_f32 as QAIRT 2.48.40 makes it: API versions the 2.42 runtime refuses. */
#define FX_ADD_GRAPH_TEXT                                                                  \
  "graph add_f32\n  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n" \
  "  op ElementWiseAdd a b -> y\n"
static const char *NEW_MODEL =
    "meta build_id=\"" ID_248 "\" backend_api=5.48.0 core_api=2.34.0\n" FX_ADD_GRAPH_TEXT;

/* Runs fn in a child; its exit status (0 = passed) and what it printed to stdout. */
static int in_child(int (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(fn());
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      printf("    child: %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond,   \
             htpu_last_error());                                         \
      fflush(stdout);                                                     \
      return 1;                                                           \
    }                                                                     \
  } while (0)

static int open_set(const char *release, htpu_runtime **rt) {
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.qnn_set = set_dir(release);
  return htpu_runtime_open(&o, rt);
}

TEST(qnn_sets_are_read_from_their_files) {
  htpu_qnn_set *s = calloc(2, sizeof *s);
  CHECK_EQ(htpu_qnn_set_inspect(set_dir("qnnsets/2.42"), &s[0]), 0);
  CHECK_EQ(htpu_qnn_set_inspect(set_dir("qnnsets/2.48"), &s[1]), 0);
  int ok = strcmp(s[0].layout, "qairt") == 0 && strcmp(s[1].layout, "flat") == 0 &&
           s[0].release.major == 2 && s[0].release.minor == 42 && s[1].release.minor == 48 &&
           s[1].release.patch == 40 && strcmp(s[0].build_id, ID_242) == 0 &&
           strcmp(s[1].stub_build_id, ID_248) == 0 && strcmp(s[1].skel_build_id, ID_248) == 0 &&
           s[0].complete && s[0].consistent && s[1].complete && s[1].consistent &&
           strstr(s[0].skel_dir, "/qnnsets/2.42/dsp") && strstr(s[1].stub, "libQnnHtpV68Stub.so");
  free(s);
  CHECK_MSG(ok, "the fake releases are not read as built");
  htpu_qnn_set one;
  CHECK_EQ(htpu_qnn_set_inspect(test_tmp_path("."), &one), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "is not a QNN set: no libQnnHtp.so in it");
}

TEST(qnn_sets_found_on_the_search_path) {
  char path[2048];
  snprintf(path, sizeof path, "%s:%s", set_dir("qnnsets/2.42"), set_dir("qnnsets/2.48"));
  setenv("HTPU_QNN_SET_PATH", path, 1);
  htpu_qnn_set *sets = calloc(8, sizeof *sets);
  uint32_t n = 0;
  int rc = htpu_qnn_sets_find(test_tmp_path("no_root"), sets, 8, &n);
  unsetenv("HTPU_QNN_SET_PATH");
  int ok = rc == 0 && n == 2 && sets[0].release.minor == 42 && sets[1].release.minor == 48;
  free(sets);
  CHECK_MSG(ok, "rc %d, %u sets", rc, n);
  CHECK_EQ(htpu_qnn_sets_find(NULL, NULL, 1, &n), HTPU_EINVAL);
}

/* The 2.48 set runs a 2.48 binary: its stub opened first, the DSP path its own. */
static int child_new_set_runs_new_binary(void) {
  htpu_runtime *rt = NULL;
  EXPECT(open_set("qnnsets/2.48", &rt) == 0);
  htpu_runtime_info ri;
  EXPECT(htpu_runtime_get_info(rt, &ri) == 0 && strcmp(ri.build_id, ID_248) == 0);
  EXPECT(strstr(ri.dsp_library_path, "/qnnsets/2.48") != NULL);
  const char *path = fx_build_model_file("new248.bin", NEW_MODEL);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  EXPECT(htpu_context_open_file(rt, path, &ctx) == 0);
  EXPECT(htpu_graph_open(ctx, "add_f32", &g) == 0);
  float y[4];
  EXPECT(fx_add(g, 1.0f, NULL, NULL, y) == 0 && y[0] == 11.0f && y[3] == 44.0f);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  /* one set per process, even after the first runtime closed */
  EXPECT(open_set("qnnsets/2.42", &rt) == HTPU_EINVAL);
  EXPECT(strstr(htpu_last_error(), "already uses the QNN set in") != NULL);
  EXPECT(strstr(htpu_last_error(), "needs another OS process") != NULL);
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.backend_lib = test_build_path("qnnsets/2.42/libQnnHtp.so");
  EXPECT(htpu_runtime_open(&o, &rt) == HTPU_EINVAL);
  /* the same set again is fine, and the reference backend is no DSP set */
  EXPECT(open_set("qnnsets/2.48", &rt) == 0);
  htpu_runtime_close(&rt);
  htpu_runtime *ref = fx_open_runtime();
  EXPECT(ref != NULL);
  htpu_runtime_close(&ref);
  return 0;
}

TEST(qnn_sets_one_set_runs_and_the_second_is_refused) {
  fx_reset_env();
  CHECK_EQ(in_child(child_new_set_runs_new_binary), 0);
}

/* The 2.42 set refuses the 2.48 binary, and the error names the set that can load it. */
static int child_old_set_names_the_new_one(void) {
  char path[2048];
  snprintf(path, sizeof path, "%s:%s", set_dir("qnnsets/2.42"), set_dir("qnnsets/2.48"));
  setenv("HTPU_QNN_SET_PATH", path, 1);
  htpu_runtime *rt = NULL;
  EXPECT(open_set("qnnsets/2.42", &rt) == 0);
  htpu_context *ctx = NULL;
  EXPECT(htpu_context_open_file(rt, fx_build_model_file("new.bin", NEW_MODEL), &ctx) ==
         HTPU_EINCOMPATIBLE);
  EXPECT(strstr(htpu_last_error(), "newer than this runtime's 2.32") != NULL);
  /* this process's set is decided: the other one needs another process */
  EXPECT(strstr(htpu_last_error(), "qnnsets/2.48' (QAIRT 2.48.40) can load it, in a new OS "
                                   "process: this one uses the set in") != NULL);
  htpu_runtime_close(&rt);
  return 0;
}

TEST(qnn_sets_a_too_new_binary_names_the_set_that_can) {
  fx_reset_env();
  CHECK_EQ(in_child(child_old_set_names_the_new_one), 0);
}

/* Where no DSP set is decided yet (the reference backend), the set can be opened here. */
static int child_no_set_yet_names_the_new_one(void) {
  char path[2048];
  snprintf(path, sizeof path, "%s:%s", set_dir("qnnsets/2.42"), set_dir("qnnsets/2.48"));
  setenv("HTPU_QNN_SET_PATH", path, 1);
  htpu_runtime *rt = fx_open_runtime();
  EXPECT(rt != NULL);
  htpu_context *ctx = NULL;
  EXPECT(htpu_context_open_file(rt, fx_build_model_file("new_ref.bin", NEW_MODEL), &ctx) ==
         HTPU_EINCOMPATIBLE);
  EXPECT(strstr(htpu_last_error(), "qnnsets/2.48' (QAIRT 2.48.40) can load it: open the "
                                   "runtime with qnn_set") != NULL);
  EXPECT(strstr(htpu_last_error(), "new OS process") == NULL);
  htpu_runtime_close(&rt);
  return 0;
}

TEST(qnn_sets_a_too_new_binary_on_no_set_names_the_set) {
  fx_reset_env();
  CHECK_EQ(in_child(child_no_set_yet_names_the_new_one), 0);
}

/* No set is named for what no release changes (a binary for another DSP), nor the set in use
 * itself (a binary newer than 2.48.40's backend API though its build id says 2.48.40). */
static int child_no_hint_for_other_refusals(void) {
  char path[2048];
  snprintf(path, sizeof path, "%s:%s", set_dir("qnnsets/2.42"), set_dir("qnnsets/2.48"));
  setenv("HTPU_QNN_SET_PATH", path, 1);
  htpu_runtime *rt = NULL;
  EXPECT(open_set("qnnsets/2.48", &rt) == 0);
  static const char *const models[2] = {
      "meta build_id=\"" ID_248 "\" dsp_arch=73 soc_version=\"v73\"\n" FX_ADD_GRAPH_TEXT,
      "meta build_id=\"" ID_248 "\" backend_api=5.50.0 core_api=2.34.0\n" FX_ADD_GRAPH_TEXT};
  static const char *const why[2] = {"built for v73, this device is v68",
                                     "built with backend API 5.50, newer than this runtime's"};
  for (int i = 0; i < 2; i++) {
    htpu_context *ctx = NULL;
    const char *file = fx_build_model_file(i ? "api550.bin" : "v73.bin", models[i]);
    EXPECT(htpu_context_open_file(rt, file, &ctx) == HTPU_EINCOMPATIBLE);
    EXPECT(strstr(htpu_last_error(), why[i]) != NULL);
    EXPECT(strstr(htpu_last_error(), "can load it") == NULL);
  }
  htpu_runtime_close(&rt);
  return 0;
}

TEST(qnn_sets_no_set_is_named_for_other_refusals_nor_the_set_in_use) {
  fx_reset_env();
  CHECK_EQ(in_child(child_no_hint_for_other_refusals), 0);
}

/* The fake backend, linked as QAIRT links libQnnHtp.so (RPATH $ORIGIN), finds its own stub
 * beside it without the option, as the real one does: the option's stub opened first is not
 * what makes a set work. */
static int child_backend_finds_its_stub_beside_it(void) {
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.backend_lib = test_build_path("qnnsets/2.48/libQnnHtp.so");
  o.system_lib = test_build_path("qnnsets/2.48/libQnnSystem.so");
  o.dsp_library_path = set_dir("qnnsets/2.48");
  o.startup_retries = 0;
  htpu_runtime *rt = NULL;
  EXPECT(htpu_runtime_open(&o, &rt) == 0);
  htpu_runtime_info ri;
  EXPECT(htpu_runtime_get_info(rt, &ri) == 0 && strcmp(ri.build_id, ID_248) == 0);
  htpu_runtime_close(&rt);
  return 0;
}

TEST(qnn_sets_the_backend_finds_its_stub_beside_it) {
  fx_reset_env();
  CHECK_EQ(in_child(child_backend_finds_its_stub_beside_it), 0);
}

/* What the loader does with a stub of another release loaded first (by another library of the
 * process, as ONNX Runtime's QNN execution provider would): the backend, opening its stub by
 * name, is handed that one. The fake release fails as the real one does (14001) when nothing
 * stops it: a backend copied under another name is no set and is not checked. */
static int child_fake_backend_is_handed_the_loaded_stub(void) {
  const char *dir = test_tmp_path("renamed_248");
  mkdir(dir, 0700);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cp %s/libQnnHtp.so %s/libQnnHtpRenamed.so && cp "
           "%s/libQnnHtpV68Stub.so %s/libQnnHtpV68Skel.so %s/", set_dir("qnnsets/2.48"), dir,
           set_dir("qnnsets/2.48"), set_dir("qnnsets/2.48"), dir);
  EXPECT(system(cmd) == 0);
  EXPECT(dlopen(test_build_path("qnnsets/2.42/libQnnHtpV68Stub.so"), RTLD_NOW) != NULL);
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  char backend[1024];
  snprintf(backend, sizeof backend, "%s/libQnnHtpRenamed.so", dir);
  o.backend_lib = backend;
  o.system_lib = test_build_path("qnnsets/2.48/libQnnSystem.so");
  o.dsp_library_path = dir;
  o.startup_retries = 0;
  htpu_runtime *rt = NULL;
  EXPECT(htpu_runtime_open(&o, &rt) == HTPU_EQNN && htpu_last_qnn_code() == 14001);
  EXPECT(strstr(htpu_last_error(), "the stub libQnnHtpV68Stub.so is " ID_242) != NULL);
  return 0;
}

TEST(qnn_sets_a_fake_backend_is_handed_a_stub_loaded_first) {
  fx_reset_env();
  CHECK_EQ(in_child(child_fake_backend_is_handed_the_loaded_stub), 0);
}

/* The project refuses that before any QNN call, with the set option or without it, and the
 * refusal decides nothing: the release whose stub is loaded can still be used. */
static int child_loaded_stub_of_another_release_is_refused(void) {
  EXPECT(dlopen(test_build_path("qnnsets/2.42/libQnnHtpV68Stub.so"), RTLD_NOW) != NULL);
  htpu_runtime *rt = NULL;
  EXPECT(open_set("qnnsets/2.48", &rt) == HTPU_EINVAL);
  EXPECT(strstr(htpu_last_error(), "libQnnHtpV68Stub.so is already loaded from") != NULL);
  EXPECT(strstr(htpu_last_error(), "qnnsets/2.42/libQnnHtpV68Stub.so' (" ID_242 "), not the "
                                   "set's own (" ID_248 ")") != NULL);
  EXPECT(strstr(htpu_last_error(), "use the set in another OS process") != NULL);
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.backend_lib = test_build_path("qnnsets/2.48/libQnnHtp.so");
  o.system_lib = test_build_path("qnnsets/2.48/libQnnSystem.so");
  EXPECT(htpu_runtime_open(&o, &rt) == HTPU_EINVAL);
  EXPECT(strstr(htpu_last_error(), "a mixed release") != NULL);
  /* no QNN call was made: the set's backend was never loaded */
  EXPECT(dlopen(test_build_path("qnnsets/2.48/libQnnHtp.so"), RTLD_NOW | RTLD_NOLOAD) == NULL);
  EXPECT(open_set("qnnsets/2.42", &rt) == 0);
  htpu_runtime_close(&rt);
  return 0;
}

TEST(qnn_sets_a_stub_of_another_release_loaded_first_is_refused) {
  fx_reset_env();
  CHECK_EQ(in_child(child_loaded_stub_of_another_release_is_refused), 0);
}

/* A set mixing releases cannot be used, named before any QNN call; options that contradict
 * the set are refused. */
static int child_mixed_set_is_refused(void) {
  const char *mixed = test_tmp_path("mixed_set");
  mkdir(mixed, 0700);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cp %s/libQnnHtp.so %s/libQnnSystem.so %s/libQnnHtpV68Skel.so %s/ "
           "&& cp %s/libQnnHtpV68Stub.so %s/", set_dir("qnnsets/2.48"), set_dir("qnnsets/2.48"),
           set_dir("qnnsets/2.48"), mixed, set_dir("qnnsets/2.42"), mixed);
  EXPECT(system(cmd) == 0);
  htpu_qnn_set s;
  EXPECT(htpu_qnn_set_inspect(mixed, &s) == 0 && s.complete && !s.consistent);
  EXPECT(strstr(s.note, "not one release: backend " ID_248 ", stub " ID_242) != NULL);
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.qnn_set = mixed;
  htpu_runtime *rt = NULL;
  EXPECT(htpu_runtime_open(&o, &rt) == HTPU_EINVAL);
  EXPECT(strstr(htpu_last_error(), "cannot be used: not one release") != NULL);
  o.qnn_set = set_dir("qnnsets/2.48");
  o.backend_lib = test_build_path("libhtpu_refbackend.so");
  EXPECT(htpu_runtime_open(&o, &rt) == HTPU_EINVAL);
  EXPECT(strstr(htpu_last_error(), "the set names its own libraries") != NULL);
  return 0;
}

TEST(qnn_sets_mixed_or_contradicted_sets_are_refused) {
  fx_reset_env();
  CHECK_EQ(in_child(child_mixed_set_is_refused), 0);
}

/* A stub name that is a dangling symlink is no stub: the set misses one (not "no build id"). */
TEST(qnn_sets_a_dangling_stub_is_missing) {
  const char *dir = test_tmp_path("dangling_stub");
  mkdir(dir, 0700);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cp %s/libQnnHtp.so %s/libQnnSystem.so %s/libQnnHtpV68Skel.so %s/ "
           "&& ln -sf /nonexistent/stub.so %s/libQnnHtpV68Stub.so", set_dir("qnnsets/2.48"),
           set_dir("qnnsets/2.48"), set_dir("qnnsets/2.48"), dir, dir);
  CHECK_EQ(system(cmd), 0);
  htpu_qnn_set s;
  CHECK_EQ(htpu_qnn_set_inspect(dir, &s), 0);
  CHECK(!s.complete && s.stub[0] == '\0');
  CHECK_STR_CONTAINS(s.note, "missing a libQnnHtpV<arch>Stub.so");
}

/* Only the set's stub is opened first: the board's test-only libQnnHtpV68CalculatorStub.so
 * (here a file no loader can open) is left alone. */
static int child_calculator_stub_is_left_alone(void) {
  const char *dir = test_tmp_path("calculator_set");
  mkdir(dir, 0700);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cp %s/libQnnHtp.so %s/libQnnSystem.so %s/libQnnHtpV68Skel.so "
           "%s/libQnnHtpV68Stub.so %s/ && echo 'not a library' >%s/libQnnHtpV68CalculatorStub.so",
           set_dir("qnnsets/2.48"), set_dir("qnnsets/2.48"), set_dir("qnnsets/2.48"),
           set_dir("qnnsets/2.48"), dir, dir);
  EXPECT(system(cmd) == 0);
  htpu_runtime_options o;
  htpu_runtime_options_init(&o);
  o.qnn_set = dir;
  htpu_runtime *rt = NULL;
  EXPECT(htpu_runtime_open(&o, &rt) == 0);
  htpu_runtime_close(&rt);
  return 0;
}

TEST(qnn_sets_only_the_sets_stub_is_opened_first) {
  fx_reset_env();
  CHECK_EQ(in_child(child_calculator_stub_is_left_alone), 0);
}
