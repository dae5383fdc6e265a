/*
 * test_refmodel_refbuild.c - the htpu-refbuild command: files and stdin/stdout, the exit status
 * and message of bad text and of a wrong argument count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "qnn/qnn_abi.h"
#include "refmodel.h"
#include "refmodel_rig.h"
#include "test.h"

/* ---- htpu-refbuild --------------------------------------------------------------------------- */

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

TEST(refmodel_refbuild_command) {
  const char *tool = test_build_path("htpu-refbuild");
  if (!file_exists(tool)) {
    /* built by `make test`; a hand-compiled runner without HTPU_TEST_BUILD_DIR skips this */
    CHECK_MSG(!getenv("HTPU_TEST_BUILD_DIR"), "%s was not built", tool);
    return;
  }
  const char *in = test_tmp_path("refbuild_in.txt"), *out = test_tmp_path("refbuild_out.bin");
  const char *bad = test_tmp_path("refbuild_bad.txt"), *log = test_tmp_path("refbuild.log");
  CHECK(test_write_file(in, k_two_graphs, strlen(k_two_graphs)) == 0);
  const char *bad_text = "graph g\n  input x f32 [1]\n  op Nope x -> x\n";
  CHECK(test_write_file(bad, bad_text, strlen(bad_text)) == 0);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", tool, in, out);
  CHECK_EQ(system(cmd), 0);
  FILE *f = fopen(out, "rb");
  CHECK(f);
  static uint8_t buf[65536];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ref_model *m = NULL;
  CHECK_MSG(ref_model_parse(buf, n, &m, g_err, sizeof g_err) == 0, "%s", g_err);
  CHECK_EQ(m->num_graphs, 2);
  ref_model_free(m);

  snprintf(cmd, sizeof cmd, "'%s' - - < '%s' > '%s'", tool, in, out); /* stdin to stdout */
  CHECK_EQ(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' 2> '%s'", tool, bad, out, log);
  int rc = system(cmd);
  CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
  f = fopen(log, "r");
  CHECK(f);
  char msg[512] = {0};
  size_t got = fread(msg, 1, sizeof msg - 1, f);
  fclose(f);
  msg[got] = '\0';
  CHECK_STR_CONTAINS(msg, "line 3: unknown op 'Nope'");
  snprintf(cmd, sizeof cmd, "'%s' only-one-arg 2> /dev/null", tool);
  rc = system(cmd);
  CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
}
