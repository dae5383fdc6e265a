/* Concurrency: many threads on one graph and on separate graphs give the serial results;
 * the per-graph lock keeps QNN from seeing a graph executed concurrently with itself; a
 * context load waits for in-flight executes, and only for those; an execute whose caller is
 * gone is skipped when its turn comes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "base/gate.h"
#include "hexagon_tpu.h"
#include "test.h"

#define THREADS 8

static const char *TWO_GRAPHS =
    "graph add_f32\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseAdd a b -> y\n"
    "graph mul_f32\n"
    "  input a f32 [1,4]\n  input b f32 [1,4]\n  output y f32 [1,4]\n"
    "  op ElementWiseMultiply a b -> y\n";

typedef struct worker {
  htpu_graph *g;
  int mul;
  int iterations;
  int seed;
  int failures;
  int cancel_ok; /* a close may stop the call in flight: HTPU_ECANCELLED counted, not failed */
  int cancelled;
  char error[256];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (int i = 0; i < w->iterations; i++) {
    float a[4], b[4], y[4];
    for (int k = 0; k < 4; k++) {
      a[k] = (float)(w->seed * 100 + i + k);
      b[k] = (float)(k + 1);
    }
    htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {b, sizeof b, HTPU_F32}};
    htpu_io out = {y, sizeof y, HTPU_F32};
    int rc = htpu_graph_execute(w->g, in, 2, &out, 1, NULL);
    if (rc == HTPU_ECANCELLED && w->cancel_ok) {
      w->cancelled++;
      continue;
    }
    if (rc) {
      snprintf(w->error, sizeof w->error, "%s", htpu_last_error());
      w->failures++;
      continue;
    }
    for (int k = 0; k < 4; k++) {
      float want = w->mul ? a[k] * b[k] : a[k] + b[k];
      if (y[k] != want) {
        snprintf(w->error, sizeof w->error, "iteration %d element %d: %g != %g", i, k, y[k], want);
        w->failures++;
      }
    }
  }
  return NULL;
}

TEST(concurrency_threads_on_one_and_several_graphs) {
  fx_reset_env();
  const char *path = fx_build_model_file("two.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL, *ctx2 = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx2), HTPU_OK);
  htpu_graph *add = NULL, *mul = NULL, *add2 = NULL;
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "mul_f32", &mul), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx2, "add_f32", &add2), HTPU_OK);
  /* A little latency widens the window in which a missing lock would show. */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 50), 0);
  unsigned long v0 = fx_ref_violations();
  worker w[THREADS];
  pthread_t th[THREADS];
  int iterations = test_under_valgrind() ? 20 : 300;
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].g = (i % 3 == 0) ? add : (i % 3 == 1) ? mul : add2;
    w[i].mul = (i % 3 == 1);
    w[i].iterations = iterations;
    w[i].seed = i;
    CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  for (int i = 0; i < THREADS; i++) CHECK_MSG(w[i].failures == 0, "thread %d: %s", i, w[i].error);
  CHECK_MSG(fx_ref_violations() == v0, "backend saw: %s", fx_ref_last_violation());
  htpu_graph_close(&add);
  htpu_graph_close(&mul);
  htpu_graph_close(&add2);
  htpu_context_close(&ctx);
  htpu_context_close(&ctx2);
  htpu_runtime_close(&rt);
}

typedef struct loader_arg {
  htpu_runtime *rt;
  const char *path;
  int rc;
} loader_arg;

/* Loads and frees a context a few times while the workers' executes (2 ms each) are in
 * flight; without the execute gate the reference backend records a board-rule violation. */
static void *load(void *arg) {
  loader_arg *l = arg;
  l->rc = 0;
  for (int i = 0; i < 5 && l->rc == 0; i++) {
    usleep(3000);
    htpu_context *ctx = NULL;
    l->rc = htpu_context_open_file(l->rt, l->path, &ctx);
    htpu_context_close(&ctx);
  }
  return NULL;
}

TEST(concurrency_load_and_close_while_executing) {
  fx_reset_env();
  const char *path = fx_build_model_file("gate.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  htpu_graph *add = NULL;
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 2000), 0);
  unsigned long v0 = fx_ref_violations();
  worker w[4];
  pthread_t th[4], lt[4];
  loader_arg la[4];
  for (int i = 0; i < 4; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].g = add;
    w[i].iterations = test_under_valgrind() ? 3 : 20;
    w[i].seed = i;
    w[i].cancel_ok = 1;
    CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    la[i] = (loader_arg){rt, path, -1};
    CHECK(pthread_create(&lt[i], NULL, load, &la[i]) == 0);
  }
  /* Close the context's handle while executes are in flight: the calls holding or waiting for
   * the graph then are cancelled (at most one per thread), the graph keeps the context alive
   * and the calls after the close run. */
  htpu_context_close(&ctx);
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    pthread_join(lt[i], NULL);
  }
  fx_ref_disarm();
  for (int i = 0; i < 4; i++) {
    CHECK_MSG(w[i].failures == 0, "%s", w[i].error);
    CHECK_MSG(w[i].cancelled <= 1, "thread %d: %d calls cancelled by one close", i,
              w[i].cancelled);
    CHECK_EQ(la[i].rc, HTPU_OK);
  }
  CHECK_MSG(fx_ref_violations() == v0, "backend saw: %s", fx_ref_last_violation());
  htpu_graph_close(&add);
  htpu_runtime_close(&rt);
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_contexts, 0);
  CHECK_EQ(s.live_graphs, 0);
}

typedef struct one_call {
  htpu_graph *g;
  float want3; /* expected y[3]: 4 + 4 or 4 * 4 */
  const htpu_exec_options *opts; /* NULL: none */
  int rc;
  atomic_int done;    /* htpu_graph_execute returned (rc is set) */
  /* Optional: other calls to look at the moment this one returns. */
  struct one_call *watch;
  int n_watch;
  int watch_done;        /* of watch[0..n_watch), how many had returned by then */
  uint64_t waiting_then; /* the core's executes_waiting then */
} one_call;

static int count_done(struct one_call *calls, int n) {
  int done = 0;
  for (int i = 0; i < n; i++) done += atomic_load(&calls[i].done);
  return done;
}

static void *execute_once(void *arg) {
  one_call *c = arg;
  float a[4] = {1, 2, 3, 4}, y[4];
  htpu_io in[2] = {{a, sizeof a, HTPU_F32}, {a, sizeof a, HTPU_F32}};
  htpu_io out = {y, sizeof y, HTPU_F32};
  c->rc = htpu_graph_execute_ex(c->g, in, 2, &out, 1, c->opts, NULL);
  if (c->rc == 0 && y[3] != c->want3) c->rc = -100;
  htpu_stats st;
  htpu_stats_get(&st);
  c->waiting_then = st.executes_waiting;
  c->watch_done = count_done(c->watch, c->n_watch);
  atomic_store(&c->done, 1);
  return NULL;
}

static void call_init(one_call *c, htpu_graph *g, float want3) {
  memset(c, 0, sizeof *c);
  c->g = g;
  c->want3 = want3;
  c->rc = -1;
  atomic_init(&c->done, 0);
}

#define WAIT_MS 5000

/* Waits up to WAIT_MS until all n calls are known to hold their graph: each has returned, is
 * inside graphExecute, or is queued for its graph's lock (the core's executes_in_flight /
 * executes_waiting; nothing else executes meanwhile). A call only moves forward (waiting ->
 * in flight -> returned), and the three are read in the opposite order, so none is counted
 * twice; one missed between two reads is counted on the next look. 0, or -1 on timeout. */
static int wait_holding(one_call *calls, int n) {
  for (int ms = 0; ms < WAIT_MS; ms++) {
    int done = 0;
    for (int i = 0; i < n; i++) done += atomic_load(&calls[i].done);
    htpu_stats a, b;
    htpu_stats_get(&a);
    htpu_stats_get(&b);
    if (done + (int)a.executes_in_flight + (int)b.executes_waiting >= n) return 0;
    usleep(1000);
  }
  return -1;
}

TEST(concurrency_every_handle_closed_during_executes) {
  fx_reset_env();
  const char *path = fx_build_model_file("closeall.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *add = NULL, *mul = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "mul_f32", &mul), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 50000), 0);
  unsigned long v0 = fx_ref_violations();
  one_call calls[4];
  pthread_t th[4];
  /* Calls 0 (add) and 1 (mul) run on their graphs (50 ms each); 2 (add) and 3 (mul) queue
   * behind them on the per-graph locks. Only once all four are known to hold their graphs is
   * everything closed: the running ones are aborted, the waiting ones leave their lists, each
   * returns HTPU_ECANCELLED. */
  for (int i = 0; i < 4; i++) {
    memset(&calls[i], 0, sizeof calls[i]);
    calls[i].g = i % 2 ? mul : add;
    calls[i].want3 = i % 2 ? 16.0f : 8.0f;
    calls[i].rc = -1;
    atomic_init(&calls[i].done, 0);
  }
  for (int i = 0; i < 4; i++) CHECK(pthread_create(&th[i], NULL, execute_once, &calls[i]) == 0);
  if (wait_holding(calls, 4) != 0) {
    htpu_stats st;
    htpu_stats_get(&st);
    test_fail(__FILE__, __LINE__, "after %d ms not all four executes held their graphs (%llu "
              "in flight, %llu waiting)", WAIT_MS, (unsigned long long)st.executes_in_flight,
              (unsigned long long)st.executes_waiting);
  }
  /* Every handle goes while they run: the last call to end drops the last references and
   * tears down context, device, backend and libraries on its own thread. */
  CHECK_EQ(htpu_graph_close(&add), HTPU_OK);
  CHECK_EQ(htpu_graph_close(&mul), HTPU_OK);
  CHECK_EQ(htpu_context_close(&ctx), HTPU_OK);
  CHECK_EQ(htpu_runtime_close(&rt), HTPU_OK);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  if (test_failed()) return;
  for (int i = 0; i < 4; i++)
    CHECK_MSG(calls[i].rc == HTPU_ECANCELLED, "call %d: %d %s", i, calls[i].rc,
              htpu_err_name(calls[i].rc));
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.executes_in_flight, 0);
  CHECK_EQ(s.executes_waiting, 0);
  CHECK_EQ(s.live_runtimes, 0);
  CHECK_EQ(s.live_contexts, 0);
  CHECK_EQ(s.live_graphs, 0);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

TEST(concurrency_stats_count_executes_queued_on_a_graph) {
  fx_reset_env();
  const char *path = fx_build_model_file("queued.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *add = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  /* 1 s inside graphExecute: ample for the second thread to reach the graph's lock */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 1000000), 0);
  one_call calls[2];
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    memset(&calls[i], 0, sizeof calls[i]);
    calls[i].g = add;
    calls[i].want3 = 8.0f;
    calls[i].rc = -1;
    atomic_init(&calls[i].done, 0);
  }
  htpu_stats st;
  int seen_running = 0, seen_queued = 0;
  CHECK(pthread_create(&th[0], NULL, execute_once, &calls[0]) == 0);
  for (int ms = 0; ms < WAIT_MS && !seen_running; ms++) {
    htpu_stats_get(&st);
    seen_running = st.executes_in_flight == 1 && st.executes_waiting == 0;
    if (!seen_running) usleep(1000);
  }
  CHECK(pthread_create(&th[1], NULL, execute_once, &calls[1]) == 0);
  for (int ms = 0; ms < WAIT_MS && !seen_queued && !atomic_load(&calls[0].done); ms++) {
    htpu_stats_get(&st);
    seen_queued = st.executes_in_flight == 1 && st.executes_waiting == 1;
    if (!seen_queued) usleep(1000);
  }
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  CHECK_MSG(seen_running, "the first execute never showed as in flight");
  CHECK_MSG(seen_queued, "the second execute never showed as waiting behind the first");
  for (int i = 0; i < 2; i++)
    CHECK_MSG(calls[i].rc == 0, "call %d: %d %s", i, calls[i].rc, htpu_err_name(calls[i].rc));
  htpu_stats_get(&st);
  CHECK_EQ(st.executes_in_flight, 0);
  CHECK_EQ(st.executes_waiting, 0);
  htpu_graph_close(&add);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

/* White-box (src/gate.h): context loads or frees waiting for the execute gate now. */
static unsigned loads_at_gate(void) {
  pthread_mutex_lock(&htpu_exec_gate.lock);
  unsigned n = htpu_exec_gate.writers_waiting;
  pthread_mutex_unlock(&htpu_exec_gate.lock);
  return n;
}

/* Waits up to WAIT_MS until the core shows `in_flight` executes in graphExecute and `waiting`
 * queued on their graphs. 0, or -1 on timeout. */
static int wait_gauges(uint64_t in_flight, uint64_t waiting) {
  for (int ms = 0; ms < WAIT_MS; ms++) {
    htpu_stats st;
    htpu_stats_get(&st);
    if (st.executes_in_flight == in_flight && st.executes_waiting == waiting) return 0;
    usleep(1000);
  }
  return -1;
}

typedef struct load_probe {
  htpu_runtime *rt;
  const char *path;
  htpu_context *ctx; /* what the load made: closed by the test once every call returned */
  one_call *queue;   /* the busy graph's calls */
  int n;
  int rc;
  int queue_done;        /* of the queue, how many had returned when the load did */
  uint64_t waiting_then; /* executes_waiting then */
  atomic_int done;
} load_probe;

static void *load_once(void *arg) {
  load_probe *l = arg;
  l->rc = htpu_context_open_file(l->rt, l->path, &l->ctx);
  htpu_stats st;
  htpu_stats_get(&st);
  l->waiting_then = st.executes_waiting;
  l->queue_done = count_done(l->queue, l->n);
  /* Not closed here: a close takes the gate exclusively too, and one that came between the
   * load and the third graph's execute would hold that execute behind the busy graph's next
   * call (writer preference), which is not what this test measures. */
  atomic_store(&l->done, 1);
  return NULL;
}

#define QUEUED 4

TEST(concurrency_a_busy_graph_holds_up_only_its_own_callers) {
  fx_reset_env();
  const char *path = fx_build_model_file("busy.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime(), *rt2 = fx_open_runtime();
  CHECK(rt && rt2);
  htpu_context *ctx = NULL, *ctx3 = NULL;
  htpu_graph *busy = NULL, *third = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx3), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &busy), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx3, "mul_f32", &third), HTPU_OK);
  CHECK_EQ(fx_ref_set_latency("graphExecute", 1000000), 0);
  unsigned long v0 = fx_ref_violations();

  /* QUEUED calls on one graph: the first runs (1 s: long enough for the others to be seen
   * queued on a loaded machine under the sanitizers), the others queue on its lock. */
  one_call queue[QUEUED], other;
  pthread_t th[QUEUED], other_th, load_th;
  for (int i = 0; i < QUEUED; i++) call_init(&queue[i], busy, 8.0f);
  CHECK(pthread_create(&th[0], NULL, execute_once, &queue[0]) == 0);
  int queued = wait_gauges(1, 0) == 0;
  for (int i = 1; i < QUEUED; i++) CHECK(pthread_create(&th[i], NULL, execute_once, &queue[i]) == 0);
  queued = queued && wait_gauges(1, QUEUED - 1) == 0;

  /* A load on another runtime: it waits for the execute in flight, not for the queue. */
  load_probe lp = {rt2, path, NULL, queue, QUEUED, -1, 0, 0, 0};
  atomic_init(&lp.done, 0);
  CHECK(pthread_create(&load_th, NULL, load_once, &lp) == 0);
  int load_waited = 0;
  for (int ms = 0; ms < WAIT_MS && !load_waited && !atomic_load(&lp.done); ms++) {
    load_waited = loads_at_gate() > 0;
    if (!load_waited) usleep(1000);
  }
  /* An execute of a third graph, started while the load waits: behind the load (writer
   * preference), but not behind the busy graph's queue. */
  call_init(&other, third, 16.0f);
  other.watch = queue;
  other.n_watch = QUEUED;
  CHECK(pthread_create(&other_th, NULL, execute_once, &other) == 0);
  pthread_join(other_th, NULL);
  pthread_join(load_th, NULL);
  for (int i = 0; i < QUEUED; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  /* Closed before the checks: a failed check must not leave handles to the tests after. */
  htpu_context_close(&lp.ctx);
  htpu_graph_close(&busy);
  htpu_graph_close(&third);
  htpu_context_close(&ctx);
  htpu_context_close(&ctx3);
  htpu_runtime_close(&rt);
  htpu_runtime_close(&rt2);

  CHECK_MSG(queued, "the queue of %d executes on one graph never formed", QUEUED);
  CHECK_MSG(load_waited, "the load never waited at the gate (it finished before it was seen)");
  CHECK_MSG(lp.rc == HTPU_OK, "load: %s", htpu_err_name(lp.rc));
  CHECK_MSG(lp.waiting_then > 0 && lp.queue_done < QUEUED,
            "the load returned only after the busy graph's queue drained (%d of %d done, %llu "
            "waiting)", lp.queue_done, QUEUED, (unsigned long long)lp.waiting_then);
  CHECK_MSG(other.rc == HTPU_OK, "third graph: %d %s", other.rc, htpu_err_name(other.rc));
  CHECK_MSG(other.waiting_then > 0 && other.watch_done < QUEUED,
            "the third graph's execute returned only after the busy graph's queue drained (%d "
            "of %d done, %llu waiting)", other.watch_done, QUEUED,
            (unsigned long long)other.waiting_then);
  for (int i = 0; i < QUEUED; i++)
    CHECK_MSG(queue[i].rc == 0, "call %d: %d %s", i, queue[i].rc, htpu_err_name(queue[i].rc));
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

/* A DSP restart while executes queue on two graphs of two contexts: each context recovers
 * (with its graph's lock held, taking the gate exclusively while other graphs' executes hold
 * it shared and others queue on graph locks) and every call gets its result. */
TEST(concurrency_restart_while_executes_queue) {
  fx_reset_env();
  const char *path = fx_build_model_file("restartq.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *c1 = NULL, *c2 = NULL;
  htpu_graph *add = NULL, *mul = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &c1), HTPU_OK);
  CHECK_EQ(htpu_context_open_file(rt, path, &c2), HTPU_OK);
  CHECK_EQ(htpu_graph_open(c1, "add_f32", &add), HTPU_OK);
  CHECK_EQ(htpu_graph_open(c2, "mul_f32", &mul), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  unsigned long v0 = fx_ref_violations();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 2000), 0);
  CHECK_EQ(fx_ref_arm("graphExecute:7:1007:ssr"), 0);
  worker w[THREADS];
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].g = i % 2 ? mul : add;
    w[i].mul = i % 2;
    w[i].iterations = 10;
    w[i].seed = i;
    CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  for (int i = 0; i < THREADS; i++) CHECK_MSG(w[i].failures == 0, "thread %d: %s", i, w[i].error);
  htpu_stats_get(&s1);
  /* One recovery per context: the others that saw 1007 found it recovered. */
  CHECK_EQ(s1.recoveries - s0.recoveries, 2);
  CHECK_EQ(s1.recovery_failures - s0.recovery_failures, 0);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
  htpu_graph_close(&add);
  htpu_graph_close(&mul);
  htpu_context_close(&c1);
  htpu_context_close(&c2);
  htpu_runtime_close(&rt);
}

typedef struct cancel_probe {
  atomic_int cancel; /* what the callback answers */
  atomic_int asked;  /* how often it was asked */
  pthread_t asked_on;
} cancel_probe;

static int probe_cancelled(void *arg) {
  cancel_probe *p = arg;
  p->asked_on = pthread_self();
  atomic_fetch_add(&p->asked, 1);
  return atomic_load(&p->cancel);
}

static void *execute_once_on(void *arg) {
  one_call *c = arg;
  cancel_probe *p = c->opts->cancel_arg;
  execute_once(c);
  /* The probe's thread is checked by its own thread: pthread_equal needs no join. */
  if (atomic_load(&p->asked) && !pthread_equal(p->asked_on, pthread_self())) c->rc = -200;
  return NULL;
}

TEST(concurrency_a_cancelled_call_is_skipped_when_its_turn_comes) {
  fx_reset_env();
  const char *path = fx_build_model_file("cancel.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *add = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  uint64_t x0 = fx_ref_executes();
  CHECK_EQ(fx_ref_set_latency("graphExecute", 300000), 0);

  /* Call 0 runs; calls 1 and 2 queue; call 1's caller goes away while it waits. */
  cancel_probe probe[3];
  htpu_exec_options opts[3];
  one_call calls[3];
  pthread_t th[3];
  for (int i = 0; i < 3; i++) {
    atomic_init(&probe[i].cancel, 0);
    atomic_init(&probe[i].asked, 0);
    memset(&opts[i], 0, sizeof opts[i]);
    opts[i].cancelled = probe_cancelled;
    opts[i].cancel_arg = &probe[i];
    call_init(&calls[i], add, 8.0f);
    calls[i].opts = &opts[i];
  }
  CHECK(pthread_create(&th[0], NULL, execute_once_on, &calls[0]) == 0);
  int queued = wait_gauges(1, 0) == 0;
  for (int i = 1; i < 3; i++) CHECK(pthread_create(&th[i], NULL, execute_once_on, &calls[i]) == 0);
  queued = queued && wait_gauges(1, 2) == 0;
  atomic_store(&probe[1].cancel, 1);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();

  CHECK_MSG(queued, "calls 1 and 2 never queued behind call 0");
  CHECK_MSG(calls[0].rc == 0, "call 0: %d %s", calls[0].rc, htpu_err_name(calls[0].rc));
  CHECK_MSG(calls[1].rc == HTPU_ECANCELLED, "call 1: %d %s", calls[1].rc,
            htpu_err_name(calls[1].rc));
  CHECK_MSG(calls[2].rc == 0, "call 2: %d %s", calls[2].rc, htpu_err_name(calls[2].rc));
  /* Asked once each, on the calling thread, once its turn had come (after the flag was set
   * while it was queued). */
  for (int i = 0; i < 3; i++) CHECK_EQ(atomic_load(&probe[i].asked), 1);
  htpu_stats_get(&s1);
  CHECK_EQ(s1.executes_cancelled - s0.executes_cancelled, 1);
  CHECK_EQ(s1.executes - s0.executes, 2);
  CHECK_EQ(s1.execute_errors - s0.execute_errors, 0);
  CHECK_EQ(fx_ref_executes() - x0, 2);
  CHECK_EQ(s1.executes_waiting, 0);
  CHECK_EQ(s1.executes_in_flight, 0);
  htpu_graph_close(&add);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

/* Issue 18: htpu_graph_open twice on one context and graph gives two handles of one QNN
 * graph. Its executes are serialized whatever handle they come through: threads on both
 * handles never make the backend see the graph executed concurrently with itself. */
TEST(concurrency_handles_of_one_graph_never_execute_it_at_once) {
  fx_reset_env();
  const char *path = fx_build_model_file("handles.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *add = NULL, *add_again = NULL, *mul = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &add_again), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "mul_f32", &mul), HTPU_OK);
  CHECK(add != add_again);
  /* A little latency widens the window in which two executes of the graph would overlap. */
  CHECK_EQ(fx_ref_set_latency("graphExecute", 50), 0);
  unsigned long v0 = fx_ref_violations();
  enum { N = 5 };
  worker w[N];
  pthread_t th[N];
  int iterations = test_under_valgrind() ? 20 : 300;
  for (int i = 0; i < N; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].g = i == 4 ? mul : (i % 2) ? add_again : add;
    w[i].mul = i == 4;
    w[i].iterations = iterations;
    w[i].seed = i;
    CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
  }
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  fx_ref_disarm();
  for (int i = 0; i < N; i++) CHECK_MSG(w[i].failures == 0, "thread %d: %s", i, w[i].error);
  CHECK_MSG(fx_ref_violations() == v0, "%lu violations; backend saw: %s",
            fx_ref_violations() - v0, fx_ref_last_violation());
  /* One graph, however many handles: the handle count is the handles'. */
  htpu_stats s;
  htpu_stats_get(&s);
  CHECK_EQ(s.live_graphs, 3);
  htpu_graph_close(&add);
  htpu_graph_close(&add_again);
  htpu_graph_close(&mul);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

/* The same rule, deterministic: a call through the second handle queues behind a call
 * holding the graph through the first (fx_hold), instead of running beside it. */
TEST(concurrency_a_call_through_one_handle_waits_for_another_handles_call) {
  fx_reset_env();
  const char *path = fx_build_model_file("handles2.bin", TWO_GRAPHS);
  CHECK(path);
  htpu_runtime *rt = fx_open_runtime();
  CHECK(rt);
  htpu_context *ctx = NULL;
  htpu_graph *a = NULL, *b = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &a), HTPU_OK);
  CHECK_EQ(htpu_graph_open(ctx, "add_f32", &b), HTPU_OK);
  fx_hold hold;
  fx_hold_init(&hold);
  htpu_exec_options held;
  memset(&held, 0, sizeof held);
  held.cancelled = fx_hold_cancelled;
  held.cancel_arg = &hold;
  one_call calls[2];
  call_init(&calls[0], a, 8.0f);
  calls[0].opts = &held;
  call_init(&calls[1], b, 8.0f);
  pthread_t th[2];
  CHECK(pthread_create(&th[0], NULL, execute_once, &calls[0]) == 0);
  fx_hold_wait(&hold);
  CHECK(pthread_create(&th[1], NULL, execute_once, &calls[1]) == 0);
  /* Either the call through b shows as queued, or (without one lock per graph) it returns
   * while a still holds the graph. */
  int queued = 0;
  for (int ms = 0; ms < WAIT_MS && !queued && !atomic_load(&calls[1].done); ms++) {
    htpu_stats st;
    htpu_stats_get(&st);
    queued = st.executes_waiting == 1;
    if (!queued) usleep(1000);
  }
  int b_done_while_held = atomic_load(&calls[1].done);
  fx_hold_release(&hold);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  fx_hold_destroy(&hold);
  CHECK_MSG(!b_done_while_held, "the call through the second handle ran while the first "
            "handle's call held the graph");
  CHECK_MSG(queued, "the call through the second handle never queued for the graph");
  for (int i = 0; i < 2; i++)
    CHECK_MSG(calls[i].rc == 0, "call %d: %d %s", i, calls[i].rc, htpu_err_name(calls[i].rc));
  htpu_stats st;
  htpu_stats_get(&st);
  CHECK_EQ(st.executes_waiting, 0);
  htpu_graph_close(&a);
  htpu_graph_close(&b);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK_MSG(fx_ref_violations() == 0, "%s", fx_ref_last_violation());
}
