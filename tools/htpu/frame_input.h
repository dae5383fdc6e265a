/*
 * frame_input.h - camera frames on the command line (frame_input.c): `htpu run --image
 * NAME=F.ppm` / `--frame NAME=F --size WxH --format FMT`, and `htpu detect`. A frame is read
 * whole (a binary PPM/PGM, or raw bytes described by the options) and written into its input
 * by htpu_preprocess, in the input's own type.
 */
#ifndef HTPU_FRAME_INPUT_H
#define HTPU_FRAME_INPUT_H

#include "cli.h"
#include "hexagon_tpu.h"
#include "inputs.h"

/* The options of a frame and of how it goes into the input (add to a command's table). */
#define CLI_FRAME_OPTIONS                                                                        \
  {"size", "WxH", "--frame: the frame's width and height in pixels", 0},                         \
      {"format", "FMT", "--frame: rgb24, bgr24, rgba, bgra, gray8, yuyv or nv12", 0},            \
      {"stride", "N", "--frame: bytes from one row to the next (default: rows packed)", 0},      \
      {"uv-offset", "N",                                                                         \
       "--frame nv12: where the UV plane starts, in bytes (default: right after the Y plane)",   \
       0},                                                                                       \
      {"crop", "X,Y,W,H", "use this part of the frame (boxes stay in frame pixels)", 0},         \
      {"resize", "MODE",                                                                         \
       "letterbox (default: aspect kept, padded, as Ultralytics), stretch or crop (the centred " \
       "part of the input's aspect)",                                                            \
       0},                                                                                       \
      {"pad", "V", "the letterbox border value, 0..255 (default 114)", 0},                       \
      {"channels", "ORDER", "rgb (default) or bgr: the channel order the model takes", 0}

typedef struct cli_frame {
  htpu_frame frame; /* data points into bytes */
  void *bytes;      /* the file, owned */
  const char *path; /* borrowed from argv */
} cli_frame;

/* Reads `path` as the frame: a binary PPM (P6: rgb24) or PGM (P5: gray8) when `image`, else raw
 * bytes described by --size, --format, --stride and --uv-offset; --crop applies to both. Prints
 * why it failed (usage errors for the options, failures for the file) and returns the exit
 * code; CLI_EXIT_OK with *out filled. */
int cli_frame_read(const cli_args *a, const char *path, int image, cli_frame *out);
void cli_frame_free(cli_frame *f);

/* --resize, --pad, --channels into *o (initialized first). CLI_EXIT_OK or CLI_EXIT_USAGE. */
int cli_frame_preprocess_options(const cli_args *a, htpu_preprocess_options *o);

/* `htpu run`: --image NAME=FILE and --frame NAME=FILE (a bare FILE for a graph of one input),
 * each read and preprocessed into the input it names, which must not be given twice. Call after
 * cli_inputs_bind (with missing inputs allowed); checks that every input is then given
 * (cli_inputs_check_all). */
int cli_frames_bind(const cli_args *a, const htpu_graph_info *gi, cli_inputs *in);

#endif
