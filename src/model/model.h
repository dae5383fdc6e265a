/*
 * model/ - a context binary before and beside its QNN context: the file read within its
 * limits (binary_file.h), held for the context's life: mapped, copied or lent
 * (binary_source.h), its metadata read through the system library, checked and copied
 * (model_info.h: introspect.c, introspect_validate.c), and the check of its needs against the
 * device and backend before a load (compat.c), and a QNN context made from it (create.h: a
 * load's and a recovery's); models wrapped in ONNX (EPContext nodes) unwrapped to the binary
 * they carry, and what a model costs in memory (onnx_model.h: pb.c, onnx_read.c, epcontext.c,
 * external.c, names.c, model_open.c, inspect.c, memory.c).
 *
 * The door: what the other rooms may use of model/. model/ uses base/, loader/ (and qnn/, the
 * ABI) and device/.
 */
#ifndef HTPU_MODEL_H
#define HTPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "binary_file.h"
#include "binary_source.h"
#include "create.h"
#include "memory.h"
#include "model_info.h"
#include "onnx_model.h"

struct runtime_obj;

/* Compatibility preflight of a binary against this runtime's device and backend: returns 0
 * or HTPU_EINCOMPATIBLE with one message naming both sides. graph_on (NULL: all) says which
 * graphs will be deserialized (only their VTCM needs count). */
int compat_check(struct runtime_obj *rt, const model_info *info, const uint8_t *graph_on,
                 const void *binary, size_t len);

/* 1 when what keeps the binary from this runtime is only that a newer QNN release made it (its
 * QNN or backend API newer than the runtime's, or its build id's release newer than the
 * runtime's) while its backend, DSP, SoC and VTCM (of the graphs graph_on names, as for
 * compat_check) fit: another installed QNN set may load it. */
int compat_too_new(struct runtime_obj *rt, const model_info *info, const uint8_t *graph_on);

#endif
