/*
 * vision_terms.h - what HexagonTpu.Vision's NIFs (vision.c, vision_detect.c) share: frames and
 * options from terms, geometry both ways, detections into terms, and htpu_decode over a graph's
 * outputs. Layer: below vision.c and vision_detect.c, above resources (handles.h) and terms
 * (terms.h).
 */
#ifndef HTPU_NIF_VISION_TERMS_H
#define HTPU_NIF_VISION_TERMS_H

#include <erl_nif.h>

#include "handles.h"

/* detect takes graphs of at most this many outputs; decode the same. */
#define VISION_MAX_OUTPUTS 8

uint64_t vision_now_ns(void);

/* The graph resource of `t` and its open handle; NULL with *err (a bad or closed handle). */
nif_graph *vision_graph_of(ErlNifEnv *env, ERL_NIF_TERM t, htpu_graph **h, ERL_NIF_TERM *err);

/* %{data:, width:, height:, format:, stride:, uv_offset:, crop:} -> f (data borrowed). 0 on a
 * malformed term (Elixir checked the types: badarg). */
int vision_get_frame(ErlNifEnv *env, ERL_NIF_TERM t, htpu_frame *f);
/* The preprocess options map and the input index; 0 on a malformed term. */
int vision_get_pre(ErlNifEnv *env, ERL_NIF_TERM m, htpu_preprocess_options *o, uint32_t *input);
/* The decode options map; 0 on a malformed term. */
int vision_get_dec(ErlNifEnv *env, ERL_NIF_TERM m, htpu_decode_options *o);
/* A u32 option of `map` (absent: *out unchanged). 0 when present and not a u32. */
int vision_get_u32(ErlNifEnv *env, ERL_NIF_TERM map, ERL_NIF_TERM key, uint32_t *out);

ERL_NIF_TERM vision_make_geometry(ErlNifEnv *env, const htpu_geometry *g);
int vision_get_geometry(ErlNifEnv *env, ERL_NIF_TERM t, htpu_geometry *g);

/* Where decode writes (vision_decode_into), freed with vision_dets_free. */
typedef struct vision_dets {
  htpu_detection *items;
  float *kp;
  size_t kp_len;
  htpu_decode_info info;
} vision_dets;

void vision_dets_free(vision_dets *d);

/* The detections as terms: :maps (a list of maps, labels from the `labels` tuple; an id past
 * its end has a nil label) or :rows ({binary of f32 rows, n, columns}). */
ERL_NIF_TERM vision_make_dets(ErlNifEnv *env, const vision_dets *d, ERL_NIF_TERM labels,
                              ERL_NIF_TERM kind);

/* htpu_decode over `outs` (n output infos: the graph's, or as an execute produced them) and
 * `data`, into d (allocated here). 0, or -1 with the error term in *err. */
int vision_decode_into(ErlNifEnv *env, const htpu_tensor_info *outs, uint32_t n,
                       const void *const *data, const htpu_decode_options *o,
                       const htpu_geometry *geo, vision_dets *d, ERL_NIF_TERM *err);

/* The floats of keypoints one detection of this head can have (0 but for a pose head): its
 * values per anchor along the axis the decode will read as channels. */
uint32_t vision_keypoint_room(const htpu_tensor_info *out0, const htpu_decode_options *o);

#endif
