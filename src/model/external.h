/*
 * external.h - a context binary named by an EPContext node (embed_mode 0), opened from the
 * model's folder and nowhere else.
 */
#ifndef HTPU_MODEL_EXTERNAL_H
#define HTPU_MODEL_EXTERNAL_H

#include <stddef.h>

#include "binary_source.h"

/* Opens `name` (already checked relative and without "..": epcontext.c) from the folder of
 * `model_path`. Both are resolved (symlinks followed) and the file must lie inside the
 * folder, so a symlink that leads out of it is refused, as is anything but a regular file;
 * then opened as binary_open_file does (binary_source.h: mapped where its content cannot
 * change and allow_map is nonzero, else read, within the binary size limit). *path_out (at
 * least PATH_MAX+1 bytes) gets the path as the model names it, for messages. Errors set and
 * returned: HTPU_EIO (missing, unreadable), HTPU_EMODEL (outside the folder, empty, over the
 * limit), HTPU_ENOMEM; *out then holds nothing. */
int external_open(const char *model_path, const char *name, int allow_map, model_binary *out,
                  char *path_out, size_t path_len);

#endif
