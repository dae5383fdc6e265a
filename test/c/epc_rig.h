/* epc_rig.h - what the EPContext tests share: the add models as binaries and as ONNX files. */
#ifndef HTPU_TEST_EPC_RIG_H
#define HTPU_TEST_EPC_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "onnx_build.h"

/* The add_f32 model (FX_ADD_F32) and the same graph named add_two, as raw binaries (malloc'd,
 * cached for the run: do not free). */
const uint8_t *epc_add_bin(size_t *len);
const uint8_t *epc_add_two_bin(size_t *len);

/* Writes the model to path; 0 on success. */
int epc_write(const char *path, const ob_model *m);

/* htpu_inspect_buffer / _file through the reference system library; the message is kept in
 * epc_msg (a static buffer) on failure. */
int epc_inspect_buffer(const uint8_t *bytes, size_t len, htpu_model_info **out);
int epc_inspect_file(const char *path, uint32_t index, htpu_model_info **out);
extern char epc_msg[4096];

/* Loads path on a reference runtime (graph: the load option, or NULL), runs add_f32 (or the
 * graph named `run`) with fx_add and checks y; returns the first failing HTPU_E* code (message
 * in epc_msg), 0 when the answer was right. */
int epc_load_and_run(const char *path, const char *graph, const char *run);

#endif
