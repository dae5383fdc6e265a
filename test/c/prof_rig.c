/* prof_rig.c - see prof_rig.h. */
#include "prof_rig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "test.h"

#define THREE_OPS(n1, n2, n3)                                                        \
  "graph three\n"                                                                    \
  "  input x f32 [1,8]\n"                                                            \
  "  static c f32 [1,8] data=[1,2,3,4,5,6,7,8]\n"                                    \
  "  native t f32 [1,8]\n"                                                           \
  "  native u f32 [1,8]\n"                                                           \
  "  output y f32 [1,8]\n"                                                           \
  "  op ElementWiseAdd x c -> t name=" n1 "\n"                                       \
  "  op Relu t -> u name=" n2 "\n"                                                   \
  "  op ElementWiseMultiply u c -> y name=" n3 "\n"
const char *const PROF_THREE_OPS = THREE_OPS("add_in", "relu_mid", "mul_out");
const char *const PROF_NAMELESS_OPS = THREE_OPS("\"\"", "\"\"", "\"\"");

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
      if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
      } else {
        buf[n] = 0;
      }
    }
  }
  fclose(f);
  return buf;
}

const char *prof_chain100_path(void) {
  static const char *built;
  if (built) return built;
  /* from the repository root (make test), else beside the build directory */
  char *text = read_text("models/chain100/chain100.txt");
  if (!text) text = read_text(test_build_path("../../models/chain100/chain100.txt"));
  if (!text) return NULL;
  built = fx_build_model_file("chain100.bin", text);
  free(text);
  return built;
}
