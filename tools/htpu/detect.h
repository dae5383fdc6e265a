/* detect.h - what `htpu detect` found (detect.c), and its reports: the table and JSON
 * (detect_report.c) and the drawn frame (detect_draw.c). */
#ifndef HTPU_DETECT_H
#define HTPU_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "frame_input.h"
#include "hexagon_tpu.h"
#include "session.h"

typedef struct cli_detect {
  cli_session s;
  cli_frame frame;
  htpu_io *io; /* the input, then the outputs, in their own types */
  uint32_t num_io;
  htpu_exec_stats st;
  htpu_geometry geometry;
  htpu_detection *dets;
  float *kp;
  size_t kp_len;
  htpu_decode_info info;
  char **labels; /* --labels, else the model's class names: one per class */
  size_t num_labels;
  const char *labels_from; /* the --labels file, "the model's class names ...", NULL: none */
  uint64_t preprocess_ns, decode_ns;
} cli_detect;

/* The label of a class, NULL without one (detect_report.c). */
const char *cli_detect_label(const cli_detect *d, uint32_t cls);
/* The human report on stdout. 0, or -1 when it could not be written. */
int cli_detect_table(const cli_args *a, const cli_detect *d);
/* The JSON array on stdout. 0, or -1. */
int cli_detect_json(const cli_detect *d);
/* The frame (converted to RGB) with the detections drawn, as a PNG at `path`. 0, or -1 with
 * the reason in err. */
int cli_detect_draw(const cli_detect *d, const char *path, char *err, size_t errlen);

#endif
