/* Batch multiple through the core (htpu_exec_options.batch_multiple): k row groups in one
 * execute where the backend and graph take it, k executes where they do not, the refusal
 * remembered per graph, sizes checked against k, a fault in the middle of a chunked call named,
 * profiles. The oracle is the same graph run one row group per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

#define DIGITS_DIR "models/digits/"
#define ROWS 64

static void *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  *len = 0;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n > 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  *len = buf ? (size_t)n : 0;
  return buf;
}

/* The digits model (batch 1: u8 [1,64] -> u8 [1,10]) opened from its text, the graph line
 * replaced by `graph_line` (e.g. marked batch_multiple=no). */
typedef struct digits {
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *g;
} digits;

static int digits_open(digits *d, const char *graph_line, const char *file) {
  memset(d, 0, sizeof *d);
  size_t n;
  char *text = slurp(DIGITS_DIR "digits.txt", &n);
  if (!text) return -1;
  char *at = strstr(text, "graph digits\n");
  if (!at) {
    free(text);
    return -1;
  }
  size_t head = (size_t)(at - text), tail = strlen(at + 13);
  char *edited = malloc(head + strlen(graph_line) + tail + 2);
  if (!edited) {
    free(text);
    return -1;
  }
  sprintf(edited, "%.*s%s\n%s", (int)head, text, graph_line, at + 13);
  free(text);
  const char *path = fx_build_model_file(file, edited);
  free(edited);
  if (!path) return -1;
  d->rt = fx_open_runtime();
  if (!d->rt) return -1;
  if (htpu_context_open_file(d->rt, path, &d->ctx)) return -1;
  return htpu_graph_open(d->ctx, "digits", &d->g);
}

static void digits_close(digits *d) {
  htpu_graph_close(&d->g);
  htpu_context_close(&d->ctx);
  htpu_runtime_close(&d->rt);
}

/* The first `rows` held-out digits (every row a different image). */
static float *digit_rows(uint32_t rows) {
  size_t n;
  float *x = slurp(DIGITS_DIR "test_x.f32", &n);
  if (!x || n < (size_t)rows * 64 * sizeof(float)) {
    free(x);
    return NULL;
  }
  return x;
}

/* The oracle: one call per row group, f32 in and out. */
static int per_row(htpu_graph *g, const float *x, uint32_t rows, float *y) {
  for (uint32_t r = 0; r < rows; r++) {
    htpu_io in = {(void *)(x + r * 64), 64 * sizeof(float), HTPU_F32};
    htpu_io out = {y + r * 10, 10 * sizeof(float), HTPU_F32};
    int rc = htpu_graph_execute(g, &in, 1, &out, 1, NULL);
    if (rc) return rc;
  }
  return 0;
}

static int batch_call(htpu_graph *g, const float *x, uint32_t rows, float *y, htpu_exec_stats *st) {
  htpu_exec_options o = {0};
  o.batch_multiple = rows;
  htpu_io in = {(void *)x, (size_t)rows * 64 * sizeof(float), HTPU_F32};
  htpu_io out = {y, (size_t)rows * 10 * sizeof(float), HTPU_F32};
  return htpu_graph_execute_ex(g, &in, 1, &out, 1, &o, st);
}

static htpu_batch_multiple_state bm_state(htpu_graph *g) {
  htpu_batch_multiple_state s = (htpu_batch_multiple_state)-1;
  if (htpu_graph_get_batch_multiple(g, &s) != 0) return (htpu_batch_multiple_state)-1;
  return s;
}

/* Rows of y that differ from each other: the rows are not interchangeable, so an execute that
 * mixed them up could not match the oracle by accident. */
static int distinct_rows(const float *y, uint32_t rows) {
  int distinct = 0;
  for (uint32_t r = 0; r < rows; r++) {
    int seen = 0;
    for (uint32_t q = 0; q < r && !seen; q++) seen = memcmp(y + r * 10, y + q * 10, 40) == 0;
    distinct += !seen;
  }
  return distinct;
}

TEST(batch_multiple_digits_one_execute_equals_per_row_calls) {
  fx_reset_env();
  digits d;
  float *x = digit_rows(ROWS);
  float *want = calloc(ROWS * 10, sizeof(float)), *got = calloc(ROWS * 10, sizeof(float));
  CHECK(x && want && got);
  CHECK_EQ(digits_open(&d, "graph digits", "bm_digits.bin"), 0);
  htpu_runtime_info ri;
  CHECK_EQ(htpu_runtime_get_info(d.rt, &ri), 0);
  CHECK_EQ(ri.batch_multiple, 1);
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_UNTRIED);
  CHECK_EQ(per_row(d.g, x, ROWS, want), 0);
  CHECK(distinct_rows(want, ROWS) > ROWS / 2);

  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  uint64_t backend0 = fx_ref_executes();
  htpu_exec_stats st;
  CHECK_EQ(batch_call(d.g, x, ROWS, got, &st), 0);
  CHECK_EQ(memcmp(got, want, ROWS * 10 * sizeof(float)), 0);
  CHECK_EQ(st.executes, 1);
  CHECK_EQ(st.failed_chunk, 0);
  CHECK(st.quantize_ns > 0 && st.dequantize_ns > 0);
  CHECK_EQ(fx_ref_executes() - backend0, 1);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.batch_multiple_executes - s0.batch_multiple_executes, 1);
  CHECK_EQ(s1.batch_multiple_refusals - s0.batch_multiple_refusals, 0);
  CHECK_EQ(s1.executes - s0.executes, 1);
  htpu_ref_graph_state gs;
  CHECK_EQ(fx_ref_graph_state("digits", &gs), 0);
  CHECK_EQ(gs.last_batch_multiple, ROWS);
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_ONE_EXECUTE);

  /* the native types, no conversion: u8 rows in, u8 rows out, against the f32 path's codes */
  uint8_t *xq = malloc(ROWS * 64), *yq = malloc(ROWS * 10), *yq1 = malloc(10);
  CHECK(xq && yq && yq1);
  const htpu_tensor_info *ti = htpu_graph_input(d.g, 0);
  for (uint32_t r = 0; r < ROWS; r++) CHECK_EQ(htpu_quantize(ti, x + r * 64, xq + r * 64), 0);
  htpu_exec_options o = {.batch_multiple = ROWS};
  htpu_io in = {xq, ROWS * 64, HTPU_U8}, out = {yq, ROWS * 10, HTPU_U8};
  CHECK_EQ(htpu_graph_execute_ex(d.g, &in, 1, &out, 1, &o, &st), 0);
  CHECK_EQ(st.executes, 1);
  CHECK_EQ(st.quantize_ns, 0);
  for (uint32_t r = 0; r < ROWS; r += 7) {
    htpu_io i1 = {xq + r * 64, 64, HTPU_U8}, o1 = {yq1, 10, HTPU_U8};
    CHECK_EQ(htpu_graph_execute(d.g, &i1, 1, &o1, 1, NULL), 0);
    CHECK_MSG(memcmp(yq1, yq + r * 10, 10) == 0, "row %u differs", r);
  }
  /* k = 0 and 1 are no multiple: one row group */
  for (uint32_t k = 0; k <= 1; k++) {
    htpu_exec_options o1 = {.batch_multiple = k};
    htpu_io i1 = {xq, 64, HTPU_U8}, o2 = {yq1, 10, HTPU_U8};
    CHECK_EQ(htpu_graph_execute_ex(d.g, &i1, 1, &o2, 1, &o1, &st), 0);
    CHECK_EQ(st.executes, 1);
    CHECK_EQ(memcmp(yq1, yq, 10), 0);
  }
  free(xq);
  free(yq);
  free(yq1);
  digits_close(&d);
  free(x);
  free(want);
  free(got);
}

/* y = relu(x W^T + b), a graph of batch 2: dims[0] is 2k in the one execute. */
static const char *const FC_B2 =
    "graph fc\n"
    "  input x f32 [2,3]\n"
    "  static w f32 [2,3] data=[1,-1,0.5, 2,0,-1]\n"
    "  static b f32 [2] data=[0.25,-0.5]\n"
    "  output y f32 [2,2]\n"
    "  op FullyConnected x w b -> y\n";

static float fc_ref(const float *x, int out) {
  static const float w[2][3] = {{1, -1, 0.5f}, {2, 0, -1}}, b[2] = {0.25f, -0.5f};
  float v = b[out];
  for (int k = 0; k < 3; k++) v += x[k] * w[out][k];
  return v;
}

TEST(batch_multiple_graph_of_batch_two_multiplies_dims0) {
  fx_reset_env();
  fx_rig r = {0};
  const char *path = fx_build_model_file("bm_fc.bin", FC_B2);
  CHECK(path != NULL);
  CHECK((r.rt = fx_open_runtime()) != NULL);
  CHECK_EQ(htpu_context_open_file(r.rt, path, &r.ctx), 0);
  CHECK_EQ(htpu_graph_open(r.ctx, "fc", &r.g), 0);
  enum { K = 5 };
  float x[K * 6], y[K * 4];
  for (int i = 0; i < K * 6; i++) x[i] = (float)((i * 7) % 11) - 5.0f;
  htpu_exec_options o = {.batch_multiple = K};
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  htpu_exec_stats st;
  CHECK_EQ(htpu_graph_execute_ex(r.g, &in, 1, &out, 1, &o, &st), 0);
  CHECK_EQ(st.executes, 1);
  for (int row = 0; row < 2 * K; row++)
    for (int c = 0; c < 2; c++)
      CHECK_MSG(y[row * 2 + c] == fc_ref(&x[row * 3], c), "row %d col %d: %g", row, c,
                (double)y[row * 2 + c]);
  htpu_ref_graph_state gs;
  CHECK_EQ(fx_ref_graph_state("fc", &gs), 0);
  CHECK_EQ(gs.last_batch_multiple, K);
  fx_rig_close(&r);
}

TEST(batch_multiple_refusing_graph_runs_chunked_and_is_remembered) {
  fx_reset_env();
  digits d, other;
  float *x = digit_rows(ROWS);
  float *want = calloc(ROWS * 10, sizeof(float)), *got = calloc(ROWS * 10, sizeof(float));
  CHECK(x && want && got);
  CHECK_EQ(digits_open(&d, "graph digits batch_multiple=no", "bm_refuses.bin"), 0);
  CHECK_EQ(per_row(d.g, x, ROWS, want), 0);
  htpu_graph *second = NULL; /* a second handle of the same QNN graph */
  CHECK_EQ(htpu_graph_open(d.ctx, "digits", &second), 0);

  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  uint64_t backend0 = fx_ref_executes();
  htpu_exec_stats st;
  CHECK_EQ(batch_call(d.g, x, ROWS, got, &st), 0);
  CHECK_EQ(memcmp(got, want, ROWS * 10 * sizeof(float)), 0);
  CHECK_EQ(st.executes, ROWS + 1); /* the refused one, then a chunk each */
  CHECK_EQ(fx_ref_executes() - backend0, ROWS);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.batch_multiple_refusals - s0.batch_multiple_refusals, 1);
  CHECK_EQ(s1.batch_multiple_executes - s0.batch_multiple_executes, 0);
  CHECK_EQ(s1.execute_errors - s0.execute_errors, 0);
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_CHUNKED);
  CHECK_EQ(bm_state(second), HTPU_BATCH_MULTIPLE_CHUNKED);

  /* remembered: later calls, through either handle, go chunked without asking again */
  memset(got, 0, ROWS * 10 * sizeof(float));
  CHECK_EQ(batch_call(second, x, ROWS, got, &st), 0);
  CHECK_EQ(memcmp(got, want, ROWS * 10 * sizeof(float)), 0);
  CHECK_EQ(st.executes, ROWS);
  htpu_stats_get(&s0);
  CHECK_EQ(s0.batch_multiple_refusals, s1.batch_multiple_refusals);

  /* per graph: the same graph in a model that takes multiples is not affected */
  CHECK_EQ(digits_open(&other, "graph digits", "bm_takes.bin"), 0);
  CHECK_EQ(bm_state(other.g), HTPU_BATCH_MULTIPLE_UNTRIED);
  CHECK_EQ(batch_call(other.g, x, 8, got, &st), 0);
  CHECK_EQ(st.executes, 1);
  CHECK_EQ(memcmp(got, want, 8 * 10 * sizeof(float)), 0);
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_CHUNKED);
  digits_close(&other);
  htpu_graph_close(&second);
  digits_close(&d);
  free(x);
  free(want);
  free(got);
}

TEST(batch_multiple_capability_312_off) {
  fx_reset_env();
  float *x = digit_rows(8);
  float want[8 * 10], got[8 * 10];
  CHECK(x != NULL);
  /* off at open: announced nowhere, every call chunked, nothing refused */
  CHECK_EQ(fx_ref_set_capability(312, 1000), 0);
  digits d;
  CHECK_EQ(digits_open(&d, "graph digits", "bm_off.bin"), 0);
  htpu_runtime_info ri;
  CHECK_EQ(htpu_runtime_get_info(d.rt, &ri), 0);
  CHECK_EQ(ri.batch_multiple, 0);
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_CHUNKED);
  CHECK_EQ(per_row(d.g, x, 8, want), 0);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  htpu_exec_stats st;
  CHECK_EQ(batch_call(d.g, x, 8, got, &st), 0);
  CHECK_EQ(st.executes, 8);
  CHECK_EQ(memcmp(got, want, sizeof want), 0);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.batch_multiple_refusals, s0.batch_multiple_refusals);
  digits_close(&d);

  /* announced at open, switched off afterwards: the backend refuses (1000), the call falls
   * back and the graph remembers */
  fx_ref_reset_capabilities();
  CHECK_EQ(digits_open(&d, "graph digits", "bm_off2.bin"), 0);
  CHECK_EQ(htpu_runtime_get_info(d.rt, &ri), 0);
  CHECK_EQ(ri.batch_multiple, 1);
  CHECK_EQ(fx_ref_set_capability(312, 1000), 0);
  memset(got, 0, sizeof got);
  CHECK_EQ(batch_call(d.g, x, 8, got, &st), 0);
  CHECK_EQ(st.executes, 9);
  CHECK_EQ(memcmp(got, want, sizeof want), 0);
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_CHUNKED);
  htpu_stats_get(&s0);
  CHECK_EQ(s0.batch_multiple_refusals - s1.batch_multiple_refusals, 1);
  fx_ref_reset_capabilities();
  CHECK_EQ(batch_call(d.g, x, 8, got, &st), 0);
  CHECK_EQ(st.executes, 8); /* still remembered while the graph is open */
  digits_close(&d);
  free(x);
}

TEST(batch_multiple_sizes_are_checked_against_k) {
  fx_reset_env();
  digits d;
  CHECK_EQ(digits_open(&d, "graph digits", "bm_sizes.bin"), 0);
  float x[3 * 64] = {0}, y[3 * 10];
  htpu_exec_options o = {.batch_multiple = 3};
  /* an input of 2 row groups for k = 3 */
  htpu_io in = {x, 2 * 64 * sizeof(float), HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  uint64_t backend0 = fx_ref_executes();
  CHECK_EQ(htpu_graph_execute_ex(d.g, &in, 1, &out, 1, &o, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "graph 'digits' input 'image': batch_multiple 3 expects "
                     "3 x 256 bytes = 768 (3 row groups of 64 f32 elements "
                     "for u8 [1,64]), given 512");
  /* an output of one row group */
  in.size = sizeof x;
  out.size = 10 * sizeof(float);
  CHECK_EQ(htpu_graph_execute_ex(d.g, &in, 1, &out, 1, &o, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "output 'logits': batch_multiple 3 expects 3 x 40 bytes");
  /* the size of one row group without the option is the ordinary message */
  CHECK_EQ(htpu_graph_execute(d.g, &in, 1, &out, 1, NULL), HTPU_EMISMATCH);
  CHECK_STR_CONTAINS(htpu_last_error(), "expected 256 bytes");
  /* no_wait cannot take a multiple */
  out.size = sizeof y;
  o.no_wait = 1;
  CHECK_EQ(htpu_graph_execute_ex(d.g, &in, 1, &out, 1, &o, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "batch_multiple 3 cannot be combined with no_wait");
  /* a NaN in row group 2 fails its conversion, before any execute, naming it */
  o.no_wait = 0;
  x[2 * 64 + 5] = __builtin_nanf("");
  htpu_exec_stats st;
  CHECK_EQ(htpu_graph_execute_ex(d.g, &in, 1, &out, 1, &o, &st), HTPU_ENAN);
  CHECK_STR_CONTAINS(htpu_last_error(), "(row group 2 of the batch of 3)");
  CHECK_EQ(st.failed_chunk, 3);
  CHECK_EQ(st.executes, 0);
  CHECK_EQ(fx_ref_executes(), backend0);
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_UNTRIED);
  htpu_batch_multiple_state s;
  CHECK_EQ(htpu_graph_get_batch_multiple(d.g, NULL), HTPU_EINVAL);
  digits_close(&d);
  CHECK_EQ(htpu_graph_get_batch_multiple(d.g, &s), HTPU_ECLOSED);
}

TEST(batch_multiple_fault_mid_chunked_call_names_the_chunk) {
  fx_reset_env();
  digits d;
  float *x = digit_rows(5);
  float got[5 * 10], want[5 * 10];
  CHECK(x != NULL);
  CHECK_EQ(digits_open(&d, "graph digits batch_multiple=no", "bm_fault.bin"), 0);
  CHECK_EQ(per_row(d.g, x, 5, want), 0);
  htpu_exec_stats st;
  CHECK_EQ(batch_call(d.g, x, 5, got, &st), 0); /* learns the refusal */
  CHECK_EQ(bm_state(d.g), HTPU_BATCH_MULTIPLE_CHUNKED);
  /* chunked now: the third graphExecute is chunk 2 */
  memset(got, 0, sizeof got);
  CHECK_EQ(fx_ref_arm("graphExecute:3:1100"), 0);
  CHECK_EQ(batch_call(d.g, x, 5, got, &st), HTPU_EQNN);
  CHECK_EQ(htpu_last_qnn_code(), 1100);
  CHECK_STR_CONTAINS(htpu_last_error(),
                     "(chunk 2 of 5: batch_multiple run as one execute per "
                     "chunk, the 2 before it completed)");
  CHECK_EQ(st.failed_chunk, 3);
  CHECK_EQ(st.executes, 3);
  char msg[512];
  htpu_graph_last_error(d.g, msg, sizeof msg);
  CHECK_STR_CONTAINS(msg, "chunk 2 of 5");
  fx_ref_disarm();
  CHECK_EQ(batch_call(d.g, x, 5, got, &st), 0); /* the graph stays usable */
  CHECK_EQ(memcmp(got, want, sizeof want), 0);
  digits_close(&d);

  /* a fault in a single execute of every row group: the whole batch's, not a chunk's, and not
   * taken for a refusal */
  CHECK_EQ(digits_open(&d, "graph digits", "bm_fault2.bin"), 0);
  CHECK_EQ(fx_ref_arm("graphExecute:1:1100"), 0);
  CHECK_EQ(batch_call(d.g, x, 5, got, &st), HTPU_EQNN);
  CHECK_STR_CONTAINS(htpu_last_error(), "(one execute of all 5 row groups: batch_multiple)");
  CHECK_EQ(st.failed_chunk, 0);
  CHECK_EQ(st.executes, 1);
  CHECK(bm_state(d.g) != HTPU_BATCH_MULTIPLE_CHUNKED);
  fx_ref_disarm();
  CHECK_EQ(batch_call(d.g, x, 5, got, &st), 0);
  CHECK_EQ(st.executes, 1);
  CHECK_EQ(memcmp(got, want, sizeof want), 0);
  digits_close(&d);
  free(x);
}

TEST(batch_multiple_with_a_profile) {
  fx_reset_env();
  float *x = digit_rows(4);
  float got[4 * 10], want[4 * 10];
  CHECK(x != NULL);
  const char *lines[] = {"graph digits", "graph digits batch_multiple=no"};
  const int executes[] = {1, 5};
  for (int m = 0; m < 2; m++) {
    digits d;
    CHECK_EQ(digits_open(&d, lines[m], m ? "bm_prof_no.bin" : "bm_prof.bin"), 0);
    CHECK_EQ(per_row(d.g, x, 4, want), 0);
    htpu_profile *p = NULL;
    htpu_exec_options o = {.batch_multiple = 4, .profile_level = HTPU_PROFILE_BASIC, .profile = &p};
    htpu_io in = {x, 4 * 64 * sizeof(float), HTPU_F32}, out = {got, sizeof got, HTPU_F32};
    htpu_exec_stats st;
    CHECK_EQ(htpu_graph_execute_ex(d.g, &in, 1, &out, 1, &o, &st), 0);
    CHECK_EQ(st.executes, executes[m]);
    CHECK_EQ(memcmp(got, want, sizeof want), 0);
    CHECK_MSG(p != NULL && p->num_events > 0, "model %d: no profile", m);
    CHECK(strcmp(p->graph, "digits") == 0);
    htpu_profile_free(p);
    digits_close(&d);
    CHECK_EQ(fx_ref_live_profiles(), 0);
  }
  free(x);
}
