/*
 * vision_terms.c - HexagonTpu.Vision's terms (vision_terms.h): the frame and option maps that
 * lib/hexagon_tpu/vision/ builds (their types checked there: what reaches here malformed is a
 * bug there, so it is badarg), the geometry both ways, the detections as maps or f32 rows, and
 * htpu_decode into buffers sized for the head.
 */
#include "vision_terms.h"

#include <string.h>
#include <time.h>

#include "atoms.h"
#include "terms.h"

uint64_t vision_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

nif_graph *vision_graph_of(ErlNifEnv *env, ERL_NIF_TERM t, htpu_graph **h, ERL_NIF_TERM *err) {
  nif_graph *g;
  if (!enif_get_resource(env, t, NIF_RT(GRAPH), (void **)&g)) {
    *err = nif_bad_handle(env, t, NIF_KIND_GRAPH);
    return NULL;
  }
  if (!(*h = atomic_load(&g->handle))) {
    *err = nif_closed_error(env, "graph");
    return NULL;
  }
  return g;
}

/* ---- terms -> options -------------------------------------------------------------------------- */

int vision_get_u32(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, uint32_t *out) {
  ERL_NIF_TERM v;
  unsigned u;
  if (!enif_get_map_value(env, map, key, &v)) return 1; /* absent: the default stays */
  if (!enif_get_uint(env, v, &u)) return 0;
  *out = u;
  return 1;
}

static int get_float(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, float *out) {
  ERL_NIF_TERM v;
  double d;
  long i;
  if (!enif_get_map_value(env, map, key, &v)) return 1;
  if (enif_get_double(env, v, &d)) *out = (float)d;
  else if (enif_get_long(env, v, &i)) *out = (float)i;
  else return 0;
  return 1;
}

static int get_bool(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, int *out) {
  ERL_NIF_TERM v;
  if (!enif_get_map_value(env, map, key, &v)) return 1;
  if (!enif_is_identical(v, ATOMS.true_) && !enif_is_identical(v, ATOMS.false_)) return 0;
  *out = enif_is_identical(v, ATOMS.true_);
  return 1;
}

/* An atom option parsed by the core's name function. */
typedef int (*name_parser)(const char *name, void *out);

static int get_name(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, name_parser parse,
                    void *out) {
  ERL_NIF_TERM v;
  char name[32];
  if (!enif_get_map_value(env, map, key, &v)) return 1;
  return enif_get_atom(env, v, name, sizeof name, ERL_NIF_LATIN1) > 0 && parse(name, out) == 0;
}

static int parse_format(const char *n, void *o) { return htpu_pixel_format_from_name(n, o); }
static int parse_resize(const char *n, void *o) { return htpu_resize_mode_from_name(n, o); }
static int parse_head(const char *n, void *o) { return htpu_head_from_name(n, o); }

static int parse_layout(const char *n, void *o) {
  const char *names[] = {"auto", "nhwc", "nchw"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(n, names[i])) return *(htpu_image_layout *)o = (htpu_image_layout)i, 0;
  return -1;
}

static int parse_head_layout(const char *n, void *o) {
  const char *names[] = {"auto", "channels_first", "anchors_first"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(n, names[i])) return *(htpu_head_layout *)o = (htpu_head_layout)i, 0;
  return -1;
}

static int parse_mapping(const char *n, void *o) {
  const char *names[] = {"letterbox", "ultralytics"};
  for (int i = 0; i < 2; i++)
    if (!strcmp(n, names[i])) return *(htpu_box_mapping *)o = (htpu_box_mapping)i, 0;
  return -1;
}

static int parse_norm(const char *n, void *o) {
  const char *names[] = {"auto", "unit", "raw", "mean_std"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(n, names[i])) return *(htpu_normalize *)o = (htpu_normalize)i, 0;
  return -1;
}

static int get_triple(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, float *out) {
  ERL_NIF_TERM v, head;
  if (!enif_get_map_value(env, map, key, &v)) return 1;
  for (int k = 0; k < 3; k++) {
    double d;
    if (!enif_get_list_cell(env, v, &head, &v) || !enif_get_double(env, head, &d)) return 0;
    out[k] = (float)d;
  }
  return enif_is_empty_list(env, v);
}

/* %{data:, width:, height:, format:, stride:, uv_offset:, crop: nil | {x, y, w, h}} */
int vision_get_frame(ErlNifEnv *env, ERL_NIF_TERM t, htpu_frame *f) {
  ERL_NIF_TERM v;
  ErlNifBinary bin;
  const ERL_NIF_TERM *c;
  int arity;
  memset(f, 0, sizeof *f);
  if (!enif_get_map_value(env, t, ATOMS.data, &v) || !enif_inspect_binary(env, v, &bin))
    return 0;
  f->data = bin.data;
  f->size = bin.size;
  uint32_t uv = 0;
  if (!vision_get_u32(env, t, ATOMS.width, &f->width) || !vision_get_u32(env, t, ATOMS.height, &f->height) ||
      !vision_get_u32(env, t, ATOMS.stride, &f->stride) || !vision_get_u32(env, t, ATOMS.uv_offset, &uv) ||
      !get_name(env, t, ATOMS.format, parse_format, &f->format))
    return 0;
  f->uv_offset = uv;
  if (enif_get_map_value(env, t, ATOMS.crop, &v) && !enif_is_identical(v, ATOMS.nil)) {
    unsigned r[4];
    if (!enif_get_tuple(env, v, &arity, &c) || arity != 4) return 0;
    for (int i = 0; i < 4; i++)
      if (!enif_get_uint(env, c[i], &r[i])) return 0;
    f->crop = (htpu_rect){r[0], r[1], r[2], r[3]};
  }
  return 1;
}

/* %{input:, resize:, pad_value:, scaleup:, bgr:, layout:, normalize:, mean:, std:} */
int vision_get_pre(ErlNifEnv *env, ERL_NIF_TERM m, htpu_preprocess_options *o, uint32_t *input) {
  htpu_preprocess_options_init(o);
  *input = 0;
  return enif_is_map(env, m) && vision_get_u32(env, m, ATOMS.input, input) &&
         get_name(env, m, ATOMS.resize, parse_resize, &o->resize) &&
         vision_get_u32(env, m, ATOMS.pad_value, &o->pad_value) &&
         get_bool(env, m, ATOMS.scaleup, &o->scaleup) && get_bool(env, m, ATOMS.bgr, &o->bgr) &&
         get_name(env, m, ATOMS.layout, parse_layout, &o->layout) &&
         get_name(env, m, ATOMS.normalize, parse_norm, &o->normalize) &&
         get_triple(env, m, ATOMS.mean, o->mean) && get_triple(env, m, ATOMS.std, o->std);
}

/* %{head:, layout:, score:, iou:, max:, max_candidates:, classes:, keypoints:, keypoint_dims:,
 *   agnostic:, box_mapping:} */
int vision_get_dec(ErlNifEnv *env, ERL_NIF_TERM m, htpu_decode_options *o) {
  htpu_decode_options_init(o);
  return enif_is_map(env, m) && get_name(env, m, ATOMS.head, parse_head, &o->head) &&
         get_name(env, m, ATOMS.layout, parse_head_layout, &o->layout) &&
         get_float(env, m, ATOMS.score, &o->score_threshold) &&
         get_float(env, m, ATOMS.iou, &o->iou_threshold) &&
         vision_get_u32(env, m, ATOMS.max, &o->max_detections) &&
         vision_get_u32(env, m, ATOMS.max_candidates, &o->max_candidates) &&
         vision_get_u32(env, m, ATOMS.classes, &o->num_classes) &&
         vision_get_u32(env, m, ATOMS.keypoints, &o->num_keypoints) &&
         vision_get_u32(env, m, ATOMS.keypoint_dims, &o->keypoint_dims) &&
         get_bool(env, m, ATOMS.agnostic, &o->agnostic) &&
         get_name(env, m, ATOMS.box_mapping, parse_mapping, &o->box_mapping);
}

/* ---- geometry <-> terms ---------------------------------------------------------------------------- */

ERL_NIF_TERM vision_make_geometry(ErlNifEnv *env, const htpu_geometry *g) {
  ERL_NIF_TERM k[] = {ATOMS.frame_width,    ATOMS.frame_height, ATOMS.region,
                      ATOMS.input_width,    ATOMS.input_height, ATOMS.resized_width,
                      ATOMS.resized_height, ATOMS.pad_left,     ATOMS.pad_top,
                      ATOMS.pad_right,      ATOMS.pad_bottom,   ATOMS.scale_x,
                      ATOMS.scale_y};
  ERL_NIF_TERM v[] = {
      enif_make_uint(env, g->frame_width),
      enif_make_uint(env, g->frame_height),
      enif_make_tuple4(env, enif_make_uint(env, g->region.x), enif_make_uint(env, g->region.y),
                       enif_make_uint(env, g->region.width), enif_make_uint(env, g->region.height)),
      enif_make_uint(env, g->input_width),
      enif_make_uint(env, g->input_height),
      enif_make_uint(env, g->resized_width),
      enif_make_uint(env, g->resized_height),
      enif_make_uint(env, g->pad_left),
      enif_make_uint(env, g->pad_top),
      enif_make_uint(env, g->pad_right),
      enif_make_uint(env, g->pad_bottom),
      enif_make_double(env, g->scale_x),
      enif_make_double(env, g->scale_y)};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}

int vision_get_geometry(ErlNifEnv *env, ERL_NIF_TERM t, htpu_geometry *g) {
  ERL_NIF_TERM v;
  const ERL_NIF_TERM *c;
  int arity;
  unsigned r[4];
  memset(g, 0, sizeof *g);
  if (!enif_get_map_value(env, t, ATOMS.region, &v) || !enif_get_tuple(env, v, &arity, &c) ||
      arity != 4)
    return 0;
  for (int i = 0; i < 4; i++)
    if (!enif_get_uint(env, c[i], &r[i])) return 0;
  g->region = (htpu_rect){r[0], r[1], r[2], r[3]};
  if (!enif_get_map_value(env, t, ATOMS.scale_x, &v) || !enif_get_double(env, v, &g->scale_x) ||
      !enif_get_map_value(env, t, ATOMS.scale_y, &v) || !enif_get_double(env, v, &g->scale_y))
    return 0;
  return vision_get_u32(env, t, ATOMS.frame_width, &g->frame_width) &&
         vision_get_u32(env, t, ATOMS.frame_height, &g->frame_height) &&
         vision_get_u32(env, t, ATOMS.input_width, &g->input_width) &&
         vision_get_u32(env, t, ATOMS.input_height, &g->input_height) &&
         vision_get_u32(env, t, ATOMS.resized_width, &g->resized_width) &&
         vision_get_u32(env, t, ATOMS.resized_height, &g->resized_height) &&
         vision_get_u32(env, t, ATOMS.pad_left, &g->pad_left) && vision_get_u32(env, t, ATOMS.pad_top, &g->pad_top) &&
         vision_get_u32(env, t, ATOMS.pad_right, &g->pad_right) &&
         vision_get_u32(env, t, ATOMS.pad_bottom, &g->pad_bottom);
}

/* ---- detections -> terms --------------------------------------------------------------------------- */

void vision_dets_free(vision_dets *d) {
  if (d->items) enif_free(d->items);
  if (d->kp) enif_free(d->kp);
  memset(d, 0, sizeof *d);
}

static ERL_NIF_TERM floats(ErlNifEnv *env, const float *v, unsigned n) {
  ERL_NIF_TERM t[4];
  for (unsigned i = 0; i < n; i++) t[i] = enif_make_double(env, v[i]);
  return enif_make_list_from_array(env, t, n);
}

/* %{class:, label:, score:, box: [x1, y1, x2, y2], keypoints: nil | [[x, y(, v)], ...]} */
static ERL_NIF_TERM make_maps(ErlNifEnv *env, const vision_dets *d, ERL_NIF_TERM labels) {
  const ERL_NIF_TERM *lab = NULL;
  int n_lab = 0;
  if (!enif_get_tuple(env, labels, &n_lab, &lab)) n_lab = 0;
  unsigned K = d->info.num_keypoints, kd = d->info.keypoint_dims;
  ERL_NIF_TERM list = enif_make_list(env, 0);
  for (uint32_t i = d->info.count; i-- > 0;) {
    const htpu_detection *x = &d->items[i];
    ERL_NIF_TERM kps = ATOMS.nil;
    if (d->info.head == HTPU_HEAD_ULTRALYTICS_POSE) {
      kps = enif_make_list(env, 0);
      for (unsigned k = K; k-- > 0;)
        kps = enif_make_list_cell(env, floats(env, d->kp + ((size_t)i * K + k) * kd, kd), kps);
    }
    ERL_NIF_TERM keys[] = {ATOMS.class_, ATOMS.label, ATOMS.score, ATOMS.box, ATOMS.keypoints};
    ERL_NIF_TERM vals[] = {enif_make_uint(env, x->class_id),
                           x->class_id < (unsigned)n_lab ? lab[x->class_id] : ATOMS.nil,
                           enif_make_double(env, x->score), floats(env, x->box, 4), kps};
    list = enif_make_list_cell(env, nif_make_map(env, keys, vals, 5), list);
  }
  return list;
}

/* {rows, n, columns}: f32 rows of x1, y1, x2, y2, score, class, then the keypoints. */
static ERL_NIF_TERM make_rows(ErlNifEnv *env, const vision_dets *d) {
  size_t per = (size_t)d->info.num_keypoints * d->info.keypoint_dims, cols = 6 + per;
  ERL_NIF_TERM bin;
  float *o = (float *)(void *)enif_make_new_binary(env, d->info.count * cols * sizeof(float), &bin);
  for (uint32_t i = 0; o && i < d->info.count; i++) {
    float *r = o + i * cols;
    memcpy(r, d->items[i].box, 4 * sizeof(float));
    r[4] = d->items[i].score;
    r[5] = (float)d->items[i].class_id;
    if (per) memcpy(r + 6, d->kp + i * per, per * sizeof(float));
  }
  return enif_make_tuple3(env, bin, enif_make_uint(env, d->info.count),
                          enif_make_uint(env, (unsigned)cols));
}

ERL_NIF_TERM vision_make_dets(ErlNifEnv *env, const vision_dets *d, ERL_NIF_TERM labels,
                              ERL_NIF_TERM kind) {
  return enif_is_identical(kind, ATOMS.rows) ? make_rows(env, d) : make_maps(env, d, labels);
}

uint32_t vision_keypoint_room(const htpu_tensor_info *out0, const htpu_decode_options *o) {
  uint32_t x, y;
  if (o->head != HTPU_HEAD_ULTRALYTICS_POSE) return 0; /* auto never picks the pose head */
  if (out0->rank == 3 && out0->dims[0] == 1) x = out0->dims[1], y = out0->dims[2];
  else if (out0->rank == 2) x = out0->dims[0], y = out0->dims[1];
  else return 0; /* not a head: htpu_decode says so before it looks at the room */
  /* the layout as head.c resolves it: named, else the smaller axis holds the values */
  htpu_head_layout l = o->layout ? o->layout : x <= y ? HTPU_HEAD_CHANNELS_FIRST
                                                      : HTPU_HEAD_ANCHORS_FIRST;
  return l == HTPU_HEAD_CHANNELS_FIRST ? x : y;
}

int vision_decode_into(ErlNifEnv *env, const htpu_tensor_info *outs, uint32_t n,
                       const void *const *data, const htpu_decode_options *o,
                       const htpu_geometry *geo, vision_dets *d, ERL_NIF_TERM *err) {
  memset(d, 0, sizeof *d);
  uint32_t cap = o->max_detections;
  d->items = enif_alloc((cap ? cap : 1) * sizeof *d->items);
  /* a pose detection's keypoints are fewer values than its anchor has */
  d->kp_len = (size_t)cap * (n ? vision_keypoint_room(&outs[0], o) : 0);
  d->kp = enif_alloc((d->kp_len ? d->kp_len : 1) * sizeof *d->kp);
  if (!d->items || !d->kp) {
    *err = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (detections)");
    return -1;
  }
  int rc = htpu_decode(outs, data, n, o, geo, d->items, cap, d->kp, d->kp_len, &d->info);
  if (rc) *err = nif_make_error(env, rc);
  return rc;
}
