/*
 * external.h - a context binary named by an EPContext node (embed_mode 0), found in the
 * model's folder and nowhere else, and known by its identity (device and inode) so that
 * nodes naming one file under different names ("x.bin", "./x.bin", a hard link) share one
 * context and the file is opened once (mapped or read: binary_source.h).
 */
#ifndef HTPU_MODEL_EXTERNAL_H
#define HTPU_MODEL_EXTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "binary_source.h"

typedef struct external_file {
  char *shown;    /* the model's folder joined with the name, escaped for messages (malloc'd) */
  char *real;     /* the resolved path (malloc'd) */
  uint64_t dev, ino;
  uint64_t size;  /* from fstat (0 for a procfs-like file, whose size is known once read) */
} external_file;

/* Finds `name` (already checked relative and without "..": epcontext.c) in the folder of
 * `model_path`. Both are resolved (symlinks followed) and the file must lie inside the folder,
 * so a symlink that leads out of it is refused, as is the folder itself and anything but a
 * regular file (opened without blocking and closed again: nothing is read). Errors set and
 * returned: HTPU_EIO (missing, unreadable, not a regular file), HTPU_EMODEL (outside the
 * folder, the folder itself), HTPU_ENOMEM; *f is then empty. */
int external_locate(const char *model_path, const char *name, external_file *f);

/* Opens a located file as binary_open_file does (binary_source.h): mapped where its content
 * cannot change and allow_map is nonzero, else read whole, within the binary size limit. The
 * file opened must still be the file located, the device and inode of its descriptor checked
 * before a byte is mapped or read (HTPU_EMODEL when it was replaced in between); a mapping is
 * made of that descriptor, so it is of that file too. Other errors as binary_open_file's; *out
 * then holds nothing. */
int external_open(const external_file *f, int allow_map, model_binary *out);

/* Frees what a located file holds; an empty one is fine. */
void external_file_clear(external_file *f);

#endif
