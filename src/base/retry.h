/*
 * retry.h - which QNN failures are worth retrying, the backoff between tries, and the loop.
 *
 * Shared by the runtime's start-up (backend/device creation) and a context's recovery after a
 * DSP restart: both meet the DSP while it is (re)starting, and both must not retry a
 * configuration error.
 */
#ifndef HTPU_RETRY_H
#define HTPU_RETRY_H

#include <stdatomic.h>
#include <stdint.h>

/* 1 for QNN codes a DSP that is still coming up (first FastRPC session after boot, or a
 * subsystem restart in progress) can produce; 0 for everything else. */
int retry_is_transient(uint32_t qnn_code);

/* The delay after `delay_ms`: doubled, at most RETRY_MAX_DELAY_MS. */
#define RETRY_MAX_DELAY_MS 10000u
uint64_t retry_next_delay(uint64_t delay_ms);

/* Sleeps ms milliseconds (resumed after signals). */
void retry_sleep_ms(uint64_t ms);

/* How often and how patiently to retry. */
typedef struct retry_policy {
  uint32_t retries;                  /* tries after the first, at most */
  uint64_t first_delay_ms;           /* the backoff before the first retry, doubled after each */
  atomic_uint_fast64_t *retry_count; /* counted before each backoff (NULL: not counted) */
  /* The backoff's sleep (NULL: retry_sleep_ms): 0 when it was cut short, and the loop stops
   * there with RETRY_STOPPED (a recovery whose call reached its deadline or was cancelled). */
  int (*sleep)(void *sleep_arg, uint64_t ms);
  void *sleep_arg;
} retry_policy;

#define RETRY_STOPPED 1

/* One try: 0, or a negative HTPU_E* with the error set and *qnn_code the QNN code behind it
 * (0: not a QNN failure, never retried). `attempt` counts from 0. */
typedef int (*retry_try_fn)(void *arg, uint32_t attempt, uint32_t *qnn_code);

/* Calls try_once until it succeeds, a failure is not transient (retry_is_transient), or the
 * policy's retries are spent, sleeping the backoff between tries. A failure after more than one
 * try gets " (after N attempts)" appended to the error. Returns try_once's last result, or
 * RETRY_STOPPED when the policy's sleep was cut short. */
int retry_run(const retry_policy *p, retry_try_fn try_once, void *arg);

#endif
