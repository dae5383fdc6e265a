/*
 * exec/ - one call, from its plan to its answer: the graph's waiting list (turn.h), the
 * conversion blocks (scratch.h), the window of call durations (timing.h), k row groups in one
 * execute (batch_multiple.h), the synchronous pipeline (plan.c, attempts.c, execute.c) and the
 * staged one of submitted calls (staged.c, call.c, call_life.c, worker.c), and the recovery
 * after a DSP restart that an execute or a graph open meets (recover.c).
 *
 * The door: what the top (runtime, context, graph) may use of exec/. exec/ uses base/, qnn/,
 * device/, model/, quant/ and profile/, and the objects' layout (internal.h), never the top's
 * functions: what it needs of the runtime (freeing FastRPC memory everywhere) it is handed.
 */
#ifndef HTPU_EXEC_H
#define HTPU_EXEC_H

#include <stdatomic.h>
#include <stdint.h>

#include "batch_multiple.h"
#include "scratch.h"
#include "timing.h"
#include "turn.h"

struct context_obj;
struct graph_obj;
struct graph_state;

/* A close: stops every call of s made through g (NULL: all), submitted or synchronous,
 * waiting or running (HTPU_ECANCELLED: waiting ones leave the list, a running one is aborted
 * through the graph's signal where it has one) and, when wait, waits until g's submitted calls
 * have ended. */
void calls_cancel(struct graph_state *s, struct graph_obj *g, int wait);
/* The graph's workers: stops and joins them (its state's free). */
void calls_stop_worker(struct graph_state *s);

/* Recreates a context after a DSP restart seen at `seen_generation` (nothing to do if another
 * call recovered it since): deregisters and frees the stale QNN context, creates it again from
 * the retained binary and re-retrieves its graphs. A transient failure (the DSP still coming
 * back) is retried up to rt->recovery_retries times with the start-up backoff. Takes the
 * execute gate exclusively: the caller holds no gate (a graph's execute lock is fine: nothing
 * waits for one while holding the gate). The call it runs for (ctl; NULL: a graph open,
 * unbounded) bounds it: when the call is stopped (its deadline, cancel or close) or
 * deadline_ns passes (0: none) while it waits for the gate, recreates the context (an abort
 * signal reaches the recreate where the backend takes load signals) or backs off between
 * tries, it returns RECOVER_STOPPED (no error set) and leaves the context stale for the next
 * call to recover. Returns 0, RECOVER_STOPPED or
 * HTPU_EDEVICE_RESET (error set; c->dead = 1); or, from the NPU lock it takes first (another
 * process's creation: board/board.h), HTPU_ETIMEDOUT naming the holder or HTPU_EIO (error
 * set; the context stays stale). */
#define RECOVER_STOPPED 4
int context_recover(struct context_obj *c, uint64_t seen_generation, struct exec_ctl *ctl,
                    uint64_t deadline_ns);

#endif
