/* test_core_profile_writers.c - where the trace, page and QNN profile log land (report_file.h):
 * a symlink keeps pointing at its target, which gets the content; a character device or FIFO
 * is written directly with every error reported; a directory or missing parent is an error;
 * concurrent writers to one path each succeed; a name as long as the filesystem takes works;
 * a writable file in a directory the user cannot write is written in place; nothing is left
 * behind.
 *
 * Devices are never real /dev nodes replaced by a mistake: as root the test makes its own
 * node of /dev/full's numbers in its temporary directory; otherwise it uses /dev/full itself,
 * which a non-root process cannot replace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "prof_rig.h"
#include "test.h"

typedef struct rig {
  htpu_runtime *rt;
  htpu_context *ctx;
  htpu_graph *g;
  htpu_profile *p;
  char dir[512];
} rig;

static int rig_open(rig *r, const char *dir) {
  memset(r, 0, sizeof *r);
  snprintf(r->dir, sizeof r->dir, "%s", test_tmp_path(dir));
  if (mkdir(r->dir, 0777) != 0) return -1;
  r->rt = fx_open_runtime();
  const char *path = fx_build_model_file("writers.bin", PROF_THREE_OPS);
  if (!r->rt || !path || htpu_context_open_file(r->rt, path, &r->ctx) ||
      htpu_graph_open(r->ctx, NULL, &r->g))
    return -1;
  float x[8] = {1, -2, 3, -4, 5, -6, 7, -8}, y[8];
  htpu_io in = {x, sizeof x, HTPU_F32}, out = {y, sizeof y, HTPU_F32};
  htpu_exec_options o = {.profile_level = HTPU_PROFILE_DETAILED, .profile = &r->p};
  return htpu_graph_execute_ex(r->g, &in, 1, &out, 1, &o, NULL);
}

static void rig_close(rig *r) {
  htpu_profile_free(r->p);
  htpu_graph_close(&r->g);
  htpu_context_close(&r->ctx);
  htpu_runtime_close(&r->rt);
}

static const char *in_dir(const rig *r, const char *name) {
  static char ring[8][1024]; /* the directory (< 512) + "/" + a name (<= 255) */
  static unsigned next;
  char *buf = ring[next++ % 8];
  snprintf(buf, sizeof ring[0], "%s/%s", r->dir, name);
  return buf;
}

/* How many entries of `dir` start with `prefix` ("." = temporary files). */
static int entries_in(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
        strncmp(e->d_name, prefix, strlen(prefix)) == 0)
      n++;
  closedir(d);
  return n;
}

static int entries(const rig *r, const char *prefix) { return entries_in(r->dir, prefix); }

static mode_t lmode(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 ? st.st_mode : 0;
}

TEST(profile_writers_symlink_keeps_pointing_at_its_target) {
  rig r;
  CHECK_EQ(rig_open(&r, "wsym"), 0);
  const char *target = in_dir(&r, "target.json"), *link = in_dir(&r, "link.json");
  CHECK_EQ(test_write_file(target, "old", 3), 0);
  CHECK_EQ(chmod(target, 0640), 0);
  CHECK_EQ(symlink("target.json", link), 0); /* relative: resolved against the link's dir */
  CHECK_EQ(htpu_profile_write_trace(r.p, link), 0);
  CHECK(S_ISLNK(lmode(link)));
  CHECK(S_ISREG(lmode(target)));
  CHECK_EQ(lmode(target) & 07777, 0640); /* the replaced file's bits */
  CHECK_STR_CONTAINS(test_read_file(target), "\"name\":\"relu_mid\"");
  CHECK_EQ(htpu_profile_write_html(r.p, NULL, link), 0);
  CHECK(S_ISLNK(lmode(link)));
  CHECK_STR_CONTAINS(test_read_file(target), "<!DOCTYPE html>");
  CHECK_EQ(htpu_profile_write_qnn_log(r.rt, r.p, link), 0);
  CHECK(S_ISLNK(lmode(link)));
  CHECK_STR_CONTAINS(test_read_file(target), "htpu-reference-profile-log 1");
  /* a dangling link: its target is created */
  const char *dangling = in_dir(&r, "dangling.json");
  CHECK_EQ(symlink("made.json", dangling), 0);
  CHECK_EQ(htpu_profile_write_trace(r.p, dangling), 0);
  CHECK(S_ISLNK(lmode(dangling)) && S_ISREG(lmode(in_dir(&r, "made.json"))));
  CHECK_EQ(entries(&r, "."), 0);
  rig_close(&r);
}

/* A node with /dev/full's numbers: made in the temporary directory as root (so no real /dev
 * node is at stake), /dev/full itself otherwise. NULL when neither is possible. */
static const char *full_device(const rig *r) {
  if (geteuid() != 0) return access("/dev/full", W_OK) == 0 ? "/dev/full" : NULL;
  const char *node = in_dir(r, "full");
  return mknod(node, S_IFCHR | 0666, makedev(1, 7)) == 0 ? node : NULL;
}

TEST(profile_writers_report_enospc_on_a_full_device) {
  rig r;
  CHECK_EQ(rig_open(&r, "wfull"), 0);
  const char *full = full_device(&r);
  if (!full) {
    printf("    (skipped: no /dev/full and cannot make a device node)\n");
    rig_close(&r);
    return;
  }
  char want[700];
  snprintf(want, sizeof want, "cannot write '%s': No space left on device", full);
  CHECK_EQ(htpu_profile_write_trace(r.p, full), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), want);
  CHECK(S_ISCHR(lmode(full))); /* still the device, not a file in its place */
  CHECK_EQ(htpu_profile_write_html(r.p, NULL, full), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), want);
  CHECK(S_ISCHR(lmode(full)));
  /* the system library writes the log: its failure (closing the file) is its QNN error */
  CHECK_EQ(htpu_profile_write_qnn_log(r.rt, r.p, full), HTPU_EQNN);
  CHECK_STR_CONTAINS(htpu_last_error(), full);
  CHECK(S_ISCHR(lmode(full)));
  CHECK_EQ(entries(&r, "."), 0);
  rig_close(&r);
}

typedef struct reader {
  const char *path;
  char buf[1 << 16];
  size_t len;
} reader;

static void *read_all(void *arg) {
  reader *rd = arg;
  int fd = open(rd->path, O_RDONLY);
  if (fd < 0) return NULL;
  for (ssize_t n; (n = read(fd, rd->buf + rd->len, sizeof rd->buf - 1 - rd->len)) > 0;)
    rd->len += (size_t)n;
  rd->buf[rd->len] = 0;
  close(fd);
  return NULL;
}

TEST(profile_writers_write_a_fifo_directly) {
  rig r;
  CHECK_EQ(rig_open(&r, "wfifo"), 0);
  const char *fifo = in_dir(&r, "fifo");
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  static reader rd;
  memset(&rd, 0, sizeof rd);
  rd.path = fifo;
  pthread_t t;
  CHECK_EQ(pthread_create(&t, NULL, read_all, &rd), 0);
  int rc = htpu_profile_write_trace(r.p, fifo);
  pthread_join(t, NULL);
  CHECK_EQ(rc, 0);
  CHECK(S_ISFIFO(lmode(fifo)));
  CHECK_STR_CONTAINS(rd.buf, "\"traceEvents\"");
  CHECK_STR_CONTAINS(rd.buf, "\"name\":\"mul_out\"");
  memset(&rd, 0, sizeof rd);
  rd.path = fifo;
  CHECK_EQ(pthread_create(&t, NULL, read_all, &rd), 0);
  rc = htpu_profile_write_qnn_log(r.rt, r.p, fifo);
  pthread_join(t, NULL);
  CHECK_EQ(rc, 0);
  CHECK(S_ISFIFO(lmode(fifo)));
  CHECK_STR_CONTAINS(rd.buf, "id=relu_mid");
  CHECK_EQ(entries(&r, "."), 0);
  rig_close(&r);
}

TEST(profile_writers_directory_and_missing_parent) {
  rig r;
  CHECK_EQ(rig_open(&r, "wdir"), 0);
  CHECK_EQ(htpu_profile_write_trace(r.p, r.dir), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "Is a directory");
  CHECK_EQ(htpu_profile_write_qnn_log(r.rt, r.p, r.dir), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "Is a directory");
  const char *missing = in_dir(&r, "no/such/t.json");
  CHECK_EQ(htpu_profile_write_html(r.p, NULL, missing), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "No such file or directory");
  CHECK_STR_CONTAINS(htpu_last_error(), missing);
  CHECK_EQ(htpu_profile_write_qnn_log(r.rt, r.p, missing), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), missing);
  CHECK_EQ(entries(&r, ""), 0);
  rig_close(&r);
}

typedef struct writer {
  const htpu_profile *p;
  const char *path;
  int rc;
} writer;

static void *write_one(void *arg) {
  writer *w = arg;
  w->rc = htpu_profile_write_trace(w->p, w->path);
  return NULL;
}

TEST(profile_writers_concurrent_writes_to_one_path) {
  rig r;
  CHECK_EQ(rig_open(&r, "wconc"), 0);
  enum { N = 16 };
  writer w[N];
  pthread_t t[N];
  const char *path = in_dir(&r, "same.json");
  for (int i = 0; i < N; i++) {
    w[i] = (writer){r.p, path, -1};
    CHECK_EQ(pthread_create(&t[i], NULL, write_one, &w[i]), 0);
  }
  for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < N; i++) CHECK_MSG(w[i].rc == 0, "writer %d: %d", i, w[i].rc);
  CHECK_STR_CONTAINS(test_read_file(path), "\"otherData\"");
  CHECK_EQ(entries(&r, ""), 1);
  rig_close(&r);
}

/* Names of 242 characters up to the filesystem's NAME_MAX: the temporary name beside them does
 * not grow with them (it was ".NAME.XXXXXXXXXXXX": ENAMETOOLONG from 242 on). */
TEST(profile_writers_long_file_names) {
  rig r;
  CHECK_EQ(rig_open(&r, "wlong"), 0);
  long max = pathconf(r.dir, _PC_NAME_MAX);
  if (max <= 0 || max > 255) max = 255;
  long lens[] = {242, max};
  for (int i = 0; i < 2; i++) {
    char name[256];
    memset(name, 'n', sizeof name);
    snprintf(name + lens[i] - 5, 6, ".json");
    CHECK_EQ(strlen(name), lens[i]);
    const char *path = in_dir(&r, name);
    CHECK_MSG(htpu_profile_write_trace(r.p, path) == 0, "%ld chars: %s", lens[i],
              htpu_last_error());
    CHECK_STR_CONTAINS(test_read_file(path), "\"traceEvents\"");
    CHECK_MSG(htpu_profile_write_trace(r.p, path) == 0, "%ld chars, replacing: %s", lens[i],
              htpu_last_error());
    CHECK_MSG(htpu_profile_write_html(r.p, NULL, path) == 0, "%ld chars: %s", lens[i],
              htpu_last_error());
    CHECK_STR_CONTAINS(test_read_file(path), "<!DOCTYPE html>");
    CHECK_MSG(htpu_profile_write_qnn_log(r.rt, r.p, path) == 0, "%ld chars: %s", lens[i],
              htpu_last_error());
    CHECK_STR_CONTAINS(test_read_file(path), "htpu-reference-profile-log 1");
  }
  CHECK_EQ(entries(&r, "."), 0);
  CHECK_EQ(entries(&r, ""), 2);
  rig_close(&r);
}

/* The child's side of profile_writers_unwritable_directory, as an unprivileged user in the
 * rig's directory: "" when every check held, "skip: why" or the failed check. */
#define KID(cond)                                                                       \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      snprintf(msg, cap, "line %d: %s (last error: %s)", __LINE__, #cond,               \
               htpu_last_error());                                                      \
      return;                                                                           \
    }                                                                                   \
  } while (0)

static void as_user_in_place(rig *r, ino_t ino, char *msg, size_t cap) {
  msg[0] = 0;
  if (chdir(r->dir) != 0) {
    snprintf(msg, cap, "chdir %s: %s", r->dir, strerror(errno));
    return;
  }
  if (geteuid() == 0 &&
      (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
    snprintf(msg, cap, "skip: cannot become uid 65534: %s", strerror(errno));
    return;
  }
  if (access("rodir", W_OK) == 0) {
    snprintf(msg, cap, "skip: uid %d can write a mode 555 directory", (int)geteuid());
    return;
  }
  struct stat st;
  /* the trace, the page and the QNN log: in place, the same file, its old content gone */
  KID(htpu_profile_write_trace(r->p, "rodir/f.json") == 0);
  const char *got = test_read_file("rodir/f.json");
  KID(got && strstr(got, "\"traceEvents\"") && !strstr(got, "xxxxxxxx"));
  KID(stat("rodir/f.json", &st) == 0 && st.st_ino == ino && (st.st_mode & 07777) == 0666);
  KID(htpu_profile_write_html(r->p, NULL, "rodir/f.json") == 0);
  got = test_read_file("rodir/f.json");
  KID(got && strstr(got, "<!DOCTYPE html>") && !strstr(got, "traceEvents"));
  KID(htpu_profile_write_qnn_log(r->rt, r->p, "rodir/f.json") == 0);
  got = test_read_file("rodir/f.json");
  KID(got && strstr(got, "htpu-reference-profile-log 1") && !strstr(got, "<!DOCTYPE"));
  /* through a symlink (in a directory this user cannot write either) */
  KID(htpu_profile_write_trace(r->p, "flink.json") == 0);
  KID(S_ISLNK(lmode("flink.json")));
  got = test_read_file("rodir/f.json");
  KID(got && strstr(got, "\"traceEvents\""));
  KID(stat("rodir/f.json", &st) == 0 && st.st_ino == ino);
  /* neither way: a read-only file, a new name; the error names the path and the reason */
  KID(htpu_profile_write_trace(r->p, "rodir/ro.json") == HTPU_EIO);
  KID(strstr(htpu_last_error(), "cannot write 'rodir/ro.json': Permission denied"));
  KID(strcmp(test_read_file("rodir/ro.json"), "old") == 0);
  KID(htpu_profile_write_qnn_log(r->rt, r->p, "rodir/ro.json") == HTPU_EIO);
  KID(strstr(htpu_last_error(), "cannot write 'rodir/ro.json': Permission denied"));
  KID(htpu_profile_write_html(r->p, NULL, "rodir/new.json") == HTPU_EIO);
  KID(strstr(htpu_last_error(), "cannot write 'rodir/new.json': Permission denied"));
  KID(access("rodir/new.json", F_OK) != 0);
  /* a write error in place is reported, naming the path (the file size limit: EFBIG) */
  struct rlimit lim = {100, 100};
  signal(SIGXFSZ, SIG_IGN);
  KID(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  KID(htpu_profile_write_trace(r->p, "rodir/f.json") == HTPU_EIO);
  KID(strstr(htpu_last_error(), "cannot write 'rodir/f.json': File too large"));
}

/* A writable file in a directory the user cannot write (mode 555): written in place, since no
 * temporary file can be made beside it. As root, the checks run in a child as uid 65534. */
TEST(profile_writers_unwritable_directory) {
  rig r;
  CHECK_EQ(rig_open(&r, "wrodir"), 0);
  CHECK_EQ(chmod(r.dir, 0755), 0);
  const char *rodir = in_dir(&r, "rodir"), *f = in_dir(&r, "rodir/f.json");
  CHECK_EQ(mkdir(rodir, 0755), 0);
  static char old[100000];
  memset(old, 'x', sizeof old);
  CHECK_EQ(test_write_file(f, old, sizeof old), 0);
  CHECK_EQ(chmod(f, 0666), 0);
  CHECK_EQ(test_write_file(in_dir(&r, "rodir/ro.json"), "old", 3), 0);
  CHECK_EQ(chmod(in_dir(&r, "rodir/ro.json"), 0444), 0);
  CHECK_EQ(symlink("rodir/f.json", in_dir(&r, "flink.json")), 0);
  struct stat st;
  CHECK_EQ(stat(f, &st), 0);
  CHECK_EQ(chmod(rodir, 0555), 0);
  int pipefd[2];
  CHECK_EQ(pipe(pipefd), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    static char msg[1024];
    close(pipefd[0]);
    as_user_in_place(&r, st.st_ino, msg, sizeof msg);
    ssize_t w = write(pipefd[1], msg, strlen(msg));
    _exit(w == (ssize_t)strlen(msg) ? 0 : 1);
  }
  close(pipefd[1]);
  CHECK(pid > 0);
  char msg[1024] = {0};
  size_t len = 0;
  for (ssize_t n; len < sizeof msg - 1 &&
                 (n = read(pipefd[0], msg + len, sizeof msg - 1 - len)) > 0;)
    len += (size_t)n;
  close(pipefd[0]);
  int status = 0;
  CHECK_EQ(waitpid(pid, &status, 0), pid);
  chmod(rodir, 0755);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  if (strncmp(msg, "skip: ", 6) == 0) {
    printf("    (skipped: %s)\n", msg + 6);
    rig_close(&r);
    return;
  }
  CHECK_MSG(msg[0] == 0, "as an unprivileged user: %s", msg);
  CHECK_EQ(entries_in(rodir, "."), 0);
  CHECK_EQ(entries_in(rodir, ""), 2);
  rig_close(&r);
}
