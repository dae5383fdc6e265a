/* test_core_profile_writers.c - where the trace, page and QNN profile log land (report_file.h):
 * a symlink keeps pointing at its target, which gets the content; a character device or FIFO
 * is written directly with every error reported; a directory or missing parent is an error;
 * concurrent writers to one path each succeed; nothing is left behind.
 *
 * Devices are never real /dev nodes replaced by a mistake: as root the test makes its own
 * node of /dev/full's numbers in its temporary directory; otherwise it uses /dev/full itself,
 * which a non-root process cannot replace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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
  static char ring[8][600];
  static unsigned next;
  char *buf = ring[next++ % 8];
  snprintf(buf, sizeof ring[0], "%s/%s", r->dir, name);
  return buf;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 18];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* How many entries of the rig's directory start with `prefix` ("." = temporary files). */
static int entries(const rig *r, const char *prefix) {
  DIR *d = opendir(r->dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
        strncmp(e->d_name, prefix, strlen(prefix)) == 0)
      n++;
  closedir(d);
  return n;
}

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
  CHECK_STR_CONTAINS(slurp(target), "\"name\":\"relu_mid\"");
  CHECK_EQ(htpu_profile_write_html(r.p, NULL, link), 0);
  CHECK(S_ISLNK(lmode(link)));
  CHECK_STR_CONTAINS(slurp(target), "<!DOCTYPE html>");
  CHECK_EQ(htpu_profile_write_qnn_log(r.rt, r.p, link), 0);
  CHECK(S_ISLNK(lmode(link)));
  CHECK_STR_CONTAINS(slurp(target), "htpu-reference-profile-log 1");
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
  CHECK_STR_CONTAINS(slurp(path), "\"otherData\"");
  CHECK_EQ(entries(&r, ""), 1);
  rig_close(&r);
}
