/* load_rig.c - models, binaries and checks of the loading tests (load_rig.h). */
#include "load_rig.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixture.h"

const char *const LR_WEIGHTED =
    "graph weighted\n"
    "  input a f32 [1,4]\n"
    "  input b f32 [1,4]\n"
    "  native s f32 [1,4]\n"
    "  static w f32 [1,4] data=[0.5,2,-1,3]\n"
    "  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> s\n"
    "  op ElementWiseMultiply s w -> y\n";

const char *const LR_FOUR =
    "graph g0\n  input x f32 [1,4]\n  static k f32 [1] data=[1]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply x k -> y\n"
    "graph g1\n  input x f32 [1,4]\n  static k f32 [1] data=[2]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply x k -> y\n"
    "graph g2\n  input x f32 [1,4]\n  static k f32 [1] data=[3]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply x k -> y\n"
    "graph g3\n  input x f32 [1,4]\n  static k f32 [1] data=[4]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply x k -> y\n";

char *lr_spill_model(const char *tag, uint32_t floats) {
  char *t = malloc(512);
  if (!t) return NULL;
  snprintf(t, 512,
           "graph spill%s\n"
           "  input x f32 [1,%u]\n  native t1 f32 [1,%u]\n  native t2 f32 [1,%u]\n"
           "  output y f32 [1,%u]\n"
           "  op Relu x -> t1\n  op Relu t1 -> t2\n  op Relu t2 -> y\n",
           tag, floats, floats, floats, floats);
  return t;
}

int lr_spill_check(htpu_graph *g, uint32_t floats) {
  float *x = malloc(floats * sizeof *x), *y = calloc(floats, sizeof *y);
  int rc = x && y ? 0 : -1;
  for (uint32_t i = 0; !rc && i < floats; i++) x[i] = (float)i - (float)(floats / 2);
  htpu_io in = {x, floats * sizeof *x, HTPU_F32}, out = {y, floats * sizeof *y, HTPU_F32};
  if (!rc) rc = htpu_graph_execute(g, &in, 1, &out, 1, NULL);
  for (uint32_t i = 0; !rc && i < floats; i++)
    if (y[i] != (x[i] > 0 ? x[i] : 0)) rc = -100;
  free(x);
  free(y);
  return rc;
}

int lr_weighted_check(htpu_graph *g, float a0) {
  float a[4] = {a0, 2, 3, 4}, b[4] = {10, 20, 30, 40}, w[4] = {0.5f, 2, -1, 3}, y[4] = {0};
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  int rc = htpu_graph_execute(g, in, 2, &out, 1, NULL);
  if (rc) return rc;
  for (int i = 0; i < 4; i++)
    if (y[i] != (a[i] + b[i]) * w[i]) {
      printf("    weighted: y[%d] = %g, expected %g\n", i, y[i], (a[i] + b[i]) * w[i]);
      return -100;
    }
  return 0;
}

int lr_four_check(htpu_graph *g, int k) {
  float x[4] = {1, -2, 3.5f, 4}, y[4] = {0};
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  int rc = htpu_graph_execute(g, &in, 1, &out, 1, NULL);
  for (int i = 0; !rc && i < 4; i++)
    if (y[i] != x[i] * (float)(k + 1)) rc = -100;
  return rc;
}

int lr_memfd(const char *text, unsigned seals, char *path, size_t *len) {
  void *bin = fx_build_model(text, len);
  if (!bin) return -1;
  int fd = lr_memfd_bytes(bin, *len, seals, path);
  free(bin);
  return fd;
}

int lr_memfd_bytes(const void *bytes, size_t len, unsigned seals, char *path) {
  int fd = memfd_create("htpu-test-model", MFD_ALLOW_SEALING | MFD_CLOEXEC);
  int ok = fd >= 0 && write(fd, bytes, len) == (ssize_t)len &&
           (!seals || fcntl(fd, F_ADD_SEALS, (int)seals) == 0);
  if (!ok) {
    printf("    memfd: %m\n");
    if (fd >= 0) close(fd);
    return -1;
  }
  snprintf(path, 64, "/proc/self/fd/%d", fd);
  return fd;
}

htpu_runtime *lr_runtime(int sharing) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.spill_fill_sharing = sharing;
  htpu_runtime *rt = NULL;
  int rc = htpu_runtime_open(&o, &rt);
  if (rc) printf("    htpu_runtime_open: %s: %s\n", htpu_err_name(rc), htpu_last_error());
  return rt;
}

htpu_context_load_info lr_info(htpu_context *ctx) {
  /* The strings are copied into a ring, so a test may look at them after the close. */
  static char ring[16][3][256];
  static unsigned next;
  char(*keep)[256] = ring[next++ % 16];
  htpu_context_load_info i;
  memset(&i, 0, sizeof i);
  if (htpu_context_get_load_info(ctx, &i) != 0) printf("    load info: %s\n", htpu_last_error());
  const char **s[3] = {&i.binary, &i.binary_note, &i.spill_fill_note};
  for (int k = 0; k < 3; k++) {
    snprintf(keep[k], sizeof keep[k], "%s", *s[k] ? *s[k] : "");
    *s[k] = keep[k];
  }
  return i;
}
