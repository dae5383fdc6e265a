/* load_rig.h - what the loading tests share (test_core_load*.c, test_refbackend_loading.c):
 * models whose answers a test can work out by hand, binaries in files, sealed memfds and
 * lent buffers, and the calls that check an answer. */
#ifndef HTPU_TEST_LOAD_RIG_H
#define HTPU_TEST_LOAD_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"

/* "weighted": y = (a + b) * w, f32 [1,4], w a static [0.5, 2, -1, 3] (the weights the
 * backend reads from the binary at every execute). */
extern const char *const LR_WEIGHTED;
/* Four graphs g0..g3: y = x * k with k = 1, 2, 3, 4 (a static), f32 [1,4]. */
extern const char *const LR_FOUR;

/* A model whose one graph "spill<tag>" has activations of `floats` f32 elements twice over:
 * its spill-fill buffer (reference/model/memory.c, reported in its graph blob info V1) is
 * 8 x floats bytes. Malloc'ed text. */
char *lr_spill_model(const char *tag, uint32_t floats);
/* Its graph: y = relu(relu(x)) on `floats` elements; 0 when y is right for x = i - n/2. */
int lr_spill_check(htpu_graph *g, uint32_t floats);

/* weighted's answer for a0 (a = {a0, 2, 3, 4}, b = {10, 20, 30, 40}) through g: 0 when right,
 * else the call's error or -100 for a wrong value (printed). */
int lr_weighted_check(htpu_graph *g, float a0);
/* g<k> of LR_FOUR: y = x * (k + 1) for x = {1, -2, 3.5, 4}: 0 when right. */
int lr_four_check(htpu_graph *g, int k);

/* The binary of `text` in a memfd sealed with `seals` (F_SEAL_*), and its path through
 * /proc/self/fd (in *path, 64 bytes). Returns the fd (close it), or -1 (printed). */
int lr_memfd(const char *text, unsigned seals, char *path, size_t *len);
/* The same with the file's bytes given (an ONNX model, say). */
int lr_memfd_bytes(const void *bytes, size_t len, unsigned seals, char *path);

/* A reference runtime with spill-fill sharing on or off. NULL on failure (printed). */
htpu_runtime *lr_runtime(int sharing);

/* The load info of ctx (zeroed when it cannot be read), its strings copied (a ring of 16:
 * valid after the context is closed). Not thread-safe. */
htpu_context_load_info lr_info(htpu_context *ctx);

#endif
