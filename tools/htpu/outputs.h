/*
 * outputs.h - where `htpu run` writes its outputs: the directory, one .npy file per output
 * tensor named after it.
 */
#ifndef HTPU_OUTPUTS_H
#define HTPU_OUTPUTS_H

#include <stddef.h>

#include "cli.h"
#include "hexagon_tpu.h"

/* Makes sure DIR is a directory this process can create files in, creating it (one level, like
 * mkdir without -p) when it does not exist. Checked before anything runs, so a long execute is
 * not wasted on an unwritable directory. Returns a CLI_EXIT_* code after saying why. */
int cli_output_dir_prepare(const cli_command *cmd, const char *dir);

/* File names (without the directory) for the graph's outputs, in output order: the tensor name
 * with every byte outside [A-Za-z0-9._-] replaced by '_', a leading '.' too (no hidden files,
 * no ".."), cut to 200 bytes, then ".npy"; names that end up equal (ignoring case, for
 * case-insensitive file systems) get "_2", "_3", ... *names holds num_outputs malloc'd strings;
 * free with cli_output_names_free. Returns 0 or -1 (out of memory). */
int cli_output_names(const htpu_graph_info *gi, char ***names);
void cli_output_names_free(char **names, size_t n);

/* Writes one C-order .npy file: into a temporary file in the same directory, then renamed over
 * `path`, so whatever is at `path` (an older output, a symlink) is replaced, never written
 * through. On failure removes what it wrote and returns CLI_EXIT_FAIL after saying why. */
int cli_write_npy(const cli_command *cmd, const char *path, htpu_dtype dtype,
                  const htpu_tensor_info *t, const void *data, size_t size);

#endif /* HTPU_OUTPUTS_H */
