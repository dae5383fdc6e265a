/*
 * shared_io.h - --shared-buffers of `htpu run` and `htpu bench`: every input and output of the
 * graph in one registered shared buffer (htpu_graph_alloc_io), in the tensors' own types.
 *
 * Inputs are converted once (f32 data quantized with htpu_quantize, native data copied), so
 * the executes that follow pass the buffers by handle: no copy through FastRPC and no
 * per-call quantization. When FastRPC memory is not available the library hands out ordinary
 * memory instead; this says which one it was, and why.
 */
#ifndef HTPU_SHARED_IO_H
#define HTPU_SHARED_IO_H

#include <stdint.h>

#include "cli.h"
#include "hexagon_tpu.h"
#include "inputs.h"

typedef struct cli_shared_io {
  htpu_shared *buf;
  htpu_io *io;  /* num_inputs + num_outputs entries: inputs then outputs, pointing into buf */
  int fastrpc;  /* htpu_shared_is_fastrpc */
  char note[1024]; /* why not FastRPC, or why FastRPC memory was not registered ("" when
                      it was both) */
  uint64_t registrations_at_open; /* htpu_stats.mem_registrations when allocated */
} cli_shared_io;

/* Allocates the buffer for the graph. Returns a CLI_EXIT_* code after saying why it failed. */
int cli_shared_io_open(const cli_command *cmd, htpu_graph *g, const htpu_graph_info *gi,
                       cli_shared_io *out);

/* Converts input i's data (f32 or the tensor's own type) into the shared input. */
int cli_shared_io_fill_inputs(const cli_command *cmd, cli_shared_io *sio, const cli_inputs *in);

/* Reads shared output i as `dtype` (HTPU_F32: dequantized; else the tensor's type) into dst
 * of `size` bytes: the elements `t` says it holds (its info as the execute produced it: an
 * output with dynamic dimensions holds fewer than its maximum, from the buffer's start). */
int cli_shared_io_read_output(const cli_command *cmd, const cli_shared_io *sio,
                              const htpu_graph_info *gi, uint32_t i, const htpu_tensor_info *t,
                              htpu_dtype dtype, void *dst, size_t size);

/* memRegister calls that succeeded since cli_shared_io_open (process-wide counter). */
uint64_t cli_shared_io_registrations(const cli_shared_io *sio);

/* After the executes: the registrations made, and, for FastRPC memory that none were, the
 * library's reason (the runtime's shared-memory note) in sio->note. */
uint64_t cli_shared_io_finish(cli_shared_io *sio, htpu_runtime *rt);

void cli_shared_io_close(cli_shared_io *sio);

#endif /* HTPU_SHARED_IO_H */
