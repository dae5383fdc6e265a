/* submitted.h - helpers for tests of submitted calls (htpu_graph_submit): add_f32 calls with
 * their own, distinct inputs, a log of the order their done callbacks ran in, and the live
 * counters to come back to. */
#ifndef HTPU_TEST_SUBMITTED_H
#define HTPU_TEST_SUBMITTED_H

#include <pthread.h>
#include <stdint.h>

#include "fixture.h"
#include "hexagon_tpu.h"

#define MS 1000000ull

uint64_t now_ns(void);

/* One submitted add_f32 call with its own buffers: a[k] = id * 10 + k, b[k] = k + 1, so no
 * two calls (and neither input of one call) are interchangeable. */
typedef struct sub {
  float a[4], b[4], y[4];
  htpu_io in[2], out;
  htpu_call *call;
  int id;
} sub;

/* The order done ran in (done_log_add is a done callback taking the sub), under done_log_m. */
extern pthread_mutex_t done_log_m;
extern int done_ids[64], done_rcs[64], done_n;
void done_log_reset(void);
void done_log_add(htpu_call *call, int rc, void *arg);

/* With the call's options as given (NULL: none). */
int submit_opts(htpu_graph *g, sub *s, int id, const htpu_exec_options *o,
                htpu_call_done_fn done);
int submit_with(htpu_graph *g, sub *s, int id, int priority, uint64_t timeout_ns,
                htpu_call_done_fn done);
/* With done_log_add. */
int submit(htpu_graph *g, sub *s, int id, int priority, uint64_t timeout_ns);
/* 1 when y = a + b exactly. */
int sub_ok(const sub *s);

/* Until the reference backend holds n graphExecuteAsync calls not yet notified; bounded
 * (10 s): 1 when it does, 0 when it never did. */
int wait_async_pending(uint32_t n);

/* The live counters and the reference backend's live signals now, to come back to
 * (CHECK_BASELINE): a test answers for what it opened, not for what an earlier one left. */
extern htpu_stats submitted_base;
extern uint32_t submitted_base_signals;
void submitted_baseline(void);
#define CHECK_BASELINE()                                           \
  do {                                                             \
    htpu_stats now_;                                               \
    htpu_stats_get(&now_);                                         \
    CHECK_EQ(now_.live_calls, submitted_base.live_calls);          \
    CHECK_EQ(now_.live_graphs, submitted_base.live_graphs);        \
    CHECK_EQ(now_.live_contexts, submitted_base.live_contexts);    \
    CHECK_EQ(now_.live_runtimes, submitted_base.live_runtimes);    \
    CHECK_EQ(fx_ref_live_signals(), submitted_base_signals);       \
  } while (0)

#endif
