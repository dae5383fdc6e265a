/*
 * guard.h - one NPU user at a time, from the command line (docs/board.md, "One NPU user at a
 * time"): before `htpu run`, `bench`, `profile` and `detect` create a QNN session they look for
 * other processes holding the CDSP's FastRPC device (FastRPC's daemons apart) and refuse to
 * start beside one unless --force; while the library waits for another program's session
 * creation (the NPU lock) they say so.
 */
#ifndef HTPU_GUARD_H
#define HTPU_GUARD_H

#include "cli.h"

/* --root: NULL (this machine), or a directory standing in for / (checked). Returns CLI_EXIT_OK,
 * or CLI_EXIT_USAGE after one line on stderr naming the path and what was expected. */
int cli_check_root(const cli_command *cmd, const char *root);

/* Looks for processes (other than this one) holding /dev/fastrpc-cdsp* open under `root`,
 * FastRPC's daemons (cdsprpcd ...) apart: they are no users (htpu_npu_users_read). None:
 * CLI_EXIT_OK. Some: prints each (pid, name, the QNN libraries it has mapped) and why that
 * matters on stderr, and returns CLI_EXIT_FAIL, or with `force` says it goes on anyway and
 * returns CLI_EXIT_OK. Either way it says on stderr when processes could not be examined (or
 * /proc not read): a user may hide there. */
int cli_guard_npu(const cli_command *cmd, const char *root, int force);

/* htpu_runtime_options.npu_lock_wait for the session commands: one line on stderr naming the
 * holder and the wait's bound; `arg` is the command (a const cli_command *). */
void cli_npu_lock_waiting(const char *holder, void *arg);

#endif /* HTPU_GUARD_H */
