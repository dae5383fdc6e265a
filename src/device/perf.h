/*
 * perf.h - performance votes through the HTP perf infrastructure.
 *
 * The vote in effect is the highest profile among the runtime's own and those of in-flight
 * calls that asked for one, so a call can vote up around itself and the vote comes back down
 * when the last such call ends, whatever the interleaving. DEFAULT in effect means no vote at
 * all: the power config id is destroyed, which releases it.
 */
#ifndef HTPU_PERF_H
#define HTPU_PERF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "qnn/qnn_htp_abi.h"

typedef struct perf_state {
  pthread_mutex_t lock;
  const qnn_htp_perf_infrastructure_t *infra; /* NULL: no perf infrastructure */
  uint32_t device_arch;                       /* RPC polling only from v69 */
  uint32_t power_id;                          /* 0 = no vote cast */
  htpu_perf_profile base;                     /* the runtime's profile */
  atomic_int base_published;                  /* the same, for readers that must not wait
                                                 behind a vote in progress (runtime info) */
  htpu_perf_profile applied;                  /* what is voted now */
  uint32_t call_votes[HTPU_PERF_PROFILE_COUNT];
} perf_state;

void perf_init(perf_state *p, const qnn_htp_perf_infrastructure_t *infra, uint32_t device_arch);
/* After a DSP restart the DSP-side vote is gone with its process: forget the power config id
 * and cast the vote in effect again. Failures are not fatal (recorded in the error only). */
void perf_recast(perf_state *p);

/* Releases the vote (destroyPowerConfigId); call before the device is freed. */
void perf_release(perf_state *p);

/* Sets the runtime's profile and re-votes. Returns 0 or an HTPU_E* code (error set). */
int perf_set_base(perf_state *p, htpu_perf_profile profile);

/* A call's vote: add before the execute, remove after. Failures of these are not fatal to
 * the call (it still runs, at whatever clock is voted); they return the code for the record. */
int perf_call_enter(perf_state *p, htpu_perf_profile profile);
void perf_call_leave(perf_state *p, htpu_perf_profile profile);

#endif
