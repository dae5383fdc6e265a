/*
 * binary_source.h - the bytes of a loaded context binary and what keeps them alive for the
 * context's whole life (QNN reads them at creation, after PERSISTENT_BINARY at every use,
 * and a recovery after a DSP restart creates the context from them again):
 *
 *   - MAPPED: a file mapped where its content cannot change while it is mapped: a file
 *     system without write support (squashfs, the Nerves root file system; erofs, cramfs,
 *     romfs, iso9660), or a memfd sealed against writing and shrinking. Its pages are the page
 *     cache's, shared and reclaimable: the process adds no copy.
 *   - COPIED: any other file is read into memory the context owns. A file on a writable file
 *     system (/data, tmpfs, a read-only mount of a writable one, which another mount or a
 *     remount can still change) may be truncated or rewritten while the model is loaded; a
 *     mapping of it would then fault (SIGBUS) on the next read and take the VM down with it.
 *   - LENT: the caller's buffer, referenced, not copied, until the release function it gave
 *     is called (the NIF lends an Erlang binary, which never changes).
 */
#ifndef HTPU_MODEL_BINARY_SOURCE_H
#define HTPU_MODEL_BINARY_SOURCE_H

#include <stddef.h>
#include <stdint.h>

typedef enum binary_kind { BINARY_COPIED = 0, BINARY_MAPPED = 1, BINARY_LENT = 2 } binary_kind;

typedef struct model_binary {
  const void *data; /* what QNN reads; valid until binary_release */
  size_t len;
  binary_kind kind;
  void *base;       /* the copy (free) or the mapping (munmap) */
  size_t base_len;
  void (*release)(void *arg); /* LENT: called once by binary_release */
  void *release_arg;
  char note[200];   /* why it is held this way, for the context's load info */
} model_binary;

/* Opens a context binary file within the size limit (binary_file.h): mapped where that is
 * safe and allow_map is nonzero, else copied. 0, or HTPU_EIO naming the path, HTPU_EMODEL
 * (empty, over the limit), HTPU_ENOMEM. On failure *out holds nothing. */
int binary_open_file(const char *path, int allow_map, model_binary *out);

/* The same from a file the caller opened (binary_file_open, `size` its fstat size) and
 * checked: external.c makes sure it is the file it located first. The fd stays the caller's
 * to close (a mapping outlives it). */
int binary_open_fd(int fd, const char *path, uint64_t size, int allow_map, model_binary *out);

/* The caller's buffer: lent when release is not NULL (release(arg) is called when the
 * context no longer needs it, also when the load fails), else copied. 0 or HTPU_ENOMEM (the
 * buffer is released then too). */
int binary_from_buffer(const void *buf, size_t len, void (*release)(void *), void *arg,
                       model_binary *out);

/* Frees the copy, unmaps the mapping, or calls the release function. Idempotent. */
void binary_release(model_binary *b);

/* The bytes the binary holds of the process's memory or its mappings: the whole mapping or
 * copy (a binary embedded in an ONNX model maps the whole model file, not only its slice), 0
 * when lent. What htpu_stats' binary_bytes_mapped and binary_bytes_copied count. */
size_t binary_held_bytes(const model_binary *b);

/* "mapped", "copied", "lent" */
const char *binary_kind_name(binary_kind k);

#endif
