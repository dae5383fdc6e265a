/* profile.c - --perf-profile: names from the library, applying one to the runtime. */
#include <stdio.h>
#include <string.h>

#include "profile.h"
#include "session.h"

int cli_perf_profile_find(const char *name) {
  htpu_perf_profile p;
  return htpu_perf_profile_from_name(name, &p) == 0 ? (int)p : -1;
}

const char *cli_perf_profile_list(void) {
  return "burst, sustained_high_performance, high_performance, balanced, low_balanced, "
         "high_power_saver, power_saver, low_power_saver, extreme_power_saver, default";
}

int cli_perf_profile_apply(const cli_command *cmd, htpu_runtime *rt, const char *name,
                           int *applied) {
  *applied = 0;
  int index = cli_perf_profile_find(name);
  if (index < 0) return cli_usage_error(cmd, "unknown --perf-profile '%s'", name);
  int rc = htpu_runtime_set_perf_profile(rt, (htpu_perf_profile)index);
  /* Said, not faked: the numbers that follow are the backend's default mode. */
  if (rc == HTPU_EUNSUPPORTED) {
    fprintf(stderr,
            "htpu %s: note: this backend does not support performance profiles; running with "
            "its default\n",
            cmd->name);
    return CLI_EXIT_OK;
  }
  if (rc != 0) return cli_fail_htpu(cmd, rc, "setting the performance profile");
  *applied = 1;
  return CLI_EXIT_OK;
}
