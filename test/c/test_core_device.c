/* HTP device features through the core: performance profiles, shared buffers, the
 * compatibility preflight, recovery with registered buffers. Asserted through what the
 * reference backend recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/backend/htpu_ref_control.h"
#include "fixture.h"
#include "hexagon_tpu.h"
#include "qnn/qnn_htp_abi.h"
#include "test.h"

typedef struct expect_vote {
  htpu_perf_profile p;
  uint32_t dcvs_enable, power_mode, sleep_us, corner, rpc_latency;
} expect_vote;

/* docs/board.md's table, restated independently of src/perf.c. */
static const expect_vote TABLE[] = {
    {HTPU_PERF_BURST, 0, 0x10, 40, 0xA0, 100},
    {HTPU_PERF_SUSTAINED_HIGH_PERFORMANCE, 0, 0x10, 100, 0x80, 100},
    {HTPU_PERF_HIGH_PERFORMANCE, 0, 0x10, 100, 0x80, 100},
    {HTPU_PERF_BALANCED, 1, 0x10, 1000, 0x70, 1000},
    {HTPU_PERF_LOW_BALANCED, 1, 0x10, 1000, 0x60, 1000},
    {HTPU_PERF_HIGH_POWER_SAVER, 1, 0x10, 1000, 0x50, 1000},
    {HTPU_PERF_POWER_SAVER, 1, 0x10, 1000, 0x40, 1000},
    {HTPU_PERF_LOW_POWER_SAVER, 1, 0x10, 1000, 0x30, 1000},
    {HTPU_PERF_EXTREME_POWER_SAVER, 1, 0x04, 1000, 0x10, 1000},
};

static void check_vote(const htpu_ref_power_state *s, const expect_vote *e) {
  const char *name = htpu_perf_profile_name(e->p);
  CHECK_MSG(s->has_dcvs_v3 && s->set_dcvs_enable && s->dcvs_enable == e->dcvs_enable,
            "%s: dcvs_enable %u", name, s->dcvs_enable);
  CHECK_MSG(s->power_mode == e->power_mode, "%s: power_mode 0x%x", name, s->power_mode);
  CHECK_MSG(s->set_sleep_latency && s->sleep_latency_us == e->sleep_us, "%s: sleep %u", name,
            s->sleep_latency_us);
  CHECK_MSG(s->set_bus_params && s->bus_corner_min == e->corner && s->bus_corner_target == e->corner &&
                s->bus_corner_max == e->corner,
            "%s: bus corners 0x%x", name, s->bus_corner_target);
  CHECK_MSG(s->set_core_params && s->core_corner_min == e->corner &&
                s->core_corner_target == e->corner && s->core_corner_max == e->corner,
            "%s: core corners 0x%x", name, s->core_corner_target);
  CHECK_MSG(s->has_rpc_control_latency && s->rpc_control_latency_us == e->rpc_latency,
            "%s: rpc latency %u", name, s->rpc_control_latency_us);
  /* QCS6490 is v68: no RPC polling vote, ever. */
  CHECK_MSG(!s->has_rpc_polling_time, "%s: polling voted on v68", name);
}

TEST(device_each_profile_votes_its_documented_settings) {
  fx_reset_env();
  htpu_perf_profile parsed;
  CHECK_EQ(htpu_perf_profile_from_name("sustained_high_performance", &parsed), 0);
  CHECK_EQ(parsed, HTPU_PERF_SUSTAINED_HIGH_PERFORMANCE);
  CHECK_EQ(htpu_perf_profile_from_name("turbo", &parsed), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "extreme_power_saver");
  uint32_t prev_id = 0;
  for (size_t i = 0; i < sizeof TABLE / sizeof *TABLE; i++) {
    htpu_runtime_options o;
    fx_ref_options(&o);
    o.perf_profile = TABLE[i].p;
    htpu_runtime *rt = NULL;
    CHECK_MSG(htpu_runtime_open(&o, &rt) == 0, "%s", htpu_last_error());
    htpu_runtime_info info;
    CHECK_EQ(htpu_runtime_get_info(rt, &info), 0);
    CHECK(info.has_perf_infrastructure);
    CHECK_EQ(info.perf_profile, TABLE[i].p);
    CHECK_EQ(info.device_arch, 68);
    CHECK_EQ(fx_ref_live_power_ids(), 1);
    /* Ids are process-wide: each runtime's backend gets a fresh one, never a released one. */
    uint32_t id = fx_ref_last_power_id();
    CHECK_MSG(id != 0 && id != prev_id, "power config id %u after %u", id, prev_id);
    prev_id = id;
    htpu_ref_power_state s;
    CHECK_EQ(fx_ref_power_state(id, &s), 0);
    CHECK_EQ(s.device_id, 0);
    check_vote(&s, &TABLE[i]);
    if (test_failed()) return;
    htpu_runtime_close(&rt);
    /* The vote is released at close: destroyed before the device was freed. */
    CHECK_EQ(fx_ref_live_power_ids(), 0);
    CHECK_EQ(fx_ref_violations(), 0);
  }
}

TEST(device_rpc_polling_only_where_the_arch_has_it) {
  fx_reset_env();
  setenv("HTPU_REF_DEVICE", "arch=69,soc_model=35,vtcm_mb=2", 1);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.perf_profile = HTPU_PERF_BURST;
  htpu_runtime *rt = NULL;
  CHECK_MSG(htpu_runtime_open(&o, &rt) == 0, "%s", htpu_last_error());
  uint32_t id = fx_ref_last_power_id();
  htpu_ref_power_state s;
  CHECK_EQ(fx_ref_power_state(id, &s), 0);
  CHECK(s.has_rpc_polling_time && s.rpc_polling_time_us == 9999);
  CHECK_EQ(htpu_runtime_set_perf_profile(rt, HTPU_PERF_POWER_SAVER), 0);
  CHECK_EQ(fx_ref_power_state(id, &s), 0);
  CHECK_EQ(s.rpc_polling_time_us, 0); /* the higher profile's polling is undone */
  htpu_runtime_close(&rt);
  unsetenv("HTPU_REF_DEVICE");
  CHECK_EQ(fx_ref_violations(), 0);
}

TEST(device_profile_changes_and_default_releases) {
  fx_reset_env();
  htpu_runtime_options o;
  fx_ref_options(&o);
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  CHECK_EQ(fx_ref_live_power_ids(), 0); /* DEFAULT: no vote cast */
  CHECK_EQ(htpu_runtime_set_perf_profile(rt, HTPU_PERF_BALANCED), 0);
  CHECK_EQ(fx_ref_live_power_ids(), 1);
  uint32_t id = fx_ref_last_power_id();
  htpu_ref_power_state s;
  CHECK_EQ(fx_ref_power_state(id, &s), 0);
  check_vote(&s, &TABLE[3]);
  CHECK_EQ(htpu_runtime_set_perf_profile(rt, HTPU_PERF_BURST), 0);
  CHECK_EQ(fx_ref_last_power_id(), id); /* a new profile is voted through the same id */
  CHECK_EQ(fx_ref_power_state(id, &s), 0);
  check_vote(&s, &TABLE[0]);
  CHECK_EQ(htpu_runtime_set_perf_profile(rt, HTPU_PERF_DEFAULT), 0);
  CHECK_EQ(fx_ref_live_power_ids(), 0);
  CHECK_EQ(htpu_runtime_set_perf_profile(rt, (htpu_perf_profile)99), HTPU_EINVAL);
  htpu_runtime_close(&rt);
  CHECK_EQ(fx_ref_violations(), 0);
}

TEST(device_per_call_profile_votes_up_and_back_down) {
  fx_reset_env();
  const char *path = fx_build_model_file("percall.bin", FX_ADD_F32);
  CHECK(path);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.perf_profile = HTPU_PERF_POWER_SAVER;
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), 0);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), 0);
  float a[4] = {1, 2, 3, 4}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {a, sizeof a, HTPU_F32}}, out = {y, sizeof y, HTPU_F32};
  uint32_t id = fx_ref_last_power_id();
  htpu_ref_power_state s;
  CHECK_EQ(fx_ref_power_state(id, &s), 0);
  uint32_t calls_before = s.set_calls;
  htpu_exec_options eo = {.perf_profile = HTPU_PERF_BURST};
  CHECK_EQ(htpu_graph_execute_ex(g, in, 2, &out, 1, &eo, NULL), 0);
  CHECK(y[3] == 8);
  CHECK_EQ(fx_ref_power_state(id, &s), 0);
  /* Burst was voted for the call (DCVS + RPC latency), then power_saver again. */
  CHECK(s.set_calls >= calls_before + 3);
  check_vote(&s, &TABLE[6]);
  /* A call asking for less than the runtime's profile changes nothing. */
  calls_before = s.set_calls;
  eo.perf_profile = HTPU_PERF_EXTREME_POWER_SAVER;
  CHECK_EQ(htpu_graph_execute_ex(g, in, 2, &out, 1, &eo, NULL), 0);
  CHECK_EQ(fx_ref_power_state(id, &s), 0);
  CHECK_EQ(s.set_calls, calls_before);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_EQ(fx_ref_live_power_ids(), 0);
  CHECK_EQ(fx_ref_violations(), 0);
}

/* Two runtimes each vote through their own power config id. The perf infrastructure takes no
 * backend handle, so its ids are process-wide: closing one runtime (as a garbage collector may,
 * long after a newer one opened) must release its own id, not the newer runtime's. */
TEST(device_closing_an_older_runtime_keeps_the_newer_ones_vote) {
  fx_reset_env();
  unsigned long v0 = fx_ref_violations();
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.perf_profile = HTPU_PERF_POWER_SAVER;
  htpu_runtime *rt1 = NULL, *rt2 = NULL;
  CHECK_MSG(htpu_runtime_open(&o, &rt1) == 0, "%s", htpu_last_error());
  uint32_t id1 = fx_ref_last_power_id();
  fx_ref_options(&o);
  CHECK_MSG(htpu_runtime_open(&o, &rt2) == 0, "%s", htpu_last_error());
  CHECK_MSG(htpu_runtime_set_perf_profile(rt2, HTPU_PERF_BURST) == 0, "%s", htpu_last_error());
  uint32_t id2 = fx_ref_last_power_id();
  CHECK_EQ(fx_ref_live_power_ids(), 2);
  CHECK_EQ(htpu_runtime_close(&rt1), 0);
  /* rt1's vote went with it; rt2's is untouched and can still be changed. */
  CHECK_MSG(htpu_runtime_set_perf_profile(rt2, HTPU_PERF_BALANCED) == 0, "%s",
            htpu_last_error());
  CHECK_EQ(fx_ref_live_power_ids(), 1);
  CHECK_MSG(id1 != 0 && id2 != 0 && id1 != id2, "power config ids %u and %u", id1, id2);
  htpu_ref_power_state s;
  CHECK_EQ(fx_ref_power_state(id1, &s), 1);
  check_vote(&s, &TABLE[6]); /* destroyed as rt1 left it: power_saver */
  CHECK_EQ(fx_ref_power_state(id2, &s), 0);
  check_vote(&s, &TABLE[3]);
  CHECK_EQ(s.rejected_calls, 0);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt2, &info), 0);
  CHECK_EQ(info.perf_profile, HTPU_PERF_BALANCED);
  CHECK_EQ(htpu_runtime_close(&rt2), 0);
  CHECK_EQ(fx_ref_live_power_ids(), 0);
  CHECK_EQ(fx_ref_power_state(id2, &s), 1);
  /* Neither backendFree found a power config id left behind. */
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

static const char *SHARED_MODEL =
    "graph fc_u8\n"
    "  input x u8 [1,3] scale=0.5 zero_point=10\n"
    "  static w u8 [2,3] axis=0 scales=[0.25,0.5] zero_points=[4,8] data=[8,4,4,10,8,6]\n"
    "  output y u8 [1,2] scale=0.25 zero_point=2\n"
    "  op FullyConnected x w -> y\n";

TEST(device_shared_buffers_match_ordinary_ones_and_are_deregistered) {
  fx_reset_env();
  const char *path = fx_build_model_file("shared.bin", SHARED_MODEL);
  CHECK(path);
  htpu_runtime_options o;
  fx_ref_options_shared(&o);
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), 0);
  CHECK_MSG(info.has_shared_memory, "%s", info.shared_memory_note);
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), 0);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), 0);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  int cycles = test_under_valgrind() ? 30 : 2000;
  for (int i = 0; i < cycles; i++) {
    htpu_io in, out;
    htpu_shared *buf = NULL;
    CHECK_EQ(htpu_graph_alloc_io(g, &in, &out, &buf), 0);
    CHECK(htpu_shared_is_fastrpc(buf));
    CHECK_EQ(in.dtype, HTPU_U8);
    uint8_t x[3] = {(uint8_t)i, (uint8_t)(i * 7), 200};
    memcpy(in.data, x, 3);
    CHECK_EQ(htpu_graph_execute(g, &in, 1, &out, 1, NULL), 0);
    /* The same inputs through ordinary buffers give the same outputs. */
    uint8_t y[2];
    htpu_io pin = {x, 3, HTPU_U8}, pout = {y, 2, HTPU_U8};
    CHECK_EQ(htpu_graph_execute(g, &pin, 1, &pout, 1, NULL), 0);
    CHECK(memcmp(out.data, y, 2) == 0);
    if (i == 0) CHECK_EQ(fx_ref_live_mem_handles(), 2);
    CHECK_EQ(htpu_shared_free(&buf), 0);
    CHECK_EQ(fx_ref_live_mem_handles(), 0); /* deregistered before it was freed */
  }
  htpu_stats_get(&s1);
  CHECK_EQ(s1.mem_registrations - s0.mem_registrations, (uint64_t)cycles * 2);
  CHECK_EQ(s1.live_shared_buffers, 0);
  /* A buffer still registered when the context goes is deregistered first. */
  htpu_io in, out;
  htpu_shared *buf = NULL;
  CHECK_EQ(htpu_graph_alloc_io(g, &in, &out, &buf), 0);
  CHECK_EQ(htpu_graph_execute(g, &in, 1, &out, 1, NULL), 0);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  CHECK_EQ(htpu_shared_free(&buf), 0);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

TEST(device_shared_buffers_fall_back_to_ordinary_memory) {
  fx_reset_env();
  const char *path = fx_build_model_file("fallback.bin", SHARED_MODEL);
  CHECK(path);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.fastrpc_lib = "/nonexistent/libcdsprpc.so";
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), 0);
  CHECK(!info.has_shared_memory);
  CHECK_STR_CONTAINS(info.shared_memory_note, "/nonexistent/libcdsprpc.so");
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), 0);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), 0);
  htpu_io in, out;
  htpu_shared *buf = NULL;
  CHECK_EQ(htpu_graph_alloc_io(g, &in, &out, &buf), 0);
  CHECK(!htpu_shared_is_fastrpc(buf));
  CHECK_STR_CONTAINS(htpu_shared_note(buf), "/nonexistent/libcdsprpc.so");
  memset(in.data, 12, 3);
  CHECK_EQ(htpu_graph_execute(g, &in, 1, &out, 1, NULL), 0);
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  htpu_shared_free(&buf);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  /* The allocator is there but refuses: ordinary memory, and the note says so. */
  setenv("HTPU_REF_RPCMEM_FAIL", "1", 1);
  fx_ref_options_shared(&o);
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  CHECK_EQ(htpu_shared_alloc(rt, 100, &buf), 0);
  CHECK(!htpu_shared_is_fastrpc(buf));
  CHECK_EQ(htpu_runtime_get_info(rt, &info), 0);
  CHECK_STR_CONTAINS(info.shared_memory_note, "rpcmem_alloc");
  CHECK_STR_CONTAINS(htpu_shared_note(buf), "rpcmem_alloc of 128 bytes failed");
  /* The buffer's reason outlives the caller's runtime handle (the buffer keeps the runtime). */
  htpu_runtime_close(&rt);
  unsetenv("HTPU_REF_RPCMEM_FAIL");
  CHECK_STR_CONTAINS(htpu_shared_note(buf), "rpcmem_alloc of 128 bytes failed");
  htpu_shared *stale = buf;
  htpu_shared_free(&buf);
  CHECK(htpu_shared_note(stale) == NULL);
  CHECK_EQ(htpu_shared_alloc(NULL, 10, &buf), HTPU_ECLOSED);
  /* A FastRPC buffer has no reason to give. */
  fx_ref_options_shared(&o);
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  CHECK_EQ(htpu_shared_alloc(rt, 100, &buf), 0);
  CHECK(htpu_shared_is_fastrpc(buf));
  CHECK(htpu_shared_note(buf) && htpu_shared_note(buf)[0] == '\0');
  htpu_shared_free(&buf);
  htpu_runtime_close(&rt);
}

TEST(device_restart_with_registered_buffers_recovers) {
  fx_reset_env();
  const char *path = fx_build_model_file("ssr.bin", SHARED_MODEL);
  CHECK(path);
  htpu_runtime_options o;
  fx_ref_options_shared(&o);
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), 0);
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g), 0);
  htpu_io in, out;
  htpu_shared *buf = NULL;
  CHECK_EQ(htpu_graph_alloc_io(g, &in, &out, &buf), 0);
  uint8_t x[3] = {40, 50, 60};
  memcpy(in.data, x, 3);
  CHECK_EQ(htpu_graph_execute(g, &in, 1, &out, 1, NULL), 0);
  uint8_t want[2];
  memcpy(want, out.data, 2);
  memset(out.data, 0, 2);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  /* A real restart: every context of the backend goes stale. */
  CHECK_EQ(fx_ref_arm("graphExecute:1:1007:ssr"), 0);
  CHECK_MSG(htpu_graph_execute(g, &in, 1, &out, 1, NULL) == 0, "%s", htpu_last_error());
  CHECK(memcmp(out.data, want, 2) == 0);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.recoveries - s0.recoveries, 1);
  CHECK_EQ(fx_ref_live_mem_handles(), 2); /* re-registered with the new context */
  fx_ref_disarm();
  htpu_shared_free(&buf);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

static int open_meta(const char *meta, htpu_context **ctx, htpu_runtime *rt) {
  char text[512];
  snprintf(text, sizeof text,
           "meta %s\ngraph g\n  input a f32 [2]\n  output b f32 [2]\n  op Relu a -> b\n", meta);
  size_t len = 0;
  void *bin = fx_build_model(text, &len);
  if (!bin) return -100;
  int rc = htpu_context_open_buffer(rt, bin, len, ctx);
  free(bin);
  return rc;
}

TEST(device_incompatible_binaries_name_both_sides) {
  fx_reset_env();
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  CHECK_EQ(open_meta("dsp_arch=73", &ctx, rt), HTPU_EINCOMPATIBLE);
  CHECK_STR_CONTAINS(htpu_last_error(), "built for v73, this device is v68");
  CHECK_EQ(open_meta("soc_model=50", &ctx, rt), HTPU_EINCOMPATIBLE);
  CHECK_STR_CONTAINS(htpu_last_error(), "SoC model 50, this device is SoC model 35");
  CHECK_EQ(open_meta("core_api=2.33.0", &ctx, rt), HTPU_EINCOMPATIBLE);
  CHECK_STR_CONTAINS(htpu_last_error(), "QNN API 2.33, newer than this runtime's 2.32");
  CHECK_EQ(open_meta("backend_api=5.43.0", &ctx, rt), HTPU_EINCOMPATIBLE);
  CHECK_STR_CONTAINS(htpu_last_error(), "backend API 5.43");
  CHECK_EQ(open_meta("vtcm_bytes=4194304", &ctx, rt), HTPU_EINCOMPATIBLE);
  CHECK_STR_CONTAINS(htpu_last_error(), "needs 4 MB of VTCM, this device has 2 MB");
  /* Older is fine. */
  CHECK_EQ(open_meta("core_api=2.30.0 backend_api=5.40.0", &ctx, rt), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  /* The board reports SoC 93 where binaries say 35: the same silicon. */
  setenv("HTPU_REF_DEVICE", "arch=68,soc_model=93,vtcm_mb=2", 1);
  rt = fx_open_runtime();
  CHECK(rt);
  CHECK_EQ(open_meta("soc_model=35", &ctx, rt), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  unsetenv("HTPU_REF_DEVICE");
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_contexts, 0);
}
