/*
 * retry.h - which QNN failures are worth retrying, and the backoff between tries.
 *
 * Shared by the runtime's start-up (backend/device creation) and a context's recovery after a
 * DSP restart: both meet the DSP while it is (re)starting, and both must not retry a
 * configuration error.
 */
#ifndef HTPU_RETRY_H
#define HTPU_RETRY_H

#include <stdint.h>

/* 1 for QNN codes a DSP that is still coming up (first FastRPC session after boot, or a
 * subsystem restart in progress) can produce; 0 for everything else. */
int retry_is_transient(uint32_t qnn_code);

/* The delay after `delay_ms`: doubled, at most RETRY_MAX_DELAY_MS. */
#define RETRY_MAX_DELAY_MS 10000u
uint64_t retry_next_delay(uint64_t delay_ms);

/* Sleeps ms milliseconds (resumed after signals). */
void retry_sleep_ms(uint64_t ms);

#endif
