/* retry.c - transient QNN codes, the backoff between retries, and the retry loop. */
#include "retry.h"

#include <time.h>

#include "errors.h"
#include "qnn/qnn_abi.h"

/* A configuration error (e.g. 14001, a skel mismatch) is not among these: retrying it would
 * poison the DSP for the whole process. */
int retry_is_transient(uint32_t code) {
  switch (code) {
    case QNN_COMMON_ERROR_SYSTEM:
    case QNN_COMMON_ERROR_RESOURCE_UNAVAILABLE:
    case QNN_COMMON_ERROR_SYSTEM_COMMUNICATION:
    case QNN_BACKEND_ERROR_CANNOT_INITIALIZE:
    case QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE:
      return 1;
    default:
      return 0;
  }
}

uint64_t retry_next_delay(uint64_t delay_ms) {
  return delay_ms * 2 > RETRY_MAX_DELAY_MS ? RETRY_MAX_DELAY_MS : delay_ms * 2;
}

void retry_sleep_ms(uint64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int retry_run(const retry_policy *p, retry_try_fn try_once, void *arg) {
  uint64_t delay = p->first_delay_ms;
  for (uint32_t attempt = 0;; attempt++) {
    uint32_t code = 0;
    int rc = try_once(arg, attempt, &code);
    if (rc == 0) return 0;
    if (!retry_is_transient(code) || attempt >= p->retries) {
      if (attempt > 0) htpu_append_error(" (after %u attempts)", attempt + 1);
      return rc;
    }
    if (p->retry_count) atomic_fetch_add_explicit(p->retry_count, 1, memory_order_relaxed);
    if (!p->sleep)
      retry_sleep_ms(delay);
    else if (!p->sleep(p->sleep_arg, delay))
      return RETRY_STOPPED;
    delay = retry_next_delay(delay);
  }
}
