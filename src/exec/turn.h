/*
 * turn.h - one QNN graph's waiting list: whose turn it is, deadlines and aborts.
 *
 * Every execute of a graph (a synchronous one on its caller's thread, a submitted one on the
 * graph's worker, a no-wait one that only tries) is an exec_ctl. The graph is held by one
 * ctl at a time (`running`); the others wait in arrival order and are picked by effective
 * priority, then arrival: each pass-over by a later arrival counts, and every
 * HTPU_PRIORITY_AGING of them lifts a waiter one level. All of it is under the graph's
 * q_lock, which also guards "which call is running", so an abort (deadline, cancel, close,
 * short-call bound) triggered under it can never reach the next call.
 */
#ifndef HTPU_TURN_H
#define HTPU_TURN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/base.h"

struct graph_state;
struct graph_obj;
struct htpu_call;

typedef enum ctl_state { CTL_NEW, CTL_WAITING, CTL_RUNNING, CTL_DONE } ctl_state;
/* Why a call is stopped. */
/* REASON_CLOSE: the graph handle, context or runtime of the call was closed (HTPU_ECANCELLED
 * like a cancel, with a message that says so). */
typedef enum ctl_reason {
  REASON_NONE,
  REASON_TIMEOUT,
  REASON_CANCEL,
  REASON_STALL,
  REASON_CLOSE
} ctl_reason;

/* What the waiting list needs of a submitted call, given by its maker (call.c): the list knows
 * no call. copy_mode: the call works on copies (it can end on the host while its execute runs
 * on); end_waiting: it was removed while waiting (done runs here, the core lets go); end_early:
 * it ends now on the host (copy mode) while its execute runs on; on_worker: the calling thread
 * is a worker of s (it takes a granted call without a wake-up). */
typedef struct ctl_call_ops {
  int (*copy_mode)(const struct htpu_call *call);
  void (*end_waiting)(struct htpu_call *call, int rc);
  void (*end_early)(struct htpu_call *call, int rc);
  int (*on_worker)(const struct graph_state *s);
} ctl_call_ops;

typedef struct exec_ctl {
  struct graph_state *s;
  struct graph_obj *g;     /* the handle it came through */
  struct htpu_call *call;  /* a submitted call; NULL: a synchronous one */
  const ctl_call_ops *ops; /* the submitted call's (NULL: a synchronous one) */
  int priority;            /* base, HTPU_PRIORITY_LOW..HIGH */
  uint64_t seq, passes;    /* arrival; times passed over by a later arrival */
  uint64_t fin_seq;        /* a submitted call's place in its graph's turns: dones in that order */
  uint64_t timeout_ns, deadline_ns; /* 0: no deadline */
  int stall_bound;         /* the deadline is a no-wait call's short-call bound */
  ctl_state state;         /* under s->q_lock */
  atomic_int reason;       /* ctl_reason; set once */
  int removed_rc;          /* left the list without running: HTPU_ETIMEDOUT / HTPU_ECANCELLED */
  int enqueued;            /* in QNN's queue (graphExecuteAsync), not notified; under q_lock */
  int requeued;            /* waits again after a DSP restart: accepted before, never "full" */
  int gate_poked;          /* its stop woke the execute gate's waiters (once); under q_lock */
  /* The abort signal of a recovery's createFromBinary while the call runs one (recover.c), so
   * a stop reaches the recreate too; under q_lock. */
  qnn_signal_handle_t load_signal;
  atomic_int reached_qnn;  /* it got to graphExecute (or the async hand-over) at least once */
  pthread_cond_t cv;       /* a synchronous waiter sleeps here */
  htimer timer;
  struct exec_ctl *prev, *next; /* the waiting list */
} exec_ctl;

/* A new ctl of a call through g with its options (priority resolved against the context's;
 * the deadline from start_ns). */
void ctl_init(exec_ctl *x, struct graph_obj *g, int priority, uint64_t timeout_ns,
              uint64_t start_ns);
void ctl_destroy(exec_ctl *x);
/* Arms the ctl's deadline (when it has one and a stop can do something). */
void ctl_arm(exec_ctl *x);
/* Stops a ctl from another thread: reason, then the timer thread acts as at a deadline. */
void ctl_stop(exec_ctl *x, ctl_reason why);
/* While the call runs a recovery's recreate: the signal a stop triggers (NULL: none any more).
 * Returns 0 when the call was stopped already (the recreate is not to start). */
int ctl_set_load_signal(exec_ctl *x, qnn_signal_handle_t signal);

#define TURN_TAKEN 0
#define TURN_BUSY 1 /* try only: the graph is held or awaited */
/* Waits for the graph's turn (try: only takes a free graph). TURN_TAKEN, TURN_BUSY, or an
 * error (set): HTPU_EBUSY (queue full), HTPU_ETIMEDOUT / HTPU_ECANCELLED (left the list). */
int turn_acquire(exec_ctl *x, int try_only);
/* Gives the graph to the next waiter (or frees it). */
void turn_release(exec_ctl *x);
/* A submitted call that let go of its turn waits for another (turn_acquire's answers; never
 * refused as full: it was accepted once). */
int turn_requeue(exec_ctl *x);
/* The reason the running ctl was stopped (REASON_NONE: not). */
static inline ctl_reason ctl_why(exec_ctl *x) { return (ctl_reason)atomic_load(&x->reason); }

#endif
