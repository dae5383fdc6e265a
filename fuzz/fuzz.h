/*
 * fuzz.h - what the libFuzzer targets in fuzz/ share (docs/reliability.md): the entry points'
 * prototypes and FUZZ_CHECK, which turns a broken invariant into an abort() that libFuzzer
 * reports as a crash and saves the input for.
 */
#ifndef HTPU_FUZZ_H
#define HTPU_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* FUZZ_CHECK(condition, "format", ...): on failure prints the place, the condition and the
 * message, then aborts. */
#define FUZZ_CHECK(cond, ...)                                                                  \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "\nfuzz check failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);     \
      fprintf(stderr, __VA_ARGS__);                                                            \
      fputc('\n', stderr);                                                                     \
      abort();                                                                                 \
    }                                                                                          \
  } while (0)

#endif /* HTPU_FUZZ_H */
