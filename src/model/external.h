/*
 * external.h - a context binary named by an EPContext node (embed_mode 0), read from the
 * model's folder and nowhere else.
 */
#ifndef HTPU_MODEL_EXTERNAL_H
#define HTPU_MODEL_EXTERNAL_H

#include <stddef.h>

/* Reads `name` (already checked relative and without "..": epcontext.c) from the folder of
 * `model_path`. Both are resolved (symlinks followed) and the file must lie inside the
 * folder, so a symlink that leads out of it is refused, as is anything but a regular file;
 * then read within the binary size limit (binary_file.c). *path_out (at least PATH_MAX+1
 * bytes) gets the path read, for messages. Errors set and returned: HTPU_EIO (missing,
 * unreadable), HTPU_EMODEL (outside the folder, empty, over the limit), HTPU_ENOMEM. */
int external_read(const char *model_path, const char *name, void **out, size_t *len,
                  char *path_out, size_t path_len);

#endif
