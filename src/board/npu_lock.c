/* npu_lock.c - the cross-process NPU lock: an advisory flock on one file, held around QNN
 * session creation (backend/device and contexts) so two programs using hexagon_tpu never
 * create sessions at the same moment (see board.h; docs/board.md, "One NPU user at a time").
 *
 * Every acquisition opens the file anew: flock belongs to an open file description, so two
 * threads of one process with their own descriptors exclude each other too, and a thread's
 * hold can never be released by another's. flock has no timeout, so a wait polls with a
 * non-blocking flock and a growing nap (1 ms doubling to 50 ms) until its deadline: a creation
 * takes milliseconds to seconds, and nothing here runs on a thread that must not sleep. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "board.h"
#include "file_open.h"

#define NAP_FIRST_NS 1000000ull   /* 1 ms */
#define NAP_MAX_NS 50000000ull    /* 50 ms */

int npu_lock_configure(npu_lock_cfg *cfg, const htpu_runtime_options *o) {
  memset(cfg, 0, sizeof *cfg);
  const char *path = o->npu_lock_path;
  if (!path) {
    /* System.put_env does not reach getenv, but a shell or erlinit's -e does */
    const char *env = getenv("HTPU_NPU_LOCK");
    path = env && env[0] ? env : HTPU_DEFAULT_NPU_LOCK;
  }
  if (path[0] && path[0] != '/')
    return htpu_set_error(HTPU_EINVAL, 0, "npu_lock_path '%s' is relative; expected an absolute "
                          "path (every program must name the same file), or \"\" for no lock",
                          path);
  if (strlen(path) >= sizeof cfg->path)
    return htpu_set_error(HTPU_EINVAL, 0, "npu_lock_path is %zu bytes long; at most %zu",
                          strlen(path), sizeof cfg->path - 1);
  if (o->npu_lock_timeout_ns > HTPU_MAX_TIMEOUT_NS)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "npu_lock_timeout_ns %llu is above the limit of %llu ns (24 h); "
                          "expected 0 (the default, 60 s) up to the limit",
                          (unsigned long long)o->npu_lock_timeout_ns,
                          (unsigned long long)HTPU_MAX_TIMEOUT_NS);
  memcpy(cfg->path, path, strlen(path) + 1);
  cfg->timeout_ns = o->npu_lock_timeout_ns ? o->npu_lock_timeout_ns : HTPU_DEFAULT_TIMEOUT_NS;
  cfg->wait_fn = o->npu_lock_wait;
  cfg->wait_arg = o->npu_lock_wait_arg;
  return 0;
}

/* Opens the lock file, creating it when missing. O_NOFOLLOW: in a shared /tmp a link planted in
 * its place must not send us to another file; O_NONBLOCK: a FIFO there opens at once and is
 * then refused. Read-only when the file is someone else's: flock needs no write access. */
static int open_lock_file(const char *path, char *err, size_t len) {
  const int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  int fd = -1, create_errno = 0;
  for (int tries = 0; fd < 0 && tries < 3; tries++) {
    fd = open(path, O_RDWR | flags);
    if (fd < 0 && errno == ENOENT) {
      fd = open(path, O_RDWR | O_CREAT | O_EXCL | flags, 0666);
      if (fd < 0 && errno == EEXIST) continue; /* another process made it meanwhile */
      if (fd < 0) create_errno = errno;
    }
    if (fd < 0 && (errno == EACCES || errno == EROFS)) fd = open(path, O_RDONLY | flags);
    if (fd < 0) break;
  }
  if (fd < 0) {
    int e = errno;
    /* the read-only retry of a file that is not there says ENOENT: the cause is the create's */
    if (e == ENOENT && create_errno && create_errno != ENOENT) e = create_errno;
    snprintf(err, len, "%s%s", strerror(e),
             e == ELOOP ? " (a symbolic link; give the file itself)"
             : e == ENOENT ? " (its directory must exist)"
             : create_errno == e && (e == EACCES || e == EROFS)
                 ? " (the file is not there and cannot be created in its directory: create it "
                   "once, mode 0666, or name a lock in a directory this user can write)"
                 : "");
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(err, len, "it is %s; expected a regular file",
             fstat(fd, &st) != 0 ? "not readable" : file_kind_name((unsigned)st.st_mode));
    close(fd);
    return -1;
  }
  return fd;
}

static void nap(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Polls until the lock is ours (0), the deadline passes (HTPU_ETIMEDOUT) or *stop is set
 * (HTPU_ECANCELLED), the error set. The wait is counted from `start`, when the lock was first
 * found taken. */
static int wait_for_lock(const npu_lock_cfg *cfg, int fd, uint64_t start, uint64_t deadline,
                         const atomic_int *stop, const char *what) {
  char holder[512];
  npu_lock_describe_holder(fd, holder, sizeof holder);
  STAT_ADD(npu_lock_waits, 1);
  STAT_ADD(npu_lock_waiting, 1);
  if (cfg->wait_fn) cfg->wait_fn(holder, cfg->wait_arg);
  uint64_t delay = NAP_FIRST_NS;
  int got = 0, err = 0, stopped = 0;
  for (;;) {
    uint64_t now = htpu_now_ns();
    if (now >= deadline || (stopped = stop && atomic_load(stop))) break;
    nap(delay < deadline - now ? delay : deadline - now);
    if (delay < NAP_MAX_NS) delay *= 2;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      got = 1;
      break;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      err = errno;
      break;
    }
  }
  uint64_t waited = htpu_now_ns() - start;
  STAT_SUB(npu_lock_waiting, 1);
  STAT_ADD(npu_lock_wait_ns_total, waited);
  if (got) return 0;
  if (err)
    return htpu_set_error(HTPU_EIO, 0, "%s: locking the NPU lock '%s' failed: %s", what,
                          cfg->path, strerror(err));
  if (stopped)
    return htpu_set_error(HTPU_ECANCELLED, 0, "%s: stopped while it waited for the NPU lock "
                          "'%s'", what, cfg->path);
  STAT_ADD(npu_lock_timeouts, 1);
  npu_lock_describe_holder(fd, holder, sizeof holder); /* who holds it now, at the end */
  return htpu_set_error(HTPU_ETIMEDOUT, 0,
                        "%s: waited %llu ms for the NPU lock '%s', held by %s: another program "
                        "is creating a QNN session (docs/board.md, \"One NPU user at a time\"; "
                        "the wait is bounded by the load's timeout, else npu_lock_timeout_ns)",
                        what, (unsigned long long)(waited / 1000000u), cfg->path, holder);
}

int npu_lock_enter(const npu_lock_cfg *cfg, uint64_t deadline_ns, const atomic_int *stop,
                   const char *what, npu_lock_hold *h) {
  h->fd = -1;
  if (!cfg->path[0]) return 0;
  char err[256];
  int fd = open_lock_file(cfg->path, err, sizeof err);
  if (fd < 0)
    return htpu_set_error(HTPU_EIO, 0, "%s: cannot open the NPU lock '%s': %s (runtime option "
                          "npu_lock_path, or HTPU_NPU_LOCK; \"\" for no lock)",
                          what, cfg->path, err);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    uint64_t start = htpu_now_ns();
    uint64_t deadline = deadline_ns ? deadline_ns : start + cfg->timeout_ns;
    int rc = e == EWOULDBLOCK
                 ? wait_for_lock(cfg, fd, start, deadline, stop, what)
                 : htpu_set_error(HTPU_EIO, 0, "%s: locking the NPU lock '%s' failed: %s", what,
                                  cfg->path, strerror(e));
    if (rc) {
      close(fd);
      return rc;
    }
  }
  npu_lock_write_note(fd, what);
  h->fd = fd;
  return 0;
}

int npu_lock_enter_load(const npu_lock_cfg *cfg, uint64_t deadline_ns, const char *origin,
                        npu_lock_hold *h) {
  char what[640];
  snprintf(what, sizeof what, "loading %s", origin);
  return npu_lock_enter(cfg, deadline_ns, NULL, what, h);
}

void npu_lock_leave(npu_lock_hold *h) {
  if (h->fd < 0) return;
  /* the note goes with the hold, so a note in the file always names a holder */
  if (ftruncate(h->fd, 0) != 0) {}
  flock(h->fd, LOCK_UN);
  close(h->fd);
  h->fd = -1;
}

int htpu_npu_lock_holder(const char *path, char *buf, size_t len) {
  htpu_clear_error();
  if (!buf || len == 0) return htpu_set_error(HTPU_EINVAL, 0, "htpu_npu_lock_holder: no buffer");
  buf[0] = '\0';
  htpu_runtime_options o;
  memset(&o, 0, sizeof o); /* only the lock's fields are read */
  o.npu_lock_path = path;
  npu_lock_cfg cfg;
  int rc = npu_lock_configure(&cfg, &o);
  if (rc) return rc;
  if (!cfg.path[0]) return 0;
  int fd = open(cfg.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && errno == ENOENT) return 0; /* never created: nobody holds it */
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = errno;
    if (fd >= 0) close(fd);
    return htpu_set_error(HTPU_EIO, 0, "the NPU lock '%s': %s", cfg.path,
                          fd < 0 ? strerror(e) : "not a regular file");
  }
  long pid = npu_lock_kernel_holder(&st);
  /* without /proc/locks: a shared probe fails exactly while someone holds it exclusively */
  int held = pid > 0;
  if (!held && flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) held = 1;
  if (held) npu_lock_describe_holder(fd, buf, len);
  close(fd);
  return held;
}
