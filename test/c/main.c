/* The C test runner: runs registered tests, prints a line each and the closing summary. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

typedef struct test_case {
  const char *name;
  const char *file;
  test_fn fn;
} test_case;

static void (*g_after_failure[4])(void);
static size_t g_num_after_failure;

void test_after_failure(void (*fn)(void)) {
  if (g_num_after_failure == sizeof g_after_failure / sizeof g_after_failure[0]) abort();
  g_after_failure[g_num_after_failure++] = fn;
}

static test_case *g_tests;
static size_t g_num_tests, g_cap_tests;
static int g_current_failed;
static char g_tmpdir[256];

void test_register(const char *name, const char *file, test_fn fn) {
  if (g_num_tests == g_cap_tests) {
    g_cap_tests = g_cap_tests ? g_cap_tests * 2 : 64;
    g_tests = realloc(g_tests, g_cap_tests * sizeof(*g_tests));
    if (!g_tests) abort();
  }
  g_tests[g_num_tests++] = (test_case){name, file, fn};
}

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stdout, "    %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stdout, fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
  g_current_failed = 1;
}

int test_failed(void) { return g_current_failed; }

const char *test_build_path(const char *name) {
  static char ring[8][1024];
  static unsigned next;
  const char *dir = getenv("HTPU_TEST_BUILD_DIR");
  char *buf = ring[next++ % 8];
  snprintf(buf, sizeof(ring[0]), "%s/%s", dir ? dir : "build/asan", name);
  return buf;
}

const char *test_tmp_path(const char *name) {
  static char ring[8][512];
  static unsigned next;
  char *buf = ring[next++ % 8];
  snprintf(buf, sizeof(ring[0]), "%s/%s", g_tmpdir, name);
  return buf;
}

char *test_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

int test_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = fwrite(data, 1, len, f);
  int rc = fclose(f);
  return (n == len && rc == 0) ? 0 : -1;
}

int test_under_valgrind(void) { return getenv("HTPU_TEST_VALGRIND") != NULL; }

static int matches(const test_case *t, int argc, char **argv) {
  if (argc <= 1) return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(t->name, argv[i]) || strstr(t->file, argv[i])) return 1;
  return 0;
}

static void remove_tmpdir(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmpdir);
}

int main(int argc, char **argv) {
  snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/htpu-test-XXXXXX");
  if (!mkdtemp(g_tmpdir)) {
    perror("mkdtemp");
    return 2;
  }
  atexit(remove_tmpdir);
  size_t passed = 0, failed = 0;
  for (size_t i = 0; i < g_num_tests; i++) {
    const test_case *t = &g_tests[i];
    if (!matches(t, argc, argv)) continue;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    g_current_failed = 0;
    t->fn();
    for (size_t k = 0; g_current_failed && k < g_num_after_failure; k++) g_after_failure[k]();
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    printf("%s %s (%s, %.1f ms)\n", g_current_failed ? "FAIL" : "ok  ", t->name, t->file, ms);
    fflush(stdout);
    if (g_current_failed)
      failed++;
    else
      passed++;
  }
  free(g_tests);
  printf("%zu passed, %zu failed\n", passed, failed);
  return failed ? 1 : (passed ? 0 : 3);
}
