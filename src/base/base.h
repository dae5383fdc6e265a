/*
 * base/ - the plumbing every room uses, with no QNN in it: error codes and messages
 * (errors.h), handles as registry slots (object.h), the one growable array (vec.h), the
 * process-wide counters (stats.h), the timer thread behind deadlines (timer.h), the execute
 * gate between executes and context lifecycle (gate.h), the retry loop of start-up and
 * recovery (retry.h), safe report files (report_file.h), dtype and priority names.
 *
 * The door: what the other rooms may use of base/. base/ uses no other room.
 */
#ifndef HTPU_BASE_H
#define HTPU_BASE_H

#include "errors.h"
#include "gate.h"
#include "janitor.h"
#include "object.h"
#include "report_file.h"
#include "retry.h"
#include "stats.h"
#include "timer.h"
#include "vec.h"

#endif
