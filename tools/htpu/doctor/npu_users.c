/* npu_users.c - the `npu users` step (HTP backend): every other process holding the CDSP's
 * FastRPC device open (/dev/fastrpc-cdsp*, found through /proc/PID/fd under the root), its
 * name and the QNN libraries it has mapped, FastRPC's daemons apart (cdsprpcd holds the device
 * for good: shown, not a user), and who holds the NPU lock now. Another user makes the later
 * steps skip creating a session of their own unless --force (docs/board.md, "One NPU user at a
 * time"). */
#include <stdio.h>
#include <unistd.h>

#include "doctor.h"

static void list_users(step *s, const htpu_npu_users *u) {
  for (uint32_t i = 0; i < u->count; i++) {
    const htpu_npu_user *x = &u->users[i];
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)x->pid);
    report_row *row = step_row(s, "pid %s (%s): %s; %s", pid, x->comm[0] ? x->comm : "?",
                               x->device, x->libraries[0] ? x->libraries : "no QNN library mapped");
    if (!row) continue;
    row_str(row, "pid", pid);
    row_str(row, "comm", x->comm);
    row_str(row, "device", x->device);
    row_str(row, "libraries", x->libraries);
  }
  step_rows(s, "processes", "processes");
}

/* "cdsprpcd (pid 612, /dev/fastrpc-cdsp-secure)", comma-separated; "" when none. */
static void list_daemons(step *s, const htpu_npu_users *u) {
  char list[1024] = "";
  size_t pos = 0;
  for (uint32_t i = 0; i < u->num_daemons && pos < sizeof list; i++) {
    const htpu_npu_user *x = &u->daemons[i];
    int w = snprintf(list + pos, sizeof list - pos, "%s%s (pid %d, %s)", i ? ", " : "", x->comm,
                     (int)x->pid, x->device);
    if (w < 0) break;
    pos += (size_t)w;
  }
  step_str_shown(s, "FastRPC daemons", "daemons", list, list[0] ? list : "(none)");
}

/* The lock is this machine's: under --root there is nothing of the board's to say about it. */
static void show_lock(doctor *d, step *s) {
  if (d->root[0]) {
    step_str_shown(s, "NPU lock", "npu_lock", NULL, "(not read under --root)");
    return;
  }
  char who[600];
  int held = htpu_npu_lock_holder(NULL, who, sizeof who);
  step_str(s, "NPU lock", "npu_lock",
           held > 0 ? who : held == 0 ? "free" : htpu_last_error());
}

static void judge(doctor *d, step *s) {
  htpu_npu_users *u = NULL;
  if (htpu_npu_users_read(d->root, (int32_t)getpid(), &u) != 0) {
    step_set(s, ST_WARN, "cannot look for other NPU users: %s", htpu_last_error());
    return;
  }
  list_users(s, u);
  list_daemons(s, u);
  char unexamined[16];
  snprintf(unexamined, sizeof unexamined, "%u", (unsigned)u->unexamined);
  step_uint(s, "processes not examined", "unexamined", u->unexamined, unexamined);
  show_lock(d, s);
  d->npu_other_users = u->count;
  if (u->note[0]) {
    step_set(s, ST_WARN, "no process could be examined: %s", u->note);
  } else if (u->count) {
    const htpu_npu_user *x = &u->users[0];
    step_set(s, ST_WARN, "%u other process%s hold%s the NPU: pid %d (%s)%s", (unsigned)u->count,
             u->count == 1 ? "" : "es", u->count == 1 ? "s" : "", (int)x->pid,
             x->comm[0] ? x->comm : "?", u->count > 1 ? " and more" : "");
    step_hint(s, "creating a QNN session while another program holds the NPU has coincided with "
                 "hard resets of this board: stop it before running or benchmarking another "
                 "program (htpu run/bench/profile/detect refuse unless --force). The later steps "
                 "create no session of their own%s",
              d->force ? " (--force given: they do)" : " unless --force");
  } else {
    char daemons[96] = "", unseen[96] = "";
    if (u->num_daemons)
      snprintf(daemons, sizeof daemons, " but FastRPC's daemon%s (%s%s), as expected",
               u->num_daemons == 1 ? "" : "s", u->daemons[0].comm,
               u->num_daemons > 1 ? ", ..." : "");
    if (u->unexamined)
      snprintf(unseen, sizeof unseen, " (%u process%s could not be examined: run as root to "
               "see them)", (unsigned)u->unexamined, u->unexamined == 1 ? "" : "es");
    step_set(s, ST_OK, "no other process holds /dev/fastrpc-cdsp%s%s", daemons, unseen);
  }
  htpu_npu_users_free(u);
}

void check_npu_users(doctor *d) { doctor_board_step(d, "npu_users", "npu users", judge); }
