/* submitted.c - helpers for tests of submitted calls (submitted.h). */
#include "submitted.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pthread_mutex_t done_log_m = PTHREAD_MUTEX_INITIALIZER;
int done_ids[64], done_rcs[64], done_n;

void done_log_reset(void) {
  pthread_mutex_lock(&done_log_m);
  done_n = 0;
  pthread_mutex_unlock(&done_log_m);
}

void done_log_add(htpu_call *call, int rc, void *arg) {
  (void)call;
  sub *s = arg;
  pthread_mutex_lock(&done_log_m);
  if (done_n < 64) {
    done_ids[done_n] = s->id;
    done_rcs[done_n] = rc;
    done_n++;
  }
  pthread_mutex_unlock(&done_log_m);
}

int submit_opts(htpu_graph *g, sub *s, int id, const htpu_exec_options *o,
                htpu_call_done_fn done) {
  memset(s, 0, sizeof *s);
  s->id = id;
  for (int k = 0; k < 4; k++) {
    s->a[k] = (float)(id * 10 + k);
    s->b[k] = (float)(k + 1);
  }
  s->in[0] = (htpu_io){s->a, sizeof s->a, HTPU_F32};
  s->in[1] = (htpu_io){s->b, sizeof s->b, HTPU_F32};
  s->out = (htpu_io){s->y, sizeof s->y, HTPU_F32};
  return htpu_graph_submit(g, s->in, 2, &s->out, 1, o, done, s, &s->call);
}

int submit_with(htpu_graph *g, sub *s, int id, int priority, uint64_t timeout_ns,
                htpu_call_done_fn done) {
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.priority = priority;
  o.timeout_ns = timeout_ns;
  return submit_opts(g, s, id, &o, done);
}

int submit(htpu_graph *g, sub *s, int id, int priority, uint64_t timeout_ns) {
  return submit_with(g, s, id, priority, timeout_ns, done_log_add);
}

int wait_async_pending(uint32_t n) {
  for (int ms = 0; ms < 10000; ms++) {
    if (fx_ref_async_pending() >= n) return 1;
    usleep(1000);
  }
  return 0;
}

int sub_ok(const sub *s) {
  for (int k = 0; k < 4; k++)
    if (s->y[k] != s->a[k] + s->b[k]) return 0;
  return 1;
}

htpu_stats submitted_base;

uint32_t submitted_base_signals;

void submitted_baseline(void) {
  htpu_stats_get(&submitted_base);
  submitted_base_signals = fx_ref_live_signals();
}
