/*
 * vision.c - HexagonTpu.Vision's NIFs: a frame into a model's input, outputs into detections,
 * and both around one execute (detect), over the C core's htpu_preprocess / htpu_decode.
 *
 * detect keeps the input and outputs out of the BEAM: the frame binary is read in place, the
 * input is written into a buffer of the NIF's own (or into a HexagonTpu.SharedIO's FastRPC
 * memory, which nothing copies again), the outputs are decoded where the backend wrote them,
 * and only the detections come back as terms. Elixir checks the options' types and names
 * first (lib/hexagon_tpu/vision/); what reaches here malformed is a bug there, so it raises
 * badarg. The tensor infos are the graph resource's own deep copies (nif_graph.tensors).
 *
 * Schedulers: vision_detect runs on a dirty IO scheduler, as graph_execute (it waits for the
 * graph's turn and the DSP; its conversions are a few hundred microseconds of a 1080p frame).
 * vision_preprocess and vision_decode run on the caller's normal scheduler when what they read
 * and write is at most VISION_NORMAL_MAX_BYTES, else they move to a dirty CPU scheduler.
 */
#include <string.h>
#include <time.h>

#include "atoms.h"
#include "handles.h"
#include "nif.h"
#include "terms.h"

/* As shared_write's bound: a pass over 64 KiB stays well under a normal scheduler's 1 ms. */
#define VISION_NORMAL_MAX_BYTES (64u * 1024u)
#define VISION_MAX_OUTPUTS 8

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- terms -> options -------------------------------------------------------------------------- */

static int get_u32(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, uint32_t *out) {
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
static int get_frame(ErlNifEnv *env, ERL_NIF_TERM t, htpu_frame *f) {
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
  if (!get_u32(env, t, ATOMS.width, &f->width) || !get_u32(env, t, ATOMS.height, &f->height) ||
      !get_u32(env, t, ATOMS.stride, &f->stride) || !get_u32(env, t, ATOMS.uv_offset, &uv) ||
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
static int get_pre(ErlNifEnv *env, ERL_NIF_TERM m, htpu_preprocess_options *o, uint32_t *input) {
  htpu_preprocess_options_init(o);
  *input = 0;
  return enif_is_map(env, m) && get_u32(env, m, ATOMS.input, input) &&
         get_name(env, m, ATOMS.resize, parse_resize, &o->resize) &&
         get_u32(env, m, ATOMS.pad_value, &o->pad_value) &&
         get_bool(env, m, ATOMS.scaleup, &o->scaleup) && get_bool(env, m, ATOMS.bgr, &o->bgr) &&
         get_name(env, m, ATOMS.layout, parse_layout, &o->layout) &&
         get_name(env, m, ATOMS.normalize, parse_norm, &o->normalize) &&
         get_triple(env, m, ATOMS.mean, o->mean) && get_triple(env, m, ATOMS.std, o->std);
}

/* %{head:, layout:, score:, iou:, max:, max_candidates:, classes:, keypoints:, keypoint_dims:,
 *   agnostic:} */
static int get_dec(ErlNifEnv *env, ERL_NIF_TERM m, htpu_decode_options *o) {
  htpu_decode_options_init(o);
  return enif_is_map(env, m) && get_name(env, m, ATOMS.head, parse_head, &o->head) &&
         get_name(env, m, ATOMS.layout, parse_head_layout, &o->layout) &&
         get_float(env, m, ATOMS.score, &o->score_threshold) &&
         get_float(env, m, ATOMS.iou, &o->iou_threshold) &&
         get_u32(env, m, ATOMS.max, &o->max_detections) &&
         get_u32(env, m, ATOMS.max_candidates, &o->max_candidates) &&
         get_u32(env, m, ATOMS.classes, &o->num_classes) &&
         get_u32(env, m, ATOMS.keypoints, &o->num_keypoints) &&
         get_u32(env, m, ATOMS.keypoint_dims, &o->keypoint_dims) &&
         get_bool(env, m, ATOMS.agnostic, &o->agnostic);
}

/* ---- geometry <-> terms ---------------------------------------------------------------------------- */

static ERL_NIF_TERM make_geometry(ErlNifEnv *env, const htpu_geometry *g) {
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

static int get_geometry(ErlNifEnv *env, ERL_NIF_TERM t, htpu_geometry *g) {
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
  return get_u32(env, t, ATOMS.frame_width, &g->frame_width) &&
         get_u32(env, t, ATOMS.frame_height, &g->frame_height) &&
         get_u32(env, t, ATOMS.input_width, &g->input_width) &&
         get_u32(env, t, ATOMS.input_height, &g->input_height) &&
         get_u32(env, t, ATOMS.resized_width, &g->resized_width) &&
         get_u32(env, t, ATOMS.resized_height, &g->resized_height) &&
         get_u32(env, t, ATOMS.pad_left, &g->pad_left) && get_u32(env, t, ATOMS.pad_top, &g->pad_top) &&
         get_u32(env, t, ATOMS.pad_right, &g->pad_right) &&
         get_u32(env, t, ATOMS.pad_bottom, &g->pad_bottom);
}

/* ---- detections -> terms --------------------------------------------------------------------------- */

/* Where decode writes, owned by the caller of decode_into. */
typedef struct dets {
  htpu_detection *items;
  float *kp;
  size_t kp_len;
  htpu_decode_info info;
} dets;

static void dets_free(dets *d) {
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
static ERL_NIF_TERM make_maps(ErlNifEnv *env, const dets *d, ERL_NIF_TERM labels) {
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
                           (int)x->class_id < n_lab ? lab[x->class_id] : ATOMS.nil,
                           enif_make_double(env, x->score), floats(env, x->box, 4), kps};
    list = enif_make_list_cell(env, nif_make_map(env, keys, vals, 5), list);
  }
  return list;
}

/* {rows, n, columns}: f32 rows of x1, y1, x2, y2, score, class, then the keypoints. */
static ERL_NIF_TERM make_rows(ErlNifEnv *env, const dets *d) {
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

static ERL_NIF_TERM make_dets(ErlNifEnv *env, const dets *d, ERL_NIF_TERM labels,
                              ERL_NIF_TERM kind) {
  return enif_is_identical(kind, ATOMS.rows) ? make_rows(env, d) : make_maps(env, d, labels);
}

/* htpu_decode over the graph's output infos and `data`, into d. 0, or an error term in *err. */
static int decode_into(ErlNifEnv *env, const nif_graph *g, const void *const *data,
                       const htpu_decode_options *o, const htpu_geometry *geo, dets *d,
                       ERL_NIF_TERM *err) {
  htpu_tensor_info outs[VISION_MAX_OUTPUTS];
  uint32_t n = g->num_outputs < VISION_MAX_OUTPUTS ? g->num_outputs : VISION_MAX_OUTPUTS;
  for (uint32_t i = 0; i < n; i++) outs[i] = g->tensors[g->num_inputs + i].info;
  memset(d, 0, sizeof *d);
  uint32_t cap = o->max_detections;
  d->items = enif_alloc((cap ? cap : 1) * sizeof *d->items);
  /* keypoints (a pose head's, named: auto never picks it): its values per anchor fit its
   * smaller axis, so that many per detection is room enough */
  const htpu_tensor_info *o0 = n ? &outs[0] : NULL;
  uint32_t per = 0;
  if (o0 && o0->rank >= 2 && o->head == HTPU_HEAD_ULTRALYTICS_POSE) { /* only pose has any */
    uint32_t a = o0->dims[o0->rank - 2], b = o0->dims[o0->rank - 1];
    per = a < b ? a : b;
  }
  d->kp_len = (size_t)cap * per;
  d->kp = enif_alloc((d->kp_len ? d->kp_len : 1) * sizeof *d->kp);
  if (!d->items || !d->kp) {
    *err = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (detections)");
    return -1;
  }
  int rc = htpu_decode(outs, data, n, o, geo, d->items, cap, d->kp, d->kp_len, &d->info);
  if (rc) *err = nif_make_error(env, rc);
  return rc;
}

/* ---- vision_preprocess ------------------------------------------------------------------------------ */

static nif_graph *graph_of(ErlNifEnv *env, ERL_NIF_TERM t, htpu_graph **h, ERL_NIF_TERM *err) {
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

static ERL_NIF_TERM preprocess_impl(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  htpu_graph *h;
  htpu_frame f;
  htpu_preprocess_options o;
  uint32_t input;
  ERL_NIF_TERM err, bin_term;
  nif_graph *g = graph_of(env, argv[0], &h, &err);
  if (!g) return err;
  if (!get_frame(env, argv[1], &f) || !get_pre(env, argv[2], &o, &input))
    return enif_make_badarg(env);
  if (input >= g->num_inputs)
    return nif_make_error_msg(env, HTPU_EINVAL, "input %u: the graph has %u input(s)", input,
                              g->num_inputs);
  const htpu_tensor_info *in = &g->tensors[input].info;
  void *dst = enif_make_new_binary(env, in->byte_size, &bin_term);
  if (!dst) return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%zu-byte input)", in->byte_size);
  htpu_geometry geo;
  int rc = htpu_preprocess(&f, in, &o, dst, in->byte_size, &geo);
  if (rc) return nif_make_error(env, rc);
  return enif_make_tuple3(env, ATOMS.ok, bin_term, make_geometry(env, &geo));
}

static size_t frame_bytes(ErlNifEnv *env, ERL_NIF_TERM frame) {
  ERL_NIF_TERM v;
  ErlNifBinary bin;
  if (enif_get_map_value(env, frame, ATOMS.data, &v) && enif_inspect_binary(env, v, &bin))
    return bin.size;
  return 0;
}

/* vision_preprocess(graph_ref, frame_map, pre_opts) -> {:ok, input_binary, geometry} | error
 * The input in its own type, and where the frame went. */
ERL_NIF_TERM nif_vision_preprocess(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  if (argc == 3 && frame_bytes(env, argv[1]) > VISION_NORMAL_MAX_BYTES)
    return enif_schedule_nif(env, "vision_preprocess", ERL_NIF_DIRTY_JOB_CPU_BOUND,
                             preprocess_impl, argc, argv);
  return preprocess_impl(env, argc, argv);
}

/* ---- vision_decode ------------------------------------------------------------------------------------ */

static ERL_NIF_TERM decode_impl(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  htpu_graph *h;
  htpu_decode_options o;
  htpu_geometry geo, *gp = NULL;
  ERL_NIF_TERM err, head, list = argv[1];
  nif_graph *g = graph_of(env, argv[0], &h, &err);
  if (!g) return err;
  const void *data[VISION_MAX_OUTPUTS] = {0};
  unsigned n;
  if (!enif_get_list_length(env, list, &n) || n != g->num_outputs || n > VISION_MAX_OUTPUTS ||
      !get_dec(env, argv[2], &o))
    return enif_make_badarg(env);
  for (unsigned i = 0; i < n && enif_get_list_cell(env, list, &head, &list); i++) {
    ErlNifBinary b;
    if (!enif_inspect_binary(env, head, &b)) return enif_make_badarg(env);
    const htpu_tensor_info *t = &g->tensors[g->num_inputs + i].info;
    if (b.size != t->byte_size)
      return nif_make_error_msg(env, HTPU_EMISMATCH,
                                "output '%s': expected %zu bytes (%s, its own type), got %zu",
                                t->name, t->byte_size, htpu_dtype_name(t->dtype), b.size);
    if (htpu_dtype_size(t->dtype) > 1 && (uintptr_t)b.data % htpu_dtype_size(t->dtype))
      return nif_make_error_msg(env, HTPU_EINVAL,
                                "output '%s': its binary is not aligned to its %s elements (a "
                                "sub-binary?): pass the output as the model returned it",
                                t->name, htpu_dtype_name(t->dtype));
    data[i] = b.data;
  }
  if (!enif_is_identical(argv[3], ATOMS.nil)) {
    if (!get_geometry(env, argv[3], &geo)) return enif_make_badarg(env);
    gp = &geo;
  }
  dets d;
  int rc = decode_into(env, g, data, &o, gp, &d, &err);
  ERL_NIF_TERM ret = rc ? err
                        : enif_make_tuple3(env, ATOMS.ok, make_dets(env, &d, argv[4], argv[5]),
                                           enif_make_uint(env, d.info.candidates));
  dets_free(&d);
  return ret;
}

static size_t list_bytes(ErlNifEnv *env, ERL_NIF_TERM list) {
  ERL_NIF_TERM head;
  ErlNifBinary b;
  size_t total = 0;
  while (enif_get_list_cell(env, list, &head, &list))
    if (enif_inspect_binary(env, head, &b)) total += b.size;
  return total;
}

/* vision_decode(graph_ref, [output_binary], dec_opts, geometry | nil, labels_tuple, :maps | :rows)
 *   -> {:ok, detections, candidates} | error
 * The outputs in their own types (predict with dequantize: false, or SharedIO views). */
ERL_NIF_TERM nif_vision_decode(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  if (argc == 6 && list_bytes(env, argv[1]) > VISION_NORMAL_MAX_BYTES)
    return enif_schedule_nif(env, "vision_decode", ERL_NIF_DIRTY_JOB_CPU_BOUND, decode_impl, argc,
                             argv);
  return decode_impl(env, argc, argv);
}

/* ---- vision_detect ---------------------------------------------------------------------------------- */

/* One detect's buffers: the graph's input and outputs in their own types, in a shared IO
 * buffer (held for the call) or in one block, the graph's kept one when no other call has it
 * (so a frame's megabytes are not mapped and faulted in again on every call). */
typedef struct detect_io {
  htpu_io io[1 + VISION_MAX_OUTPUTS];
  void *block;
  nif_graph *g;
  nif_shared *sh;
} detect_io;

#define BLOCK_ALIGN 64u

static size_t aligned(size_t n) { return (n + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN; }

static void io_free(detect_io *x) {
  if (x->block) {
    void *none = NULL;
    if (!atomic_compare_exchange_strong(&x->g->vision_block, &none, x->block))
      enif_free(x->block);
  }
  if (x->sh) nif_shared_unref(x->sh, 1);
  memset(x, 0, sizeof *x);
}

/* x->io[0..n) placed in the graph's kept block, or a new one. 0, or -1 out of memory. */
static int io_block(nif_graph *g, uint32_t n, detect_io *x) {
  size_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += aligned(g->tensors[i].info.byte_size + 1);
  x->block = atomic_exchange(&g->vision_block, NULL);
  if (!x->block) x->block = enif_alloc(total);
  if (!x->block) return -1;
  x->g = g;
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    x->io[i].data = (uint8_t *)x->block + at;
    at += aligned(g->tensors[i].info.byte_size + 1);
  }
  return 0;
}

static int io_take(ErlNifEnv *env, nif_graph *g, ERL_NIF_TERM shared, detect_io *x,
                   ERL_NIF_TERM *err) {
  uint32_t n = g->num_inputs + g->num_outputs;
  memset(x, 0, sizeof *x);
  if (g->num_inputs != 1 || g->num_outputs > VISION_MAX_OUTPUTS) {
    *err = nif_make_error_msg(env, HTPU_EINVAL,
                              "detect runs graphs of one input and at most %d outputs; this one "
                              "has %u and %u",
                              VISION_MAX_OUTPUTS, g->num_inputs, g->num_outputs);
    return -1;
  }
  nif_shared *sh = NULL;
  if (!enif_is_identical(shared, ATOMS.nil)) {
    if (!enif_get_resource(env, shared, NIF_RT(SHARED), (void **)&sh)) {
      *err = nif_bad_handle(env, shared, NIF_KIND_SHARED);
      return -1;
    }
    if (sh->graph != g) {
      *err = nif_make_error_msg(env, HTPU_EINVAL, "the shared IO buffer was allocated for another graph");
      return -1;
    }
    if (!nif_shared_acquire(sh)) {
      *err = nif_make_error_msg(env, HTPU_ECLOSED, "the shared IO buffer is closed");
      return -1;
    }
    x->sh = sh;
  }
  if (!sh && io_block(g, n, x)) {
    *err = nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (the graph's inputs and outputs)");
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *t = &g->tensors[i].info;
    x->io[i].dtype = t->dtype;
    x->io[i].size = t->byte_size;
    if (sh) x->io[i].data = sh->base + sh->slots[i].offset;
  }
  return 0;
}

typedef struct detect_times {
  uint64_t start, pre, exec, dec;
} detect_times;

static ERL_NIF_TERM detect_stats(ErlNifEnv *env, const detect_times *t, const htpu_exec_stats *st,
                                 const htpu_geometry *geo, const dets *d) {
  ERL_NIF_TERM k[] = {ATOMS.preprocess_ns, ATOMS.execute_ns, ATOMS.decode_ns, ATOMS.total_ns,
                      ATOMS.geometry, ATOMS.candidates, ATOMS.scheduler};
  ERL_NIF_TERM v[] = {enif_make_uint64(env, t->pre), enif_make_uint64(env, st->execute_ns),
                      enif_make_uint64(env, t->dec),
                      enif_make_uint64(env, now_ns() - t->start), make_geometry(env, geo),
                      enif_make_uint(env, d->info.candidates), ATOMS.dirty_io};
  return nif_make_map(env, k, v, sizeof k / sizeof k[0]);
}

/* Preprocess, execute, decode over x's buffers. 0, or the error term in *err. */
static int detect_run(ErlNifEnv *env, nif_graph *g, htpu_graph *h, const ERL_NIF_TERM argv[],
                      detect_io *x, htpu_geometry *geo, dets *d, detect_times *t,
                      htpu_exec_stats *st, ERL_NIF_TERM *err) {
  htpu_frame f;
  htpu_preprocess_options po;
  htpu_decode_options dopt;
  htpu_exec_options xo;
  uint32_t input;
  memset(d, 0, sizeof *d);
  if (!get_frame(env, argv[1], &f) || !get_pre(env, argv[2], &po, &input) ||
      !get_dec(env, argv[3], &dopt) || nif_exec_options(env, ATOMS.nil, &xo) ||
      nif_get_call_options(env, argv[4], &xo)) {
    *err = enif_make_badarg(env);
    return -1;
  }
  if (io_take(env, g, argv[5], x, err)) return -1;
  uint64_t a = now_ns();
  int rc = htpu_preprocess(&f, &g->tensors[0].info, &po, x->io[0].data, x->io[0].size, geo);
  t->pre = now_ns() - a;
  if (!rc) rc = htpu_graph_execute_ex(h, x->io, 1, x->io + 1, g->num_outputs, &xo, st);
  if (rc) {
    *err = nif_make_error(env, rc);
    return -1;
  }
  const void *data[VISION_MAX_OUTPUTS];
  for (uint32_t i = 0; i < g->num_outputs; i++) data[i] = x->io[1 + i].data;
  a = now_ns();
  rc = decode_into(env, g, data, &dopt, geo, d, err);
  t->dec = now_ns() - a;
  return rc;
}

/* vision_detect(graph_ref, frame_map, pre_opts, dec_opts, call_opts, shared_ref | nil,
 *               labels_tuple, :maps | :rows) -> {:ok, detections, stats} | error
 * call_opts as graph_submit's (timeout_ns, priority, perf_profile); the call is skipped when
 * its caller died while it waited (nif_exec_options). */
ERL_NIF_TERM nif_vision_detect(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  detect_times t = {now_ns(), 0, 0, 0};
  htpu_graph *h;
  ERL_NIF_TERM err, ret;
  nif_graph *g = graph_of(env, argv[0], &h, &err);
  if (!g) return err;
  detect_io x;
  dets d;
  htpu_geometry geo;
  htpu_exec_stats st;
  memset(&st, 0, sizeof st);
  if (detect_run(env, g, h, argv, &x, &geo, &d, &t, &st, &err))
    ret = err;
  else
    ret = enif_make_tuple3(env, ATOMS.ok, make_dets(env, &d, argv[6], argv[7]),
                           detect_stats(env, &t, &st, &geo, &d));
  dets_free(&d);
  io_free(&x);
  return ret;
}
