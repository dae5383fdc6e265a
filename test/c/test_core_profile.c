/* test_core_profile.c - profiled executes and loads through the public API: the tree read back,
 * the per-op digest, the writers, the capabilities and every bad input of docs/profiling.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "prof_rig.h"
#include "test.h"

typedef struct chain {
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *g;
  uint8_t x[1024], y[1024];
} chain;

static int chain_open(chain *c) {
  memset(c, 0, sizeof *c);
  const char *path = prof_chain100_path();
  if (!path) return -1;
  c->rt = fx_open_runtime();
  if (!c->rt) return -1;
  if (htpu_context_open_file(c->rt, path, &c->ctx)) return -1;
  if (htpu_graph_open(c->ctx, NULL, &c->g)) return -1;
  for (int i = 0; i < 1024; i++) c->x[i] = (uint8_t)(i * 37);
  return 0;
}

static void chain_close(chain *c) {
  htpu_graph_close(&c->g);
  htpu_context_close(&c->ctx);
  htpu_runtime_close(&c->rt);
  fx_ref_reset_capabilities();
  fx_reset_env();
}

static int chain_run(chain *c, int level, uint32_t max_events, htpu_profile **p) {
  htpu_io in = {c->x, sizeof c->x, HTPU_U8}, out = {c->y, sizeof c->y, HTPU_U8};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.profile_level = level;
  o.profile_max_events = max_events;
  o.profile = p;
  return htpu_graph_execute_ex(c->g, &in, 1, &out, 1, &o, NULL);
}

static const htpu_profile_event *child(const htpu_profile_event *e, uint32_t type) {
  for (uint32_t i = 0; i < e->num_children; i++)
    if (e->children[i].type == type) return &e->children[i];
  return NULL;
}

TEST(profile_detailed_chain100_ops_in_order) {
  chain c;
  CHECK_EQ(chain_open(&c), 0);
  uint8_t plain[1024];
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_OFF, 0, NULL), 0);
  memcpy(plain, c.y, sizeof plain);
  htpu_stats s0;
  htpu_stats_get(&s0);
  htpu_profile *p = NULL;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), 0);
  CHECK(p != NULL);
  CHECK(memcmp(plain, c.y, sizeof plain) == 0); /* profiling changes no output */
  CHECK_EQ(p->level, HTPU_PROFILE_DETAILED);
  CHECK(strcmp(p->graph, "chain100") == 0);
  CHECK_EQ(p->num_events, 1);
  CHECK_EQ(p->events[0].type, 400);
  CHECK(strcmp(p->events[0].name, "execute") == 0);
  CHECK_EQ(p->total_events, 1 + 6 + 100 + 100); /* execute, its 6 HTP events, 2 x 100 ops */
  CHECK_EQ(p->dropped_events, 0);
  CHECK(p->extended);
  CHECK_MSG(p->note[0] == 0, "note: %s", p->note);
  const htpu_profile_event *acc = child(&p->events[0], 3004);
  CHECK(acc && strcmp(acc->name, "accelerator time") == 0 && acc->num_children == 100);
  CHECK(child(&p->events[0], 3001) && strcmp(child(&p->events[0], 3001)->name, "host RPC") == 0);
  CHECK_EQ(p->num_ops, 100);
  uint64_t sum = 0;
  char want[16];
  for (uint32_t k = 0; k < 100; k++) {
    snprintf(want, sizeof want, "%s_%02u", k % 2 ? "relu" : "add", k / 2);
    CHECK_MSG(strcmp(p->ops[k].name, want) == 0, "op %u is '%s', expected '%s'", k,
              p->ops[k].name, want);
    CHECK(p->ops[k].cycles > 0);
    CHECK(k == 0 || p->ops[k].start >= p->ops[k - 1].start);
    sum += p->ops[k].cycles;
  }
  CHECK(p->accel_cycles >= sum && sum > 0);
  CHECK(p->host_rpc_us >= p->htp_rpc_us);
  CHECK(p->execute_ns > 0 && p->total_ns >= p->execute_ns);
  CHECK(p->execute_start_ns >= p->start_ns);
  htpu_stats s1;
  htpu_stats_get(&s1);
  CHECK_EQ(s1.live_profiles, 0);
  CHECK_EQ(s1.profiled_calls, s0.profiled_calls + 1);
  CHECK_EQ(fx_ref_live_profiles(), 0);
  htpu_profile_free(p);
  chain_close(&c);
}

/* A sampled call (one in N profiled) must not move the graph off the short path: its time
 * includes the profiler's work, so it stays out of the timing window. */
TEST(profile_profiled_calls_stay_out_of_the_timing_window) {
  chain c;
  CHECK_EQ(chain_open(&c), 0);
  for (int i = 0; i < 3; i++) CHECK_EQ(chain_run(&c, HTPU_PROFILE_OFF, 0, NULL), 0);
  htpu_graph_timing t0, t1;
  CHECK_EQ(htpu_graph_get_timing(c.g, &t0), 0);
  CHECK_EQ(t0.samples, 3);
  htpu_profile *p = NULL;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), 0);
  htpu_profile_free(p);
  CHECK_EQ(htpu_graph_get_timing(c.g, &t1), 0);
  CHECK_EQ(t1.samples, 3);
  CHECK_EQ(t1.max_ns, t0.max_ns);
  CHECK_EQ(t1.last_ns, t0.last_ns);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_OFF, 0, NULL), 0);
  CHECK_EQ(htpu_graph_get_timing(c.g, &t1), 0);
  CHECK_EQ(t1.samples, 4);
  chain_close(&c);
}

TEST(profile_basic_and_linting) {
  chain c;
  CHECK_EQ(chain_open(&c), 0);
  htpu_profile *p = NULL;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_BASIC, 0, &p), 0);
  CHECK_EQ(p->num_ops, 0);
  CHECK_EQ(p->total_events, 6);
  CHECK(p->accel_us <= p->host_rpc_us + 1 || p->accel_us > 0);
  CHECK_EQ(p->accel_cycles, 0); /* cycles are a detailed-level event */
  htpu_profile_free(p);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_LINTING, 0, &p), 0);
  CHECK_EQ(p->num_ops, 100);
  CHECK(strcmp(p->ops[99].name, "relu_49") == 0);
  const htpu_profile_event *crit = child(&p->events[0], 6001);
  CHECK(crit && strcmp(crit->name, "critical path cycles") == 0);
  CHECK(child(&crit->children[5], 5001) != NULL); /* op wait */
  htpu_profile_free(p);
  /* optrace: the reference has no optrace data; detailed events come back */
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_OPTRACE, 0, &p), 0);
  CHECK_EQ(p->num_ops, 100);
  CHECK_STR_CONTAINS(p->note, "no optrace data");
  CHECK_STR_CONTAINS(p->note, "the detailed events are shown");
  htpu_profile_free(p);
  /* the detailed level says nothing of optrace */
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), 0);
  CHECK(strstr(p->note, "optrace") == NULL);
  htpu_profile_free(p);
  chain_close(&c);
}

TEST(profile_bad_inputs) {
  chain c;
  CHECK_EQ(chain_open(&c), 0);
  htpu_profile *p = (htpu_profile *)(uintptr_t)1;
  CHECK_EQ(chain_run(&c, 9, 0, &p), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "profile level 9");
  CHECK(p == NULL);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_BASIC, 0, NULL), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "profile (where to store the events) is NULL");
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_BASIC, HTPU_PROFILE_MAX_EVENTS_LIMIT + 1, &p), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "above the limit");
  /* a backend without profiling */
  CHECK_EQ(fx_ref_set_capability(1401, 1000), 0);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_BASIC, 0, &p), HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(htpu_last_error(), "does not support profiling");
  CHECK_STR_CONTAINS(htpu_last_error(), "capability 1401 not announced");
  fx_ref_reset_capabilities();
  /* a level it does not announce */
  CHECK_EQ(fx_ref_set_capability(1405, 1000), 0);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_OPTRACE, 0, &p), HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(htpu_last_error(), "capability 1405");
  fx_ref_reset_capabilities();
  /* a failed execute: no profile, the handle freed */
  CHECK_EQ(fx_ref_arm("graphExecute:1:1100"), 0);
  p = (htpu_profile *)(uintptr_t)1;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), HTPU_EQNN);
  CHECK(p == NULL);
  fx_ref_disarm();
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_profiles, 0);
  CHECK_EQ(fx_ref_live_profiles(), 0);
  chain_close(&c);
}

TEST(profile_event_cap_truncates) {
  chain c;
  CHECK_EQ(chain_open(&c), 0);
  htpu_profile *p = NULL;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 50, &p), 0);
  CHECK_EQ(p->total_events, 50);
  CHECK(p->dropped_events >= 157 - 50);
  CHECK_STR_CONTAINS(p->note, "truncated at 50 events");
  CHECK(p->num_ops <= 50);
  CHECK_STR_CONTAINS(p->note, "per-op figures partial");
  /* what was read of the ops is a prefix: past it a 0 is "not read" */
  CHECK(p->ops_with_cycles <= p->num_ops && p->ops_with_us <= p->num_ops);
  htpu_profile_free(p);
  /* 10 events: the execute, its 6 sub-events and 3 ops' times; their cycles not read */
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 10, &p), 0);
  CHECK_EQ(p->num_ops, 3);
  CHECK_EQ(p->ops_with_us, 3);
  CHECK_EQ(p->ops_with_cycles, 0);
  CHECK_STR_CONTAINS(p->note, "per-op figures partial: 3 ops read");
  htpu_profile_free(p);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 1, &p), 0);
  CHECK_STR_CONTAINS(p->note, "truncated at 1 event (");
  htpu_profile_free(p);
  /* 120: the time event's 100 ops read, the cycles event's first 13: the ops are the 100 */
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 120, &p), 0);
  CHECK_EQ(p->num_ops, 100);
  CHECK_EQ(p->ops_with_us, 100);
  CHECK_EQ(p->ops_with_cycles, 13);
  htpu_profile_free(p);
  /* where the backend bounds its own events (1403), it is asked for one more than the cap */
  CHECK_EQ(fx_ref_set_capability(1403, 0), 0);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 20, &p), 0);
  CHECK_EQ(p->total_events, 20);
  CHECK_STR_CONTAINS(p->note, "truncated at 20 events");
  htpu_profile_free(p);
  /* without extended events: no timestamps, the same figures */
  fx_ref_reset_capabilities();
  CHECK_EQ(fx_ref_set_capability(1404, 1000), 0);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), 0);
  CHECK(!p->extended && !p->events[0].has_timestamp && p->ops[3].start == 0);
  CHECK_EQ(p->num_ops, 100);
  CHECK(p->ops_with_us == 100 && p->ops_with_cycles == 100);
  htpu_profile_free(p);
  htpu_profile_caps caps;
  CHECK_EQ(htpu_runtime_profile_caps(c.rt, &caps), 0);
  CHECK(caps.profiling && !caps.extended_events && caps.optrace && !caps.max_events_config);
  CHECK(!caps.custom_config && !caps.continuous && !caps.profiling_state);
  CHECK(caps.system_serialization);
  CHECK(caps.linting); /* the reference backend reports itself as HTP */
  chain_close(&c);
}

/* Linting is HTP's own level: a backend of another kind announces profiling but not it, so a
 * caller can refuse the level before any call (load_model's profile_every does). */
TEST(profile_caps_linting_only_on_htp) {
  fx_reset_env();
  setenv("HTPU_REF_PROVIDERS", "CPU_REF:3:2.32.0:5.42.0", 1);
  htpu_runtime_options o;
  fx_ref_options(&o);
  htpu_runtime *rt = NULL;
  int rc = htpu_runtime_open(&o, &rt);
  unsetenv("HTPU_REF_PROVIDERS");
  CHECK_EQ(rc, HTPU_OK);
  htpu_profile_caps caps;
  CHECK_EQ(htpu_runtime_profile_caps(rt, &caps), 0);
  CHECK(caps.profiling && !caps.linting);
  htpu_runtime_close(&rt);
}

TEST(profile_nameless_ops_are_numbered) {
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  const char *path = fx_build_model_file("nameless.bin", PROF_NAMELESS_OPS);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), 0);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), 0);
  float x[8] = {0}, y[8];
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  htpu_profile *p = NULL;
  htpu_exec_options o = {.profile_level = HTPU_PROFILE_DETAILED, .profile = &p};
  CHECK_EQ(htpu_graph_execute_ex(g, &in, 1, &out, 1, &o, NULL), 0);
  CHECK_EQ(p->num_ops, 3);
  CHECK(strcmp(p->ops[2].name, "#2") == 0);
  CHECK_STR_CONTAINS(p->note, "no op names");
  htpu_profile_free(p);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

TEST(profile_load_init_events) {
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  const char *path = prof_chain100_path();
  CHECK(path);
  htpu_profile *p = NULL;
  htpu_load_options lo = {.profile_level = HTPU_PROFILE_BASIC, .profile = &p};
  htpu_context *ctx = NULL;
  CHECK_EQ(htpu_context_open_file_ex(rt, path, &lo, &ctx), 0);
  CHECK(p && p->num_events == 1 && p->events[0].type == 100);
  CHECK(strcmp(p->events[0].name, "init") == 0 && p->graph[0] == 0);
  CHECK_EQ(p->events[0].num_children, 3);
  CHECK(child(&p->events[0], 1004) != NULL);
  CHECK(p->execute_ns > 0);
  htpu_profile_free(p);
  htpu_context_close(&ctx);
  /* a level without a place to store it, a bad level */
  lo.profile = NULL;
  CHECK_EQ(htpu_context_open_file_ex(rt, path, &lo, &ctx), HTPU_EINVAL);
  CHECK(ctx == NULL);
  lo.profile = &p;
  lo.profile_level = 42;
  CHECK_EQ(htpu_context_open_file_ex(rt, path, &lo, &ctx), HTPU_EINVAL);
  CHECK(ctx == NULL && p == NULL);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_profiles, 0);
  CHECK_EQ(s.live_contexts, 0);
  htpu_runtime_close(&rt);
}

/* A load has no ops: none of the per-op notes of an execute's profile applies to it, at any
 * level. */
TEST(profile_load_notes_are_not_an_executes) {
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  const char *path = prof_chain100_path();
  CHECK(path);
  static const int levels[] = {HTPU_PROFILE_DETAILED, HTPU_PROFILE_LINTING, HTPU_PROFILE_OPTRACE};
  for (unsigned i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    htpu_profile *p = NULL;
    htpu_load_options lo = {.profile_level = levels[i], .profile = &p};
    htpu_context *ctx = NULL;
    CHECK_EQ(htpu_context_open_file_ex(rt, path, &lo, &ctx), 0);
    CHECK(p && p->num_events == 1 && p->events[0].type == 100 && p->num_ops == 0);
    CHECK_MSG(p->note[0] == 0, "level %d: load note '%s'", levels[i], p->note);
    htpu_profile_free(p);
    htpu_context_close(&ctx);
  }
  htpu_runtime_close(&rt);
}

static unsigned count(const char *hay, const char *needle) {
  unsigned n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
  return n;
}

TEST(profile_writers_trace_html_qnn_log) {
  chain c;
  CHECK_EQ(chain_open(&c), 0);
  htpu_profile *p = NULL;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), 0);
  const char *trace = test_tmp_path("trace.json");
  CHECK_EQ(htpu_profile_write_trace(p, trace), 0);
  char *t = test_read_file(trace);
  CHECK(t && strncmp(t, "{\"displayTimeUnit\"", 18) == 0);
  CHECK_EQ(count(t, "\"cat\":\"op\""), 100);
  /* u8 in and out, nothing converted: the profiler's setup, graphExecute, its read */
  CHECK_EQ(count(t, "\"cat\":\"host\""), 3);
  CHECK_STR_CONTAINS(t, "{\"name\":\"profile setup\",\"cat\":\"host\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0.000");
  CHECK_STR_CONTAINS(t, "\"name\":\"profile read\"");
  CHECK_STR_CONTAINS(t, "\"name\":\"relu_49\"");
  CHECK_STR_CONTAINS(t, "NPU (accelerator)");
  const char *html = test_tmp_path("page.html");
  CHECK_EQ(htpu_profile_write_html(p, "chain <100>", html), 0);
  char *h = test_read_file(html);
  CHECK(h);
  CHECK_EQ(count(h, "<rect class=\"bar\""), 100);
  CHECK_EQ(count(h, "<rect class=\"op\""), 100);
  CHECK_STR_CONTAINS(h, "chain &lt;100&gt;");
  CHECK(!strstr(h, "http://") && !strstr(h, "https://")); /* nothing from the network */
  const char *log = test_tmp_path("qnn.log");
  CHECK_EQ(htpu_profile_write_qnn_log(c.rt, p, log), 0);
  char *l = test_read_file(log);
  CHECK(l);
  CHECK_STR_CONTAINS(l, "htpu-reference-profile-log 1 app=hexagon_tpu");
  CHECK_STR_CONTAINS(l, "graph=chain100");
  CHECK_EQ(count(l, "id=add_"), 100); /* 50 adds under cycles and under time */
  /* a file that cannot be written */
  CHECK_EQ(htpu_profile_write_trace(p, "/nonexistent-dir/t.json"), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "cannot write '/nonexistent-dir/t.json'");
  CHECK_EQ(htpu_profile_write_html(p, NULL, "/nonexistent-dir/t.html"), HTPU_EIO);
  CHECK_EQ(htpu_profile_write_trace(NULL, trace), HTPU_EINVAL);
  htpu_profile_free(p);
  chain_close(&c);
}

/* An event of unit OBJECT carries the backend's opaque object, not a number (QnnProfile.h):
 * read with the extended data, copied into the profile, and handed to the system library's
 * serialization as an object (its bytes and file name), never as a value. */
TEST(profile_object_events_pass_their_payload) {
  static const char payload[] = "optrace:\x01\x7f|end";
  setenv("HTPU_REF_PROFILE_OBJECT", payload, 1);
  chain c;
  CHECK_EQ(chain_open(&c), 0);
  htpu_profile *p = NULL;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), 0);
  CHECK(p && p->extended);
  const htpu_profile_event *o = child(&p->events[0], 0xF001);
  CHECK(o != NULL);
  CHECK_EQ(o->unit, 5);
  CHECK(strcmp(htpu_profile_unit_name(o->unit), "object") == 0);
  CHECK_EQ(o->value, 0);
  CHECK_EQ(o->object_size, strlen(payload));
  CHECK(o->object && memcmp(o->object, payload, strlen(payload)) == 0);
  CHECK(strcmp(o->object_file, "htpu-reference-object.bin") == 0);
  CHECK_MSG(p->note[0] == 0, "note: %s", p->note);
  /* every other event has no object */
  CHECK(p->events[0].object == NULL && p->events[0].object_size == 0 &&
        strcmp(p->events[0].object_file, "") == 0);
  const char *log = test_tmp_path("object.log");
  CHECK_EQ(htpu_profile_write_qnn_log(c.rt, p, log), 0);
  char hex[2 * sizeof payload + 1];
  for (size_t i = 0; i < strlen(payload); i++)
    snprintf(hex + 2 * i, 3, "%02x", (unsigned char)payload[i]);
  char want[256];
  snprintf(want, sizeof want, "61441 5 object=%zu file=htpu-reference-object.bin data=%s ts=",
           strlen(payload), hex);
  char *l = test_read_file(log);
  CHECK(l);
  CHECK_STR_CONTAINS(l, want);
  htpu_profile_free(p);
  /* without extended events the object cannot be read (12002 from the plain call): counted in
   * the note, never shown as a number */
  CHECK_EQ(fx_ref_set_capability(1404, 1000), 0);
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_DETAILED, 0, &p), 0);
  CHECK(p && !p->extended);
  CHECK(child(&p->events[0], 0xF001) == NULL);
  CHECK_STR_CONTAINS(p->note, "1 event could not be read");
  htpu_profile_free(p);
  chain_close(&c);
}

TEST(profile_qnn_log_needs_system_api_1_5) {
  setenv("HTPU_REF_SYSTEM_PROVIDERS", "OLD_SYSTEM:1.1.0", 1);
  chain c;
  int rc = chain_open(&c);
  unsetenv("HTPU_REF_SYSTEM_PROVIDERS");
  CHECK_EQ(rc, 0);
  htpu_profile *p = NULL;
  CHECK_EQ(chain_run(&c, HTPU_PROFILE_BASIC, 0, &p), 0);
  CHECK_EQ(htpu_profile_write_qnn_log(c.rt, p, test_tmp_path("old.log")), HTPU_EUNSUPPORTED);
  CHECK_STR_CONTAINS(htpu_last_error(), "System API 1.1.0");
  htpu_profile_caps caps;
  CHECK_EQ(htpu_runtime_profile_caps(c.rt, &caps), 0);
  CHECK(!caps.system_serialization);
  htpu_profile_free(p);
  chain_close(&c);
}

TEST(profile_level_names) {
  htpu_profile_level l;
  CHECK_EQ(htpu_profile_level_from_name("linting", &l), 0);
  CHECK_EQ(l, HTPU_PROFILE_LINTING);
  CHECK_EQ(htpu_profile_level_from_name("verbose", &l), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "expected off, basic, detailed, linting or optrace");
  CHECK(strcmp(htpu_profile_level_name(HTPU_PROFILE_OPTRACE), "optrace") == 0);
  CHECK(htpu_profile_level_name((htpu_profile_level)7) == NULL);
  CHECK(strcmp(htpu_profile_event_name(3010), "VTCM acquire") == 0);
  CHECK(strcmp(htpu_profile_event_name(99999), "") == 0);
  CHECK(strcmp(htpu_profile_unit_name(3), "cycles") == 0);
}
