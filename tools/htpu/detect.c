/* detect.c - `htpu detect MODEL --image F.ppm | --frame F --size WxH --format FMT`: a camera
 * frame through a detector (htpu_preprocess, one execute, htpu_decode), the detections as a
 * table or JSON, and with --draw the frame with its boxes as a PNG (detect_draw.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "detect.h"
#include "frame_input.h"
#include "json.h"
#include "session.h"

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int decode_options(const cli_args *a, htpu_decode_options *o) {
  htpu_decode_options_init(o);
  const char *head = cli_get(a, "head"), *s;
  if (head && htpu_head_from_name(head, &o->head))
    return cli_usage_error(a->cmd, "--head %s: %s", head, htpu_last_error());
  const char *layout = cli_get(a, "head-layout");
  if (layout && !strcmp(layout, "channels_first")) o->layout = HTPU_HEAD_CHANNELS_FIRST;
  else if (layout && !strcmp(layout, "anchors_first")) o->layout = HTPU_HEAD_ANCHORS_FIRST;
  else if (layout && strcmp(layout, "auto"))
    return cli_usage_error(a->cmd, "--head-layout %s: expected auto, channels_first or "
                                   "anchors_first", layout);
  float *f[] = {&o->score_threshold, &o->iou_threshold};
  const char *names[] = {"score", "iou"};
  for (int i = 0; i < 2; i++) {
    char *end;
    if (!(s = cli_get(a, names[i]))) continue;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0.0 && v <= 1.0))
      return cli_usage_error(a->cmd, "--%s %s: expected a number in 0..1", names[i], s);
    *f[i] = (float)v;
  }
  int rc = cli_get_u32(a, "max", 300, 1, 100000, &o->max_detections);
  if (!rc) rc = cli_get_u32(a, "classes", 0, 0, UINT32_MAX, &o->num_classes);
  return rc;
}

/* A label longer than this is an error naming its line, never cut into several: a split
 * would shift every later class's name. The count is the library's bound on class names. */
#define LABEL_MAX 1024
#define LABELS_MAX 65536

static int add_label(cli_detect *d, size_t *cap, const char *text) {
  if (d->num_labels == *cap) {
    size_t n = *cap ? *cap * 2 : 64;
    char **p = realloc(d->labels, n * sizeof *p);
    if (!p) return -1;
    d->labels = p;
    *cap = n;
  }
  if (!(d->labels[d->num_labels] = strdup(text))) return -1;
  d->num_labels++;
  return 0;
}

/* --labels FILE: one name a line, read whole (blank lines are names too: the line number is
 * the class). */
static int read_labels(const cli_args *a, cli_detect *d) {
  const char *path = cli_get(a, "labels");
  if (!path) return CLI_EXIT_OK;
  FILE *f = fopen(path, "r");
  if (!f) return cli_fail(a->cmd, "--labels %s: cannot open it", path);
  char *line = NULL;
  size_t linecap = 0, cap = 0;
  ssize_t n;
  int rc = CLI_EXIT_OK;
  while (rc == CLI_EXIT_OK && (n = getline(&line, &linecap, f)) >= 0) {
    size_t len = (size_t)n, no = d->num_labels + 1;
    if (len && line[len - 1] == '\n') line[--len] = '\0';
    if (len && line[len - 1] == '\r') line[--len] = '\0';
    if (memchr(line, '\0', len))
      rc = cli_fail(a->cmd, "--labels %s: line %zu holds a NUL byte (expected one class name "
                    "a line, as text)", path, no);
    else if (len > LABEL_MAX)
      rc = cli_fail(a->cmd, "--labels %s: line %zu is %zu bytes long; a class name may have "
                    "at most %d", path, no, len, LABEL_MAX);
    else if (no > LABELS_MAX)
      rc = cli_fail(a->cmd, "--labels %s: more than %d lines; expected one class name a line, "
                    "at most %d classes", path, LABELS_MAX, LABELS_MAX);
    else if (add_label(d, &cap, line) != 0)
      rc = cli_fail(a->cmd, "out of memory");
  }
  free(line);
  if (rc == CLI_EXIT_OK && (ferror(f) || !feof(f)))
    rc = cli_fail(a->cmd, "--labels %s: could not read it whole", path);
  fclose(f);
  d->labels_from = path;
  return rc;
}

/* Without --labels, the model's own class names (an Ultralytics export's "names" metadata,
 * as htpu info shows them); none when it has none. */
static int model_labels(const cli_args *a, cli_detect *d) {
  const htpu_model_source *src = d->s.meta ? d->s.meta->source : NULL;
  if (cli_get(a, "labels") || !src || !src->num_class_names) return CLI_EXIT_OK;
  size_t cap = 0;
  for (uint32_t i = 0; i < src->num_class_names; i++)
    if (add_label(d, &cap, src->class_names[i]) != 0) return cli_fail(a->cmd, "out of memory");
  d->labels_from = "the model's metadata (htpu info: class names)";
  return CLI_EXIT_OK;
}

/* The frame: --image F.ppm or --frame F (exactly one). */
static int read_frame(const cli_args *a, cli_frame *f) {
  size_t ni = cli_count(a, "image"), nf = cli_count(a, "frame");
  if (ni + nf != 1)
    return cli_usage_error(a->cmd, "give one frame: --image F.ppm or --frame F --size WxH "
                                   "--format FMT");
  return cli_frame_read(a, ni ? cli_get(a, "image") : cli_get(a, "frame"), ni == 1, f);
}

/* Buffers for the graph's input and outputs, in their own types. */
static int alloc_io(const cli_args *a, cli_detect *d) {
  const htpu_graph_info *gi = d->s.info;
  if (gi->num_inputs != 1)
    return cli_fail(a->cmd, "graph '%s' has %u inputs; detect runs a detector of one image input",
                    gi->name, gi->num_inputs);
  uint32_t n = 1 + gi->num_outputs;
  d->io = calloc(n, sizeof *d->io);
  if (!d->io) return cli_fail(a->cmd, "out of memory");
  d->num_io = n;
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *t = i ? &gi->outputs[i - 1] : &gi->inputs[0];
    d->io[i] = (htpu_io){calloc(1, t->byte_size ? t->byte_size : 1), t->byte_size, t->dtype};
    if (!d->io[i].data) return cli_fail(a->cmd, "out of memory (%zu bytes)", t->byte_size);
  }
  return CLI_EXIT_OK;
}

/* The execute; the outputs' infos as it produced them into outs (an output with a dynamic
 * dimension holds only that many elements: the rest of its buffer is not an answer). */
static int execute(const cli_args *a, cli_detect *d, htpu_tensor_info *outs) {
  const htpu_graph_info *gi = d->s.info;
  int dynamic = 0;
  for (uint32_t i = 0; i < gi->num_outputs; i++) dynamic |= gi->outputs[i].dynamic_dims != 0;
  htpu_exec_options xo;
  memset(&xo, 0, sizeof xo);
  xo.output_dims = dynamic ? calloc((size_t)gi->num_outputs * HTPU_MAX_RANK, sizeof(uint32_t))
                           : NULL;
  if (dynamic && !xo.output_dims) return cli_fail(a->cmd, "out of memory");
  int e = htpu_graph_execute_ex(d->s.graph, d->io, 1, d->io + 1, gi->num_outputs, &xo, &d->st);
  for (uint32_t i = 0; !e && i < gi->num_outputs; i++) {
    outs[i] = gi->outputs[i];
    if (!dynamic) continue;
    size_t n = 1;
    for (uint32_t k = 0; k < outs[i].rank && k < HTPU_MAX_RANK; k++)
      n *= outs[i].dims[k] = xo.output_dims[(size_t)i * HTPU_MAX_RANK + k];
    outs[i].num_elements = n;
    outs[i].byte_size = n * htpu_dtype_size(outs[i].dtype);
  }
  free(xo.output_dims);
  return e ? cli_fail_htpu(a->cmd, e, "executing the graph") : CLI_EXIT_OK;
}

static int run_pipeline(const cli_args *a, cli_detect *d, const htpu_preprocess_options *po,
                        const htpu_decode_options *dopt) {
  const htpu_graph_info *gi = d->s.info;
  uint64_t t0 = now_ns();
  int e = htpu_preprocess(&d->frame.frame, &gi->inputs[0], po, d->io[0].data, d->io[0].size,
                          &d->geometry);
  d->preprocess_ns = now_ns() - t0;
  if (e) {
    char what[512];
    snprintf(what, sizeof what, "--%s %s into input '%s'", cli_count(a, "image") ? "image" : "frame",
             d->frame.path, gi->inputs[0].name);
    return cli_fail_htpu(a->cmd, e, what);
  }
  htpu_tensor_info *outs = calloc(gi->num_outputs ? gi->num_outputs : 1, sizeof *outs);
  if (!outs) return cli_fail(a->cmd, "out of memory");
  if ((e = execute(a, d, outs))) {
    free(outs);
    return e;
  }
  const void **data = calloc(gi->num_outputs ? gi->num_outputs : 1, sizeof *data);
  d->dets = calloc(dopt->max_detections, sizeof *d->dets);
  d->kp_len = (size_t)dopt->max_detections * (d->io[1].size / htpu_dtype_size(d->io[1].dtype));
  if (d->kp_len > (size_t)dopt->max_detections * 1024) d->kp_len = (size_t)dopt->max_detections * 1024;
  d->kp = calloc(d->kp_len ? d->kp_len : 1, sizeof *d->kp);
  if (!data || !d->dets || !d->kp) {
    free(data), free(outs);
    return cli_fail(a->cmd, "out of memory");
  }
  for (uint32_t i = 0; i < gi->num_outputs; i++) data[i] = d->io[1 + i].data;
  t0 = now_ns();
  e = htpu_decode(outs, data, gi->num_outputs, dopt, &d->geometry, d->dets,
                  dopt->max_detections, d->kp, d->kp_len, &d->info);
  d->decode_ns = now_ns() - t0;
  free(data), free(outs);
  if (!e) return CLI_EXIT_OK;
  char what[512];
  snprintf(what, sizeof what, "decoding the outputs of graph '%s'", gi->name);
  return cli_fail_htpu(a->cmd, e, what);
}

static void detect_free(cli_detect *d) {
  for (uint32_t i = 0; i < d->num_io; i++) free(d->io[i].data);
  free(d->io);
  for (size_t i = 0; i < d->num_labels; i++) free(d->labels[i]);
  free(d->labels);
  free(d->dets);
  free(d->kp);
  cli_frame_free(&d->frame);
  cli_session_close(&d->s);
}

static int draw(const cli_args *a, const cli_detect *d) {
  char err[256];
  if (!cli_detect_draw(d, cli_get(a, "draw"), err, sizeof err)) return CLI_EXIT_OK;
  return cli_fail(a->cmd, "--draw %s: %s", cli_get(a, "draw"), err);
}

static int run_detect(const cli_args *a) {
  cli_detect d;
  memset(&d, 0, sizeof d);
  htpu_preprocess_options po;
  htpu_decode_options dopt;
  int rc = cli_frame_preprocess_options(a, &po);
  if (!rc) rc = decode_options(a, &dopt);
  if (!rc) rc = read_frame(a, &d.frame);
  if (!rc) rc = read_labels(a, &d);
  if (!rc) rc = cli_session_open(a, &d.s);
  if (!rc) rc = model_labels(a, &d);
  if (!rc) rc = alloc_io(a, &d);
  if (!rc) rc = run_pipeline(a, &d, &po, &dopt);
  if (!rc && cli_get(a, "draw")) rc = draw(a, &d);
  if (!rc && (cli_has(a, "json") ? cli_detect_json(&d) : cli_detect_table(a, &d)) != 0)
    rc = cli_fail(a->cmd, "could not write the report");
  detect_free(&d);
  return rc;
}

static const cli_option detect_options[] = {
    {"graph", "NAME", "the graph to run (needed when MODEL holds several)", 0},
    {"image", "F.ppm", "the frame: a binary PPM (P6) or PGM (P5) file", 0},
    {"frame", "F", "the frame: raw bytes described by --size and --format", 0},
    CLI_FRAME_OPTIONS,
    {"head", "HEAD",
     "auto (default), ultralytics ([1, 4+nc, A]), ultralytics_pose or aihub (boxes, scores, "
     "classes)",
     0},
    {"head-layout", "L",
     "channels_first ([1, C, A]), anchors_first ([1, A, C]) or auto (default: the smaller axis "
     "holds the values of an anchor)",
     0},
    {"score", "T", "keep predictions whose score is above T (0..1; default 0.25)", 0},
    {"iou", "T", "NMS drops a box overlapping a better one of its class by IoU > T (default 0.7)",
     0},
    {"max", "N", "detections at most (default 300)", 0},
    {"classes", "N", "the class count, where the head's shape cannot tell it", 0},
    {"labels", "FILE",
     "class names, one a line (default: the model's own, an ONNX model's \"names\" metadata)",
     0},
    {"draw", "OUT.png", "write the frame with its boxes, labels and keypoints as a PNG", 0},
    CLI_SESSION_OPTIONS,
    {"json", NULL,
     "print an array of {class, label, score, box: [x1, y1, x2, y2], keypoints} instead",
     0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_detect = {
    .name = "detect",
    .synopsis = "MODEL (--image F.ppm | --frame F --size WxH --format FMT [--stride N]) "
                "[--resize letterbox|stretch|crop] [--score T] [--iou T] [--max N] "
                "[--labels FILE] [--draw OUT.png] [--json] [--backend PATH|reference] "
                "[--system-lib PATH|reference | --qnn DIR] ...",
    .summary = "run a detector on a camera frame and list (or draw) what it found",
    .description =
        "Letterboxes the frame into the model's input (as Ultralytics: aspect kept, padded\n"
        "with 114; sampled as OpenCV's INTER_LINEAR) in the input's own type, runs the graph\n"
        "once, and decodes its head in its own type: Ultralytics detect and pose heads, or AI\n"
        "Hub's boxes, scores and classes. Boxes are in frame pixels (docs/vision.md).\n",
    .options = detect_options,
    .positional_name = "MODEL",
    .min_positional = 1,
    .max_positional = 1,
    .run = run_detect,
};
