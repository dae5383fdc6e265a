/*
 * driver.c - htpu_preprocess and htpu_decode on requests from test/vision/oracle.py, which
 * checks the answers against OpenCV and NumPy. One process serves many requests:
 *
 *   request:  one line of space-separated words, then the binary payloads it announces
 *   answer:   "ok ..." or "err <HTPU_E name> <message>", then any binary payload announced
 *
 *   pre FMT W H STRIDE UVOFF CX CY CW CH SIZE TENSOR RESIZE PAD SCALEUP BGR LAYOUT NORM
 *       M0 M1 M2 S0 S1 S2 + SIZE frame bytes
 *     -> ok FW FH RX RY RW RH IW IH NW NH PL PT PR PB SX SY BYTES + BYTES input bytes
 *   dec N HEAD LAYOUT SCORE IOU MAXDET MAXCAND NC NK KD AGN MAP GEO [RX RY RW RH PL PT SX SY IW IH]
 *       then N lines "TENSOR BYTES", each followed by its bytes
 *     -> ok COUNT CANDIDATES HEAD LAYOUT A NC K KD, then COUNT lines:
 *        x1 y1 x2 y2 score class anchor [keypoint values]
 *
 *   TENSOR = NAME DTYPE RANK D0 .. QKIND [SCALE ZP | AXIS COUNT S.. Z..] BYTES
 * Floats are printed with %.9g (round-trips f32) and read with strtod.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon_tpu.h"

#define MAX_WORDS 4096
#define MAX_OUT 8

static char *words[MAX_WORDS];
static int nwords, at;

static int read_line(void) {
  static char line[1 << 16];
  if (!fgets(line, sizeof line, stdin)) return 0;
  nwords = at = 0;
  for (char *t = strtok(line, " \n"); t && nwords < MAX_WORDS; t = strtok(NULL, " \n"))
    words[nwords++] = t;
  return 1;
}

static const char *word(void) { return at < nwords ? words[at++] : "0"; }
static long long num(void) { return strtoll(word(), NULL, 10); }
static double real(void) { return strtod(word(), NULL); }

static void *payload(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p || fread(p, 1, n, stdin) != n) {
    fprintf(stderr, "driver: short payload\n");
    exit(2);
  }
  return p;
}

/* One tensor description; per-axis arrays owned by the caller's `own` list. */
static void tensor(htpu_tensor_info *t, void **own) {
  memset(t, 0, sizeof *t);
  t->name = strdup(word());
  if (htpu_dtype_size(t->dtype = (htpu_dtype)num()) == 0) t->dtype = HTPU_U8;
  t->rank = (uint32_t)num();
  t->num_elements = 1;
  for (uint32_t d = 0; d < t->rank && d < HTPU_MAX_RANK; d++) t->num_elements *= t->dims[d] = (uint32_t)num();
  t->byte_size = t->num_elements * htpu_dtype_size(t->dtype);
  t->quant.kind = (htpu_quant_kind)num();
  if (t->quant.kind == HTPU_QUANT_PER_TENSOR) {
    t->quant.scale = (float)real();
    t->quant.zero_point = (int32_t)num();
  } else if (t->quant.kind == HTPU_QUANT_PER_AXIS) {
    t->quant.axis = (int32_t)num();
    uint32_t n = t->quant.num_channels = (uint32_t)num();
    float *s = malloc(n * sizeof *s + 1);
    int32_t *z = malloc(n * sizeof *z + 1);
    for (uint32_t i = 0; i < n; i++) s[i] = (float)real();
    for (uint32_t i = 0; i < n; i++) z[i] = (int32_t)num();
    t->quant.scales = s;
    t->quant.zero_points = z;
    own[0] = s;
    own[1] = z;
  }
}

static void free_tensor(htpu_tensor_info *t, void **own) {
  free((void *)t->name);
  free(own[0]);
  free(own[1]);
}

static void err(int rc) { printf("err %s %s\n", htpu_err_name(rc), htpu_last_error()); }

static void do_pre(void) {
  htpu_frame f = {0};
  htpu_preprocess_options o;
  htpu_tensor_info in;
  void *own[2] = {0};
  htpu_preprocess_options_init(&o);
  f.format = (htpu_pixel_format)num();
  f.width = (uint32_t)num(), f.height = (uint32_t)num(), f.stride = (uint32_t)num();
  f.uv_offset = (size_t)num();
  f.crop = (htpu_rect){(uint32_t)num(), (uint32_t)num(), (uint32_t)num(), (uint32_t)num()};
  f.size = (size_t)num();
  tensor(&in, own);
  o.resize = (htpu_resize_mode)num(), o.pad_value = (uint32_t)num(), o.scaleup = (int)num();
  o.bgr = (int)num(), o.layout = (htpu_image_layout)num(), o.normalize = (htpu_normalize)num();
  for (int k = 0; k < 3; k++) o.mean[k] = (float)real();
  for (int k = 0; k < 3; k++) o.std[k] = (float)real();
  void *frame = payload(f.size);
  f.data = frame;
  void *dst = malloc(in.byte_size ? in.byte_size : 1);
  htpu_geometry g;
  int rc = htpu_preprocess(&f, &in, &o, dst, in.byte_size, &g);
  if (rc) {
    err(rc);
  } else {
    printf("ok %u %u %u %u %u %u %u %u %u %u %u %u %u %u %.17g %.17g %zu\n", g.frame_width,
           g.frame_height, g.region.x, g.region.y, g.region.width, g.region.height, g.input_width,
           g.input_height, g.resized_width, g.resized_height, g.pad_left, g.pad_top, g.pad_right,
           g.pad_bottom, g.scale_x, g.scale_y, in.byte_size);
    fwrite(dst, 1, in.byte_size, stdout);
  }
  free(dst);
  free(frame);
  free_tensor(&in, own);
}

static void print_dets(const htpu_detection *d, const float *kp, const htpu_decode_info *info) {
  size_t per = (size_t)info->num_keypoints * info->keypoint_dims;
  printf("ok %u %u %d %d %u %u %u %u\n", info->count, info->candidates, (int)info->head,
         (int)info->layout, info->num_anchors, info->num_classes, info->num_keypoints,
         info->keypoint_dims);
  for (uint32_t i = 0; i < info->count; i++) {
    printf("%.9g %.9g %.9g %.9g %.9g %u %u", d[i].box[0], d[i].box[1], d[i].box[2], d[i].box[3],
           d[i].score, d[i].class_id, d[i].anchor);
    for (size_t k = 0; k < per; k++) printf(" %.9g", kp[i * per + k]);
    printf("\n");
  }
}

/* The oracle gives the fields the mapping reads; htpu_decode checks a whole geometry, so the
 * rest is filled as htpu_preprocess would: the frame ends with the region, the resized size is
 * the region's times the scale, the input (when not given) the resized size with the padding
 * on both sides, and the far padding what the input leaves. */
static void complete_geometry(htpu_geometry *g) {
  g->frame_width = g->region.x + g->region.width;
  g->frame_height = g->region.y + g->region.height;
  g->resized_width = (uint32_t)lround(g->region.width * g->scale_x);
  g->resized_height = (uint32_t)lround(g->region.height * g->scale_y);
  if (!g->input_width) g->input_width = g->resized_width + 2 * g->pad_left;
  if (!g->input_height) g->input_height = g->resized_height + 2 * g->pad_top;
  uint32_t used_w = g->pad_left + g->resized_width, used_h = g->pad_top + g->resized_height;
  g->pad_right = g->input_width > used_w ? g->input_width - used_w : 0;
  g->pad_bottom = g->input_height > used_h ? g->input_height - used_h : 0;
}

static void do_dec(void) {
  uint32_t n = (uint32_t)num();
  htpu_decode_options o;
  htpu_decode_options_init(&o);
  o.head = (htpu_head)num(), o.layout = (htpu_head_layout)num();
  o.score_threshold = (float)real(), o.iou_threshold = (float)real();
  o.max_detections = (uint32_t)num(), o.max_candidates = (uint32_t)num();
  o.num_classes = (uint32_t)num(), o.num_keypoints = (uint32_t)num();
  o.keypoint_dims = (uint32_t)num(), o.agnostic = (int)num();
  o.box_mapping = (htpu_box_mapping)num();
  htpu_geometry g = {0}, *gp = NULL;
  if (num()) {
    gp = &g;
    g.region = (htpu_rect){(uint32_t)num(), (uint32_t)num(), (uint32_t)num(), (uint32_t)num()};
    g.pad_left = (uint32_t)num(), g.pad_top = (uint32_t)num();
    g.scale_x = real(), g.scale_y = real();
    g.input_width = (uint32_t)num(), g.input_height = (uint32_t)num();
    complete_geometry(&g);
  }
  htpu_tensor_info outs[MAX_OUT];
  void *own[MAX_OUT][2] = {{0}}, *data[MAX_OUT] = {0};
  for (uint32_t i = 0; i < n && i < MAX_OUT; i++) {
    read_line();
    tensor(&outs[i], own[i]);
    data[i] = payload((size_t)num());
  }
  uint32_t cap = o.max_detections ? o.max_detections : 1;
  htpu_detection *dets = calloc(cap, sizeof *dets);
  size_t kp_len = (size_t)cap * 64 * 3;
  float *kp = calloc(kp_len, sizeof *kp);
  htpu_decode_info info;
  int rc = htpu_decode(outs, (const void *const *)data, n, &o, gp, dets, cap, kp, kp_len, &info);
  if (rc) err(rc);
  else print_dets(dets, kp, &info);
  for (uint32_t i = 0; i < n && i < MAX_OUT; i++) {
    free(data[i]);
    free_tensor(&outs[i], own[i]);
  }
  free(dets);
  free(kp);
}

int main(void) {
  while (read_line()) {
    if (!nwords) continue;
    const char *cmd = word();
    if (strcmp(cmd, "pre") == 0) do_pre();
    else if (strcmp(cmd, "dec") == 0) do_dec();
    else if (strcmp(cmd, "quit") == 0) break;
    else printf("err HTPU_EINVAL unknown request %s\n", cmd);
    fflush(stdout);
  }
  return 0;
}
