/*
 * reaper.h - closing core handles (reaper.c), and what the on-halt callback did (halt.c).
 *
 * A thread that runs htpu_*_close for handles dropped by garbage collection: those frees may
 * wait on the DSP (and on in-flight executes), which must never happen on a normal scheduler.
 * Started by the first load, stopped (after draining) by the last unload; when it is not
 * running the close happens inline. Below the handles layer: it knows core handles and their
 * kind, never a resource.
 */
#ifndef HTPU_NIF_REAPER_H
#define HTPU_NIF_REAPER_H

#include <stdint.h>

#include "hexagon_tpu.h"
#include "kinds.h"

/* Closes a core handle of kind `kind` (one of the owning kinds) now, on this thread: it may wait
 * on the DSP. NULL is a no-op. */
void nif_core_close(nif_kind kind, void *handle);

int nif_reaper_start(void);
void nif_reaper_stop(void);
/* Queues nif_core_close(kind, handle) for the thread (inline when it is not running or out of
 * memory; dropped once the VM is halting). NULL is a no-op. */
void nif_reaper_push(nif_kind kind, void *handle);
/* The VM is halting (on-halt callback, OTP 26+): stop the thread, bounded, without draining.
 * Returns 1 and fills *info for the call that did it, 0 for any later call (info zeroed). */
typedef struct nif_halt_info {
  int was_running;    /* the reaper thread was running */
  int stopped;        /* it left within the bound (so it is out of QNN) */
  uint64_t abandoned; /* queued closes dropped (the process exit reclaims them) */
} nif_halt_info;
int nif_reaper_halt(nif_halt_info *info);
/* halt.c: with HTPU_HALT_REPORT=<file>, appends what the halt did to <file> (docs/elixir.md). */
void nif_halt_report(const nif_halt_info *info);
/* Waits until the thread has closed every handle queued so far (and any queued meanwhile), at
 * most timeout_ms. 1 when it has, 0 on timeout (or when the thread is halted). */
int nif_reaper_wait_idle(unsigned timeout_ms);
/* Handles queued so far, closed by the thread, and closed inline (no thread / no memory). */
void nif_reaper_counts(uint64_t *queued, uint64_t *closed, uint64_t *inline_closed);

#endif
