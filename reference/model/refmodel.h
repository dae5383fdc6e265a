/*
 * refmodel.h - the reference backend's model: its binary format (docs/reference-format.md),
 * the builder from the text description, and the CPU interpreter.
 *
 * Shared by the reference backend library, the reference system library, the builder command
 * and the C tests. Knows nothing about the QNN function tables; it does use QNN's data-type
 * and quantization codes (src/qnn/qnn_abi.h) so the providers can report them unchanged.
 */
#ifndef HTPU_REFMODEL_H
#define HTPU_REFMODEL_H

#include <stddef.h>
#include <stdint.h>

#define REF_MAX_RANK 8
#define REF_MAX_OP_IO 4

typedef enum ref_tensor_kind {
  REF_TENSOR_INPUT = 0,  /* graph input, QNN APP_WRITE */
  REF_TENSOR_OUTPUT = 1, /* graph output, QNN APP_READ */
  REF_TENSOR_NATIVE = 2, /* intermediate */
  REF_TENSOR_STATIC = 3  /* weights/bias, data in the file */
} ref_tensor_kind;

typedef enum ref_quant_encoding {
  REF_QUANT_NONE = 0,
  REF_QUANT_SCALE_OFFSET = 1,      /* QNN SCALE_OFFSET */
  REF_QUANT_AXIS_SCALE_OFFSET = 2  /* QNN AXIS_SCALE_OFFSET */
} ref_quant_encoding;

typedef struct ref_tensor {
  uint32_t id;          /* unique within the model, nonzero */
  const char *name;     /* points into the model's string table */
  ref_tensor_kind kind;
  uint32_t data_type;   /* QNN_DATATYPE_* */
  uint32_t rank;
  uint32_t dims[REF_MAX_RANK];
  ref_quant_encoding quant;
  float scale;          /* SCALE_OFFSET: float = (q + offset) * scale (QNN convention) */
  int32_t offset;
  int32_t axis;         /* AXIS_SCALE_OFFSET */
  uint32_t num_axis;
  const float *scales;  /* num_axis entries */
  const int32_t *offsets;
  const void *data;     /* STATIC only */
  size_t nbytes;        /* element count * element size */
  /* QNN_TENSOR_DATA_FORMAT_DENSE or _SPARSE, as the system library reports it. The
   * interpreter keeps every tensor dense; sparse is metadata, and a graph input or output
   * declared sparse is a binary QnnTypes.h forbids ("sparse tensors may only be NATIVE"),
   * which the builder writes so that clients can be tested on it and the backend refuses. */
  uint32_t data_format;
  /* Bit d: dims[d] is dynamic (QNN's isDynamicDimensions); dims[d] is then its maximum. Only
   * a graph output produced by NonZero has one (its dims[0]); an execute writes the value it
   * produced into the output tensor's dimensions. */
  uint32_t dynamic_mask;
} ref_tensor;

typedef enum ref_op_type {
  REF_OP_ADD = 1,             /* ElementWiseAdd, numpy-style broadcasting */
  REF_OP_MUL = 2,             /* ElementWiseMultiply */
  REF_OP_FULLY_CONNECTED = 3, /* in [N,K] (or any shape flattened to [N,K]), weights [M,K], bias [M] */
  REF_OP_CONV2D = 4,          /* NHWC in, weights [KH,KW,Cin,Cout] (QNN HWIO), bias [Cout] */
  REF_OP_RELU = 5,
  REF_OP_RESHAPE = 6,
  REF_OP_SOFTMAX = 7,         /* over the last axis, param beta (default 1) */
  REF_OP_NON_ZERO = 8,        /* in any shape -> [N, rank(in)] i32/u32 indices of its nonzero
                                 elements in row-major order, dims[0] dynamic: N the input's
                                 element count, the execute's count k written back */
  /* format version 2 (docs/reference-format.md): */
  REF_OP_SIGMOID = 9,         /* 1 / (1 + exp(-x)) */
  REF_OP_CONCAT = 10,         /* 1..4 inputs joined along `axis` */
  REF_OP_POOL_MAX_2D = 11,    /* NHWC; filter, stride, pad; floor or ceil output sizes */
  REF_OP_RESIZE_NEAREST = 12, /* NHWC ResizeNearestNeighbor to the output's H and W */
  REF_OP_TRANSPOSE = 13       /* output dim i is input dim perm[i] */
} ref_op_type;

/* The first op type of format version 2: files holding one are written as version 2, the
 * types below it are version 1's. */
#define REF_OP_FIRST_V2 REF_OP_SIGMOID

typedef struct ref_op {
  ref_op_type type;
  const char *name;
  uint32_t num_inputs;
  uint32_t inputs[REF_MAX_OP_IO];  /* tensor indices into ref_model.tensors */
  uint32_t num_outputs;
  uint32_t outputs[REF_MAX_OP_IO];
  uint32_t stride[2];              /* CONV2D, POOL_MAX_2D: h, w */
  uint32_t pad[4];                 /* CONV2D, POOL_MAX_2D: top, left, bottom, right */
  float beta;                      /* SOFTMAX */
  uint32_t axis;                   /* CONCAT */
  uint32_t filter[2];              /* POOL_MAX_2D: h, w */
  uint32_t ceil_mode;              /* POOL_MAX_2D: QNN's rounding_mode CEIL (1) or FLOOR (0) */
  uint32_t align_corners;          /* RESIZE_NEAREST: 0 or 1 */
  uint32_t half_pixel_centers;     /* RESIZE_NEAREST: 0 or 1 */
  uint32_t perm[REF_MAX_RANK];     /* TRANSPOSE: perm[0..rank) */
} ref_op;

/* ref_graph.flags */
#define REF_GRAPH_NO_BATCH_MULTIPLE 1u /* executes with k x the batch dimension are refused */
#define REF_GRAPH_FLAGS_KNOWN REF_GRAPH_NO_BATCH_MULTIPLE

typedef struct ref_graph {
  const char *name;
  uint32_t num_inputs;
  uint32_t *inputs;   /* tensor indices, in graph-input order */
  uint32_t num_outputs;
  uint32_t *outputs;
  uint32_t num_ops;
  ref_op *ops;        /* in execution order */
  uint32_t flags;     /* REF_GRAPH_* */
} ref_graph;

/* What the reference system library reports about the binary, chosen by the model's author
 * so that every introspection path of the core can be exercised. */
typedef struct ref_model_meta {
  uint32_t binary_info_version; /* 1, 2 or 3 */
  uint32_t graph_info_version;  /* 1, 2 or 3 */
  uint32_t tensor_version;      /* 1 or 2 */
  uint32_t backend_id;          /* default 6 (HTP) */
  const char *build_id;
  uint32_t core_api[3];         /* API version the binary was "built" with */
  uint32_t backend_api[3];
  uint32_t context_blob_version[3];
  const char *soc_version;      /* e.g. "v68" */
  uint32_t soc_model;           /* e.g. 35 */
  uint32_t dsp_arch;            /* e.g. 68 */
  /* The graph blob info's vtcmSize (graph info v3), written as is: bytes, as real binaries
   * carry it (builder default 2 MiB), or MB, the older form readers accept below 1 MiB. */
  uint32_t vtcm_blob;
  /* The HTP graph blob info version the system library reports with graph info v3: 1 (spill-
   * fill, VTCM; also for 0, a model assembled by hand) or 2 (I/O, op data, constants, DDR
   * tensors, shared weights; no VTCM). The figures come from the model (ref_graph_memory_of). */
  uint32_t graph_blob_version;
} ref_model_meta;

typedef struct ref_model {
  ref_model_meta meta;
  uint32_t num_tensors;
  ref_tensor *tensors;
  uint32_t num_graphs;
  ref_graph *graphs;
  void *storage_; /* owned allocations (copy of the file, tables); private */
} ref_model;

/* Parses a binary (bounds-checked: every offset and count against `len`). The model keeps
 * its own copy of `buf`. Returns 0, or -1 with a message in err such as
 * "truncated: tensor table needs 4096 bytes at offset 64, file has 100",
 * "bad magic", "unknown format version 9 (supported: 1)", "tensor 'x': rank 12 > 8". */
int ref_model_parse(const void *buf, size_t len, ref_model **out, char *err, size_t errlen);
/* The same without the copy: names, static data and per-axis parameters point into `buf`,
 * which must stay valid and unchanged until ref_model_free (a persistent binary, QNN's
 * PERSISTENT_BINARY context config). A buffer that is not 8-byte aligned is refused (-1): parse
 * a copy then. */
int ref_model_parse_in_place(const void *buf, size_t len, ref_model **out, char *err,
                             size_t errlen);
void ref_model_free(ref_model *m);

/* Serializes a model (parsed, or assembled in memory with the tensor indices of ref_op and
 * ref_graph valid) after checking it with the parser's rules. On success *out is malloc'ed
 * (free with free()). Parsing a file written here and writing it again gives the same bytes.
 * Returns 0 or -1 with a message. */
int ref_model_write(const ref_model *m, void **out, size_t *out_len, char *err, size_t errlen);

/* Quick check used by the system library: does buf start with the reference magic? */
int ref_model_has_magic(const void *buf, size_t len);

/* Index of the graph with this name, or -1. */
int ref_model_find_graph(const ref_model *m, const char *name);
/* Index of the tensor with this id, or -1. */
int ref_model_find_tensor(const ref_model *m, uint32_t id);

/* What graph g costs, by HTP's measures (reference/model/memory.c): inputs and outputs; op
 * records (80 bytes each); the constants only this graph reads and those it shares with
 * another graph; its intermediates; and the largest set of intermediates alive at once (its
 * spill-fill buffer). */
typedef struct ref_graph_memory {
  uint64_t io_bytes, op_data_bytes, const_bytes, shared_weights_bytes, ddr_bytes;
  uint64_t spill_fill_bytes;
} ref_graph_memory;
void ref_graph_memory_of(const ref_model *m, uint32_t g, ref_graph_memory *out);
/* Graph g's spill-fill buffer alone (ref_graph_memory_of's spill_fill_bytes): the largest sum
 * of intermediates (native tensors) alive at once, each from the op that makes it to the last
 * op that reads it. The system library reports it in the blob info; the backend accounts it
 * per context, or per group of contexts sharing one buffer. */
uint64_t ref_graph_spill_fill_bytes(const ref_model *m, uint32_t g);
/* Every static tensor of the model, each once: its weights buffer. */
uint64_t ref_model_weights_bytes(const ref_model *m);

/* Bytes of one element of a QNN data type (0 for unsupported types). */
size_t ref_dtype_size(uint32_t data_type);
size_t ref_tensor_elements(const ref_tensor *t);

/* Runs one graph. in[i] / out[i] are raw buffers in the graph's own input/output types
 * (graph-input/-output order), each exactly that tensor's nbytes. Arithmetic follows QNN's
 * semantics: quantized operands are dequantized, computed in f32, requantized with round half
 * to even and saturation. Thread-safe for different graphs and for the same graph (no state is
 * kept in the model). Returns 0 or -1 with a message. */
int ref_graph_run(const ref_model *m, uint32_t graph_index, const void *const *in,
                  void *const *out, char *err, size_t errlen);

/* Asked before every op: nonzero stops the run there. */
typedef int (*ref_stop_fn)(void *arg);
#define REF_RUN_STOPPED 1
/* ref_graph_run that calls stop(arg) (when non-NULL) before each op and returns
 * REF_RUN_STOPPED, outputs partly written, as soon as it answers nonzero: how an execute is
 * aborted or timed out between ops. When op_start/op_end are not NULL (arrays of the graph's
 * num_ops entries) it also records when each op started and ended (CLOCK_MONOTONIC, ns; the
 * stop check comes before the start): the reference backend's per-op profile events. */
int ref_graph_run_ex(const ref_model *m, uint32_t graph_index, const void *const *in,
                     void *const *out, ref_stop_fn stop, void *stop_arg, uint64_t *op_start,
                     uint64_t *op_end, char *err, size_t errlen);
/* ref_graph_run_ex that also says what shape each graph output came out in: out_dims (NULL, or
 * the graph's num_outputs rows of REF_MAX_RANK) gets output i's dims in row i, its declared
 * dims with each dynamic dimension (ref_tensor.dynamic_mask) set to what this run produced.
 * An output with a dynamic dimension holds that many elements from its start; the rest of its
 * buffer is left as it was. */
int ref_graph_run_dims(const ref_model *m, uint32_t graph_index, const void *const *in,
                       void *const *out, ref_stop_fn stop, void *stop_arg, uint64_t *op_start,
                       uint64_t *op_end, uint32_t (*out_dims)[REF_MAX_RANK], char *err,
                       size_t errlen);

/* ---- builder: text description -> binary ---------------------------------------------------
 * The text format is documented in docs/reference-format.md. On success *out is malloc'ed
 * (free with free()). Returns 0 or -1 with a message naming the line ("line 12: unknown op
 * 'conv3d'"). */
int ref_build_from_text(const char *text, void **out, size_t *out_len, char *err,
                        size_t errlen);
/* Same, resolving `data_file=` paths relative to base_dir (NULL: the current directory);
 * htpu-refbuild passes the directory of its input file. */
int ref_build_from_text_at(const char *text, const char *base_dir, void **out, size_t *out_len,
                           char *err, size_t errlen);

#endif /* HTPU_REFMODEL_H */
