/*
 * timer.h - the process-wide timer thread behind deadlines, cancels and short-call bounds.
 *
 * Entries are intrusive (embedded in the call they time), kept in one list sorted by due
 * time. The thread starts at the first arm, blocks every signal, and is joined when the last
 * runtime closes (or at library unload). A callback runs on the timer thread without the
 * timer's lock; timer_disarm waits for a callback of its entry in progress, so the entry's
 * owner may free it right after.
 */
#ifndef HTPU_TIMER_H
#define HTPU_TIMER_H

#include <stdint.h>

typedef struct htimer htimer;
struct htimer {
  uint64_t when; /* CLOCK_MONOTONIC ns */
  void (*fn)(htimer *self);
  htimer *prev, *next;
  int armed;
};

/* (Re)arms t to run fn at `when` (0: as soon as possible). */
void timer_arm(htimer *t, uint64_t when, void (*fn)(htimer *));
/* Takes t off the list; waits when its callback runs now on another thread. */
void timer_disarm(htimer *t);
/* Runtime lifetimes: the thread is joined when the count falls to 0. */
void timer_retain(void);
void timer_release(void);
/* 1 on the timer thread (callbacks). */
int timer_on_thread(void);

#endif
