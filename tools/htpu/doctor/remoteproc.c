/* remoteproc.c - the `remoteproc` step: the CDSP's remoteproc is running (HTP backend only).
 *
 * The NPU not starting is what QCS6490 users report first: the CDSP remoteproc is missing (its
 * module or device-tree node), left offline (its firmware did not load) or crashed. Every
 * later board failure follows from it, so this step comes before the FastRPC one. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

#define REMOTEPROC_CLASS "/sys/class/remoteproc"

/* At most this many remoteprocs are read (a board has a handful; a tree given with --root may
 * hold anything), and this many listed in the report. */
#define MAX_RPROCS 1024
#define LISTED_RPROCS 32

typedef struct rproc {
  char dir[256]; /* "remoteproc2" */
  char name[128], state[64], recovery[64];
  char state_why[512]; /* why `state` could not be read, when it exists but is no regular file */
} rproc;

static int by_dir(const void *a, const void *b) {
  return strcmp(((const rproc *)a)->dir, ((const rproc *)b)->dir);
}

/* One attribute of a remoteproc; "" when absent or unreadable (why then in `why`, if given,
 * when the file is there but not readable as a regular file: never a FIFO's endless wait). */
static void read_attr(const char *root, const char *dir, const char *attr, char *out,
                      size_t len, char *why, size_t why_len) {
  char p[800], cause[4700];
  snprintf(p, sizeof(p), REMOTEPROC_CLASS "/%s/%s", dir, attr);
  if (doctor_read_line(root, p, out, len, cause, sizeof(cause)) == -2 && why)
    report_copy(why, why_len, cause);
}

/* Every remoteproc of the class (at most max), sorted by directory name (readdir's order is
 * arbitrary), each read only after the sort. Returns the count, or -1 when the class directory
 * cannot be opened; *more counts the entries past max, never read. */
static int list_rprocs(const char *root, rproc *out, int max, int *more) {
  *more = 0;
  DIR *dir = doctor_opendir(root, REMOTEPROC_CLASS);
  if (!dir) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (e->d_name[0] == '.') continue;
    if (n == max) {
      (*more)++;
      continue;
    }
    report_copy(out[n++].dir, sizeof(out[0].dir), e->d_name);
  }
  closedir(dir);
  qsort(out, (size_t)n, sizeof(out[0]), by_dir);
  for (int i = 0; i < n; i++) {
    rproc *r = &out[i];
    read_attr(root, r->dir, "name", r->name, sizeof(r->name), NULL, 0);
    read_attr(root, r->dir, "state", r->state, sizeof(r->state), r->state_why,
              sizeof(r->state_why));
    read_attr(root, r->dir, "recovery", r->recovery, sizeof(r->recovery), NULL, 0);
  }
  return n;
}

/* The kernel names the CDSP's remoteproc "cdsp" (qcom_q6v5_pas); older trees use the node
 * name, e.g. "remoteproc-cdsp". */
static int is_cdsp(const rproc *r) { return strstr(r->name, "cdsp") != NULL; }

static void judge_cdsp(step *s, const rproc *c) {
  char state_path[512];
  snprintf(state_path, sizeof(state_path), REMOTEPROC_CLASS "/%s/state", c->dir);
  step_str(s, "CDSP remoteproc", "cdsp", c->dir);
  step_str(s, "state", "state", c->state);
  step_str(s, "recovery", "recovery", c->recovery[0] ? c->recovery : NULL);
  if (c->state_why[0]) {
    step_set(s, ST_FAIL, "cannot read the CDSP's state: %s", c->state_why);
    step_hint(s, "%s is a regular file on a board (sysfs): --root must be a copy of the "
                 "board's tree, or on the board: cat %s",
              state_path, state_path);
    return;
  }
  if (strcmp(c->state, "running") == 0 || strcmp(c->state, "attached") == 0) {
    if (strcmp(c->recovery, "disabled") == 0) {
      step_set(s, ST_WARN, "the CDSP (%s) is %s, but its crash recovery is disabled", c->dir,
               c->state);
      step_hint(s,
                "after a DSP crash it then stays down until a reboot: as root, echo enabled > "
                REMOTEPROC_CLASS "/%s/recovery",
                c->dir);
      return;
    }
    step_set(s, ST_OK, "the CDSP (%s) is %s", c->dir, c->state);
    return;
  }
  if (strcmp(c->state, "offline") == 0) {
    step_set(s, ST_FAIL, "the CDSP (%s) is offline: the NPU is not started", c->dir);
    step_hint(s,
              "start it as root (echo start > %s; qcom-coldplug.sh does this at boot). If it "
              "stays offline, `dmesg | grep -i remoteproc` says why: usually its firmware "
              "cdsp.mbn is missing where the device tree names it "
              "(/lib/firmware/qcom/qcs6490/radxa/dragon-q6a/ on the Dragon Q6A image), or does "
              "not match the board (docs/board.md)",
              state_path);
    return;
  }
  if (strcmp(c->state, "crashed") == 0) {
    step_set(s, ST_FAIL, "the CDSP (%s) has crashed", c->dir);
    step_hint(s,
              "`dmesg | grep -i remoteproc` has the reason. As root: echo enabled > "
              REMOTEPROC_CLASS "/%s/recovery (it then restarts by itself after a crash), or "
              "echo stop, then echo start > %s; otherwise reboot",
              c->dir, state_path);
    return;
  }
  step_set(s, ST_FAIL, "the CDSP (%s) is in state '%s', not running", c->dir,
           c->state[0] ? c->state : "(unreadable)");
  step_hint(s, "start it as root (echo start > %s) and read `dmesg | grep -i remoteproc`",
            state_path);
}

static void judge(doctor *d, step *s) {
  rproc *all = calloc(MAX_RPROCS, sizeof(*all));
  if (!all) {
    step_set(s, ST_FAIL, "out of memory");
    return;
  }
  int more = 0;
  int n = list_rprocs(d->root, all, MAX_RPROCS, &more);
  const rproc *cdsp = NULL;
  for (int i = 0; i < n; i++) {
    if (!cdsp && is_cdsp(&all[i])) cdsp = &all[i];
    if (i >= LISTED_RPROCS) continue;
    report_row *row = step_row(s, "%s: %s, %s", all[i].dir,
                               all[i].name[0] ? all[i].name : "(no name)",
                               all[i].state[0] ? all[i].state : "(no state)");
    if (row) {
      row_str(row, "remoteproc", all[i].dir);
      row_str(row, "name", all[i].name);
      row_str(row, "state", all[i].state);
    }
  }
  if (n > 0) step_rows(s, "remoteprocs", "remoteprocs");
  if (n > LISTED_RPROCS || more) {
    char unlisted[160];
    snprintf(unlisted, sizeof(unlisted), "%d more, not listed%s", n - LISTED_RPROCS + more,
             more ? " (past the first 1024 entries: not read)" : "");
    step_str(s, "remoteprocs not listed", "remoteprocs_unlisted", unlisted);
  }
  if (cdsp) {
    judge_cdsp(s, cdsp);
  } else {
    step_str(s, "CDSP remoteproc", "cdsp", NULL);
    if (n < 0)
      step_set(s, ST_FAIL, "no remoteprocs (%s is missing): the NPU is not started",
               REMOTEPROC_CLASS);
    else
      step_set(s, ST_FAIL, "none of the %d remoteproc%s is the CDSP: the NPU is not started", n,
               n == 1 ? "" : "s");
    step_hint(s, "the CDSP remoteproc comes from the qcom_q6v5_pas module (`lsmod | grep "
                 "q6v5_pas`; modprobe qcom_q6v5_pas as root) and the device tree's CDSP "
                 "remoteproc node, which the board's device tree or overlay must enable "
                 "(status \"okay\"); `dmesg | grep -i remoteproc` shows a probe failure");
  }
  free(all);
}

void check_remoteproc(doctor *d) {
  doctor_board_step(d, "remoteproc", "remoteproc", judge);
}
