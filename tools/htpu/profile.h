/*
 * profile.h - the --perf-profile option of `htpu bench`.
 *
 * The names are QNN HTP's performance modes as QAIRT tools spell them. The library has no
 * public call to set one yet (it comes with its own issue): until then applying a profile
 * prints a note and the run uses the backend's default. The call is isolated in profile.c's
 * set_profile(), so wiring the real API is one line there.
 */
#ifndef HTPU_PROFILE_H
#define HTPU_PROFILE_H

#include "cli.h"
#include "hexagon_tpu.h"

/* Index of `name` in the profile table, or -1. */
int cli_perf_profile_find(const char *name);

/* "burst, sustained_high_performance, ..." for messages. */
const char *cli_perf_profile_list(void);

/* Applies profile `name` (already validated) to the runtime. Sets *applied to 1 when it took
 * effect, 0 when this build or this backend cannot set profiles (after a note on stderr).
 * Returns a CLI_EXIT_* code: a failure of the real call is CLI_EXIT_FAIL. */
int cli_perf_profile_apply(const cli_command *cmd, htpu_runtime *rt, const char *name,
                           int *applied);

#endif /* HTPU_PROFILE_H */
