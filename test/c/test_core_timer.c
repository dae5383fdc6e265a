/* The process-wide timer thread (src/timer.c) on its own: entries armed and disarmed faster
 * than the thread can run must not wake it each time. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "hexagon_tpu.h"
#include "base/stats.h"
#include "test.h"
#include "base/timer.h"

static void never(htimer *t) { (void)t; }

/* What a run of short calls does to the timer: each arms a far deadline and disarms it before
 * the thread could look. Only the first arm may wake the thread; before, with the list found
 * empty the thread slept "for any entry", so every later arm woke it again (200 arms: about
 * 200 wake-ups, as ThreadSanitizer's slow threads showed in a full run). */
TEST(timer_arms_in_a_row_wake_the_thread_once) {
  timer_retain();
  htimer e;
  memset(&e, 0, sizeof e);
  /* calls before the run, one with a far deadline (an hour) and one with the run's: the
   * thread finds each entry gone and goes back to sleep */
  timer_arm(&e, htpu_now_ns() + 3600ull * 1000000000u, never);
  timer_disarm(&e);
  usleep(20000);
  timer_arm(&e, htpu_now_ns() + 60ull * 1000000000u, never);
  timer_disarm(&e);
  usleep(20000);
  htpu_stats s0, s1;
  htpu_stats_get(&s0);
  for (int i = 0; i < 200; i++) {
    timer_arm(&e, htpu_now_ns() + 60ull * 1000000000u, never);
    timer_disarm(&e);
  }
  htpu_stats_get(&s1);
  timer_release();
  CHECK_MSG(s1.timer_wakeups - s0.timer_wakeups <= 2, "%llu timer wake-ups for 200 arms",
            (unsigned long long)(s1.timer_wakeups - s0.timer_wakeups));
}

static atomic_int fired;
static void mark(htimer *t) {
  (void)t;
  atomic_store(&fired, 1);
}

/* After a far deadline was armed and disarmed, a near one still fires on time: the thread,
 * sleeping towards the far target, is woken for it. */
TEST(timer_a_near_deadline_after_a_far_one_fires) {
  timer_retain();
  htimer far, near;
  memset(&far, 0, sizeof far);
  memset(&near, 0, sizeof near);
  timer_arm(&far, htpu_now_ns() + 3600ull * 1000000000u, never);
  timer_disarm(&far);
  atomic_store(&fired, 0);
  timer_arm(&near, htpu_now_ns() + 20ull * 1000000u, mark);
  uint64_t until = htpu_now_ns() + 5ull * 1000000000u;
  while (!atomic_load(&fired) && htpu_now_ns() < until) {
  }
  int ok = atomic_load(&fired);
  timer_disarm(&near);
  timer_release();
  CHECK_MSG(ok, "a 20 ms deadline did not fire within 5 s after a 1 h one was disarmed");
}
