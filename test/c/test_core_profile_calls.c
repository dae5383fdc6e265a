/* test_core_profile_calls.c - a profile rides on the call: submitted calls carry one (through
 * graphExecute and graphExecuteAsync alike) under the call's own deadline and priority, read on
 * the worker before done and taken with htpu_call_take_profile; a read that fails after a good
 * execute loses the sample, never the answer; nothing leaks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "submitted.h"
#include "test.h"

static int open_rig(fx_rig *r, const char *file, int async) {
  fx_reset_env();
  if (async && fx_ref_set_capability(304, 0) != 0) return -1;
  return fx_rig_open(r, NULL, file, 1);
}

static void close_rig(fx_rig *r) {
  fx_ref_set_latency("graphExecute", 0);
  fx_rig_close(r);
  fx_ref_disarm();
  fx_ref_reset_capabilities();
}

static int submit_profiled(htpu_graph *g, sub *s, int id, int level, int priority,
                           uint64_t timeout_ns) {
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.profile_level = level;
  o.priority = priority;
  o.timeout_ns = timeout_ns;
  return submit_opts(g, s, id, &o, done_log_add);
}

static void check_no_live_profiles(void) {
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_profiles, 0);
  CHECK_EQ(fx_ref_live_profiles(), 0);
}

/* graphExecute (async 0) and graphExecuteAsync (async 1): the same call, the same profile. */
static void submitted_profile(int async) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, async ? "prof_sub_async.bin" : "prof_sub.bin", async), HTPU_OK);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(r.rt, &info), HTPU_OK);
  CHECK_EQ(info.execute_async, async);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  done_log_reset();
  sub s;
  CHECK_EQ(submit_profiled(r.g, &s, 1, HTPU_PROFILE_DETAILED, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), 0);
  CHECK(sub_ok(&s));
  htpu_profile *p = NULL;
  CHECK_EQ(htpu_call_take_profile(s.call, &p), 0);
  CHECK(p != NULL);
  if (p) {
    CHECK(strcmp(p->graph, "add_f32") == 0);
    CHECK_EQ(p->level, HTPU_PROFILE_DETAILED);
    CHECK_EQ(p->num_events, 1);
    CHECK_EQ(p->events[0].type, 400);
    CHECK_EQ(p->num_ops, 1);
    CHECK(p->execute_ns > 0 && p->total_ns >= p->execute_ns);
    CHECK(p->execute_start_ns >= p->start_ns);
  }
  htpu_profile_free(p);
  /* moved out: a second take gives nothing */
  p = (htpu_profile *)(uintptr_t)1;
  CHECK_EQ(htpu_call_take_profile(s.call, &p), 0);
  CHECK(p == NULL);
  /* the profiled call stays out of the timing window, on either engine */
  htpu_graph_timing t;
  CHECK_EQ(htpu_graph_get_timing(r.g, &t), 0);
  CHECK_EQ(t.samples, 0);
  htpu_call_release(&s.call);
  /* an unprofiled call has none to take */
  CHECK_EQ(submit(r.g, &s, 2, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), 0);
  p = (htpu_profile *)(uintptr_t)1;
  CHECK_EQ(htpu_call_take_profile(s.call, &p), 0);
  CHECK(p == NULL);
  htpu_call_release(&s.call);
  CHECK_EQ(htpu_graph_get_timing(r.g, &t), 0);
  CHECK_EQ(t.samples, 1);
  /* a profile never taken is freed with the call */
  CHECK_EQ(submit_profiled(r.g, &s, 3, HTPU_PROFILE_BASIC, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), 0);
  htpu_call_release(&s.call);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.profiled_calls, s0.profiled_calls + 2);
  close_rig(&r);
  check_no_live_profiles();
  CHECK_BASELINE();
}

TEST(profile_submitted_call_carries_its_profile) { submitted_profile(0); }

TEST(profile_submitted_async_call_carries_its_profile) { submitted_profile(1); }

TEST(profile_submitted_bad_arguments) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, "prof_sub_bad.bin", 0), HTPU_OK);
  sub s;
  htpu_profile *p = NULL;
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.profile_level = HTPU_PROFILE_BASIC;
  o.profile = &p; /* a submitted call's profile is taken, not stored */
  CHECK_EQ(submit_opts(r.g, &s, 1, &o, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "htpu_call_take_profile");
  CHECK_EQ(submit_profiled(r.g, &s, 1, 9, 0, 0), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "profile level 9");
  /* a backend without profiling, a level it does not announce: refused at submit */
  CHECK_EQ(fx_ref_set_capability(1401, 1000), 0);
  CHECK_EQ(submit_profiled(r.g, &s, 1, HTPU_PROFILE_BASIC, 0, 0), HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(htpu_last_error(), "capability 1401");
  fx_ref_reset_capabilities();
  CHECK_EQ(fx_ref_set_capability(1405, 1000), 0);
  CHECK_EQ(submit_profiled(r.g, &s, 1, HTPU_PROFILE_OPTRACE, 0, 0), HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(htpu_last_error(), "capability 1405");
  fx_ref_reset_capabilities();
  /* the accessor's own arguments; before the call ended */
  CHECK_EQ(htpu_call_take_profile(NULL, &p), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "call is NULL");
  CHECK_EQ(fx_ref_set_latency("graphExecute", 200000), 0);
  done_log_reset();
  CHECK_EQ(submit_profiled(r.g, &s, 1, HTPU_PROFILE_DETAILED, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_call_take_profile(s.call, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "out is NULL");
  CHECK_EQ(htpu_call_take_profile(s.call, &p), HTPU_EBUSY);
  CHECK(p == NULL);
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), 0);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
  CHECK_EQ(htpu_call_take_profile(s.call, &p), 0);
  CHECK(p != NULL);
  htpu_profile_free(p);
  htpu_call_release(&s.call);
  /* a failed call: no profile, the handle freed */
  CHECK_EQ(fx_ref_arm("graphExecute:1:1100"), 0);
  CHECK_EQ(submit_profiled(r.g, &s, 2, HTPU_PROFILE_DETAILED, 0, 0), HTPU_OK);
  CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), HTPU_EQNN);
  p = (htpu_profile *)(uintptr_t)1;
  CHECK_EQ(htpu_call_take_profile(s.call, &p), 0);
  CHECK(p == NULL);
  htpu_call_release(&s.call);
  close_rig(&r);
  check_no_live_profiles();
  CHECK_BASELINE();
}

/* The deadline of a profiled call is the call's, with signals (the submitted call) and without
 * them (a synchronous call with a timeout goes the submitted way, its profile with it). */
TEST(profile_deadline_applies_to_profiled_calls) {
  submitted_baseline();
  for (int nosig = 0; nosig < 2; nosig++) {
    fx_reset_env();
    if (nosig) CHECK_EQ(fx_ref_set_capability(308, 1000), 0);
    fx_rig r;
    CHECK_EQ(fx_rig_open(&r, NULL, nosig ? "prof_dl_nosig.bin" : "prof_dl.bin", 1), HTPU_OK);
    CHECK_EQ(fx_ref_set_latency("graphExecute", 500000), 0);
    done_log_reset();
    sub s;
    uint64_t t0 = now_ns();
    CHECK_EQ(submit_profiled(r.g, &s, 1, HTPU_PROFILE_DETAILED, 0, 50 * MS), HTPU_OK);
    CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), HTPU_ETIMEDOUT);
    uint64_t took = now_ns() - t0;
    CHECK_MSG(took < 400 * MS, "the profiled submitted call took %llu ms (timeout 50 ms)",
              (unsigned long long)(took / MS));
    htpu_profile *p = (htpu_profile *)(uintptr_t)1;
    CHECK_EQ(htpu_call_take_profile(s.call, &p), 0);
    CHECK(p == NULL);
    htpu_call_release(&s.call);
    /* synchronous */
    htpu_exec_options o;
    memset(&o, 0, sizeof o);
    o.profile_level = HTPU_PROFILE_DETAILED;
    o.profile = &p;
    o.timeout_ns = 50 * MS;
    float y[4];
    t0 = now_ns();
    CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), HTPU_ETIMEDOUT);
    took = now_ns() - t0;
    CHECK_MSG(took < 400 * MS, "the profiled synchronous call (%s) took %llu ms (timeout 50 ms)",
              nosig ? "no signals" : "signals", (unsigned long long)(took / MS));
    CHECK(p == NULL);
    /* and the same synchronous call in time carries its profile on either path */
    CHECK_EQ(fx_ref_set_latency("graphExecute", 0), 0);
    o.timeout_ns = 5000 * MS;
    CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), 0);
    CHECK(p != NULL && p->num_ops == 1);
    CHECK(y[0] == 11.0f);
    htpu_profile_free(p);
    close_rig(&r); /* waits for the executes still running on copies */
  }
  check_no_live_profiles();
  CHECK_BASELINE();
}

/* The priority of a profiled call is the call's: behind a held graph, the high one goes first. */
TEST(profile_priority_applies_to_profiled_calls) {
  submitted_baseline();
  fx_rig r;
  CHECK_EQ(open_rig(&r, "prof_prio.bin", 0), HTPU_OK);
  fx_holder h;
  fx_holder_start(&h, r.g);
  done_log_reset();
  sub s[3];
  CHECK_EQ(submit_profiled(r.g, &s[0], 1, HTPU_PROFILE_BASIC, HTPU_PRIORITY_LOW, 0), HTPU_OK);
  CHECK_EQ(submit_profiled(r.g, &s[1], 2, HTPU_PROFILE_OFF, HTPU_PRIORITY_NORMAL, 0), HTPU_OK);
  CHECK_EQ(submit_profiled(r.g, &s[2], 3, HTPU_PROFILE_DETAILED, HTPU_PRIORITY_HIGH, 0),
           HTPU_OK);
  fx_holder_end(&h);
  for (int i = 0; i < 3; i++) CHECK_EQ(htpu_call_wait(s[i].call, UINT64_MAX), 0);
  pthread_mutex_lock(&done_log_m);
  int n = done_n, first = done_ids[0], second = done_ids[1], third = done_ids[2];
  pthread_mutex_unlock(&done_log_m);
  CHECK_EQ(n, 3);
  CHECK_EQ(first, 3);
  CHECK_EQ(second, 2);
  CHECK_EQ(third, 1);
  for (int i = 0; i < 3; i++) {
    htpu_profile *p = NULL;
    CHECK_EQ(htpu_call_take_profile(s[i].call, &p), 0);
    CHECK((p != NULL) == (i != 1));
    htpu_profile_free(p);
    htpu_call_release(&s[i].call);
  }
  close_rig(&r);
  check_no_live_profiles();
  CHECK_BASELINE();
}

/* profileGetEvents failing after a good execute: the call's answer and outputs stand, the
 * sample is dropped and counted, the reason is said; synchronous and submitted alike. */
TEST(profile_read_failure_keeps_the_answer) {
  for (int async = 0; async < 2; async++) {
    submitted_baseline();
    fx_rig r;
    CHECK_EQ(open_rig(&r, async ? "prof_drop_async.bin" : "prof_drop.bin", async), HTPU_OK);
    htpu_stats s0, s1;
    htpu_stats_get(&s0);
    CHECK_EQ(fx_ref_arm("profileGetEvents:1:1002:2"), 0);
    htpu_profile *p = (htpu_profile *)(uintptr_t)1;
    htpu_exec_options o;
    memset(&o, 0, sizeof o);
    o.profile_level = HTPU_PROFILE_DETAILED;
    o.profile = &p;
    float y[4] = {0};
    CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), 0);
    CHECK(y[0] == 11.0f && y[3] == 44.0f);
    CHECK(p == NULL);
    CHECK_STR_CONTAINS(htpu_last_error(), "the call succeeded but its detailed profile could not "
                                          "be read");
    done_log_reset();
    sub s;
    CHECK_EQ(submit_profiled(r.g, &s, 1, HTPU_PROFILE_DETAILED, 0, 0), HTPU_OK);
    CHECK_EQ(htpu_call_wait(s.call, UINT64_MAX), 0);
    CHECK(sub_ok(&s));
    pthread_mutex_lock(&done_log_m);
    int rc0 = done_rcs[0];
    pthread_mutex_unlock(&done_log_m);
    CHECK_EQ(rc0, 0);
    CHECK_EQ(htpu_call_result(s.call, NULL, NULL, 0), 0);
    p = (htpu_profile *)(uintptr_t)1;
    CHECK(htpu_call_take_profile(s.call, &p) != 0);
    CHECK(p == NULL);
    CHECK_STR_CONTAINS(htpu_last_error(), "could not be read (the sample is dropped)");
    htpu_call_release(&s.call);
    htpu_stats_get(&s1);
    CHECK_EQ(s1.profiles_dropped, s0.profiles_dropped + 2);
    CHECK_EQ(s1.profiled_calls, s0.profiled_calls);
    CHECK_EQ(s1.execute_errors, s0.execute_errors);
    /* the next read works again */
    CHECK_EQ(fx_add(r.g, 1, &o, NULL, y), 0);
    CHECK(p != NULL);
    htpu_profile_free(p);
    close_rig(&r);
    check_no_live_profiles();
    CHECK_BASELINE();
  }
}
