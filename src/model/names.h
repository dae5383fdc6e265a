/*
 * names.h - Ultralytics' class names as a list. Its exporters store the model's `names` in the
 * ONNX metadata_props as Python's repr of a dict, {0: 'person', 1: 'bicycle', ...}: integer
 * keys, quoted strings (single quotes, or double when the name holds a single quote), Python's
 * escapes.
 */
#ifndef HTPU_MODEL_NAMES_H
#define HTPU_MODEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "model_info.h"

#define NAMES_MAX_CLASSES 65536u

/* When text is that form with keys 0..n-1 (in any order, each once): *out gets n names (class
 * id = index) allocated in m, and 1 is returned. 0 when it is another form (the metadata
 * stays as it is; no error: other tools use the key differently), -1 out of memory. */
int names_parse(const char *text, size_t len, model_info *m, const char *const **out,
                uint32_t *count);

#endif
