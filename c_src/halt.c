/*
 * halt.c - what the on-halt callback (OTP 26+, hexagon_tpu_nif.c) did, written where a test
 * can read it after the VM is gone.
 *
 * HTPU_HALT_REPORT=<file>: the callback appends one line to <file> saying that it ran, what it
 * did to the reaper and what was still open when the VM halted. Unset (the default): nothing is
 * written. A diagnostic for devices as much as for the halt test: on a board, whether the reaper
 * left QNN before the exit (and what was still open) is what to ask after a shutdown that hung
 * or crashed in the QNN libraries' exit-time destructors (docs/elixir.md, Stopping). The process is about to exit, so this is plain POSIX I/O on
 * the halting thread, no allocation, nothing that could wait on the DSP.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "reaper.h"

void nif_halt_report(const nif_halt_info *info) {
  const char *path = getenv("HTPU_HALT_REPORT");
  if (!path || !*path) return;
  htpu_stats s;
  htpu_stats_get(&s);
  char line[256];
  int n = snprintf(line, sizeof line,
                   "hexagon_tpu on_halt: reaper_running=%d reaper_stopped=%d abandoned=%llu "
                   "live_runtimes=%llu live_contexts=%llu live_graphs=%llu\n",
                   info->was_running, info->stopped, (unsigned long long)info->abandoned,
                   (unsigned long long)s.live_runtimes, (unsigned long long)s.live_contexts,
                   (unsigned long long)s.live_graphs);
  if (n <= 0 || (size_t)n >= sizeof line) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return; /* a report nobody can read is no reason to disturb the halt */
  ssize_t w = write(fd, line, (size_t)n);
  (void)w;
  close(fd);
}
