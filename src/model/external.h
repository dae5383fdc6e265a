/*
 * external.h - a context binary named by an EPContext node (embed_mode 0), found in the
 * model's folder and nowhere else, and known by its identity (device and inode) so that
 * nodes naming one file under different names ("x.bin", "./x.bin", a hard link) share one
 * context and the file is read once.
 */
#ifndef HTPU_MODEL_EXTERNAL_H
#define HTPU_MODEL_EXTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/* Reads a located file whole, within the binary size limit (binary_file.c). It must still be
 * the file located (HTPU_EMODEL when it was replaced in between). */
int external_read(const external_file *f, void **out, size_t *len);

/* Frees what a located file holds; an empty one is fine. */
void external_file_clear(external_file *f);

#endif
