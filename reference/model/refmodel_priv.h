/*
 * refmodel_priv.h - internals shared by the files of reference/model: the binary layout
 * (documented in docs/reference-format.md), the semantic checks that the parser, the writer and
 * the builder all apply, and the kernels of the interpreter. Not for use outside this directory.
 */
#ifndef HTPU_REFMODEL_PRIV_H
#define HTPU_REFMODEL_PRIV_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "hexagon_tpu.h"
#include "quant/quant.h"
#include "refmodel.h"

/* The format stores little-endian numbers and the parser points float/int arrays straight into
 * its copy of the file, so the host must be little-endian (x86-64 and aarch64 Linux are). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the reference model format is read in place and needs a little-endian host"
#endif

/* ---- binary layout, format version 1 -------------------------------------------------------
 * All numbers little-endian u32 unless noted; offsets of sections are absolute, offsets inside
 * records are relative to the section they point into. */
#define REFF_MAGIC "HTPUREFM"
#define REFF_MAGIC_LEN 8u
#define REFF_VERSION 1u
/* Version 2: the same sections; op records of REFF_OP_SIZE_V2 bytes, whose word at
 * REFF_O_RESERVED (reserved in version 1) holds an op parameter and REFF_O_VALUES 8 more words.
 * Written only for models with an op of version 2 (type >= REF_OP_FIRST_V2). */
#define REFF_VERSION_2 2u
#define REFF_ALIGN 8u

#define REFF_HEADER_SIZE 136u
/* Header flags: bit 0, the system library reports graph blob info version 2 (files without it,
 * all written before it, report version 1). */
#define REFF_HFLAG_GRAPH_BLOB_V2 1u
enum {
  REFF_H_MAGIC = 0,
  REFF_H_VERSION = 8,
  REFF_H_HEADER_SIZE = 12,
  REFF_H_FILE_SIZE = 16,
  REFF_H_FLAGS = 20,
  REFF_H_BINARY_INFO = 24,
  REFF_H_GRAPH_INFO = 28,
  REFF_H_TENSOR_VERSION = 32,
  REFF_H_BACKEND_ID = 36,
  REFF_H_CORE_API = 40,      /* 3 x u32 */
  REFF_H_BACKEND_API = 52,   /* 3 x u32 */
  REFF_H_BLOB_VERSION = 64,  /* 3 x u32 */
  REFF_H_SOC_MODEL = 76,
  REFF_H_DSP_ARCH = 80,
  REFF_H_VTCM_BLOB = 84,     /* the blob info's vtcmSize as written (refmodel.h) */
  REFF_H_BUILD_ID = 88,      /* string reference */
  REFF_H_SOC_VERSION = 92,   /* string reference */
  REFF_H_STRINGS_OFF = 96,
  REFF_H_STRINGS_SIZE = 100,
  REFF_H_TENSORS_OFF = 104,
  REFF_H_NUM_TENSORS = 108,
  REFF_H_GRAPHS_OFF = 112,
  REFF_H_NUM_GRAPHS = 116,
  REFF_H_LISTS_OFF = 120,
  REFF_H_LISTS_SIZE = 124,
  REFF_H_DATA_OFF = 128,
  REFF_H_DATA_SIZE = 132
};

#define REFF_TENSOR_SIZE 88u
enum {
  REFF_T_ID = 0,
  REFF_T_NAME = 4,
  REFF_T_KIND = 8,
  REFF_T_DATA_TYPE = 12,
  REFF_T_RANK = 16,
  REFF_T_DIMS = 20,          /* 8 x u32, unused = 0 */
  REFF_T_QUANT = 52,         /* ref_quant_encoding */
  REFF_T_SCALE = 56,         /* f32 */
  REFF_T_OFFSET = 60,        /* i32 */
  REFF_T_AXIS = 64,          /* i32 */
  REFF_T_NUM_AXIS = 68,
  REFF_T_AXIS_PARAMS = 72,   /* data-section offset: num_axis f32 scales, then num_axis i32 */
  REFF_T_DATA_OFF = 76,      /* data-section offset */
  REFF_T_DATA_SIZE = 80,
  REFF_T_FLAGS = 84          /* data format and dynamic dims (below); was reserved: 0 */
};
/* The tensor record's flags: bits 0..7 the data format (QNN_TENSOR_DATA_FORMAT_*), bits
 * 8..15 the dynamic-dimension mask (bit 8 + d: dims[d]), bits 16..31 zero. */
#define REFF_T_FLAGS_FORMAT(f) ((f) & 0xFFu)
#define REFF_T_FLAGS_DYNAMIC(f) (((f) >> 8) & 0xFFu)
#define REFF_T_FLAGS_MAKE(format, mask) ((format) | ((mask) << 8))
#define REFF_T_FLAGS_UNUSED 0xFFFF0000u

#define REFF_GRAPH_SIZE 32u
enum {
  REFF_G_NAME = 0,
  REFF_G_NUM_INPUTS = 4,
  REFF_G_INPUTS = 8,         /* lists-section offset of num_inputs tensor ids */
  REFF_G_NUM_OUTPUTS = 12,
  REFF_G_OUTPUTS = 16,
  REFF_G_NUM_OPS = 20,
  REFF_G_OPS = 24,           /* lists-section offset of num_ops op records */
  REFF_G_FLAGS = 28          /* REF_GRAPH_* (was reserved: files without flags hold 0) */
};

#define REFF_OP_SIZE 80u
enum {
  REFF_O_TYPE = 0,
  REFF_O_NAME = 4,
  REFF_O_NUM_INPUTS = 8,
  REFF_O_INPUTS = 12,        /* 4 x tensor id, unused = 0 */
  REFF_O_NUM_OUTPUTS = 28,
  REFF_O_OUTPUTS = 32,       /* 4 x tensor id */
  REFF_O_STRIDE = 48,        /* 2 x u32 */
  REFF_O_PAD = 56,           /* 4 x u32 */
  REFF_O_BETA = 72,          /* f32 */
  REFF_O_RESERVED = 76,      /* version 1: 0. Version 2: the op parameter (REFF_O_PARAM) */
  REFF_O_PARAM = 76,         /* CONCAT axis; POOL_MAX_2D ceil mode; RESIZE_NEAREST flags */
  REFF_O_VALUES = 80         /* version 2: 8 x u32: POOL_MAX_2D filter h, w; TRANSPOSE perm */
};
#define REFF_OP_SIZE_V2 112u
/* RESIZE_NEAREST's flags in REFF_O_PARAM */
#define REFF_RESIZE_ALIGN_CORNERS 1u
#define REFF_RESIZE_HALF_PIXEL 2u

/* Largest tensor the format accepts (bytes), so sizes always fit int32-based consumers. */
#define REFM_MAX_TENSOR_BYTES ((uint64_t)1 << 31)
/* The most a graph's non-static tensors may need together, at f32 size (validate.c); the
 * environment variable HTPU_REF_MAX_ACTIVATION_BYTES (decimal bytes) overrides it. */
#define REFM_DEFAULT_MAX_ACTIVATION_BYTES ((uint64_t)1 << 30)
uint64_t refm_max_activation_bytes(void);

/* ---- small helpers (util.c) ------------------------------------------------------------- */

/* snprintf into err when err is non-NULL; always returns -1 so callers can `return refm_err(..)`. */
int refm_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends "prefix" to the message already in err. */
void refm_err_prefix(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* htpu_dtype storage type of a QNN data type; HTPU_DTYPE_INVALID when unsupported. */
htpu_dtype refm_storage_dtype(uint32_t qnn_data_type);
/* Nonzero for the QNN fixed-point types, which must carry quantization parameters. */
int refm_dtype_is_fixed(uint32_t qnn_data_type);
/* Short name: "ufixed8", "f32", ...; "unknown" for unsupported types. */
const char *refm_dtype_name(uint32_t qnn_data_type);

/* Canonical text name of an op type ("Conv2d"), NULL for an unknown code. */
const char *refm_op_name(uint32_t op_type);
/* Op type for a text name (case-insensitive), 0 when unknown. */
uint32_t refm_op_from_name(const char *name);

/* Element count of dims[0..rank) into *out; -1 on overflow of uint64. */
int refm_elements(uint32_t rank, const uint32_t *dims, uint64_t *out);

/* Quantization of one tensor in qc_* form. Per-axis zero points are QNN offsets negated, so
 * they need their own array; refm_qparams_free releases it. */
typedef struct refm_qparams {
  qc_params p;
  float scale;
  int32_t zero_point;
  int32_t *zero_points; /* owned, per-axis only */
} refm_qparams;
int refm_qparams_init(const ref_tensor *t, refm_qparams *q);
void refm_qparams_free(refm_qparams *q);

/* ---- semantic checks (validate.c) --------------------------------------------------------
 * The parser, the writer and the builder apply the same rules; messages carry no location
 * prefix, callers add "tensor 'w': " or "line 12: ". */

/* Data type, rank, dims, size, quantization, static data size of one tensor. */
int refm_check_tensor(const ref_tensor *t, char *err, size_t errlen);
/* Meta field ranges. */
int refm_check_meta(const ref_model_meta *meta, char *err, size_t errlen);
/* Every graph: non-empty inputs/outputs of the right kinds, every op's arity, parameters and
 * shapes, and that each op input is produced before use. On failure *bad_graph is the failing
 * graph and *bad_op its failing op (UINT32_MAX when the graph itself is at fault); the message
 * names the graph and op. Tensor indices need not be valid (they are checked). */
int refm_check_graphs(const ref_model *m, uint32_t *bad_graph, uint32_t *bad_op, char *err,
                      size_t errlen);
/* Tensor ids unique and nonzero, graph names unique: the cross-table rules. */
int refm_check_unique(const ref_model *m, char *err, size_t errlen);
/* All of the above, with messages naming the tensor; what the writer applies. */
int refm_check_model(const ref_model *m, char *err, size_t errlen);

/* ---- the text builder's lexer (build_lex.c) ---------------------------------------------
 * The description is read a statement at a time: the tokens of one line, or of several lines
 * while a '[' is open (long data lists may wrap). '#' starts a comment outside strings. */
typedef enum refm_tok_kind {
  REFM_TK_WORD,   /* a run of characters other than space, [ ] , = " # */
  REFM_TK_STRING, /* "..." with \" and \\ escapes; text is the decoded contents */
  REFM_TK_LBRACK,
  REFM_TK_RBRACK,
  REFM_TK_EQ,
  REFM_TK_COMMA
} refm_tok_kind;

typedef struct refm_tok {
  refm_tok_kind kind;
  int line;
  const char *text; /* NUL-terminated; valid until the next refm_lex_next */
  size_t off_;      /* private */
} refm_tok;

typedef struct refm_lexer {
  const char *p;
  int line;
  refm_tok *toks;
  size_t ntoks, cap;
  char *buf;
  size_t blen, bcap;
} refm_lexer;

void refm_lex_init(refm_lexer *lx, const char *text);
/* 1: a statement is in toks[0..ntoks); 0: end of text; -1: error ("line N: ..."). */
int refm_lex_next(refm_lexer *lx, char *err, size_t errlen);
void refm_lex_free(refm_lexer *lx);

/* ---- kernels (ops.c) -------------------------------------------------------------------
 * Inputs and output are dense f32 arrays in the shapes of the op's tensors, which the checks
 * above guarantee to be consistent. Kernels never fail. */
void refm_op_compute(const ref_model *m, const ref_op *op, const float *const *in, float *out);
/* NonZero (written straight into its i32/u32 output, whose indices an f32 pass could round):
 * the row-major indices of x's nonzero elements, one row of rank(x) per element; returns
 * their count. */
uint32_t refm_op_non_zero(const ref_tensor *tx, const float *x, const ref_tensor *ty, void *y);

/* The shape ops of format version 2 (ops_layout.c): Concat, Transpose, ResizeNearestNeighbor. */
void refm_op_layout(const ref_model *m, const ref_op *op, const float *const *in, float *out);

/* The shape rules and parameters of the ops of format version 2 (validate_ops.c), for
 * check_op_shapes; in[] and y are valid tensors and the arity was checked. */
int refm_check_op_v2(const ref_op *op, const ref_tensor *const *in, const ref_tensor *y,
                     char *err, size_t errlen);
/* Whether the op type takes stride/pad (Conv2d, PoolMax2d). */
int refm_op_takes_window(uint32_t op_type);

#endif /* HTPU_REFMODEL_PRIV_H */
