/* test_refbackend_faults.c - fault injection in the reference backend: HTPU_REF_FAULTS and
 * HTPU_REF_LATENCY, the control API, build-id override.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qnn/qnn_abi.h"
#include "qnn/qnn_device_abi.h"
#include "fixture.h"
#include "refb_rig.h"
#include "test.h"

/* ---- fault injection ---------------------------------------------------------------------- */

TEST(refb_faults_env_nth_count_every) {
  static const struct {
    const char *rules;
    qnn_error_t want[4];
  } cases[] = {
      {"graphExecute:2:1007", {0, 1007, 0, 0}},
      {"graphExecute:2:1007:2", {0, 1007, 1007, 0}},
      {"graphExecute:*:1003", {1003, 1003, 1003, 1003}},
      {"graphRetrieve:1:1002,graphExecute:4:1010", {0, 0, 0, 1010}},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    rig r;
    qnn_error_t rc = rig_open_env(&r, RB_ADD, "add", cases[k].rules, NULL);
    if (k == 3) {
      CHECK_EQ(rc, QNN_COMMON_ERROR_MEM_ALLOC);
      CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &r.g), QNN_SUCCESS);
    } else {
      CHECK_EQ(rc, 0);
    }
    io x;
    CHECK(io_init(&x, r.model, 0) == 0);
    ((float *)x.buf[0])[0] = 1.0f;
    for (int call = 0; call < 4; call++) {
      ((float *)x.buf[2])[0] = -1.0f;
      qnn_error_t got = exec(&r, &x);
      CHECK_MSG(got == cases[k].want[call], "rules '%s' call %d: got %llu, want %llu",
                cases[k].rules, call + 1, (unsigned long long)got,
                (unsigned long long)cases[k].want[call]);
      /* a failed call leaves the output alone; a good one after it computes normally */
      CHECK(((float *)x.buf[2])[0] == (got ? -1.0f : 1.0f));
    }
    if (k == 0) CHECK_STR_CONTAINS(log_text(), "injected fault, returning 1007");
    io_free(&x);
    rig_close(&r);
  }
}

TEST(refb_faults_env_per_backend_and_process) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  /* backendCreate and logCreate count process-wide, from when the variable was set */
  setenv("HTPU_REF_FAULTS", "backendCreate:2:4000,logCreate:1:1002,contextCreateFromBinary:1:1008",
         1);
  log_clear();
  qnn_log_handle_t log = NULL;
  CHECK_EQ(p->table.log_create(log_cb, QNN_LOG_LEVEL_ERROR, &log), 1002);
  CHECK(log_calls() >= 1); /* reported through the callback it was given */
  CHECK_EQ(p->table.log_create(log_cb, QNN_LOG_LEVEL_ERROR, &log), QNN_SUCCESS);
  qnn_backend_handle_t b1 = NULL, b2 = NULL, b3 = NULL;
  CHECK_EQ(p->table.backend_create(log, NULL, &b1), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_create(log, NULL, &b2), QNN_BACKEND_ERROR_CANNOT_INITIALIZE);
  unsetenv("HTPU_REF_FAULTS");
  CHECK_EQ(p->table.backend_create(log, NULL, &b3), QNN_SUCCESS); /* no rules of its own */
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t c1 = NULL, c3 = NULL;
  qnn_error_t r1 = p->table.context_create_from_binary(b1, NULL, NULL, bin, len, &c1, NULL);
  qnn_error_t r1b = p->table.context_create_from_binary(b1, NULL, NULL, bin, len, &c1, NULL);
  qnn_error_t r3 = p->table.context_create_from_binary(b3, NULL, NULL, bin, len, &c3, NULL);
  free(bin);
  CHECK_EQ(r1, QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES);
  CHECK_EQ(r1b, QNN_SUCCESS);
  CHECK_EQ(r3, QNN_SUCCESS);
  CHECK_EQ(stats_of(&c).faults_injected, 3);
  CHECK_EQ(p->table.context_free(c1, NULL), QNN_SUCCESS);
  CHECK_EQ(p->table.context_free(c3, NULL), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(b1), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(b3), QNN_SUCCESS);
  CHECK_EQ(p->table.log_free(log), QNN_SUCCESS);
  /* a syntax error fails backendCreate */
  setenv("HTPU_REF_FAULTS", "graphExecute:first:1007", 1);
  c.disarm(); /* forget the process-wide set so only the per-backend parse sees it */
  CHECK_EQ(p->table.backend_create(NULL, NULL, &b1), QNN_BACKEND_ERROR_CANNOT_INITIALIZE);
  unsetenv("HTPU_REF_FAULTS");
  /* a latency from the nth call: n counts from 1; more fields are an error */
  const char *bad_latency[] = {"graphExecute:5:0", "graphExecute:5:x", "graphExecute:5:1:2"};
  for (int k = 0; k < 3; k++) {
    setenv("HTPU_REF_LATENCY", bad_latency[k], 1);
    c.disarm();
    CHECK_MSG(p->table.backend_create(NULL, NULL, &b1) == QNN_BACKEND_ERROR_CANNOT_INITIALIZE,
              "%s", bad_latency[k]);
  }
  setenv("HTPU_REF_LATENCY", "graphExecute:5:3", 1);
  c.disarm();
  CHECK_EQ(p->table.backend_create(NULL, NULL, &b1), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(b1), QNN_SUCCESS);
  unsetenv("HTPU_REF_LATENCY");
  c.disarm();
  /* getProviders */
  setenv("HTPU_REF_FAULTS", "getProviders:1:1010", 1);
  const qnn_interface_t **list = NULL;
  uint32_t n = 0;
  CHECK_EQ(c.get_providers(&list, &n), QNN_COMMON_ERROR_RESOURCE_UNAVAILABLE);
  CHECK_EQ(c.get_providers(&list, &n), QNN_SUCCESS);
  ctl_close(&c);
}

/* What a loader does when logCreate fails (11002, as the real libQnnHtp does without a DSP):
 * go on with a NULL log handle, which QNN allows for backend, device and platform info. */
TEST(refb_null_log_after_failed_log_create) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  CHECK_EQ(c.arm("logCreate:*:11002"), 0);
  qnn_log_handle_t log = NULL;
  CHECK_EQ(p->table.log_create(log_cb, QNN_LOG_LEVEL_ERROR, &log), 11002);
  CHECK(log == NULL);
  CHECK_EQ(stats_of(&c).live_logs, 0);
  qnn_backend_handle_t be = NULL;
  qnn_device_handle_t dev = NULL;
  CHECK_EQ(p->table.backend_create(NULL, NULL, &be), QNN_SUCCESS);
  CHECK_EQ(p->table.device_create(NULL, NULL, &dev), QNN_SUCCESS);
  const qnn_device_platform_info_t *pi = NULL;
  CHECK_EQ(p->table.device_get_platform_info(NULL, &pi), QNN_SUCCESS);
  CHECK_EQ(p->table.device_free_platform_info(NULL, pi), QNN_SUCCESS);
  size_t len = 0;
  void *bin = fx_build_model(RB_ADD, &len);
  CHECK(bin);
  qnn_context_handle_t ctx = NULL;
  qnn_error_t rc = p->table.context_create_from_binary(be, dev, NULL, bin, len, &ctx, NULL);
  free(bin);
  CHECK_EQ(rc, QNN_SUCCESS);
  CHECK_EQ(p->table.context_free(ctx, NULL), QNN_SUCCESS);
  CHECK_EQ(p->table.device_free(dev), QNN_SUCCESS);
  CHECK_EQ(p->table.backend_free(be), QNN_SUCCESS);
  CHECK_EQ(stats_of(&c).violations, 0);
  ctl_close(&c);
}

/* HTPU_REF_BUILD_ID stands in for a real library's build id; each value handed out stays
 * valid after the variable changes, as QNN's pointer does. */
TEST(refb_build_id_override) {
  ctl c;
  CHECK(ctl_open(&c) == 0);
  const qnn_interface_t *p = ref_first_provider(&c);
  CHECK(p);
  const char *id = NULL, *real = NULL, *other = NULL;
  CHECK_EQ(p->table.backend_get_build_id(&id), QNN_SUCCESS);
  CHECK(strcmp(id, "htpu-reference-0.1.0") == 0);
  setenv("HTPU_REF_BUILD_ID", "v2.25.0.240728104910_97711", 1);
  CHECK_EQ(p->table.backend_get_build_id(&real), QNN_SUCCESS);
  setenv("HTPU_REF_BUILD_ID", "v2.42.0.251225", 1);
  CHECK_EQ(p->table.backend_get_build_id(&other), QNN_SUCCESS);
  unsetenv("HTPU_REF_BUILD_ID");
  CHECK(strcmp(real, "v2.25.0.240728104910_97711") == 0);
  CHECK(strcmp(other, "v2.42.0.251225") == 0);
  CHECK_EQ(p->table.backend_get_build_id(NULL), QNN_BACKEND_ERROR_INVALID_ARGUMENT);
  ctl_close(&c);
}

TEST(refb_faults_control_api) {
  rig r;
  CHECK_EQ(rig_open(&r, RB_ADD, "add"), 0);
  CHECK_EQ(r.c.arm("graphExecute:first:1007"), -1);
  CHECK_EQ(r.c.arm("noSuchApi:1:1007"), -1);
  CHECK_EQ(r.c.arm("graphExecute:1:0"), -1);
  CHECK_EQ(r.c.set_latency("noSuchApi", 5), -1);
  io x;
  CHECK(io_init(&x, r.model, 0) == 0);
  CHECK_EQ(r.c.arm("graphExecute:2:1007:2,graphRetrieve:1:1002"), 0);
  qnn_graph_handle_t g = NULL;
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &g), QNN_COMMON_ERROR_MEM_ALLOC);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &g), QNN_SUCCESS);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  /* re-arming restarts the counters */
  CHECK_EQ(r.c.arm("graphExecute:1:1003"), 0);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM);
  r.c.disarm();
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  /* latency */
  CHECK_EQ(r.c.set_latency("graphExecute", 60000), 0);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  CHECK_EQ(exec(&r, &x), QNN_SUCCESS);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  CHECK_MSG(ms >= 55.0, "latency: execute took %.1f ms", ms);
  CHECK_EQ(r.c.set_latency("graphExecute", 0), 0);
  /* 1011: the DSP did not recover; the backend stays dead until freed */
  CHECK_EQ(r.c.arm("graphExecute:1:1011"), 0);
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL);
  r.c.disarm();
  CHECK_EQ(exec(&r, &x), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &g), QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL);
  htpu_ref_stats s = stats_of(&r.c);
  CHECK_EQ(s.faults_injected, 5);
  CHECK_EQ(s.violations, 0);
  io_free(&x);
  rig_close(&r);
}

TEST(refb_faults_env_latency) {
  rig r;
  CHECK_EQ(rig_open_env(&r, RB_ADD, NULL, NULL, "graphRetrieve:40000"), 0);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  CHECK_EQ(r.t->graph_retrieve(r.ctx, "add", &r.g), QNN_SUCCESS);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  CHECK_MSG(ms >= 35.0, "latency: graphRetrieve took %.1f ms", ms);
  rig_close(&r);
}
