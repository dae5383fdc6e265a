/*
 * inputs.h - the graph inputs of `htpu run` and `htpu bench`: which --input goes to which
 * tensor (inputs.c), reading raw and .npy files (input_file.c), generating data (input_gen.c).
 *
 * Data reaches htpu_graph_execute either as f32 (quantized by the library, so the whole-call
 * time includes that) or in the tensor's own type (passed through untouched).
 */
#ifndef HTPU_INPUTS_H
#define HTPU_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "hexagon_tpu.h"

typedef enum cli_input_source {
  CLI_INPUT_UNBOUND = 0, /* no --input names it (bench generates the data) */
  CLI_INPUT_RAW,
  CLI_INPUT_NPY,
  CLI_INPUT_GENERATED,
  CLI_INPUT_FRAME /* --image/--frame: preprocessed into the tensor's type (frame_input.c) */
} cli_input_source;

typedef struct cli_input {
  const htpu_tensor_info *tensor; /* borrowed from the graph */
  const char *path;               /* borrowed from argv; NULL when generated */
  cli_input_source source;
  htpu_dtype dtype; /* what `data` holds: HTPU_F32 or tensor->dtype */
  void *data;       /* owned */
  size_t size;      /* bytes: num_elements * htpu_dtype_size(dtype) */
} cli_input;

typedef struct cli_inputs {
  uint32_t count; /* = the graph's input count */
  cli_input *items; /* in graph-input order */
} cli_inputs;

/* Matches the command's --input values with the graph's inputs. A value is NAME=FILE when the
 * text before one of its '=' is an input name, otherwise a bare FILE; bare files are taken in
 * graph-input order and are only accepted when every input is given that way (anything else
 * would be a guess). Missing inputs are an error unless allow_missing (they stay UNBOUND).
 * Usage errors (unknown or duplicate names, missing or extra inputs) list the graph's inputs.
 * Returns a CLI_EXIT_* code; on failure *out is freed. */
int cli_inputs_bind(const cli_args *a, const htpu_graph_info *gi, int allow_missing,
                    cli_inputs *out);

/* A usage error naming the first input no option gave (and listing the graph's inputs), or
 * CLI_EXIT_OK when every input is bound. */
int cli_inputs_check_all(const cli_args *a, const htpu_graph_info *gi, const cli_inputs *in);

/* Points the inputs at the same graph's tensor infos in gi (bound against the model's
 * metadata before the graph was opened). */
void cli_inputs_retarget(cli_inputs *in, const htpu_graph_info *gi);

/* Reads every bound input's file (input_file.c), except those already holding their data
 * (frames). Returns a CLI_EXIT_* code. */
int cli_inputs_load(const cli_command *cmd, cli_inputs *in);

/* Fills every UNBOUND input with deterministic pseudo-random f32 data in a range the tensor can
 * represent (input_gen.c). Returns a CLI_EXIT_* code. */
int cli_inputs_generate(const cli_command *cmd, cli_inputs *in, uint64_t seed);

/* io[i] = {data, size, dtype} of input i; io holds in->count entries. */
void cli_inputs_fill_io(const cli_inputs *in, htpu_io *io);

void cli_inputs_free(cli_inputs *in);

/* "raw", "npy", "generated", "frame" */
const char *cli_input_source_name(cli_input_source s);

/* Reads one input file for `t` into a fresh buffer (input_file.c): `.npy` by name or by its
 * magic, otherwise raw. Prints why it failed (naming the input, the file and what was
 * expected) and returns CLI_EXIT_FAIL, or CLI_EXIT_OK. */
int cli_input_read_file(const cli_command *cmd, cli_input *in);

#endif /* HTPU_INPUTS_H */
