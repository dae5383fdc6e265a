/* test_board_lock.c - the cross-process NPU lock (src/board/npu_lock.c) against a second, real
 * process (a forked child holding the lock until told to let go): runtime open and loads wait
 * for it, honour their timeouts, name the holder; the lock's path is checked. Every step waits
 * on an event (a pipe, a counter), never on time. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

/* A child process holding the lock at `path` (with the note a hexagon_tpu holder writes) from
 * holder_start's return until holder_end. Only async-signal-safe calls in the child. */
typedef struct holder {
  pid_t pid;
  int release_w; /* parent writes a byte: the child lets go and exits */
} holder;

static void put_num(char **p, long v) {
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) > 0);
  while (n) *(*p)++ = digits[--n];
}

static int holder_start(holder *h, const char *path, const char *what) {
  int ready[2], release[2];
  if (pipe(ready) != 0 || pipe(release) != 0) return -1;
  h->pid = fork();
  if (h->pid < 0) return -1;
  if (h->pid == 0) {
    close(ready[0]);
    close(release[1]);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(3);
    char note[512], *p = note;
    put_num(&p, (long)getpid());
    const char *rest[] = {" holder_child\n", what, "\n"};
    for (int i = 0; i < 3; i++)
      for (const char *s = rest[i]; *s && p < note + sizeof note - 1; s++) *p++ = *s;
    if (ftruncate(fd, 0) != 0 || write(fd, note, (size_t)(p - note)) < 0) _exit(4);
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(5);
    while (read(release[0], &c, 1) < 0 && errno == EINTR) {}
    _exit(0); /* closing the descriptor lets go of the lock */
  }
  close(ready[1]);
  close(release[0]);
  h->release_w = release[1];
  char c;
  ssize_t n;
  while ((n = read(ready[0], &c, 1)) < 0 && errno == EINTR) {}
  close(ready[0]);
  return n == 1 ? 0 : -1;
}

static int holder_end(holder *h) {
  char c = 'x';
  if (write(h->release_w, &c, 1) != 1) return -1;
  close(h->release_w);
  int status = 0;
  while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static char g_seen_holder[512];
static int g_wait_calls;
static void on_wait(const char *who, void *arg) {
  (void)arg;
  g_wait_calls++;
  snprintf(g_seen_holder, sizeof g_seen_holder, "%s", who);
}

TEST(npu_lock_runtime_open_times_out_naming_the_holder) {
  const char *path = test_tmp_path("open.lock");
  holder h;
  CHECK(holder_start(&h, path, "loading file 'other.bin'") == 0);
  char expect_pid[32];
  snprintf(expect_pid, sizeof expect_pid, "pid %d (", (int)h.pid);

  char who[512];
  CHECK_EQ(htpu_npu_lock_holder(path, who, sizeof who), 1);
  CHECK_STR_CONTAINS(who, expect_pid);
  CHECK_STR_CONTAINS(who, "loading file 'other.bin'");

  htpu_stats before, after;
  htpu_stats_get(&before);
  const ref_ctl *ref = ref_ctl_get();
  CHECK(ref);
  htpu_ref_stats rs0 = ref_ctl_stats(ref);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.npu_lock_path = path;
  o.npu_lock_timeout_ns = 30000000; /* 30 ms: the holder never lets go before its pipe */
  o.npu_lock_wait = on_wait;
  g_wait_calls = 0;
  htpu_runtime *rt = NULL;
  int rc = htpu_runtime_open(&o, &rt);
  htpu_ref_stats rs1 = ref_ctl_stats(ref);
  htpu_stats_get(&after);
  CHECK_EQ(holder_end(&h), 0);
  CHECK_EQ(rc, HTPU_ETIMEDOUT);
  CHECK(rt == NULL);
  CHECK_STR_CONTAINS(htpu_last_error(), "creating the QNN backend and device: waited");
  CHECK_STR_CONTAINS(htpu_last_error(), path);
  CHECK_STR_CONTAINS(htpu_last_error(), expect_pid);
  CHECK_STR_CONTAINS(htpu_last_error(), "loading file 'other.bin'");
  /* no backend was created while the other process held the lock, and none was retried */
  CHECK_EQ(rs1.live_backends, rs0.live_backends);
  CHECK_EQ(after.npu_lock_waits - before.npu_lock_waits, 1);
  CHECK_EQ(after.npu_lock_timeouts - before.npu_lock_timeouts, 1);
  CHECK_EQ(after.npu_lock_waiting, 0);
  CHECK(after.npu_lock_wait_ns_total - before.npu_lock_wait_ns_total >= 30000000);
  CHECK_EQ(g_wait_calls, 1);
  CHECK_STR_CONTAINS(g_seen_holder, expect_pid);

  /* let go: the same open goes through, and the lock is free again after it */
  CHECK_EQ(htpu_npu_lock_holder(path, who, sizeof who), 0);
  CHECK(who[0] == '\0');
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  CHECK_EQ(htpu_npu_lock_holder(path, who, sizeof who), 0);
  htpu_runtime_close(&rt);
}

TEST(npu_lock_a_load_honours_its_timeout) {
  const char *path = test_tmp_path("load.lock");
  const char *model = fx_build_model_file("lock_load.bin", FX_ADD_F32);
  CHECK(model);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.npu_lock_path = path;
  o.npu_lock_timeout_ns = 20000000;
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  holder h;
  CHECK(holder_start(&h, path, "creating the QNN backend and device") == 0);
  htpu_stats before, after;
  htpu_stats_get(&before);
  htpu_context *ctx = NULL;
  htpu_load_options lo = {0};
  lo.timeout_ns = 25000000;
  int rc1 = htpu_context_open_file_ex(rt, model, &lo, &ctx);
  char msg1[2048];
  snprintf(msg1, sizeof msg1, "%s", htpu_last_error());
  int rc2 = htpu_context_open_file(rt, model, &ctx); /* no timeout: the runtime's 20 ms */
  char msg2[2048];
  snprintf(msg2, sizeof msg2, "%s", htpu_last_error());
  htpu_stats_get(&after);
  CHECK_EQ(holder_end(&h), 0);
  CHECK_EQ(rc1, HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(msg1, "file '");
  CHECK_STR_CONTAINS(msg1, "loading file '");
  CHECK_STR_CONTAINS(msg1, "lock_load.bin': waited");
  CHECK_STR_CONTAINS(msg1, "creating the QNN backend and device");
  CHECK_EQ(rc2, HTPU_ETIMEDOUT);
  CHECK_STR_CONTAINS(msg2, "held by pid");
  CHECK(ctx == NULL);
  CHECK_EQ(after.live_contexts, before.live_contexts);
  CHECK_EQ(after.npu_lock_timeouts - before.npu_lock_timeouts, 2);
  CHECK_EQ(htpu_context_open_file(rt, model, &ctx), 0);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
}

/* A list load (htpu_context_open_many) holds the lock once for all its models: a held lock
 * fails each of them with its own timeout error, and nothing is created. */
TEST(npu_lock_a_list_load_honours_its_timeout) {
  const char *path = test_tmp_path("list.lock");
  const char *model = fx_build_model_file("lock_list.bin", FX_ADD_F32);
  CHECK(model);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.npu_lock_path = path;
  htpu_runtime *rt = NULL;
  CHECK_EQ(htpu_runtime_open(&o, &rt), 0);
  htpu_runtime_info ri;
  CHECK_EQ(htpu_runtime_get_info(rt, &ri), 0);
  CHECK(ri.list_load);
  holder h;
  CHECK(holder_start(&h, path, "loading file 'other.bin'") == 0);
  htpu_stats before, after;
  htpu_stats_get(&before);
  htpu_load_options lo = {0};
  lo.timeout_ns = 25000000;
  char err[2][1024];
  htpu_load_request req[2];
  memset(req, 0, sizeof req);
  for (int i = 0; i < 2; i++) {
    req[i].path = model;
    req[i].opts = &lo;
    req[i].error = err[i];
    req[i].error_len = sizeof err[i];
  }
  int rc = htpu_context_open_many(rt, req, 2);
  htpu_stats_get(&after);
  CHECK_EQ(holder_end(&h), 0);
  CHECK_EQ(rc, HTPU_ETIMEDOUT);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(req[i].rc, HTPU_ETIMEDOUT);
    CHECK(req[i].ctx == NULL);
    CHECK_STR_CONTAINS(err[i], "lock_list.bin': loading 2 models in one list call: waited");
    CHECK_STR_CONTAINS(err[i], "held by pid");
  }
  CHECK_EQ(after.live_contexts, before.live_contexts);
  CHECK_EQ(after.npu_lock_timeouts - before.npu_lock_timeouts, 1);
  /* let go: the same list goes through (unbounded: a loaded machine may take 25 ms to load) */
  lo.timeout_ns = 0;
  CHECK_EQ(htpu_context_open_many(rt, req, 2), 0);
  for (int i = 0; i < 2; i++) htpu_context_close(&req[i].ctx);
  htpu_runtime_close(&rt);
}

typedef struct loader {
  htpu_runtime *rt;
  const char *model;
  htpu_context *ctx;
  int rc;
} loader;

static void *load_thread(void *arg) {
  loader *l = arg;
  htpu_load_options lo = {0};
  lo.timeout_ns = 60ull * 1000000000ull;
  l->rc = htpu_context_open_file_ex(l->rt, l->model, &lo, &l->ctx);
  return NULL;
}

/* The wait ends when the other process lets go, not at a time: the load is seen waiting (the
 * npu_lock_waiting gauge), made nothing meanwhile, and succeeds after the release. */
TEST(npu_lock_a_waiting_load_goes_on_when_the_holder_lets_go) {
  const char *path = test_tmp_path("wait.lock");
  loader l = {0};
  l.model = fx_build_model_file("lock_wait.bin", FX_ADD_F32);
  CHECK(l.model);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.npu_lock_path = path;
  CHECK_EQ(htpu_runtime_open(&o, &l.rt), 0);
  holder h;
  CHECK(holder_start(&h, path, "loading file 'first.bin'") == 0);
  htpu_stats before, s;
  htpu_stats_get(&before);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, load_thread, &l) == 0);
  do {
    sched_yield();
    htpu_stats_get(&s);
  } while (s.npu_lock_waiting == 0);
  CHECK_EQ(s.live_contexts, before.live_contexts); /* nothing created while it waits */
  CHECK_EQ(holder_end(&h), 0);
  pthread_join(t, NULL);
  CHECK_EQ(l.rc, 0);
  htpu_stats_get(&s);
  CHECK_EQ(s.npu_lock_waits - before.npu_lock_waits, 1);
  CHECK_EQ(s.npu_lock_timeouts, before.npu_lock_timeouts);
  CHECK_EQ(s.npu_lock_waiting, 0);
  htpu_context_close(&l.ctx);
  htpu_runtime_close(&l.rt);
}

TEST(npu_lock_paths_are_checked) {
  htpu_runtime_options o;
  fx_ref_options(&o);
  htpu_runtime *rt = NULL;
  o.npu_lock_path = "relative.lock";
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "npu_lock_path 'relative.lock' is relative");
  o.npu_lock_path = test_tmp_path("t.lock");
  o.npu_lock_timeout_ns = HTPU_MAX_TIMEOUT_NS + 1;
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EINVAL);
  CHECK_STR_CONTAINS(htpu_last_error(), "npu_lock_timeout_ns");
  o.npu_lock_timeout_ns = 0;

  const char *fifo = test_tmp_path("fifo.lock");
  CHECK(mkfifo(fifo, 0644) == 0);
  o.npu_lock_path = fifo;
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "cannot open the NPU lock");
  CHECK_STR_CONTAINS(htpu_last_error(), "is a FIFO (named pipe); expected a regular file");

  const char *link = test_tmp_path("link.lock");
  CHECK(symlink("t.lock", link) == 0);
  o.npu_lock_path = link;
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "a symbolic link");

  o.npu_lock_path = test_tmp_path("no_such_dir/x.lock");
  CHECK_EQ(htpu_runtime_open(&o, &rt), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "its directory must exist");
  CHECK(rt == NULL);

  /* "" is no lock at all: an open goes through while another process holds any lock file */
  const char *held = test_tmp_path("held.lock");
  holder h;
  CHECK(holder_start(&h, held, "x") == 0);
  o.npu_lock_path = "";
  int rc = htpu_runtime_open(&o, &rt);
  CHECK_EQ(holder_end(&h), 0);
  CHECK_EQ(rc, 0);
  htpu_runtime_close(&rt);
  char who[64];
  CHECK_EQ(htpu_npu_lock_holder("", who, sizeof who), 0);
  CHECK_EQ(htpu_npu_lock_holder(test_tmp_path("never_made.lock"), who, sizeof who), 0);
  CHECK_EQ(htpu_npu_lock_holder(fifo, who, sizeof who), HTPU_EIO);
  CHECK_EQ(htpu_npu_lock_holder(held, NULL, 0), HTPU_EINVAL);
}

/* The child's side of npu_lock_a_missing_file_in_a_read_only_directory: a runtime whose lock
 * file was made, then removed, loads as a user who cannot write the lock's directory. Writes ""
 * when every check held, "skip: why" or the failed check into msg. */
static void load_without_lock_rights(const char *dir, char *msg, size_t cap) {
  char lock[600];
  snprintf(lock, sizeof lock, "%s/npu.lock", dir);
  htpu_runtime_options o;
  fx_ref_options(&o);
  o.npu_lock_path = lock;
  htpu_runtime *rt = NULL;
  size_t len = 0;
  void *model = fx_build_model(FX_ADD_F32, &len);
  if (!model || htpu_runtime_open(&o, &rt) != 0 || unlink(lock) != 0) {
    snprintf(msg, cap, "cannot set up: %s", htpu_last_error());
    return;
  }
  if (geteuid() == 0 ? setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0
                     : chmod(dir, 0555) != 0) {
    snprintf(msg, cap, "skip: cannot take away the right to write %s: %s", dir, strerror(errno));
    return;
  }
  if (access(dir, W_OK) == 0) {
    snprintf(msg, cap, "skip: uid %d can write a directory it should not", (int)geteuid());
    return;
  }
  htpu_context *ctx = NULL;
  int rc = htpu_context_open_buffer(rt, model, len, &ctx);
  const char *e = htpu_last_error();
  if (rc != HTPU_EIO || !strstr(e, "cannot open the NPU lock") || !strstr(e, lock) ||
      !strstr(e, "Permission denied (the file is not there and cannot be created in its "
                 "directory") ||
      strstr(e, "No such file") || strstr(e, "must exist"))
    snprintf(msg, cap, "the load gave %d: %s", rc, e);
  else
    msg[0] = '\0';
}

/* A lock file that is not there, in a directory this user cannot write: the error names the
 * create's refusal (EACCES), not the read-only retry's "No such file" (the directory exists).
 * As root the child runs as uid 65534 in a root-owned directory of mode 755. */
TEST(npu_lock_a_missing_file_in_a_read_only_directory) {
  const char *base = getenv("TMPDIR");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/htpu_rolock.XXXXXX", base && base[0] ? base : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  CHECK_EQ(chmod(dir, 0755), 0);
  int pipefd[2];
  CHECK_EQ(pipe(pipefd), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    static char msg[2048];
    close(pipefd[0]);
    load_without_lock_rights(dir, msg, sizeof msg);
    ssize_t w = write(pipefd[1], msg, strlen(msg));
    _exit(w == (ssize_t)strlen(msg) ? 0 : 1);
  }
  close(pipefd[1]);
  CHECK(pid > 0);
  char msg[2048] = {0};
  size_t len = 0;
  for (ssize_t n; len < sizeof msg - 1 &&
                  (n = read(pipefd[0], msg + len, sizeof msg - 1 - len)) > 0;)
    len += (size_t)n;
  close(pipefd[0]);
  int status = 0;
  CHECK_EQ(waitpid(pid, &status, 0), pid);
  chmod(dir, 0755);
  char lock[600];
  snprintf(lock, sizeof lock, "%s/npu.lock", dir);
  unlink(lock);
  rmdir(dir);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  if (strncmp(msg, "skip: ", 6) == 0) {
    printf("    (skipped: %s)\n", msg + 6);
    return;
  }
  CHECK_MSG(msg[0] == 0, "%s", msg);
}
