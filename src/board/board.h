/*
 * board.h - the door of src/board/: what the core reads of the board it runs on, and the one
 * lock it shares with other processes.
 *
 *   board_fs.c    the board's files under a root (common/root_path.h), read without blocking
 *   thermal.c     /sys/class/thermal: zones, temperatures, trip points
 *   cpufreq.c     /sys/devices/system/cpu/cpufreq: governors and frequencies
 *   reading.c     htpu_board_read / htpu_board_load_between: one reading, and the NPU's load
 *                 between two from the execute counters (base/stats.h)
 *   npu_users.c   htpu_npu_users_read: processes holding /dev/fastrpc-cdsp* open, FastRPC's
 *                 daemons (cdsprpcd ...) apart from the users
 *   npu_lock.c    the cross-process NPU lock (flock) that the top (runtime.c, context.c) and
 *                 exec/recover.c take around backend/device and context creation, before the
 *                 execute gate
 *   lock_holder.c who holds that lock (/proc/locks and the holder's note in the file)
 *
 * The room just above base/: it calls only base/ (errors, counters) and common/; the top and
 * exec/ call it. Nothing here calls QNN.
 */
#ifndef HTPU_BOARD_H
#define HTPU_BOARD_H

#include <dirent.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"

/* ---- board_fs.c --------------------------------------------------------------------------- */

/* The first line of a small text file (a sysfs or procfs attribute) at board path `path` under
 * `root`, its line end and trailing blanks removed, in out. Never blocks (a FIFO is refused).
 * Returns an htpu_reading_state: OK, MISSING (nothing there) or UNREADABLE (there but not a
 * readable regular file); `why` (may be NULL) then names the path read and the cause. */
int board_read_line(const char *root, const char *path, char *out, size_t len, char *why,
                    size_t why_len);
/* A whole file of at most `limit` bytes (/proc/PID/maps) in *out (malloc'd, NUL-terminated,
 * free() it), as board_read_line; a longer file is cut at `limit` (*cut set). */
int board_read_text(const char *root, const char *path, size_t limit, char **out, int *cut,
                    char *why, size_t why_len);
/* opendir of a board path; NULL with errno. */
DIR *board_opendir(const char *root, const char *path);
/* readlink of a board path's last component (never followed): its target, NUL-terminated in
 * buf. Returns 0 or -1 with errno. */
int board_readlink(const char *root, const char *path, char *buf, size_t len);
/* Checks that root is NULL, "" or a directory; HTPU_EINVAL naming it otherwise. */
int board_check_root(const char *root, const char *who);
/* A whole decimal integer (optional sign, digits, nothing after but blanks): 0, or -1. */
int board_parse_i64(const char *text, int64_t *out);
/* The number of a name such as "thermal_zone12" after `prefix` (12), or -1 when the rest is
 * not a plain decimal number. */
long board_name_number(const char *name, const char *prefix);

/* ---- thermal.c, cpufreq.c: parts of htpu_board_read -------------------------------------- */

/* Fills b->zones (allocated here, freed by htpu_board_free), num_zones, zones_skipped,
 * thermal_note and the NSP and CPU summaries. HTPU_ENOMEM, else 0. */
int board_read_thermal(const char *root, htpu_board *b);
/* Fills b->policies, num_policies, policies_skipped, cpufreq_note. HTPU_ENOMEM, else 0. */
int board_read_cpufreq(const char *root, htpu_board *b);

/* ---- npu_lock.c: the cross-process lock ---------------------------------------------------- */

/* A runtime's lock settings (htpu_runtime_options), fixed at open. */
typedef struct npu_lock_cfg {
  char path[PATH_MAX]; /* "" = no lock */
  uint64_t timeout_ns; /* for waits with no deadline of their own */
  void (*wait_fn)(const char *holder, void *arg);
  void *wait_arg;
} npu_lock_cfg;

/* From the options (NULL path: $HTPU_NPU_LOCK, else HTPU_DEFAULT_NPU_LOCK; "": none). 0, or
 * HTPU_EINVAL naming the option (a path too long, a timeout above HTPU_MAX_TIMEOUT_NS). */
int npu_lock_configure(npu_lock_cfg *cfg, const htpu_runtime_options *o);

typedef struct npu_lock_hold {
  int fd; /* -1: nothing held */
} npu_lock_hold;

/* Takes the lock for a creation (`what`: "creating the QNN backend and device", "loading file
 * 'm.bin'"), waiting for a process (or another thread) that holds it until deadline_ns
 * (CLOCK_MONOTONIC; 0: cfg->timeout_ns from now) or until *stop becomes non-zero (NULL:
 * never). Writes who holds it into the file for others' messages. A cfg with no path holds
 * nothing. Returns 0 (*h to give to npu_lock_leave; h->fd -1 on every failure), or, with the
 * thread's error set, HTPU_ETIMEDOUT naming the holder, HTPU_ECANCELLED (stopped), HTPU_EIO
 * naming the path (it cannot be opened or locked). Call it before gate_enter_exclusive: a
 * thread waiting for another process never holds the gate. */
int npu_lock_enter(const npu_lock_cfg *cfg, uint64_t deadline_ns, const atomic_int *stop,
                   const char *what, npu_lock_hold *h);
/* The same for a load of `origin` ("file 'm.bin'"): "loading file 'm.bin'". */
int npu_lock_enter_load(const npu_lock_cfg *cfg, uint64_t deadline_ns, const char *origin,
                        npu_lock_hold *h);
/* Releases what npu_lock_enter took (nothing for an empty hold). */
void npu_lock_leave(npu_lock_hold *h);

/* ---- lock_holder.c ------------------------------------------------------------------------- */

/* Who holds the lock open on `fd` (whose path is `path`), in buf ("pid 1234 (htpu), loading
 * file 'm.bin'"), found from /proc/locks and the note the holder wrote into the file; "another
 * process" when neither says. */
void npu_lock_describe_holder(int fd, char *buf, size_t len);
/* The holder's note written into the file: "<pid> <comm>\n<what>\n". */
void npu_lock_write_note(int fd, const char *what);
/* The pid /proc/locks gives for a flock on st's inode; 0 when none (or unreadable). */
struct stat;
long npu_lock_kernel_holder(const struct stat *st);

#endif
