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

/* The steps of read_whole_file, for a caller that may map the file instead (binary_source.c):
 * the open (an fd >= 0, or the error code, set), the limit check of a size, and the read of
 * an open file whose fstat size was `size` (0: read to its end within the limit). */
int binary_file_open(const char *path, uint64_t *size);
int binary_file_check_size(const char *path, uint64_t size);
int binary_file_read_fd(int fd, const char *path, uint64_t size, void **out, size_t *out_len);

#endif
