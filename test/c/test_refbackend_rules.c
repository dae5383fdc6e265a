/* test_refbackend_rules.c - the API rules the reference backend enforces: free order, freeing or
 * unloading while an execute runs, one execute per graph at a time.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_device_abi.h"
#include "refb_rig.h"
#include "test.h"

/* ---- rules -------------------------------------------------------------------------------- */

TEST(refb_rule_free_order) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.t->log_free(r.log), QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_EQ(stats_of(&r.c).violations, 1);
  CHECK_STR_CONTAINS(r.c.last_violation(), "logFree");
  CHECK_STR_CONTAINS(log_text(), "API rule violation");
  CHECK_EQ(r.t->device_free(r.dev), QNN_DEVICE_ERROR_ASSOCIATED_TO_CONTEXT);
  CHECK_EQ(stats_of(&r.c).violations, 2);
  CHECK_STR_CONTAINS(r.c.last_violation(), "deviceFree");
  /* backendFree with a context and a device alive: both leaked, freed, counted */
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = r.dev = r.ctx = NULL;
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.violations, 4);
  CHECK_EQ(s.leaked_handles, 2);
  CHECK_STR_CONTAINS(r.c.last_violation(), "leaked");
  CHECK_EQ(r.t->graph_execute(r.g, NULL, 0, NULL, 0, NULL, NULL), QNN_GRAPH_ERROR_INVALID_HANDLE);
  /* the log is free now */
  CHECK_EQ(r.t->log_free(r.log), QNN_SUCCESS);
  r.log = NULL;
  r.c.reset_stats();
  CHECK_EQ(stats_of(&r.c).violations, 0);
  CHECK(strcmp(r.c.last_violation(), "") == 0);
  rig_close(&r);
}

TEST(refb_rule_device_before_backend) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  htpu_ref_stats s = stats_of(&c);
  if (s.live_backends) { /* another holder of the library left one alive: nothing to test */
    ctl_close(&c);
    return;
  }
  qnn_device_handle_t d = NULL;
  CHECK_EQ(p->table.device_create(NULL, NULL, &d), QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE);
  CHECK_EQ(stats_of(&c).violations, 1);
  CHECK_STR_CONTAINS(c.last_violation(), "before backendCreate");
  ctl_close(&c);
}

typedef struct exec_job {
  rig *r;
  io *x;
  qnn_error_t rc;
} exec_job;

static void *exec_thread(void *arg) {
  exec_job *j = arg;
  j->rc = exec(j->r, j->x);
  return NULL;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Waits until n executes are in flight (at most ~2 s). */
static int wait_in_flight(const ctl *c, uint32_t n) {
  for (int i = 0; i < 400; i++) {
    if (stats_of(c).executes_in_flight >= n) return 1;
    sleep_ms(5);
  }
  return 0;
}

TEST(refb_rule_free_while_executing) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  CHECK_EQ(r.c.set_latency("graphExecute", 300000), 0);
  exec_job j = {&r, &x, 1};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, exec_thread, &j) == 0);
  int in_flight = wait_in_flight(&r.c, 1);
  qnn_error_t ctx_rc = r.t->context_free(r.ctx, NULL);
  qnn_error_t be_rc = r.t->backend_free(r.be);
  pthread_join(th, NULL);
  CHECK(in_flight);
  CHECK_EQ(ctx_rc, QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_EQ(be_rc, QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED);
  CHECK_EQ(j.rc, QNN_SUCCESS);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.violations, 2);
  CHECK_EQ(s.executes_in_flight, 0);
  CHECK_STR_CONTAINS(r.c.last_violation(), "backendFree");
  io_free(&x);
  /* the context is still valid and frees normally */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  rig_close(&r);
}

/* A process exits (exit(), as the BEAM does at halt) while a graphExecute runs on another
 * thread: the library's exit-time destructor must leave alone what that call is using. */
TEST(refb_unload_while_executing) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  htpu_ref_unload_handles_fn unload = r.c.unload_handles;
  CHECK(unload != NULL);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  float *a = x.buf[0], *b = x.buf[1], *y = x.buf[2];
  for (int i = 0; i < 4; i++) a[i] = 1.0f + (float)i, b[i] = 2.0f + (float)i;
  CHECK_EQ(r.c.set_latency("graphExecute", 300000), 0);
  exec_job j = {&r, &x, 1};
  pthread_t th;
  CHECK(pthread_create(&th, NULL, exec_thread, &j) == 0);
  CHECK(wait_in_flight(&r.c, 1));
  if (unload) unload();
  pthread_join(th, NULL);
  CHECK_EQ(j.rc, QNN_SUCCESS);
  CHECK(y[0] == 3.0f && y[3] == 9.0f);
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  /* with nothing running, the handles are still the caller's, and free normally */
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_rule_concurrent_execute_same_graph) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  io x1, x2;
  CHECK(io_init(&x1, r.model, 0) == 0);
  CHECK(io_init(&x2, r.model, 0) == 0);
  CHECK_EQ(r.c.set_latency("graphExecute", 150000), 0);
  exec_job j1 = {&r, &x1, 1}, j2 = {&r, &x2, 1};
  pthread_t t1, t2;
  CHECK(pthread_create(&t1, NULL, exec_thread, &j1) == 0);
  wait_in_flight(&r.c, 1);
  CHECK(pthread_create(&t2, NULL, exec_thread, &j2) == 0);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  /* both ran (QNN queues them), and the overlap was recorded */
  CHECK_EQ(j1.rc, QNN_SUCCESS);
  CHECK_EQ(j2.rc, QNN_SUCCESS);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.total_executes, 2);
  CHECK_EQ(s.violations, 1);
  CHECK_STR_CONTAINS(r.c.last_violation(), "same graph");
  io_free(&x1);
  io_free(&x2);
  rig_close(&r);
}
