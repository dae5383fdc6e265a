/*
 * exec/ - one call, from its plan to its answer: the graph's waiting list (turn.h), the
 * conversion blocks (scratch.h), the window of call durations (timing.h), k row groups in one
 * execute (batch_multiple.h), the synchronous pipeline and the staged one of submitted calls,
 * their worker threads, and the recovery after a DSP restart that an execute meets.
 *
 * The door: what the top (runtime, context, graph) may use of exec/. exec/ uses base/, qnn/,
 * device/, model/, quant/ and profile/, and the objects' layout (internal.h), never the top's
 * functions.
 */
#ifndef HTPU_EXEC_H
#define HTPU_EXEC_H

#include "batch_multiple.h"
#include "scratch.h"
#include "timing.h"
#include "turn.h"

#endif
