/*
 * test_core_scratch.c - f32 inputs and outputs of a quantized graph go through the graph's
 * scratch pool (src/scratch.c): FastRPC memory registered with the context when the runtime
 * has it (the conversion is then the only pass over the data), reused call after call,
 * deregistered when the graph goes; each call converts in its own block, outside the graph's
 * lock, so a conversion overlaps another call's execute on the same graph.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

static const char *U8_MODEL =
    "graph fc_u8\n"
    "  input x u8 [1,3] scale=0.5 zero_point=10\n"
    "  static w u8 [2,3] axis=0 scales=[0.25,0.5] zero_points=[4,8] data=[8,4,4,10,8,6]\n"
    "  output y u8 [1,2] scale=0.25 zero_point=2\n"
    "  op FullyConnected x w -> y\n";

#define WAIT_MS 5000

/* The f32 answer the long way: quantize, execute in the tensors' own type, dequantize. */
static int reference_answer(htpu_graph *g, const float x[3], float y[2]) {
  const htpu_graph_info *gi = htpu_graph_get_info(g);
  uint8_t q[3], qy[2];
  if (!gi || htpu_quantize(&gi->inputs[0], x, q) != 0) return -1;
  htpu_io in = {q, sizeof q, HTPU_U8}, out = {qy, sizeof qy, HTPU_U8};
  if (htpu_graph_execute(g, &in, 1, &out, 1, NULL) != 0) return -1;
  return htpu_dequantize(&gi->outputs[0], qy, y);
}

static int execute_f32(htpu_graph *g, const float x[3], float y[2]) {
  htpu_io in = {(void *)x, 3 * sizeof(float), HTPU_F32}, out = {y, 2 * sizeof(float), HTPU_F32};
  return htpu_graph_execute(g, &in, 1, &out, 1, NULL);
}

static int open_model(const char *fastrpc_lib, htpu_runtime **rt, htpu_context **ctx,
                      htpu_graph **g) {
  const char *path = fx_build_model_file("scratch.bin", U8_MODEL);
  htpu_runtime_options o;
  fx_ref_options_shared(&o);
  if (fastrpc_lib) o.fastrpc_lib = fastrpc_lib;
  if (!path || htpu_runtime_open(&o, rt) != 0 || htpu_context_open_file(*rt, path, ctx) != 0 ||
      htpu_graph_open(*ctx, NULL, g) != 0)
    return -1;
  return 0;
}

TEST(scratch_f32_io_converts_in_registered_fastrpc_memory) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_MSG(open_model(NULL, &rt, &ctx, &g) == 0, "%s", htpu_last_error());
  htpu_runtime_info info;
  CHECK_EQ(htpu_runtime_get_info(rt, &info), 0);
  CHECK_MSG(info.has_shared_memory, "%s", info.shared_memory_note);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  for (int i = 0; i < 100; i++) {
    float x[3] = {(float)i * 0.1f, (float)i * -0.3f, 5.5f}, y[2], want[2];
    CHECK_EQ(execute_f32(g, x, y), 0);
    if (i == 0) /* the call's input and output slots, passed by handle: no FastRPC copy */
      CHECK_EQ(fx_ref_live_mem_handles(), 2);
    CHECK_EQ(reference_answer(g, x, want), 0);
    CHECK_MSG(memcmp(y, want, sizeof y) == 0, "call %d: %g %g, want %g %g", i, (double)y[0],
              (double)y[1], (double)want[0], (double)want[1]);
  }
  htpu_stats_get(&s1);
  CHECK_EQ(s1.mem_registrations - s0.mem_registrations, 2); /* one block, reused */
  /* A NaN input gives the block back too; the next call still converts fine. */
  float bad[3] = {1.0f, NAN, 2.0f}, y[2];
  CHECK_EQ(execute_f32(g, bad, y), HTPU_ENAN);
  CHECK_STR_CONTAINS(htpu_last_error(), "element 1 is NaN");
  float x[3] = {1, 2, 3};
  CHECK_EQ(execute_f32(g, x, y), 0);
  CHECK_EQ(fx_ref_live_mem_handles(), 2);
  htpu_graph_close(&g); /* the graph's blocks are deregistered and freed with it */
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

TEST(scratch_without_fastrpc_uses_ordinary_memory) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_MSG(open_model("/nonexistent/libcdsprpc.so", &rt, &ctx, &g) == 0, "%s",
            htpu_last_error());
  for (int i = 0; i < 10; i++) {
    float x[3] = {(float)i, 0.25f, -1.0f}, y[2], want[2];
    CHECK_EQ(execute_f32(g, x, y), 0);
    CHECK_EQ(reference_answer(g, x, want), 0);
    CHECK(memcmp(y, want, sizeof y) == 0);
  }
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

typedef struct call {
  htpu_graph *g;
  float x[3], y[2];
  int rc;
  atomic_int done;
} call;

static void *run_call(void *arg) {
  call *c = arg;
  c->rc = execute_f32(c->g, c->x, c->y);
  atomic_store(&c->done, 1);
  return NULL;
}

static int wait_for(uint64_t in_flight, uint64_t waiting) {
  for (int ms = 0; ms < WAIT_MS; ms++) {
    htpu_stats st;
    htpu_stats_get(&st);
    if (st.executes_in_flight == in_flight && st.executes_waiting == waiting) return 0;
    usleep(1000);
  }
  return -1;
}

/* Ordering, not timing: while call A sits in graphExecute (1 s of injected latency, holding the
 * graph's lock), call B on the same graph converts its input; with a NaN it fails right there,
 * so it returns while A is still in flight, which it could not if it converted under the lock.
 * A valid call C then queues behind A with its own block (two blocks, four handles). */
TEST(concurrency_conversion_overlaps_another_execute_of_the_graph) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_MSG(open_model(NULL, &rt, &ctx, &g) == 0, "%s", htpu_last_error());
  CHECK_EQ(fx_ref_set_latency("graphExecute", 1000000), 0);
  call a = {g, {1.0f, 2.0f, 3.0f}, {0}, -1, 0}, c = {g, {-4.0f, 0.5f, 7.25f}, {0}, -1, 0};
  pthread_t ta, tc;
  CHECK(pthread_create(&ta, NULL, run_call, &a) == 0);
  int running = wait_for(1, 0) == 0;
  float nan_x[3] = {NAN, 0, 0}, y[2];
  int b_rc = execute_f32(g, nan_x, y);
  int a_done_after_b = atomic_load(&a.done);
  int c_started = running && pthread_create(&tc, NULL, run_call, &c) == 0;
  int queued = c_started && wait_for(1, 1) == 0;
  uint32_t handles_while_queued = fx_ref_live_mem_handles();
  pthread_join(ta, NULL);
  if (c_started) pthread_join(tc, NULL);
  fx_ref_disarm();
  CHECK_MSG(running, "call A never showed as in flight");
  CHECK_EQ(b_rc, HTPU_ENAN);
  CHECK_MSG(!a_done_after_b, "call B returned only after A: it converted under the graph's lock");
  CHECK_MSG(queued, "call C never showed as waiting behind A");
  CHECK_EQ(handles_while_queued, 2); /* A's block, bound under the gate; C's not yet */
  CHECK_EQ(a.rc, 0);
  CHECK_EQ(c.rc, 0);
  CHECK_EQ(fx_ref_live_mem_handles(), 4); /* C had a block of its own */
  float want[2];
  CHECK_EQ(reference_answer(g, a.x, want), 0);
  CHECK(memcmp(a.y, want, sizeof want) == 0);
  CHECK_EQ(reference_answer(g, c.x, want), 0);
  CHECK(memcmp(c.y, want, sizeof want) == 0);
  htpu_graph_close(&g);
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

/* Four calls in flight on one graph (one in graphExecute, three queued behind it, each holding
 * the block it converted into) all convert into FastRPC memory: a call converted into an
 * ordinary block would have FastRPC copy its tensors again inside graphExecute, under the
 * graph's lock, which is the pass the pool exists to avoid and a cost every queued call pays in
 * series. Ordering, not timing: the three are known to be queued from the waiting counter. */
TEST(concurrency_four_calls_in_flight_all_convert_in_fastrpc_memory) {
  enum { QUEUED = 3 };
  fx_reset_env();
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_MSG(open_model(NULL, &rt, &ctx, &g) == 0, "%s", htpu_last_error());
  CHECK_EQ(fx_ref_set_latency("graphExecute", 1000000), 0);
  call a = {g, {1.0f, 2.0f, 3.0f}, {0}, -1, 0}, q[QUEUED];
  pthread_t ta, tq[QUEUED];
  int started = 0;
  CHECK(pthread_create(&ta, NULL, run_call, &a) == 0);
  int running = wait_for(1, 0) == 0;
  for (int i = 0; running && i < QUEUED; i++) {
    q[i] = (call){g, {(float)i, -0.5f * (float)i, 2.25f}, {0}, -1, 0};
    if (pthread_create(&tq[i], NULL, run_call, &q[i]) != 0) break;
    started++;
  }
  int queued = started == QUEUED && wait_for(1, QUEUED) == 0;
  fx_ref_set_latency("graphExecute", 0); /* A still sleeps its second; the rest run at once */
  pthread_join(ta, NULL);
  for (int i = 0; i < started; i++) pthread_join(tq[i], NULL);
  fx_ref_disarm();
  CHECK_MSG(running, "call A never showed as in flight");
  CHECK_MSG(queued, "the other calls never showed as waiting behind A");
  /* four blocks, each registered: input and output slot */
  CHECK_EQ(fx_ref_live_mem_handles(), 2 * (1 + QUEUED));
  float want[2];
  CHECK_EQ(a.rc, 0);
  for (int i = 0; i < started; i++) {
    CHECK_EQ(q[i].rc, 0);
    CHECK_EQ(reference_answer(g, q[i].x, want), 0);
    CHECK(memcmp(q[i].y, want, sizeof want) == 0);
  }
  htpu_graph_close(&g);
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

/* A no-wait call (the NIF's normal-scheduler path) never allocates FastRPC memory or registers
 * a buffer (rpcmem_alloc is an ioctl, memRegister a DSP round trip): with no idle block, or a
 * shared buffer not yet registered, it declines (HTPU_DECLINE_RESOURCE) having called neither;
 * the ordinary call made again does both once, and the next no-wait call reuses them. Counts,
 * not timing: the reference FastRPC library's allocations and this thread's memRegisters. */
static int no_wait_call(htpu_graph *g, const htpu_io *in, const htpu_io *out,
                        htpu_exec_stats *st) {
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.no_wait = 1;
  /* its own bound, far past any host's load: without it the 1 ms default could stop a call
   * preempted on a loaded machine (STALLED), which is not what these counts are about */
  o.timeout_ns = 60ull * 1000000000ull;
  return htpu_graph_execute_ex(g, in, 1, out, 1, &o, st);
}

TEST(short_no_wait_never_allocates_or_registers_fastrpc_memory) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_MSG(open_model(NULL, &rt, &ctx, &g) == 0, "%s", htpu_last_error());
  uint64_t allocs0 = fx_rpcmem_allocs(), regs0 = fx_ref_thread_calls("memRegister");
  CHECK(allocs0 != UINT64_MAX && regs0 != UINT64_MAX);
  float x[3] = {1.0f, -2.0f, 3.5f}, y[2] = {0}, want[2];
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  htpu_exec_stats st;
  uint64_t backend0 = fx_ref_executes();
  /* No block yet: declined before converting, nothing allocated or registered. */
  CHECK_EQ(no_wait_call(g, &in, &out, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_RESOURCE);
  CHECK_STR_CONTAINS(htpu_last_error(), "allocated or registered");
  CHECK_EQ(fx_rpcmem_allocs(), allocs0);
  CHECK_EQ(fx_ref_thread_calls("memRegister"), regs0);
  CHECK_EQ(fx_ref_executes(), backend0);
  /* The ordinary call allocates one block and registers its two slots ... */
  CHECK_EQ(htpu_graph_execute(g, &in, 1, &out, 1, NULL), 0);
  CHECK_EQ(fx_rpcmem_allocs(), allocs0 + 1);
  CHECK_EQ(fx_ref_thread_calls("memRegister"), regs0 + 2);
  /* ... which the no-wait call then uses as they are. */
  memset(y, 0, sizeof y);
  CHECK_EQ(no_wait_call(g, &in, &out, &st), 0);
  CHECK_EQ(st.declined, HTPU_DECLINE_NONE);
  CHECK_EQ(reference_answer(g, x, want), 0);
  CHECK(memcmp(y, want, sizeof y) == 0);
  CHECK_EQ(fx_rpcmem_allocs(), allocs0 + 1);
  CHECK_EQ(fx_ref_thread_calls("memRegister"), regs0 + 2);

  /* The caller's own FastRPC buffer, not yet registered with the context. */
  htpu_io sin, sout;
  htpu_shared *buf = NULL;
  CHECK_EQ(htpu_graph_alloc_io(g, &sin, &sout, &buf), 0);
  CHECK(htpu_shared_is_fastrpc(buf));
  CHECK_EQ(htpu_quantize(htpu_graph_input(g, 0), x, sin.data), 0);
  uint64_t regs1 = fx_ref_thread_calls("memRegister"), allocs1 = fx_rpcmem_allocs();
  CHECK_EQ(no_wait_call(g, &sin, &sout, &st), HTPU_EBUSY);
  CHECK_EQ(st.declined, HTPU_DECLINE_RESOURCE);
  CHECK_EQ(fx_ref_thread_calls("memRegister"), regs1);
  CHECK_EQ(htpu_graph_execute(g, &sin, 1, &sout, 1, NULL), 0);
  CHECK_EQ(fx_ref_thread_calls("memRegister"), regs1 + 2);
  CHECK_EQ(no_wait_call(g, &sin, &sout, &st), 0);
  CHECK_EQ(fx_ref_thread_calls("memRegister"), regs1 + 2);
  CHECK_EQ(fx_rpcmem_allocs(), allocs1);
  float got[2];
  CHECK_EQ(htpu_dequantize(htpu_graph_output(g, 0), sout.data, got), 0);
  CHECK(memcmp(got, want, sizeof got) == 0);
  htpu_shared_free(&buf);
  htpu_graph_close(&g);
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

/* Holds the graph from inside an ordinary call (its cancelled callback runs under the graph's
 * lock) until released. The held call passes u8 buffers as they are, so it takes no block. */
typedef struct hold {
  fx_hold gate;
  htpu_graph *g;
  int rc;
} hold;

static void *hold_main(void *arg) {
  hold *h = arg;
  uint8_t x[3] = {10, 12, 14}, y[2];
  htpu_io in = {x, sizeof x, HTPU_U8}, out = {y, sizeof y, HTPU_U8};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.cancelled = fx_hold_cancelled;
  o.cancel_arg = &h->gate;
  h->rc = htpu_graph_execute_ex(h->g, &in, 1, &out, 1, &o, NULL);
  return NULL;
}

/* A no-wait call on a graph another call holds is declined before it converts anything: else
 * it converts, fails the graph's trylock, and the call made again converts a second time.
 * Decision, not timing: its input holds a NaN, so converting it would fail with HTPU_ENAN;
 * declined first, it never looks at the input. */
TEST(short_no_wait_on_a_held_graph_declines_before_converting) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_MSG(open_model(NULL, &rt, &ctx, &g) == 0, "%s", htpu_last_error());
  float x[3] = {1.0f, 2.0f, 3.0f}, y[2], want[2];
  CHECK_EQ(execute_f32(g, x, y), 0); /* an idle, registered block for the no-wait calls */
  hold h = {.g = g, .rc = -1};
  fx_hold_init(&h.gate);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, hold_main, &h) == 0);
  fx_hold_wait(&h.gate);
  float nan_x[3] = {NAN, 0, 0};
  htpu_io in = {nan_x, sizeof nan_x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.no_wait = 1;
  htpu_exec_stats st;
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  int rc = htpu_graph_execute_ex(g, &in, 1, &out, 1, &o, &st);
  htpu_stats_get(&s1);
  fx_hold_release(&h.gate);
  pthread_join(th, NULL);
  fx_hold_destroy(&h.gate);
  CHECK_EQ(h.rc, 0);
  CHECK_MSG(rc == HTPU_EBUSY, "the no-wait call converted its input on a held graph: %s (%s)",
            htpu_err_name(rc), htpu_last_error());
  CHECK_EQ(st.declined, HTPU_DECLINE_BUSY);
  CHECK_EQ(st.quantize_ns, 0);
  CHECK_EQ(s1.executes_declined - s0.executes_declined, 1);
  /* Free again: the no-wait call runs, in the block it did not take before. */
  in.data = x;
  CHECK_EQ(htpu_graph_execute_ex(g, &in, 1, &out, 1, &o, &st), 0);
  CHECK_EQ(reference_answer(g, x, want), 0);
  CHECK(memcmp(y, want, sizeof y) == 0);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}

/* Issue 18: the scratch pool is the graph's, whatever handle a call comes through. A block an
 * ordinary call through one handle left idle and registered serves a no-wait call through
 * another handle of the graph (nothing allocated or registered); the blocks go with the
 * graph's last handle. */
TEST(short_no_wait_through_another_handle_converts_in_the_graphs_idle_block) {
  fx_reset_env();
  htpu_runtime *rt = NULL;
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL, *g2 = NULL;
  CHECK_MSG(open_model(NULL, &rt, &ctx, &g) == 0, "%s", htpu_last_error());
  CHECK_EQ(htpu_graph_open(ctx, NULL, &g2), HTPU_OK);
  float x[3] = {1.0f, -2.0f, 3.5f}, y[2] = {0}, want[2];
  CHECK_EQ(execute_f32(g, x, y), 0); /* one block, its two slots registered */
  uint64_t allocs0 = fx_rpcmem_allocs(), regs0 = fx_ref_thread_calls("memRegister");
  CHECK(allocs0 != UINT64_MAX && regs0 != UINT64_MAX);
  uint32_t handles0 = fx_ref_live_mem_handles();
  CHECK_EQ(handles0, 2);
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  htpu_exec_stats st;
  memset(y, 0, sizeof y);
  int rc = no_wait_call(g2, &in, &out, &st);
  CHECK_MSG(rc == 0, "the no-wait call through the second handle: %s (declined %d)",
            htpu_err_name(rc), (int)st.declined);
  CHECK_EQ(reference_answer(g, x, want), 0);
  CHECK(memcmp(y, want, sizeof y) == 0);
  CHECK_EQ(fx_rpcmem_allocs(), allocs0);
  CHECK_EQ(fx_ref_thread_calls("memRegister"), regs0);
  /* Ordinary calls through either handle keep using it. */
  CHECK_EQ(execute_f32(g2, x, y), 0);
  CHECK_EQ(fx_rpcmem_allocs(), allocs0);
  /* The first handle goes: the graph, and its block, stay for the second. */
  htpu_graph_close(&g);
  CHECK_EQ(fx_ref_live_mem_handles(), handles0);
  CHECK_EQ(no_wait_call(g2, &in, &out, &st), 0);
  htpu_graph_close(&g2);
  CHECK_EQ(fx_ref_live_mem_handles(), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}
