/*
 * janitor.h - work that may wait a long time, run off the caller's thread: a context or
 * buffer free that would wait at the execute gate behind a hung execute is handed here, so a
 * close returns at once (a BEAM scheduler is never held for a hang) and the free happens when
 * the gate lets it.
 *
 * One thread, started by the first deferred task and gone once it has had nothing to do for a
 * second; tasks run one after another in the order they came. Joined at library unload.
 */
#ifndef HTPU_JANITOR_H
#define HTPU_JANITOR_H

typedef void (*janitor_fn)(void *arg);

/* Runs fn(arg) later on the janitor thread. 0, or -1 when it could not (out of memory, no
 * thread): the caller then runs it itself. */
int janitor_defer(janitor_fn fn, void *arg);

/* Runs fn(arg) holding the execute gate exclusively (fn leaves it, gate.h): here when the gate
 * comes within GATE_HOLD_NS, else (an execute in flight is stuck) on the janitor thread, which
 * waits for the gate as long as it takes. For frees, which have no deadline but must not hold
 * their caller's thread for a hang. */
void janitor_run_gated(janitor_fn fn, void *arg);

/* Tasks handed over and not finished yet (for tests and counters). */
unsigned janitor_pending(void);

#endif
