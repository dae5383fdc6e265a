/* guard.c - the NPU users guard and the NPU lock's waiting line (see guard.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_open.h"
#include "guard.h"
#include "hexagon_tpu.h"

/* One line, not the usage: a wrong root is a fact about a path, and the line names it. */
int cli_check_root(const cli_command *cmd, const char *root) {
  if (!root) return CLI_EXIT_OK;
  const char *expected = "expected a directory standing in for / (holding the board's sys/, "
                         "proc/ and dev/)";
  struct stat st;
  if (!root[0]) {
    fprintf(stderr, "htpu %s: --root '': an empty path; %s\n", cmd->name, expected);
    return CLI_EXIT_USAGE;
  }
  if (stat(root, &st) != 0) {
    fprintf(stderr, "htpu %s: --root %s: %s; %s\n", cmd->name, root, strerror(errno), expected);
    return CLI_EXIT_USAGE;
  }
  if (!S_ISDIR(st.st_mode)) {
    fprintf(stderr, "htpu %s: --root %s is %s; %s\n", cmd->name, root,
            file_kind_name((unsigned)st.st_mode), expected);
    return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}

static void describe_user(const htpu_npu_user *u) {
  fprintf(stderr, "  pid %d (%s): %s", (int)u->pid, u->comm[0] ? u->comm : "name unknown",
          u->device);
  if (u->fds > 1) fprintf(stderr, " (%u descriptors)", (unsigned)u->fds);
  if (u->libraries[0])
    fprintf(stderr, "; maps %s", u->libraries);
  else
    fprintf(stderr, "; no QNN library seen in its maps (a FastRPC client all the same)");
  fputc('\n', stderr);
}

/* What the scan could not see: a user may hide there, and the guard cannot say there is none. */
static void describe_blind_spots(const cli_command *cmd, const htpu_npu_users *u) {
  if (u->note[0])
    fprintf(stderr, "htpu %s: could not look for other NPU users: %s\n", cmd->name, u->note);
  else if (u->unexamined)
    fprintf(stderr,
            "htpu %s: %u process%s could not be examined (another user's, without privileges): "
            "another NPU user among them would not be seen; run as root to see them\n",
            cmd->name, (unsigned)u->unexamined, u->unexamined == 1 ? "" : "es");
}

int cli_guard_npu(const cli_command *cmd, const char *root, int force) {
  htpu_npu_users *u = NULL;
  int rc = htpu_npu_users_read(root, (int32_t)getpid(), &u);
  if (rc) {
    /* as cli_fail words it, without calling back into the command table (no circle) */
    fprintf(stderr, "htpu %s: looking for other NPU users: %s\n", cmd->name, htpu_last_error());
    return CLI_EXIT_FAIL;
  }
  /* FastRPC's daemons (cdsprpcd ...) hold the device for good and are not users: not listed */
  describe_blind_spots(cmd, u);
  if (u->count == 0) {
    htpu_npu_users_free(u);
    return CLI_EXIT_OK;
  }
  fprintf(stderr, "htpu %s: %u other process%s hold%s the NPU's FastRPC device open:\n",
          cmd->name, (unsigned)u->count, u->count == 1 ? "" : "es", u->count == 1 ? "s" : "");
  for (uint32_t i = 0; i < u->count; i++) describe_user(&u->users[i]);
  int several = u->count > 1;
  htpu_npu_users_free(u);
  if (force) {
    fprintf(stderr, "htpu %s: --force: creating a QNN session beside %s anyway\n", cmd->name,
            several ? "them" : "it");
    return CLI_EXIT_OK;
  }
  fprintf(stderr,
          "htpu %s: creating a QNN session while another program holds the NPU has coincided "
          "with hard resets of this board (docs/board.md, \"One NPU user at a time\"): stop "
          "that program first, or pass --force to run anyway\n",
          cmd->name);
  return CLI_EXIT_FAIL;
}

void cli_npu_lock_waiting(const char *holder, void *arg) {
  const cli_command *cmd = arg;
  fprintf(stderr, "htpu %s: waiting for the NPU lock, held by %s (another program is creating "
                  "a QNN session)\n",
          cmd ? cmd->name : "", holder);
  fflush(stderr);
}
