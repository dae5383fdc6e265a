/* test_refbackend_profile.c - the reference backend's QnnProfile: the events it emits at each
 * level (as HTP does), from its own timings; handle rules and misuse errors; the switchable
 * capability answers and what they change. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_rig.h"
#include "qnn/qnn_profile_abi.h"
#include "refb_rig.h"
#include "test.h"

typedef struct ev {
  qnn_profile_event_data_t d;
  uint64_t id;
} ev;

/* The sub-events of id (or the top-level events of prof when id is 0) into out[max]. */
static uint32_t list(rig *r, qnn_profile_handle_t prof, uint64_t id, ev *out, uint32_t max) {
  const uint64_t *ids = NULL;
  uint32_t n = 0;
  qnn_error_t rc = id ? r->t->profile_get_sub_events(id, &ids, &n)
                      : r->t->profile_get_events(prof, &ids, &n);
  if (rc) return UINT32_MAX;
  for (uint32_t i = 0; i < n && i < max; i++) {
    out[i].id = ids[i];
    if (r->t->profile_get_event_data(ids[i], &out[i].d)) return UINT32_MAX;
  }
  return n;
}

static const ev *find(const ev *e, uint32_t n, uint32_t type) {
  for (uint32_t i = 0; i < n; i++)
    if (e[i].d.type == type) return &e[i];
  return NULL;
}

static int open_three(rig *r, const char *text, qnn_profile_handle_t *prof, uint32_t level,
                      io *x) {
  if (rig_open(r, text, "three")) return -1;
  if (r->t->profile_create(r->be, level, prof)) return -1;
  if (io_init(x, r->model, 0)) return -1;
  float *in = x->buf[0];
  for (int i = 0; i < 8; i++) in[i] = (float)(i - 4);
  return 0;
}

static qnn_error_t exec_prof(rig *r, io *x, qnn_profile_handle_t prof) {
  return r->t->graph_execute(r->g, x->in, x->nin, x->out, x->nout, prof, NULL);
}

TEST(refprof_basic_execute_event_with_htp_sub_events) {
  rig r;
  io x;
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(open_three(&r, PROF_THREE_OPS, &prof, QNN_PROFILE_LEVEL_BASIC, &x), 0);
  CHECK_EQ(r.c.live_profiles(), 1);
  CHECK_EQ(exec_prof(&r, &x, prof), QNN_SUCCESS);
  float *y = x.buf[1]; /* still computed: profiling changes nothing */
  CHECK(y[7] == (3.0f + 8.0f) * 8.0f && y[0] == 0.0f);
  ev top[4], sub[16];
  CHECK_EQ(list(&r, prof, 0, top, 4), 1);
  CHECK_EQ(top[0].d.type, QNN_PROFILE_EVENTTYPE_EXECUTE);
  CHECK_EQ(top[0].d.unit, QNN_PROFILE_EVENTUNIT_MICROSEC);
  CHECK(top[0].d.identifier && strcmp(top[0].d.identifier, "three") == 0);
  uint32_t n = list(&r, prof, top[0].id, sub, 16);
  CHECK_EQ(n, 5);
  const ev *host = find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HOST_RPC_TIME_MICROSEC);
  const ev *htp = find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_HTP_RPC_TIME_MICROSEC);
  const ev *acc = find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC);
  const ev *excl =
      find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_EXCL_WAIT_TIME_MICROSEC);
  const ev *yc = find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_YIELD_COUNT);
  CHECK(host && htp && acc && excl && yc);
  CHECK_EQ(yc->d.unit, QNN_PROFILE_EVENTUNIT_COUNT);
  /* nested measurements: the whole call >= host side >= DSP side >= accelerator alone */
  CHECK(top[0].d.value >= host->d.value && host->d.value >= htp->d.value);
  CHECK(htp->d.value >= excl->d.value && acc->d.value >= excl->d.value);
  /* cycles and NODE events are detailed-level (QnnHtpProfile.h) */
  CHECK(!find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE));
  CHECK_EQ(list(&r, prof, acc->id, sub, 16), 0);
  /* extended: the same values with a timestamp inside the call */
  qnn_profile_extended_event_data_t xd;
  CHECK_EQ(r.t->profile_get_extended_event_data(top[0].id, &xd), QNN_SUCCESS);
  CHECK_EQ(xd.version, QNN_PROFILE_DATA_VERSION_1);
  CHECK_EQ(xd.u.v1.u.value.data_type, QNN_DATATYPE_UINT_64);
  CHECK_EQ(xd.u.v1.u.value.u.uint64_value, top[0].d.value);
  CHECK(xd.u.v1.timestamp > 0);
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  CHECK_EQ(r.c.live_profiles(), 0);
  io_free(&x);
  rig_close(&r);
}

TEST(refprof_detailed_node_per_op_in_order) {
  rig r;
  io x;
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(open_three(&r, PROF_THREE_OPS, &prof, QNN_PROFILE_LEVEL_DETAILED, &x), 0);
  CHECK_EQ(exec_prof(&r, &x, prof), QNN_SUCCESS);
  ev top[2], sub[16], nodes[8];
  CHECK_EQ(list(&r, prof, 0, top, 2), 1);
  uint32_t n = list(&r, prof, top[0].id, sub, 16);
  CHECK_EQ(n, 6);
  const ev *cyc = find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE);
  const ev *acc = find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC);
  CHECK(cyc && acc);
  CHECK_EQ(cyc->d.unit, QNN_PROFILE_EVENTUNIT_CYCLES);
  static const char *const names[] = {"add_in", "relu_mid", "mul_out"};
  CHECK_EQ(list(&r, prof, cyc->id, nodes, 8), 3);
  uint64_t sum = 0, last_ts = 0;
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(nodes[i].d.type, QNN_PROFILE_EVENTTYPE_NODE);
    CHECK_EQ(nodes[i].d.unit, QNN_PROFILE_EVENTUNIT_CYCLES);
    CHECK_STR_CONTAINS(nodes[i].d.identifier, names[i]);
    CHECK(nodes[i].d.value > 0); /* measured: every op takes some nanoseconds */
    sum += nodes[i].d.value;
    qnn_profile_extended_event_data_t xd;
    CHECK_EQ(r.t->profile_get_extended_event_data(nodes[i].id, &xd), QNN_SUCCESS);
    CHECK(xd.u.v1.timestamp >= last_ts); /* ops in the order they ran */
    last_ts = xd.u.v1.timestamp;
  }
  CHECK(sum <= cyc->d.value);
  /* and in microseconds under the accelerator-time event */
  CHECK_EQ(list(&r, prof, acc->id, nodes, 8), 3);
  CHECK_EQ(nodes[2].d.unit, QNN_PROFILE_EVENTUNIT_MICROSEC);
  CHECK_STR_CONTAINS(nodes[2].d.identifier, "mul_out");
  /* a reused handle is reset: the first call's ids stop resolving */
  uint64_t old = nodes[0].id;
  CHECK_EQ(exec_prof(&r, &x, prof), QNN_SUCCESS);
  qnn_profile_event_data_t d;
  CHECK_EQ(r.t->profile_get_event_data(old, &d), QNN_PROFILE_ERROR_INVALID_HANDLE);
  CHECK_EQ(list(&r, prof, 0, top, 2), 1);
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refprof_linting_level_wait_and_overlap_per_op) {
  rig r;
  io x;
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(open_three(&r, PROF_THREE_OPS, &prof, QNN_HTP_PROFILE_LEVEL_LINTING, &x), 0);
  CHECK_EQ(exec_prof(&r, &x, prof), QNN_SUCCESS);
  ev top[2], sub[16], nodes[8], per[4];
  CHECK_EQ(list(&r, prof, 0, top, 2), 1);
  uint32_t n = list(&r, prof, top[0].id, sub, 16);
  const ev *crit =
      find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_CRITICAL_ACCEL_TIME_CYCLE);
  CHECK(crit);
  CHECK_EQ(list(&r, prof, crit->id, nodes, 8), 3);
  CHECK_STR_CONTAINS(nodes[1].d.identifier, "relu_mid");
  CHECK_EQ(list(&r, prof, nodes[1].id, per, 4), 2);
  CHECK(find(per, 2, QNN_HTP_PROFILE_EVENTTYPE_NODE_WAIT));
  const ev *ov = find(per, 2, QNN_HTP_PROFILE_EVENTTYPE_NODE_OVERLAP);
  CHECK(ov && ov->d.value == 0); /* one thread: nothing runs beside an op */
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refprof_nameless_ops_have_empty_identifiers) {
  rig r;
  io x;
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(open_three(&r, PROF_NAMELESS_OPS, &prof, QNN_PROFILE_LEVEL_DETAILED, &x), 0);
  CHECK_EQ(exec_prof(&r, &x, prof), QNN_SUCCESS);
  ev top[2], sub[16], nodes[8];
  CHECK_EQ(list(&r, prof, 0, top, 2), 1);
  uint32_t n = list(&r, prof, top[0].id, sub, 16);
  const ev *cyc = find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_CYCLE);
  CHECK(cyc);
  CHECK_EQ(list(&r, prof, cyc->id, nodes, 8), 3);
  CHECK(nodes[0].d.identifier == NULL || nodes[0].d.identifier[0] == 0);
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refprof_misuse_errors) {
  rig r;
  CHECK_EQ(rig_open(&r, PROF_THREE_OPS, "three"), 0);
  qnn_profile_handle_t p = NULL;
  /* an unknown level, a NULL out, an unknown backend */
  CHECK_EQ(r.t->profile_create(r.be, 3, &p), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(log_text(), "unknown level 3");
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, NULL),
           QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->profile_create((void *)(uintptr_t)0x7777777, QNN_PROFILE_LEVEL_BASIC, &p),
           QNN_PROFILE_ERROR_INVALID_HANDLE);
  CHECK_EQ(r.c.live_profiles(), 0);
  /* a handle that is no profile: graphExecute's invalid argument, free's invalid handle */
  io x;
  CHECK_EQ(io_init(&x, r.model, 0), 0);
  CHECK_EQ(exec_prof(&r, &x, (void *)(uintptr_t)0x7777777), QNN_GRAPH_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->profile_free((void *)(uintptr_t)0x7777777), QNN_PROFILE_ERROR_INVALID_HANDLE);
  /* an unknown config option; reading with NULL outs */
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &p), QNN_SUCCESS);
  qnn_profile_config_t bad = {.option = 77};
  const qnn_profile_config_t *cfg[] = {&bad, NULL};
  CHECK_EQ(r.t->profile_set_config(p, cfg), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  CHECK_EQ(r.t->profile_get_events(p, NULL, NULL), QNN_COMMON_ERROR_INVALID_ARGUMENT);
  const uint64_t *ids = NULL;
  uint32_t n = 99;
  CHECK_EQ(r.t->profile_get_events(p, &ids, &n), QNN_SUCCESS); /* nothing recorded yet */
  CHECK_EQ(n, 0);
  /* a backend freed with a profile alive: a leak, counted, and freed */
  CHECK_EQ(r.t->context_free(r.ctx, NULL), QNN_SUCCESS);
  r.ctx = NULL;
  CHECK_EQ(r.t->device_free(r.dev), QNN_SUCCESS);
  r.dev = NULL;
  uint64_t leaks = stats_of(&r.c).leaked_handles;
  CHECK_EQ(r.t->backend_free(r.be), QNN_SUCCESS);
  r.be = NULL;
  CHECK_EQ(stats_of(&r.c).leaked_handles, leaks + 1);
  CHECK_EQ(r.c.live_profiles(), 0);
  io_free(&x);
  rig_close(&r);
}

typedef struct slow_call {
  rig *r;
  io *x;
  qnn_profile_handle_t prof;
  qnn_error_t rc;
} slow_call;

static void *slow_exec(void *arg) {
  slow_call *s = arg;
  s->rc = exec_prof(s->r, s->x, s->prof);
  return NULL;
}

TEST(refprof_handle_in_use_by_another_call) {
  rig r;
  io x, x2;
  qnn_profile_handle_t prof = NULL;
  CHECK_EQ(open_three(&r, PROF_THREE_OPS, &prof, QNN_PROFILE_LEVEL_BASIC, &x), 0);
  CHECK_EQ(io_init(&x2, r.model, 0), 0);
  /* the second call runs another graph (a second context of the binary): it does not queue
   * behind the first, only shares its profile handle */
  size_t len = 0;
  void *bin = NULL;
  char err[256];
  CHECK_EQ(ref_build_from_text(PROF_THREE_OPS, &bin, &len, err, sizeof err), 0);
  qnn_context_handle_t ctx2 = NULL;
  qnn_graph_handle_t g2 = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &ctx2, NULL), 0);
  free(bin);
  CHECK_EQ(r.t->graph_retrieve(ctx2, "three", &g2), 0);
  /* the first call holds the handle while it sleeps in the injected latency */
  CHECK_EQ(r.c.set_latency("graphExecute", 300000), 0);
  slow_call s = {&r, &x, prof, 99};
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, slow_exec, &s), 0);
  for (int i = 0; i < 2000 && stats_of(&r.c).executes_in_flight == 0; i++) usleep(1000);
  CHECK_EQ(stats_of(&r.c).executes_in_flight, 1);
  CHECK_EQ(r.t->graph_execute(g2, x2.in, x2.nin, x2.out, x2.nout, prof, NULL),
           QNN_GRAPH_ERROR_PROFILE_IN_USE);
  CHECK_STR_CONTAINS(log_text(), "in use by another call");
  CHECK_EQ(r.t->profile_free(prof), QNN_PROFILE_ERROR_HANDLE_IN_USE);
  CHECK_EQ(r.t->profile_set_config(prof, NULL), QNN_PROFILE_ERROR_HANDLE_IN_USE);
  pthread_join(th, NULL);
  r.c.set_latency("graphExecute", 0);
  CHECK_EQ(s.rc, QNN_SUCCESS);
  ev top[2];
  CHECK_EQ(list(&r, prof, 0, top, 2), 1);
  CHECK(top[0].d.value >= 300000); /* the latency was inside the call it measured */
  CHECK_EQ(r.t->profile_free(prof), QNN_SUCCESS);
  CHECK_EQ(r.t->context_free(ctx2, NULL), QNN_SUCCESS);
  io_free(&x);
  io_free(&x2);
  rig_close(&r);
}

TEST(refprof_capabilities_switchable) {
  rig r;
  CHECK_EQ(rig_open(&r, PROF_THREE_OPS, "three"), 0);
  /* the real HTP answers by default */
  static const uint32_t keys[] = {1401, 1402, 1403, 1404, 1405, 310, 315};
  static const qnn_error_t dflt[] = {0, 1000, 1000, 0, 0, 1000, 1000};
  for (int i = 0; i < 7; i++) CHECK_EQ(r.t->property_has_capability(keys[i]), dflt[i]);
  CHECK_EQ(r.c.set_capability(1234, 0), -1); /* not a switchable key */
  qnn_profile_handle_t p = NULL;
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_DETAILED, &p), QNN_SUCCESS);
  qnn_profile_config_t c = {.option = QNN_PROFILE_CONFIG_OPTION_MAX_EVENTS};
  c.u.num_max_events = 3;
  const qnn_profile_config_t *cfg[] = {&c, NULL};
  CHECK_EQ(r.t->profile_set_config(p, cfg), QNN_COMMON_ERROR_NOT_SUPPORTED);
  c.option = QNN_PROFILE_CONFIG_OPTION_CUSTOM;
  CHECK_EQ(r.t->profile_set_config(p, cfg), QNN_COMMON_ERROR_NOT_SUPPORTED);
  c.option = QNN_PROFILE_CONFIG_OPTION_ENABLE_OPTRACE;
  c.u.enable_optrace = 1;
  CHECK_EQ(r.t->profile_set_config(p, cfg), QNN_SUCCESS);
  /* switched: max events honoured, optrace refused, extended events gone */
  CHECK_EQ(r.c.set_capability(1403, 0), 0);
  CHECK_EQ(r.c.set_capability(1405, 1000), 0);
  CHECK_EQ(r.c.set_capability(1404, 1000), 0);
  CHECK_EQ(r.c.set_capability(310, 0), 0);
  CHECK_EQ(r.t->property_has_capability(310), 0);
  CHECK_EQ(r.t->profile_set_config(p, cfg), QNN_COMMON_ERROR_NOT_SUPPORTED);
  c.option = QNN_PROFILE_CONFIG_OPTION_MAX_EVENTS;
  c.u.num_max_events = 3;
  CHECK_EQ(r.t->profile_set_config(p, cfg), QNN_SUCCESS);
  io x;
  CHECK_EQ(io_init(&x, r.model, 0), 0);
  CHECK_EQ(exec_prof(&r, &x, p), QNN_SUCCESS);
  ev top[2], sub[8];
  CHECK_EQ(list(&r, p, 0, top, 2), 1);
  CHECK_EQ(list(&r, p, top[0].id, sub, 8), 2); /* 3 events in all */
  qnn_profile_extended_event_data_t xd;
  CHECK_EQ(r.t->profile_get_extended_event_data(top[0].id, &xd), QNN_COMMON_ERROR_NOT_SUPPORTED);
  /* a backend without profiling */
  CHECK_EQ(r.c.set_capability(1401, 1000), 0);
  qnn_profile_handle_t p2 = NULL;
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &p2), QNN_COMMON_ERROR_NOT_SUPPORTED);
  r.c.reset_capabilities();
  CHECK_EQ(r.t->property_has_capability(1403), 1000);
  /* the same switches through HTPU_REF_CAPS (read at every call), the control API winning */
  setenv("HTPU_REF_CAPS", "1401=1000,1403=0,315=0", 1);
  CHECK_EQ(r.t->property_has_capability(1403), 0);
  CHECK_EQ(r.t->property_has_capability(315), 0);
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &p2), QNN_COMMON_ERROR_NOT_SUPPORTED);
  CHECK_EQ(r.c.set_capability(1401, 0), 0);
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &p2), QNN_SUCCESS);
  CHECK_EQ(r.t->profile_free(p2), QNN_SUCCESS);
  r.c.reset_capabilities();
  unsetenv("HTPU_REF_CAPS");
  CHECK_EQ(r.t->property_has_capability(1401), 0);
  CHECK_EQ(r.t->property_has_capability(1403), 1000);
  CHECK_EQ(r.t->profile_free(p), QNN_SUCCESS);
  io_free(&x);
  rig_close(&r);
}

TEST(refprof_context_load_init_events) {
  rig r;
  CHECK_EQ(rig_open(&r, PROF_THREE_OPS, NULL), 0);
  size_t len = 0;
  void *bin = NULL;
  char err[256];
  CHECK_EQ(ref_build_from_text(PROF_THREE_OPS, &bin, &len, err, sizeof err), 0);
  qnn_profile_handle_t p = NULL;
  CHECK_EQ(r.t->profile_create(r.be, QNN_PROFILE_LEVEL_BASIC, &p), QNN_SUCCESS);
  qnn_context_handle_t ctx = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &ctx, p), QNN_SUCCESS);
  ev top[2], sub[8];
  CHECK_EQ(list(&r, p, 0, top, 2), 1);
  CHECK_EQ(top[0].d.type, QNN_PROFILE_EVENTTYPE_INIT);
  uint32_t n = list(&r, p, top[0].id, sub, 8);
  CHECK_EQ(n, 3);
  CHECK(find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HOST_RPC_TIME_MICROSEC));
  CHECK(find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_HTP_RPC_TIME_MICROSEC));
  CHECK(find(sub, n, QNN_HTP_PROFILE_EVENTTYPE_CONTEXT_LOAD_BIN_ACCEL_TIME_MICROSEC));
  CHECK_EQ(r.t->context_free(ctx, NULL), QNN_SUCCESS);
  /* a handle that is no profile */
  ctx = NULL;
  CHECK_EQ(r.t->context_create_from_binary(r.be, r.dev, NULL, bin, len, &ctx,
                                           (void *)(uintptr_t)0x7777777),
           QNN_CONTEXT_ERROR_INVALID_HANDLE);
  CHECK(ctx == NULL);
  CHECK_EQ(r.t->profile_free(p), QNN_SUCCESS);
  free(bin);
  rig_close(&r);
}
