/*
 * vision.h - the door of src/vision/: camera frames into a graph input, a detector's outputs
 * into detections (the public functions are the vision section of include/hexagon_tpu.h;
 * docs/vision.md). What lives here, each file calling only those below it in this list:
 *
 *   preprocess.c   htpu_preprocess: checks, the plan, the general row loop
 *   rows.c         the rows of 1:1 and exact 2x resizes (the common camera sizes)
 *   decode.c       htpu_decode: options, candidates -> NMS -> mapped detections
 *   head.c         which outputs hold what (shapes, layouts, counts)
 *   candidates.c   the threshold scan in each output's own type
 *   nms.c          ordering, greedy per-class NMS
 *   fetch.c        one source row: taps gathered, YUV/gray converted, the horizontal pass
 *   hpass_packed.c the horizontal pass straight from packed color rows
 *   yuv.c          YUV -> RGB of gathered pixels and of whole NV12 / YUYV rows
 *   simd_x86.c     their vector kernels (AVX2), and the exact 2x box's (SSSE3)
 *   simd_neon.c    the same for aarch64 (NEON)
 *   vpass.c        the vertical pass (OpenCV's two roundings) into a u8 row
 *   write.c        a u8 row into the input's layout and type (through a LUT); the border
 *   lut.c          pixel value -> stored element, per model channel
 *   resize_tab.c   OpenCV's INTER_LINEAR offsets and fixed-point weights
 *   geometry.c     letterbox / stretch / crop geometry; mapping back
 *   frame.c        pixel formats, frame checks
 *
 * The room calls the core's quantization (src/quant.h) and error helpers (src/errors.h) and
 * nothing else of it; the core does not call the room.
 */
#ifndef HTPU_VISION_H
#define HTPU_VISION_H

#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"

/* The body runs for i in [0, n) as chunks of 16 plus a tail: GCC 12 at -O2 vectorizes a loop
 * only when its trip count is a known multiple of the vector length (quant_exact.c's QC_FOR). */
#define VIS_FOR(i, n, ...)                                                        \
  do {                                                                            \
    size_t vis_base_ = 0;                                                         \
    for (; vis_base_ + 16 <= (size_t)(n); vis_base_ += 16)                        \
      for (size_t vis_k_ = 0; vis_k_ < 16; vis_k_++) {                            \
        size_t i = vis_base_ + vis_k_;                                            \
        __VA_ARGS__;                                                              \
      }                                                                           \
    for (size_t i = vis_base_; i < (size_t)(n); i++) {                            \
      __VA_ARGS__;                                                                \
    }                                                                             \
  } while (0)

/* OpenCV's INTER_RESIZE_COEF_BITS: weights are fixed point with 11 fraction bits. */
#define VIS_COEF_BITS 11
#define VIS_COEF_ONE (1 << VIS_COEF_BITS)

/* ---- frame.c ------------------------------------------------------------------------------ */

/* A checked frame: where each row of the used region starts, what a pixel holds. */
typedef struct vis_frame {
  const uint8_t *data;     /* the frame's first byte */
  const uint8_t *end;      /* one past the last byte that may be read */
  const uint8_t *uv;       /* NV12: the UV plane's first byte */
  size_t stride;
  uint32_t width, height;
  htpu_pixel_format format;
  htpu_rect crop;          /* resolved: the whole frame when none was given */
} vis_frame;

/* Bytes of one pixel in a packed row (YUYV: 2, NV12's Y plane: 1). */
unsigned vis_format_bytes(htpu_pixel_format f);
/* Checks everything about the frame against its size; 0, or HTPU_EINVAL with the message. */
int vis_frame_check(const htpu_frame *f, vis_frame *out);

/* ---- geometry.c ------------------------------------------------------------------------------ */

/* The geometry of resizing `crop` (frame w x h) into in_w x in_h. 0, or HTPU_EINVAL (e.g. a
 * letterbox of a very thin frame that rounds to zero rows). */
int vis_geometry(const vis_frame *f, uint32_t in_w, uint32_t in_h, htpu_resize_mode mode,
                 int scaleup, htpu_geometry *g);

/* The padding subtracted and the scale divided by on the way back to frame pixels. */
typedef struct vis_pads {
  float x, y, sx, sy;
} vis_pads;

/* The pads of boxes and of keypoints under mapping m (HTPU_MAP_ULTRALYTICS: scale_boxes' and
 * scale_coords', which differ; else the letterbox's, the same for both). */
void vis_mapping(const htpu_geometry *g, htpu_box_mapping m, vis_pads *box, vis_pads *kp);
/* The largest magnitude a quantized output may dequantize to: far past any pixel or score, and
 * small enough that box arithmetic on two of them stays finite in f32. */
#define VIS_MAX_VALUE 1e30
/* A caller's geometry checked before boxes go through it: sides 1..HTPU_VISION_MAX_SIDE, the
 * region inside the frame, the padding and the resized size inside the input, finite scales
 * in [1 / HTPU_VISION_MAX_SIDE, HTPU_VISION_MAX_SIDE]. 0, or HTPU_EINVAL naming the field. */
int vis_geometry_check(const htpu_geometry *g);
/* n points (xy interleaved, in place) back to frame pixels with pads p, clipped to the region. */
void vis_map_points(const htpu_geometry *g, const vis_pads *p, float *xy, size_t n);

/* ---- resize_tab.c ------------------------------------------------------------------------- */

/* One axis of OpenCV's INTER_LINEAR: for each destination index, the two source indices
 * (clamped into the source, the second never past its end) and their weights in 1/2048. */
typedef struct vis_axis {
  int32_t *src0, *src1; /* source indices, relative to the region */
  int16_t *w0, *w1;
  int exact;            /* every w1 is 0 (an odd integer downscale, or 1:1): one tap */
} vis_axis;

/* Fills dst_len entries (arrays owned by the caller) for src_len -> dst_len: the columns
 * (weights clamped at the edges) and the rows (weights as computed, indices clamped). */
void vis_axis_fill(vis_axis *ax, uint32_t src_len, uint32_t dst_len);
void vis_axis_fill_rows(vis_axis *ax, uint32_t src_len, uint32_t dst_len);

/* ---- fetch.c ------------------------------------------------------------------------------ */

/* OpenCV's YUV -> RGB products by code value: y already holds max(0, Y - 16) 1220542 + 2^19. */
#define VIS_YUV_CLAMP 896      /* (sum >> 20) lies in -258..534 (B of Y, U 0; of Y, U 255) */
#define VIS_YUV_CLAMP_ZERO 320
typedef struct vis_yuv_tab {
  int32_t y[256], rv[256], gv[256], gu[256], bu[256];
  uint8_t clamp[VIS_YUV_CLAMP]; /* (sum >> 20) + VIS_YUV_CLAMP_ZERO -> 0..255 */
} vis_yuv_tab;
void vis_yuv_tables(vis_yuv_tab *t);

/* The same products split for 16-bit vector multiplies (simd_*.c): C = (C >> 7) * 128 + (C & 127)
 * with the high half signed, so x * C = (x << 7) * C_H + x * C_L, each factor an int16. */
#define VIS_CY 1220542
#define VIS_CRV 1673527
#define VIS_CGU (-409993)
#define VIS_CGV (-852492)
#define VIS_CBU 2116026
#define VIS_C_H(c) ((c) >> 7)
#define VIS_C_L(c) ((c) & 127)

/* What the horizontal pass of one source row needs. */
typedef struct vis_fetch {
  const vis_frame *frame;
  const vis_axis *x;
  uint32_t dst_w;      /* resized width */
  unsigned cn;         /* channels out of the fetch: 3 (native order) or 1 (gray) */
  uint8_t *tap0, *tap1; /* dst_w * cn scratch bytes each, and 4 of slack */
  int16_t *w0, *w1;    /* the column weights repeated per channel: dst_w * cn each */
  uint32_t *off;       /* packed color: each column's first tap, in bytes from the row start */
  uint32_t *wp;        /* packed color: each column's weights, w0 | w1 << 16 */
  uint8_t *gy, *gu, *gv; /* YUV: the taps' Y, U, V bytes, dst_w each, before conversion */
  uint8_t *rgb_row;    /* YUV read by the packed pass: the region's row converted (its width x 3) */
  int packed;          /* the row is read by vis_hpass_packed */
  const vis_yuv_tab *yuv;
} vis_fetch;

/* The native channel order of a fetch with 3 channels: 1 when it is B, G, R (BGR24, BGRA). */
int vis_fetch_native_bgr(htpu_pixel_format f);
/* Source row `row` (relative to the region) -> its pixels at the two taps of every destination
 * column, in fetch channels: tap0/tap1 hold dst_w * cn bytes. tap1 is not written when the
 * axis is exact. */
void vis_fetch_taps(const vis_fetch *fx, uint32_t row);
/* The horizontal pass over the taps: h[i] = (tap0[i] * w0 + tap1[i] * w1) >> 4. */
void vis_hpass(const vis_fetch *fx, int16_t *restrict h);
/* Source row `row`'s horizontal pass, whichever way suits the format. */
void vis_fetch_row(const vis_fetch *fx, uint32_t row, int16_t *h);

/* ---- yuv.c --------------------------------------------------------------------------------- */

/* n pixels' RGB24 (interleaved) from their Y, U and V bytes, as the tables convert them. */
void vis_yuv_pixels(const vis_yuv_tab *t, const uint8_t *y, const uint8_t *u, const uint8_t *v,
                    uint32_t n, uint8_t *rgb);
/* n pixels of an NV12 row from pixel x0 (any parity): its Y row and its UV row. */
void vis_nv12_row(const vis_yuv_tab *t, const uint8_t *yrow, const uint8_t *uvrow, uint32_t x0,
                  uint32_t n, uint8_t *rgb);
/* n pixels of a YUYV row from pixel x0 (any parity). */
void vis_yuyv_row(const vis_yuv_tab *t, const uint8_t *row, uint32_t x0, uint32_t n,
                  uint8_t *rgb);
/* n pixels of row y of the region (f's crop) of an NV12 or YUYV frame. */
void vis_yuv_frame_row(const vis_frame *f, const vis_yuv_tab *t, uint32_t y, uint32_t n,
                       uint8_t *rgb);

/* ---- simd_x86.c, simd_neon.c ------------------------------------------------------------------ */

/* The vector kernels: each converts (or boxes) the first pixels, a vector's worth at a time, and
 * returns how many it did; 0 where the CPU has no kernel, or after vis_simd_select("none").
 * nv12 and yuyv rows start at an even pixel. */
uint32_t vis_simd_yuv_pixels(const uint8_t *y, const uint8_t *u, const uint8_t *v, uint32_t n,
                             uint8_t *rgb);
uint32_t vis_simd_nv12_row(const uint8_t *y, const uint8_t *uv, uint32_t n, uint8_t *rgb);
uint32_t vis_simd_yuyv_row(const uint8_t *row, uint32_t n, uint8_t *rgb);
/* The exact 2x box of two packed color rows (bpp 3 or 4, color first): n output pixels of 3
 * channels from 2n source pixels of each row; reads nothing past them. */
uint32_t vis_simd_half_packed(const uint8_t *r0, const uint8_t *r1, unsigned bpp, uint32_t n,
                              uint8_t *out);
/* Tests: "none" turns the kernels off (the scalar code runs), "auto" back on. 0, or -1 when
 * the CPU has none to turn on. */
int vis_simd_select(const char *name);

/* ---- hpass_packed.c ------------------------------------------------------------------------- */

/* The horizontal pass of a packed color row (3 or 4 bytes a pixel, two taps a column): h holds
 * n * 3 values and one of slack. Never reads at or past `end`. */
void vis_hpass_packed(const uint8_t *row, const uint8_t *end, const uint32_t *off,
                      const uint32_t *wp, unsigned bpp, uint32_t n, int16_t *h);

/* ---- vpass.c ------------------------------------------------------------------------------ */

/* The vertical pass of OpenCV's VResizeLinear for u8 in its vector rounding (vpass.c): n values
 * from two horizontal rows with weights b0, b1. */
void vis_vpass(const int16_t *restrict h0, const int16_t *restrict h1, int16_t b0, int16_t b1,
               uint8_t *restrict out, size_t n);
/* One row alone (b0 = 2048, b1 = 0): the vector rounding is then round-half-up(h / 2048). */
void vis_vpass_one(const int16_t *restrict h0, uint8_t *restrict out, size_t n);

/* ---- lut.c --------------------------------------------------------------------------------- */

/* Per model channel, pixel value -> the stored element's bytes (1, 2 or 4 of them). */
typedef struct vis_lut {
  unsigned elem;           /* bytes per element */
  unsigned channels;       /* model channels: 1 or 3 */
  int identity;            /* u8 and every entry equals its index: a plain copy will do */
  uint32_t mul16;          /* 16-bit elements equal to p x mul16 in every channel, else 0 */
  uint8_t b[3][256];
  uint16_t h[3][256];
  uint32_t w[3][256];
} vis_lut;

/* Builds the tables for `input` (its dtype and quantization; per-axis only along the channel
 * axis `chan_axis`). 0, or HTPU_EINVAL / HTPU_EUNSUPPORTED with the message. */
int vis_lut_build(const htpu_tensor_info *input, int chan_axis, unsigned channels,
                  const htpu_preprocess_options *o, vis_lut *lut);

/* ---- write.c ------------------------------------------------------------------------------- */

/* Where the image goes in the input. */
typedef struct vis_dst {
  uint8_t *base;
  uint32_t width, height, channels;
  int nchw;
  const vis_lut *lut;
  unsigned src_of[3];      /* model channel k takes fetch channel src_of[k] */
  unsigned fetch_cn;       /* channels of the rows given: 1 or 3 */
} vis_dst;

/* Writes n pixels of `row` (fetch channels) at input row y, column x. */
void vis_write_row(const vis_dst *d, const uint8_t *row, uint32_t y, uint32_t x, uint32_t n);
/* The same for `count` rows `stride` bytes apart, from input row y on. */
void vis_write_rows(const vis_dst *d, const uint8_t *row, size_t stride, uint32_t y, uint32_t x,
                    uint32_t n, uint32_t count);
/* Fills the input outside the resized rectangle with `pad` (a pixel value). */
void vis_write_border(const vis_dst *d, const htpu_geometry *g, uint8_t pad);

/* ---- rows.c ---------------------------------------------------------------------------------- */

/* What the fast rows need: the checked frame (its crop is the region), the fetch (channels,
 * YUV tables), where rows go, the geometry, and scratch: rgb[0..1] hold 2 x resized width RGB24
 * pixels each, out resized width x 3. */
typedef struct vis_rows {
  const vis_frame *f;
  const vis_fetch *fx;
  const vis_dst *d;
  const htpu_geometry *g;
  uint8_t *rgb[2];
  uint8_t *out;
} vis_rows;

/* Writes every resized row when the resize is 1:1 or exactly 2x for a frame format the fast rows
 * take (rows.c's comment): 1. Else writes nothing: 0 (the general path's turn). */
int vis_rows_fast(const vis_rows *r);

/* ---- head.c ---------------------------------------------------------------------------------- */

/* One output tensor and its bytes. */
typedef struct vis_reader {
  const htpu_tensor_info *info;
  const void *data;
} vis_reader;

/* Element i of the tensor as f32, dequantized with the core's formula ((q - zp) * scale in
 * double, rounded once; per-axis parameters by i's channel). */
float vis_read(const vis_reader *r, size_t i);

/* How a head is laid out: where each value of anchor a lives. */
typedef struct vis_head {
  htpu_head kind;
  htpu_head_layout layout;
  uint32_t anchors, classes, keypoints, kdims;
  /* Ultralytics: one tensor; value c of anchor a at a * a_step + c * c_step */
  vis_reader main;
  size_t a_step, c_step;
  /* AI Hub: boxes [A, 4]; scores [A] (with class ids [A]) or [A, nc] */
  vis_reader boxes, scores, class_ids;
  int has_class_ids;
} vis_head;

/* Reads the outputs' shapes against the head named in the options (or found). 0, or
 * HTPU_EINVAL naming the output, its shape and what the head needs. */
int vis_head_resolve(const htpu_tensor_info *outs, const void *const *data, uint32_t n,
                     const htpu_decode_options *o, vis_head *h);

/* ---- candidates.c, nms.c ----------------------------------------------------------------------- */

/* One prediction above the threshold. */
typedef struct vis_cand {
  float score;
  uint32_t anchor;
  uint32_t cls;
  float box[4]; /* x1, y1, x2, y2 in input pixels */
  int dead;     /* suppressed by NMS */
} vis_cand;

typedef struct vis_cands {
  vis_cand *items;
  size_t count, cap;
} vis_cands;

/* Scans the head's scores: every anchor whose best score is > threshold becomes a candidate
 * (its box read and converted). 0, or HTPU_EINVAL (NaN) / HTPU_ENOMEM. */
int vis_candidates(const vis_head *h, float threshold, vis_cands *c);

/* Sorts by score (then anchor), keeps max_candidates, runs greedy NMS; the kept candidates'
 * indices into c->items, best first, go to keep (at most max_keep). Returns how many. */
uint32_t vis_nms(vis_cands *c, uint32_t max_candidates, float iou, int agnostic,
                 uint32_t *keep, uint32_t max_keep);

#endif
