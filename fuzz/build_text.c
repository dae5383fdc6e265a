/*
 * build_text.c - libFuzzer target for the reference model builder's text parser,
 * ref_build_from_text_at (reference/model/build_lex.c, build_*.c): what htpu-refbuild and
 * the Elixir tests feed their model descriptions through.
 *
 * Per input (as a NUL-terminated text): build. A failure must leave no output and name the
 * line or the problem. A success must be a file the reader accepts, and writing the parsed
 * model must give the builder's bytes back (the builder writes through ref_model_write).
 *
 * `data_file=` paths are resolved against a scratch directory made at start-up that holds
 * w4.bin (4 bytes) and w16.bin (16 bytes), so seeds can use the option without touching the
 * source tree; absolute paths reach the rest of the file system read-only, as in htpu-refbuild.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "refmodel.h"

static char base_dir[64];

static void remove_scratch(void) {
  char path[96];
  snprintf(path, sizeof path, "%s/w4.bin", base_dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/w16.bin", base_dir);
  unlink(path);
  rmdir(base_dir);
}

static void write_scratch(const char *name, size_t n) {
  char path[96];
  snprintf(path, sizeof path, "%s/%s", base_dir, name);
  FILE *f = fopen(path, "wb");
  FUZZ_CHECK(f != NULL, "cannot create %s", path);
  for (size_t i = 0; i < n; i++) fputc((int)(i * 17 + 3) & 0xff, f);
  FUZZ_CHECK(fclose(f) == 0, "cannot write %s", path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  snprintf(base_dir, sizeof base_dir, "/tmp/htpu-fuzz-build-XXXXXX");
  FUZZ_CHECK(mkdtemp(base_dir) != NULL, "mkdtemp failed");
  write_scratch("w4.bin", 4);
  write_scratch("w16.bin", 16);
  atexit(remove_scratch);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';

  char err[512] = "";
  void *out = (void *)&err; /* must be reset to NULL by a failing build */
  size_t len = 123;
  if (ref_build_from_text_at(text, base_dir, &out, &len, err, sizeof err) != 0) {
    FUZZ_CHECK(out == NULL && len == 0, "a failed build left output behind");
    FUZZ_CHECK(err[0] != '\0', "a failed build gave no message");
    free(text);
    return 0;
  }
  FUZZ_CHECK(out != NULL && len > 0, "a successful build gave no file");

  ref_model *m = NULL;
  FUZZ_CHECK(ref_model_parse(out, len, &m, err, sizeof err) == 0,
             "the builder's output does not parse: %s", err);
  void *again = NULL;
  size_t again_len = 0;
  FUZZ_CHECK(ref_model_write(m, &again, &again_len, err, sizeof err) == 0,
             "the builder's model does not write after parsing: %s", err);
  FUZZ_CHECK(again_len == len && memcmp(again, out, len) == 0,
             "write(parse(build(text))) differs from build(text): %zu vs %zu bytes", again_len,
             len);
  ref_model_free(m);
  free(again);
  free(out);
  free(text);
  return 0;
}
