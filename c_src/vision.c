/*
 * vision.c - HexagonTpu.Vision's two halves: vision_preprocess (a frame into a model's input)
 * and vision_decode (outputs into detections), over the C core's htpu_preprocess and
 * htpu_decode; the one call around an execute is vision_detect.c, the terms vision_terms.c.
 *
 * Schedulers: each runs on the caller's normal scheduler when its work is small, else it moves
 * to a dirty CPU scheduler. The work is counted from what the call will do, not from the bytes
 * it is given: a 30 KB frame letterboxed into a 640x640 f32 input writes 4.9 MB, and a 42 KB
 * head of 8400 anchors can hold 8400 candidates whose NMS compares millions of pairs. Both
 * answers say where they ran (the last element of their tuple), which the tests check.
 */
#include <string.h>

#include "atoms.h"
#include "nif.h"
#include "terms.h"
#include "vision_terms.h"

/* What a normal scheduler may take, in units of about a nanosecond of work on this project's
 * x86-64 machines (a byte copied, an element converted, a pair of boxes compared): 64 Ki of
 * them stay well under the 1 ms a NIF may hold a normal scheduler, on the board's slower cores
 * too. */
#define VISION_NORMAL_MAX_WORK (64u * 1024u)

static ERL_NIF_TERM where_ran(void) {
  return enif_thread_type() == ERL_NIF_THR_DIRTY_CPU_SCHEDULER ? ATOMS.dirty_cpu : ATOMS.normal;
}

/* ---- vision_preprocess ------------------------------------------------------------------------- */

static ERL_NIF_TERM preprocess_impl(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  htpu_graph *h;
  htpu_frame f;
  htpu_preprocess_options o;
  uint32_t input;
  ERL_NIF_TERM err, bin_term;
  nif_graph *g = vision_graph_of(env, argv[0], &h, &err);
  if (!g) return err;
  if (!vision_get_frame(env, argv[1], &f) || !vision_get_pre(env, argv[2], &o, &input))
    return enif_make_badarg(env);
  if (input >= g->num_inputs)
    return nif_make_error_msg(env, HTPU_EINVAL, "input %u: the graph has %u input(s)", input,
                              g->num_inputs);
  const htpu_tensor_info *in = &g->tensors[input].info;
  void *dst = enif_make_new_binary(env, in->byte_size, &bin_term);
  if (!dst) return nif_make_error_msg(env, HTPU_ENOMEM, "out of memory (%zu-byte input)", in->byte_size);
  htpu_geometry geo;
  int rc = htpu_preprocess(&f, &in[0], &o, dst, in->byte_size, &geo);
  if (rc) return nif_make_error(env, rc);
  return enif_make_tuple4(env, ATOMS.ok, bin_term, vision_make_geometry(env, &geo), where_ran());
}

/* The frame's bytes (every one may be read), then every element of the input written: its
 * value looked up and stored, after a resize and perhaps a YUV conversion (up to 4 units). */
static uint64_t preprocess_work(ErlNifEnv *env, const ERL_NIF_TERM argv[]) {
  ERL_NIF_TERM v;
  ErlNifBinary bin;
  htpu_graph *h;
  uint32_t input = 0;
  uint64_t work = 0;
  if (enif_get_map_value(env, argv[1], ATOMS.data, &v) && enif_inspect_binary(env, v, &bin))
    work += bin.size;
  nif_graph *g = vision_graph_of(env, argv[0], &h, &v);
  if (g && enif_is_map(env, argv[2]) && vision_get_u32(env, argv[2], ATOMS.input, &input) &&
      input < g->num_inputs)
    work += 4 * (uint64_t)g->tensors[input].info.num_elements;
  return work;
}

/* vision_preprocess(graph_ref, frame_map, pre_opts)
 *   -> {:ok, input_binary, geometry, :normal | :dirty_cpu} | error
 * The input in its own type, where the frame went, and where the call ran. */
ERL_NIF_TERM nif_vision_preprocess(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  if (argc == 3 && preprocess_work(env, argv) > VISION_NORMAL_MAX_WORK)
    return enif_schedule_nif(env, "vision_preprocess", ERL_NIF_DIRTY_JOB_CPU_BOUND,
                             preprocess_impl, argc, argv);
  return preprocess_impl(env, argc, argv);
}

/* ---- vision_decode ------------------------------------------------------------------------------- */

/* Output t as its binary of `size` bytes holds it: the declared info, or for an output with one
 * dynamic dimension (which predict cuts to what the execute produced) that dimension told from
 * the size, in *buf. NULL with *err when the size fits neither. */
static const htpu_tensor_info *output_as_given(ErlNifEnv *env, const htpu_tensor_info *t,
                                               size_t size, htpu_tensor_info *buf,
                                               ERL_NIF_TERM *err) {
  if (size == t->byte_size) return t;
  size_t row = htpu_dtype_size(t->dtype);
  int axis = -1, dynamic = 0;
  for (uint32_t k = 0; k < t->rank && k < HTPU_MAX_RANK; k++) {
    if ((t->dynamic_dims >> k) & 1u) axis = (int)k, dynamic++;
    else row *= t->dims[k];
  }
  if (dynamic == 1 && row && size < t->byte_size && size % row == 0) {
    *buf = *t;
    buf->dims[axis] = (uint32_t)(size / row);
    buf->num_elements = size / htpu_dtype_size(t->dtype);
    buf->byte_size = size;
    return buf;
  }
  *err = nif_make_error_msg(env, HTPU_EMISMATCH,
                            dynamic == 1 ? "output '%s': expected at most %zu bytes (%s, its own "
                                           "type), whole rows of its dynamic dimension, got %zu"
                                         : "output '%s': expected %zu bytes (%s, its own type), "
                                           "got %zu",
                            t->name, t->byte_size, htpu_dtype_name(t->dtype), size);
  return NULL;
}

/* The output binaries' pointers and infos (outs: as given, see output_as_given). 0, or -1 with
 * the answer in *err. */
static int decode_inputs(ErlNifEnv *env, const nif_graph *g, ERL_NIF_TERM list,
                         const void **data, htpu_tensor_info *outs, ERL_NIF_TERM *err) {
  ERL_NIF_TERM head;
  for (unsigned i = 0; i < g->num_outputs && enif_get_list_cell(env, list, &head, &list); i++) {
    ErlNifBinary b;
    if (!enif_inspect_binary(env, head, &b)) {
      *err = enif_make_badarg(env);
      return -1;
    }
    const htpu_tensor_info *t = &g->tensors[g->num_inputs + i].info;
    const htpu_tensor_info *as = output_as_given(env, t, b.size, &outs[i], err);
    if (!as) return -1;
    if (as != &outs[i]) outs[i] = *t;
    if (htpu_dtype_size(t->dtype) > 1 && (uintptr_t)b.data % htpu_dtype_size(t->dtype)) {
      *err = nif_make_error_msg(env, HTPU_EINVAL,
                                "output '%s': its binary is not aligned to its %s elements (a "
                                "sub-binary?): pass the output as the model returned it",
                                t->name, htpu_dtype_name(t->dtype));
      return -1;
    }
    /* an output that came out empty may have no data pointer: htpu_decode needs one */
    static const uint64_t empty;
    data[i] = b.size ? (const void *)b.data : (const void *)&empty;
  }
  return 0;
}

static ERL_NIF_TERM decode_impl(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  htpu_graph *h;
  htpu_decode_options o;
  htpu_geometry geo, *gp = NULL;
  ERL_NIF_TERM err;
  nif_graph *g = vision_graph_of(env, argv[0], &h, &err);
  if (!g) return err;
  const void *data[VISION_MAX_OUTPUTS] = {0};
  htpu_tensor_info outs[VISION_MAX_OUTPUTS];
  unsigned n;
  if (!enif_get_list_length(env, argv[1], &n) || n != g->num_outputs ||
      n > VISION_MAX_OUTPUTS || !vision_get_dec(env, argv[2], &o))
    return enif_make_badarg(env);
  if (decode_inputs(env, g, argv[1], data, outs, &err)) return err;
  if (!enif_is_identical(argv[3], ATOMS.nil)) {
    if (!vision_get_geometry(env, argv[3], &geo)) return enif_make_badarg(env);
    gp = &geo;
  }
  vision_dets d;
  int rc = vision_decode_into(env, outs, n, data, &o, gp, &d, &err);
  ERL_NIF_TERM ret =
      rc ? err
         : enif_make_tuple4(env, ATOMS.ok, vision_make_dets(env, &d, argv[4], argv[5]),
                            enif_make_uint(env, d.info.candidates), where_ran());
  vision_dets_free(&d);
  return ret;
}

/* The outputs' bytes (the scan), then the candidates: at most the largest axis of any output
 * (one per anchor), each made and sorted (32 units), of which at most max_candidates meet in
 * NMS pairwise (2 units a pair), and the detections made into terms (128 units each and 16 a
 * keypoint value). */
static uint64_t decode_work(ErlNifEnv *env, const ERL_NIF_TERM argv[]) {
  htpu_graph *h;
  ERL_NIF_TERM err, head, list = argv[1];
  ErlNifBinary b;
  htpu_decode_options o;
  uint64_t work = 0, anchors = 0;
  while (enif_get_list_cell(env, list, &head, &list))
    if (enif_inspect_binary(env, head, &b)) work += b.size;
  nif_graph *g = vision_graph_of(env, argv[0], &h, &err);
  if (!g || !vision_get_dec(env, argv[2], &o)) return work;
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    const htpu_tensor_info *t = &g->tensors[g->num_inputs + i].info;
    for (uint32_t k = 0; k < t->rank && k < HTPU_MAX_RANK; k++)
      anchors = t->dims[k] > anchors ? t->dims[k] : anchors;
  }
  if (anchors > (1u << 20)) return UINT64_MAX; /* dirty, and no product below can wrap */
  uint64_t nms = anchors < o.max_candidates ? anchors : o.max_candidates;
  uint64_t dets = anchors < o.max_detections ? anchors : o.max_detections;
  uint32_t room = g->num_outputs ? vision_keypoint_room(&g->tensors[g->num_inputs].info, &o) : 0;
  return work + 32 * anchors + 2 * nms * nms + dets * (128 + 16 * (uint64_t)room);
}

/* vision_decode(graph_ref, [output_binary], dec_opts, geometry | nil, labels_tuple, :maps | :rows)
 *   -> {:ok, detections, candidates, :normal | :dirty_cpu} | error
 * The outputs in their own types (predict with dequantize: false, or SharedIO views); an output
 * with a dynamic dimension as predict returns it, cut to what the execute produced. */
ERL_NIF_TERM nif_vision_decode(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  if (argc == 6 && decode_work(env, argv) > VISION_NORMAL_MAX_WORK)
    return enif_schedule_nif(env, "vision_decode", ERL_NIF_DIRTY_JOB_CPU_BOUND, decode_impl, argc,
                             argv);
  return decode_impl(env, argc, argv);
}
