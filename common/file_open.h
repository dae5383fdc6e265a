/*
 * file_open.h - opening a file that is about to be read whole, without ever blocking on it.
 *
 * fopen() of a FIFO with no writer blocks forever (in Elixir that pins a dirty scheduler for
 * good), and a device or socket may block on read or never end. The file is opened with
 * O_NONBLOCK, checked to be a regular file (else refused, saying what it is), and only then
 * switched back to blocking reads. The size comes from the same fstat, so a caller can refuse a
 * file that is too large before it allocates anything. A regular file whose size is 0 may still
 * have content (procfs and sysfs files report 0): such a file is read to its end, with a bound
 * (file_read_unsized), never taken as empty from its size.
 *
 * Shared by the core (context binaries), the htpu command (input files) and the reference
 * builder (data files).
 */
#ifndef HTPU_FILE_OPEN_H
#define HTPU_FILE_OPEN_H

#include <stddef.h>
#include <stdint.h>

/* Returns an fd open for reading (close it with close()), or -1 with `err` set to a sentence
 * naming the path and what was wrong ("'x' is a FIFO (named pipe); expected a regular file",
 * or the open/fstat errno text). *size is the file's size. */
int file_open_regular(const char *path, uint64_t *size, char *err, size_t err_len);

/* Reads exactly len bytes from fd; 0, or -1 with `err` set (read error, or the file shrank). */
int file_read_exact(int fd, const char *path, void *buf, size_t len, char *err, size_t err_len);

/* Reads fd to end of file, for a file whose fstat size was 0 (/proc/self/status and the like:
 * the size says nothing, the content is made on read). Keeps at most `limit` bytes: returns 0
 * with *out (malloc'd, free() it; never NULL, even for 0 bytes) and *len, 1 when the file has
 * more than `limit` bytes (nothing kept), or -1 with `err` set (read error, out of memory). */
int file_read_unsized(int fd, const char *path, uint64_t limit, void **out, size_t *len,
                      char *err, size_t err_len);

/* "a FIFO (named pipe)", "a directory", "a character device", ... for a st_mode. */
const char *file_kind_name(unsigned mode);

#endif
