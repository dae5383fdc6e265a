/*
 * report_file.h - where the profile writers put a report (a trace, a page, a QNN profile log),
 * with the semantics a user expects of a program writing a report to a path:
 *
 *   - a path that exists and is not a regular file once symlinks are followed (a character
 *     device such as /dev/stdout on a terminal or /dev/full, a FIFO, a socket) is opened and
 *     written directly, as the shell's `>` would; every write and close error is reported,
 *     naming the path (ENOSPC on /dev/full is an error);
 *   - a regular file or a new path is written atomically: to a unique temporary file in the
 *     directory of the final target (a symlink is followed to its target, which gets the new
 *     content and keeps being pointed at), named `.htpu-` and 12 random hex digits whatever
 *     the target's name (so any name the filesystem takes works), renamed over it when
 *     complete; a file replaced keeps its permission bits, a new one gets 0666 less the umask;
 *   - an existing regular file in a directory that takes no new file (EACCES, EPERM, EROFS
 *     creating the temporary file) is written in place when it can be opened for writing
 *     (O_TRUNC, as the shell's `>`; every write and close error reported): not atomic, a
 *     reader can see it part-written and a failure leaves it so;
 *   - a directory, a missing parent or a path that can be written neither way is a clear
 *     error naming the path and the reason; nothing is left behind by a failure.
 *
 * Concurrent writers to one path each use their own temporary file; the last rename wins.
 * `htpu run`'s .npy outputs are written by their own code (tools/htpu/outputs.c), which
 * replaces a symlink planted in its output directory on purpose.
 */
#ifndef HTPU_REPORT_FILE_H
#define HTPU_REPORT_FILE_H

#include <stddef.h>

typedef struct report_file {
  int fd;            /* -1 once closed */
  int err;           /* the first errno a write met (0: none) */
  const char *path;  /* as the caller gave it, for messages */
  char *final;       /* the name renamed to: the path with its symlinks followed */
  char *tmp;         /* the temporary name; NULL when writing the path directly or in place */
  int keep_mode;     /* replacing a regular file: its permission bits go to the new one */
  unsigned mode;
  size_t len;
  char buf[16384];
} report_file;

/* Opens `path` as above. Returns 0, or HTPU_EIO (set) naming the path and the reason. */
int report_open(report_file *o, const char *path);

/* Writing: buffered; the first error is kept for report_close. */
void report_write(report_file *o, const void *data, size_t n);
void report_puts(report_file *o, const char *s);
void report_putc(report_file *o, char c);
void report_printf(report_file *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Flushes, closes and (atomic mode) renames. Returns 0, or HTPU_EIO (set) naming the path and
 * the first error; the temporary file is removed on failure. */
int report_close(report_file *o);

/* For a writer that is not ours (the system library's serialization target): the name it
 * should create and write, `*name` (the temporary file, made empty, or the path itself when it
 * is written directly). After the writer is done: report_commit (renames; 0 or HTPU_EIO set)
 * or report_abandon (removes the temporary file). */
int report_reserve(report_file *o, const char *path, const char **name);
int report_commit(report_file *o);
void report_abandon(report_file *o);

#endif
