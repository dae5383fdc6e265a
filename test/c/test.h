/*
 * test.h - the C test runner's tiny framework.
 *
 * TEST(name) { ... } registers a test (constructor attribute, so each test file stands alone).
 * CHECK* record a failure and return from the test; the runner prints one line per test and
 * the closing "N passed, N failed" line. `test_runner [substring ...]` runs matching tests.
 */
#ifndef HTPU_TEST_H
#define HTPU_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void (*test_fn)(void);
void test_register(const char *name, const char *file, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int test_failed(void);

#define TEST(name)                                                   \
  static void name(void);                                            \
  __attribute__((constructor)) static void test_reg_##name(void) {   \
    test_register(#name, __FILE__, name);                            \
  }                                                                  \
  static void name(void)

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);             \
      return;                                                        \
    }                                                                \
  } while (0)

#define CHECK_MSG(cond, ...)                                         \
  do {                                                               \
    if (!(cond)) {                                                   \
      test_fail(__FILE__, __LINE__, __VA_ARGS__);                    \
      return;                                                        \
    }                                                                \
  } while (0)

#define CHECK_EQ(a, b)                                                           \
  do {                                                                           \
    long long a_ = (long long)(a), b_ = (long long)(b);                          \
    if (a_ != b_) {                                                              \
      test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_);   \
      return;                                                                    \
    }                                                                            \
  } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                              \
  do {                                                                               \
    const char *h_ = (hay), *n_ = (needle);                                          \
    if (!h_ || !strstr(h_, n_)) {                                                    \
      test_fail(__FILE__, __LINE__, "'%s' does not contain '%s'", h_ ? h_ : "(null)", n_); \
      return;                                                                        \
    }                                                                                \
  } while (0)

/* fn runs after each failed test (registered from a constructor): a test that fails returns
 * at its first failed check, and what it left open must not fail the tests after it. */
void test_after_failure(void (*fn)(void));

/* HTPU_TEST_BUILD_DIR/<name>, in a static buffer per call site-independent ring of 8. */
const char *test_build_path(const char *name);
/* A fresh path under the runner's temporary directory (removed at exit). */
const char *test_tmp_path(const char *name);
/* Writes len bytes to path; returns 0 on success. */
int test_write_file(const char *path, const void *data, size_t len);
/* The file's bytes (at most 1 MiB), NUL-terminated, in a static buffer the next call
 * overwrites; NULL when it cannot be opened. */
char *test_read_file(const char *path);
/* Nonzero when running under valgrind (HTPU_TEST_VALGRIND): long loops may scale down. */
int test_under_valgrind(void);

#endif
