/*
 * binary_file.h - a context binary read from a file: the process-wide size limit
 * (htpu_set_max_binary_bytes) checked before a byte is allocated, then common/file_open's
 * never-blocking open and read.
 */
#ifndef HTPU_BINARY_FILE_H
#define HTPU_BINARY_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Reads a whole file into a malloc'ed buffer (HTPU_EIO naming the path on failure, HTPU_EMODEL
 * when it is empty or over the limit). */
int read_whole_file(const char *path, void **out, size_t *out_len);

/* The same from a file already opened with file_open_regular (`size` its fstat size); the fd
 * is closed. `path` names it in messages. */
int read_whole_fd(int fd, const char *path, uint64_t size, void **out, size_t *out_len);

#endif
