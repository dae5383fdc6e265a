/* test_core_dynamic.c - outputs with dynamic dimensions (QnnGraph.h: the backend writes an
 * output's dims back after an execute), end to end through the reference backend's NonZero:
 * the info that says which dimension is dynamic, the dims each execute produced (synchronous,
 * submitted, in copy mode, from two threads at once), the elements the conversion reads, and a
 * batch multiple refused. The oracle is the row-major scan of the input computed here. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

/* idx: the indices of x's nonzero elements (at most 6 rows of 2); r: relu(x), fixed shape. */
static const char *NZ_MODEL = "graph nz\n"
                              "  input x f32 [2,3]\n"
                              "  output idx i32 [6,2] dynamic=[0]\n"
                              "  output r f32 [2,3]\n"
                              "  op NonZero x -> idx\n"
                              "  op Relu x -> r\n";

/* The oracle: x's nonzero elements' [row, col], in row-major order; their count. */
static uint32_t nonzero_rows(const float x[6], int32_t want[12]) {
  uint32_t k = 0;
  for (int i = 0; i < 6; i++)
    if (x[i] != 0.0f) {
      want[2 * k] = i / 3;
      want[2 * k + 1] = i % 3;
      k++;
    }
  return k;
}

static int nz_open(fx_rig *r, const htpu_runtime_options *o) {
  memset(r, 0, sizeof *r);
  const char *path = fx_build_model_file("nz.bin", NZ_MODEL);
  if (!path) return -1;
  htpu_runtime_options ref;
  if (!o) fx_ref_options(&ref);
  int rc = htpu_runtime_open(o ? o : &ref, &r->rt);
  if (!rc) rc = htpu_context_open_file(r->rt, path, &r->ctx);
  if (!rc) rc = htpu_graph_open(r->ctx, "nz", &r->g);
  return rc;
}

/* One execute of x: idx into `idx` (12 i32, the rest of the buffer untouched), output dims. */
static int nz_run(htpu_graph *g, const float x[6], int32_t idx[12], uint32_t dims[2][HTPU_MAX_RANK]) {
  float r[6];
  htpu_io in = {(void *)x, 6 * sizeof(float), HTPU_F32};
  htpu_io out[2] = {{idx, 12 * sizeof(int32_t), HTPU_I32}, {r, sizeof r, HTPU_F32}};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.output_dims = &dims[0][0];
  return htpu_graph_execute_ex(g, &in, 1, out, 2, &o, NULL);
}

TEST(dynamic_info_says_which_dimension) {
  fx_rig r;
  CHECK_EQ(nz_open(&r, NULL), 0);
  const htpu_tensor_info *x = htpu_graph_input(r.g, 0), *idx = htpu_graph_output(r.g, 0);
  const htpu_tensor_info *relu = htpu_graph_output(r.g, 1);
  CHECK(x && idx && relu);
  CHECK_EQ(x->dynamic_dims, 0);
  CHECK_EQ(idx->dynamic_dims, 1); /* dims[0] */
  CHECK_EQ(idx->dims[0], 6);      /* its maximum */
  CHECK_EQ(idx->num_elements, 12);
  CHECK_EQ(relu->dynamic_dims, 0);
  /* the system library alone says the same */
  htpu_model_info *mi = NULL;
  CHECK_EQ(htpu_inspect_file(test_build_path("libhtpu_refsystem.so"), test_tmp_path("nz.bin"),
                             &mi), 0);
  CHECK_EQ(mi->graphs[0].outputs[0].dynamic_dims, 1);
  htpu_model_info_free(mi);
  fx_rig_close(&r);
}

TEST(dynamic_output_has_the_dims_the_backend_wrote) {
  fx_rig r;
  CHECK_EQ(nz_open(&r, NULL), 0);
  static const float xs[4][6] = {{0, 1.5f, 0, -2, 0, 3},  /* 3 nonzero */
                                 {0, 0, 0, 0, 0, 0},      /* none */
                                 {1, 2, 3, 4, 5, 6},      /* all */
                                 {-0.0f, 0, 7, 0, 0, 0}}; /* -0 is zero */
  for (int c = 0; c < 4; c++) {
    int32_t want[12], idx[12];
    uint32_t k = nonzero_rows(xs[c], want);
    for (int i = 0; i < 12; i++) idx[i] = -7; /* what the execute must leave past k rows */
    uint32_t dims[2][HTPU_MAX_RANK];
    memset(dims, 0xff, sizeof dims);
    CHECK_EQ(nz_run(r.g, xs[c], idx, dims), 0);
    CHECK_MSG(dims[0][0] == k && dims[0][1] == 2, "case %d: dims [%u,%u], want [%u,2]", c,
              dims[0][0], dims[0][1], k);
    for (int d = 2; d < HTPU_MAX_RANK; d++) CHECK_EQ(dims[0][d], 0);
    CHECK_EQ(dims[1][0], 2); /* the fixed output: its declared dims */
    CHECK_EQ(dims[1][1], 3);
    CHECK(memcmp(idx, want, 2 * k * sizeof(int32_t)) == 0);
    for (uint32_t i = 2 * k; i < 12; i++) CHECK_MSG(idx[i] == -7, "case %d: idx[%u] written", c, i);
  }
  /* the declared info is unchanged by any of it */
  CHECK_EQ(htpu_graph_output(r.g, 0)->dims[0], 6);
  fx_rig_close(&r);
}

/* An f32 request for the i32 indices converts only the rows produced. */
TEST(dynamic_output_converted_as_far_as_produced) {
  fx_rig r;
  CHECK_EQ(nz_open(&r, NULL), 0);
  const float x[6] = {0, 0, 5, 0, 9, 0};
  int32_t want[12];
  uint32_t k = nonzero_rows(x, want);
  CHECK_EQ(k, 2);
  float idx[12], relu[6];
  for (int i = 0; i < 12; i++) idx[i] = -7.0f;
  htpu_io in = {(void *)x, sizeof x, HTPU_F32};
  htpu_io out[2] = {{idx, sizeof idx, HTPU_F32}, {relu, sizeof relu, HTPU_F32}};
  uint32_t dims[2][HTPU_MAX_RANK];
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.output_dims = &dims[0][0];
  htpu_exec_stats st;
  CHECK_EQ(htpu_graph_execute_ex(r.g, &in, 1, out, 2, &o, &st), 0);
  CHECK_EQ(dims[0][0], 2);
  for (uint32_t i = 0; i < 2 * k; i++) CHECK_EQ(idx[i], want[i]);
  for (uint32_t i = 2 * k; i < 12; i++) CHECK(idx[i] == -7.0f);
  /* without output_dims the call is the same (the caller just does not learn the shape) */
  CHECK_EQ(htpu_graph_execute(r.g, &in, 1, out, 2, NULL), 0);
  fx_rig_close(&r);
}

typedef struct nz_done {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int n;
} nz_done;

static void nz_done_fn(htpu_call *call, int rc, void *arg) {
  (void)call;
  (void)rc;
  nz_done *d = arg;
  pthread_mutex_lock(&d->m);
  d->n++;
  pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->m);
}

/* Submitted calls take output_dims like their outputs: borrowed until done (and, in copy mode
 * without signals, written to the call's own copy and copied back). */
static void submitted_case(int copy_mode) {
  htpu_runtime_options ro;
  fx_ref_options(&ro);
  if (copy_mode) setenv("HTPU_REF_CAPS", "308=1000", 1); /* no execute signals */
  fx_rig r;
  int rc = nz_open(&r, &ro);
  unsetenv("HTPU_REF_CAPS");
  CHECK_EQ(rc, 0);
  htpu_runtime_info ri;
  CHECK_EQ(htpu_runtime_get_info(r.rt, &ri), 0);
  CHECK_EQ(ri.execute_signals, !copy_mode);
  const float x[6] = {4, 0, 0, 0, 8, 1};
  int32_t want[12], idx[12];
  uint32_t k = nonzero_rows(x, want);
  float relu[6];
  uint32_t dims[2][HTPU_MAX_RANK];
  memset(dims, 0xff, sizeof dims);
  htpu_io in = {(void *)x, sizeof x, HTPU_F32};
  htpu_io out[2] = {{idx, sizeof idx, HTPU_I32}, {relu, sizeof relu, HTPU_F32}};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.output_dims = &dims[0][0];
  o.timeout_ns = 10ull * 1000000000ull;
  nz_done d = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  htpu_call *call = NULL;
  CHECK_EQ(htpu_graph_submit(r.g, &in, 1, out, 2, &o, nz_done_fn, &d, &call), 0);
  CHECK_EQ(htpu_call_wait(call, UINT64_MAX), 0);
  CHECK_EQ(dims[0][0], k);
  CHECK_EQ(dims[0][1], 2);
  CHECK(memcmp(idx, want, 2 * k * sizeof(int32_t)) == 0);
  htpu_call_release(&call);
  /* a synchronous call with a deadline and no signals runs as a submitted call: the same */
  memset(dims, 0xff, sizeof dims);
  CHECK_EQ(htpu_graph_execute_ex(r.g, &in, 1, out, 2, &o, NULL), 0);
  CHECK_EQ(dims[0][0], k);
  fx_rig_close(&r);
}

TEST(dynamic_output_dims_of_submitted_calls) { submitted_case(0); }
TEST(dynamic_output_dims_of_submitted_calls_in_copy_mode) { submitted_case(1); }

typedef struct nz_thread {
  htpu_graph *g;
  float x[6];
  int failures;
} nz_thread;

static void *nz_loop(void *arg) {
  nz_thread *t = arg;
  int32_t want[12];
  uint32_t k = nonzero_rows(t->x, want);
  for (int i = 0; i < 300; i++) {
    int32_t idx[12];
    uint32_t dims[2][HTPU_MAX_RANK];
    if (nz_run(t->g, t->x, idx, dims) != 0 || dims[0][0] != k ||
        memcmp(idx, want, 2 * k * sizeof(int32_t)) != 0)
      t->failures++;
  }
  return NULL;
}

/* Each call has dims arrays of its own: calls of one graph from two threads (serialized on the
 * graph, the backend writing dims in each) never see each other's shape. */
TEST(dynamic_dims_are_per_call_under_concurrency) {
  fx_rig r;
  CHECK_EQ(nz_open(&r, NULL), 0);
  htpu_graph *g2 = NULL;
  CHECK_EQ(htpu_graph_open(r.ctx, "nz", &g2), 0);
  nz_thread a = {r.g, {1, 0, 0, 0, 0, 0}, 0}, b = {g2, {1, 1, 1, 1, 1, 0}, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, nz_loop, &a);
  pthread_create(&tb, NULL, nz_loop, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK_EQ(a.failures, 0);
  CHECK_EQ(b.failures, 0);
  htpu_graph_close(&g2);
  fx_rig_close(&r);
}

TEST(dynamic_outputs_take_no_batch_multiple) {
  fx_rig r;
  CHECK_EQ(nz_open(&r, NULL), 0);
  float x[12] = {0}, relu[12];
  int32_t idx[24];
  htpu_io in = {x, sizeof x, HTPU_F32};
  htpu_io out[2] = {{idx, sizeof idx, HTPU_I32}, {relu, sizeof relu, HTPU_F32}};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.batch_multiple = 2;
  CHECK_EQ(htpu_graph_execute_ex(r.g, &in, 1, out, 2, &o, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "graph 'nz' output 'idx' has dynamic dimensions");
  fx_rig_close(&r);
}
