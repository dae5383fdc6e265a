/* test_core_files.c - reading context binaries: never blocks, refuses what is not a model file
 * and what is too large before allocating for it. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "hexagon_tpu.h"
#include "test.h"

/* A read that blocks (the old fopen of a FIFO waited for a writer forever) fails the test via
 * SIGALRM instead of hanging the runner: the handler only records, and the interrupted
 * open() returns EINTR, which the old code reported as an error. */
static volatile sig_atomic_t alarmed;
static void on_alarm(int sig) {
  (void)sig;
  alarmed = 1;
}

static void arm_watchdog(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: a blocked open() returns EINTR */
  sigaction(SIGALRM, &sa, NULL);
  alarmed = 0;
  alarm(10);
}

static void disarm_watchdog(void) {
  alarm(0);
  signal(SIGALRM, SIG_DFL);
}

TEST(files_fifo_is_refused_without_blocking) {
  fx_reset_env();
  const char *sys = test_build_path("libhtpu_refsystem.so");
  const char *fifo = test_tmp_path("model.fifo");
  unlink(fifo);
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  htpu_model_info *m = NULL;
  arm_watchdog();
  int rc = htpu_inspect_file(sys, fifo, &m);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  htpu_runtime *rt = fx_open_runtime();
  htpu_context *ctx = NULL;
  int rc2 = rt ? htpu_context_open_file(rt, fifo, &ctx) : -999;
  char msg2[1024];
  snprintf(msg2, sizeof msg2, "%s", htpu_last_error());
  disarm_watchdog();
  htpu_runtime_close(&rt);
  unlink(fifo);
  CHECK_MSG(!alarmed, "reading a FIFO blocked");
  CHECK_EQ(rc, HTPU_EIO);
  CHECK(m == NULL);
  CHECK_STR_CONTAINS(msg, "is a FIFO (named pipe); expected a regular file");
  CHECK_STR_CONTAINS(msg, "model.fifo");
  CHECK_EQ(rc2, HTPU_EIO);
  CHECK(ctx == NULL);
  CHECK_STR_CONTAINS(msg2, "is a FIFO (named pipe)");
}

TEST(files_directory_and_device_are_named) {
  fx_reset_env();
  const char *sys = test_build_path("libhtpu_refsystem.so");
  htpu_model_info *m = NULL;
  CHECK_EQ(htpu_inspect_file(sys, "/tmp", &m), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "'/tmp' is a directory; expected a regular file");
  CHECK_EQ(htpu_inspect_file(sys, "/dev/zero", &m), HTPU_EIO);
  CHECK_STR_CONTAINS(htpu_last_error(), "is a character device");
}

/* A sparse file far above the limit is refused from its size alone: nothing is allocated or
 * read (the old code read all of it, then found it malformed). */
TEST(files_larger_than_the_limit_are_refused_before_reading) {
  fx_reset_env();
  const char *sys = test_build_path("libhtpu_refsystem.so");
  const char *big = test_tmp_path("sparse.bin");
  int fd = open(big, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  CHECK(fd >= 0);
  /* 64 GiB: more than ASan lets malloc hand out, so reading it is not an option either */
  int trunc_rc = ftruncate(fd, 64ll << 30);
  close(fd);
  CHECK_EQ(trunc_rc, 0);
  htpu_model_info *m = NULL;
  int rc = htpu_inspect_file(sys, big, &m);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  unlink(big);
  CHECK_EQ(rc, HTPU_EMODEL);
  CHECK_STR_CONTAINS(msg, "has 68719476736 bytes, more than the 1073741824-byte limit");
  CHECK_STR_CONTAINS(msg, "HTPU_MAX_BINARY_BYTES");
  CHECK_EQ(htpu_max_binary_bytes(), HTPU_DEFAULT_MAX_BINARY_BYTES);
}

TEST(files_limit_is_configurable) {
  fx_reset_env();
  const char *sys = test_build_path("libhtpu_refsystem.so");
  const char *path = fx_build_model_file("limit.bin", "graph g\n  input x f32 [1,4]\n"
                                                       "  output y f32 [1,4]\n  op Relu x -> y\n");
  CHECK(path);
  struct stat st;
  CHECK_EQ(stat(path, &st), 0);
  htpu_model_info *m = NULL;
  htpu_set_max_binary_bytes((uint64_t)st.st_size - 1);
  int rc = htpu_inspect_file(sys, path, &m);
  htpu_runtime *rt = fx_open_runtime();
  htpu_context *ctx = NULL;
  int rc2 = rt ? htpu_context_open_file(rt, path, &ctx) : -999;
  htpu_set_max_binary_bytes((uint64_t)st.st_size);
  int rc3 = htpu_inspect_file(sys, path, &m);
  htpu_set_max_binary_bytes(0);
  htpu_runtime_close(&rt);
  CHECK_EQ(rc, HTPU_EMODEL);
  CHECK_EQ(rc2, HTPU_EMODEL);
  CHECK(ctx == NULL);
  CHECK_EQ(rc3, 0);
  CHECK(m);
  htpu_model_info_free(m);
  CHECK_EQ(htpu_max_binary_bytes(), HTPU_DEFAULT_MAX_BINARY_BYTES);
}

/* A /proc file's size is 0 in stat, its content made on read: it is read to its end within the
 * limit (and judged as a model on what it holds), never reported as empty; past the limit it is
 * refused once limit + 1 bytes were read. */
TEST(files_procfs_are_read_to_their_end_within_the_limit) {
  fx_reset_env();
  const char *sys = test_build_path("libhtpu_refsystem.so");
  htpu_model_info *m = NULL;
  int rc = htpu_inspect_file(sys, "/proc/self/status", &m);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", htpu_last_error());
  htpu_set_max_binary_bytes(10);
  int rc2 = htpu_inspect_file(sys, "/proc/self/status", &m);
  char msg2[1024];
  snprintf(msg2, sizeof msg2, "%s", htpu_last_error());
  htpu_set_max_binary_bytes(0);
  CHECK(m == NULL);
  CHECK_EQ(rc, HTPU_EMODEL);
  CHECK_MSG(!strstr(msg, "is empty"), "a /proc file reported as empty: %s", msg);
  CHECK_STR_CONTAINS(msg, "malformed");
  CHECK_EQ(rc2, HTPU_EMODEL);
  CHECK_STR_CONTAINS(msg2, "'/proc/self/status' has more than the 10-byte limit");
  CHECK_EQ(htpu_max_binary_bytes(), HTPU_DEFAULT_MAX_BINARY_BYTES);
}
