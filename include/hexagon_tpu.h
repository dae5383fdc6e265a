/*
 * hexagon_tpu.h - run pre-compiled QNN context binaries on the Hexagon NPU from C.
 *
 * The QNN libraries are loaded with dlopen at run time; building needs no Qualcomm SDK.
 * Links only libc, libdl, libpthread and libm.
 *
 * Worked lifecycle example (error checks shortened to `if (rc) goto out;`):
 *
 *   htpu_runtime_options ro;
 *   htpu_runtime_options_init(&ro);            // defaults: /usr/lib/libQnnHtp.so etc.
 *   ro.dsp_library_path = "/usr/lib/dsp";       // setenv()s DSP_ and ADSP_LIBRARY_PATH
 *
 *   htpu_runtime *rt = NULL; htpu_context *ctx = NULL; htpu_graph *g = NULL;
 *   int rc = htpu_runtime_open(&ro, &rt);
 *   if (rc) { fprintf(stderr, "%s\n", htpu_last_error()); goto out; }
 *   rc = htpu_context_open_file(rt, "/data/mobilenet_v2.bin", &ctx);
 *   if (rc) goto out;
 *   rc = htpu_graph_open(ctx, NULL, &g);        // NULL: the context's only graph
 *   if (rc) goto out;
 *
 *   const htpu_tensor_info *in0 = htpu_graph_input(g, 0);
 *   const htpu_tensor_info *out0 = htpu_graph_output(g, 0);
 *   float *image = ...;                          // in0->num_elements floats
 *   float *scores = malloc(out0->num_elements * sizeof(float));
 *   htpu_io in = {image, in0->num_elements * sizeof(float), HTPU_F32};   // quantized for you
 *   htpu_io out = {scores, out0->num_elements * sizeof(float), HTPU_F32}; // dequantized
 *   htpu_exec_stats st;
 *   rc = htpu_graph_execute(g, &in, 1, &out, 1, &st);
 *   if (rc == 0) printf("graphExecute took %llu ns\n", (unsigned long long)st.execute_ns);
 * out:
 *   if (rc) fprintf(stderr, "%s: %s\n", htpu_err_name(rc), htpu_last_error());
 *   htpu_graph_close(&g);                        // any order: children keep parents alive
 *   htpu_context_close(&ctx);
 *   htpu_runtime_close(&rt);
 *
 * Conventions
 *  - Fallible functions return 0 (HTPU_OK) or a negative HTPU_E* code. The detailed message of
 *    the calling thread's last failure (stage, path, symbol, dlerror(), QNN code and name, and
 *    the QNN log lines emitted during the call) is htpu_last_error(); handles keep theirs too.
 *  - Handles are opaque. Each `*_close(&h)` drops the caller's reference and sets h = NULL;
 *    closing NULL is a no-op. A handle that was closed (or never valid) is rejected with
 *    HTPU_ECLOSED by every function: use after close is an error, never a crash.
 *  - A graph keeps its context alive and a context its runtime, so callers may close in any
 *    order; the QNN teardown always runs context -> device -> backend -> log -> dlclose.
 *  - Thread safety: every function may be called from any thread. Executes of one graph are
 *    serialized, whatever handle they come through (htpu_graph_open twice on one context and
 *    graph gives two handles of one graph); different graphs run concurrently. Opening or closing a context waits for the
 *    runtime's in-flight executes and holds off new ones, process-wide (on the board, loading while another
 *    graph executes has reset the device). Across processes, every QNN session creation (a runtime's
 *    backend and device, a load, a recovery) waits for the NPU lock (htpu_runtime_options.npu_lock_path).
 */
#ifndef HEXAGON_TPU_H
#define HEXAGON_TPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HTPU_VERSION_MAJOR 0
#define HTPU_VERSION_MINOR 1
#define HTPU_VERSION_PATCH 0
#define HTPU_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define HTPU_API __attribute__((visibility("default")))
#else
#define HTPU_API
#endif

/* ---- errors ------------------------------------------------------------------------------- */

/* X(name, value, message). Loader stages have their own codes so callers can tell them apart. */
#define HTPU_ERRORS(X)                                                                          \
  X(HTPU_OK, 0, "success")                                                                     \
  X(HTPU_EINVAL, -1, "invalid argument")                                                       \
  X(HTPU_ENOMEM, -2, "out of memory")                                                          \
  X(HTPU_ECLOSED, -3, "handle is closed or invalid")                                           \
  X(HTPU_ELOAD_BACKEND, -4, "could not load the QNN backend library")                          \
  X(HTPU_ESYMBOL, -5, "QNN entry point not found in library")                                  \
  X(HTPU_ENO_PROVIDER, -6, "library offers no QNN provider")                                   \
  X(HTPU_EVERSION, -7, "no provider with a supported API version")                             \
  X(HTPU_ELOAD_SYSTEM, -8, "could not load the QNN system library")                            \
  X(HTPU_EQNN, -9, "QNN call failed")                                                          \
  X(HTPU_EIO, -10, "could not read file")                                                      \
  X(HTPU_EMODEL, -11, "context binary is malformed or unsupported")                            \
  X(HTPU_ENOT_FOUND, -12, "no such graph")                                                     \
  X(HTPU_EMISMATCH, -13, "tensor count, type or size does not match the graph")               \
  X(HTPU_ENAN, -14, "NaN cannot be quantized")                                                 \
  X(HTPU_EUNSUPPORTED, -15, "not supported")                                                   \
  X(HTPU_EBUSY, -16, "handle is in use")                                                       \
  X(HTPU_EDEVICE_RESET, -17, "the DSP restarted and the model could not be recovered")     \
  X(HTPU_EINCOMPATIBLE, -18, "context binary was built for another device or a newer SDK")    \
  X(HTPU_ESYSTEM_LAYOUT, -19, "the QNN system library returned metadata in an unsupported layout") \
  X(HTPU_ECANCELLED, -20, "the call was cancelled")                                          \
  X(HTPU_ETIMEDOUT, -21, "the call passed its deadline")

#define HTPU_ERROR_ENUM_(name, value, msg) name = value,
typedef enum htpu_error { HTPU_ERRORS(HTPU_ERROR_ENUM_) } htpu_error;
#undef HTPU_ERROR_ENUM_

/* Static strings for an HTPU_E* code: "HTPU_EQNN" / "QNN call failed". Unknown -> "unknown". */
HTPU_API const char *htpu_err_name(int code);
HTPU_API const char *htpu_strerror(int code);

/* Name and message of a QNN error code (the low 16 bits of a QNN error handle), e.g.
 * 1007 -> "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION" / "DSP subsystem restarted". Static strings;
 * unknown codes give "QNN_ERROR_UNKNOWN". */
HTPU_API const char *htpu_qnn_error_name(uint32_t qnn_code);
HTPU_API const char *htpu_qnn_error_message(uint32_t qnn_code);

/* The calling thread's last failure: full message (never NULL; "" when none) and the QNN code
 * involved (0 when the failure was not a QNN call). Valid until the thread's next htpu call.
 * A message is at most HTPU_ERROR_MAX - 1 bytes: a buffer of HTPU_ERROR_MAX bytes holds any
 * (htpu_load_request.error, htpu_context_last_error) whole. */
#define HTPU_ERROR_MAX 4096
HTPU_API const char *htpu_last_error(void);
HTPU_API uint32_t htpu_last_qnn_code(void);

/* ---- element types ------------------------------------------------------------------------ */

typedef enum htpu_dtype {
  HTPU_DTYPE_INVALID = 0,
  HTPU_F32,
  HTPU_F16,
  HTPU_U8,
  HTPU_I8,
  HTPU_U16,
  HTPU_I16,
  HTPU_U32,
  HTPU_I32,
  HTPU_U64,
  HTPU_I64,
  HTPU_BOOL8
} htpu_dtype;

/* Bytes per element (0 for HTPU_DTYPE_INVALID) and a short name ("f32", "u8", ...). */
HTPU_API size_t htpu_dtype_size(htpu_dtype t);
HTPU_API const char *htpu_dtype_name(htpu_dtype t);

/* ---- tensor and model information ----------------------------------------------------------- */

typedef enum htpu_quant_kind {
  HTPU_QUANT_NONE = 0,   /* plain float or integer tensor */
  HTPU_QUANT_PER_TENSOR, /* float = (q - zero_point) * scale */
  HTPU_QUANT_PER_AXIS    /* one scale/zero_point per index along `axis` */
} htpu_quant_kind;

/* zero_point = -offset of QNN's float = (q + offset) * scale. */
typedef struct htpu_quant {
  htpu_quant_kind kind;
  float scale;               /* per-tensor */
  int32_t zero_point;        /* per-tensor */
  int32_t axis;              /* per-axis */
  uint32_t num_channels;     /* per-axis: length of scales/zero_points (= dims[axis]) */
  const float *scales;       /* per-axis */
  const int32_t *zero_points; /* per-axis */
} htpu_quant;

#define HTPU_MAX_RANK 8

typedef struct htpu_tensor_info {
  const char *name;
  uint32_t id;           /* the id QNN assigned; executes must carry it */
  htpu_dtype dtype;      /* storage type of one element */
  uint32_t qnn_data_type; /* the raw Qnn_DataType_t, e.g. 0x0408 for UFIXED_POINT_8 */
  uint32_t tensor_version; /* 1 or 2, as the binary declares it */
  uint32_t rank;
  uint32_t dims[HTPU_MAX_RANK];
  size_t num_elements;
  size_t byte_size;
  htpu_quant quant;
  /* Bit d set: dims[d] is dynamic (the binary's isDynamicDimensions, tensor version 2): dims[d]
   * is then its maximum, and num_elements and byte_size are the maximum's. An output's actual
   * dims are what each execute writes (htpu_exec_options.output_dims): its buffer is still sized
   * for the maximum and holds that many elements from its start. An input is run at its
   * maximum. 0: every dimension is fixed. */
  uint32_t dynamic_dims;
} htpu_tensor_info;

typedef struct htpu_graph_info {
  const char *name;
  uint32_t graph_info_version; /* 1..3 */
  uint32_t num_inputs;
  const htpu_tensor_info *inputs;
  uint32_t num_outputs;
  const htpu_tensor_info *outputs;
  /* VTCM the graph needs, in bytes, from the HTP graph blob info (graph info V3); 0 when
   * unknown. Real binaries carry bytes there; a value below 1 MiB is read as MB, the unit QNN
   * documents (no Hexagon has less than 1 MB of VTCM). docs/abi.md, "VTCM units". */
  uint64_t vtcm_bytes;
} htpu_graph_info;

typedef struct htpu_version3 {
  uint32_t major, minor, patch;
} htpu_version3;

/* ---- models wrapped in ONNX (EPContext) ---------------------------------------------------
 * Wherever a model is read (htpu_inspect_*, htpu_context_open_*), an ONNX file whose EPContext
 * nodes (domain com.microsoft) carry QNN context binaries is taken as well as a raw binary,
 * recognised by its content, not its name: what ONNX Runtime's QNN execution provider writes
 * (ep.context_enable) and Ultralytics' format="qnn" export. A node with embed_mode 1 holds the
 * binary in its ep_cache_context attribute; with 0 the attribute names a file in the model's
 * folder (relative, never absolute, never through "..", never resolving through a symlink to
 * outside that folder; a model opened from a buffer has no folder and cannot name one). As in
 * ONNX Runtime, main_context (default 1) marks the nodes that carry a binary; a node with 0
 * names a graph of another node's binary. Each binary is one context (nodes naming the same
 * file share it); its graphs are named as QNN names them. An ONNX model without an EPContext
 * node (a QDQ model) is HTPU_EUNSUPPORTED saying how to make one (docs/context-binaries.md);
 * a malformed file is HTPU_EMODEL naming what and where (the reader is bounded: at most
 * HTPU_MAX_EPCONTEXT_NODES EPContext nodes and 1024 metadata entries, strings UTF-8). */
#define HTPU_MAX_EPCONTEXT_NODES 256u

typedef struct htpu_model_prop {
  const char *key;
  const char *value;
} htpu_model_prop;

/* One EPContext node, its attributes as written (absent strings are ""). */
typedef struct htpu_epcontext_node {
  const char *name;
  int main_context;           /* 1 (also when absent): it carries or names a context binary */
  int embed_mode;             /* 1 (also when absent): the binary is in ep_cache_context */
  const char *cache_file;     /* embed_mode 0: the file name ep_cache_context holds; else "" */
  uint64_t cache_bytes;       /* the binary's size (embedded, or the file's); 0 for main 0 */
  const char *partition_name;
  const char *ep_sdk_version; /* the QAIRT build id that made the binary, e.g. "v2.22.0.2404..." */
  const char *source;         /* "QNNExecutionProvider", "QNN", ... */
  int64_t max_size;           /* ONNX Runtime's spill-fill maximum (max_size), 0 when absent */
  int32_t context;            /* index of the context holding its graph (see below); -1: none */
} htpu_epcontext_node;

struct htpu_model_info;

/* One context of an ONNX model, as htpu_inspect_file_all reports it. */
typedef struct htpu_model_context {
  const char *origin;                 /* "embedded in node 'x'" or "file 'dir/x.bin'" */
  const struct htpu_model_info *info; /* its binary's metadata; its own `source` is NULL but
                                         for the info that holds this list */
} htpu_model_context;

/* Where a model came from when it was not a raw binary (htpu_model_info.source). */
typedef struct htpu_model_source {
  const char *format;          /* "onnx-epcontext" */
  int64_t ir_version;
  int64_t opset;               /* of the default ONNX domain, 0 when not imported */
  const char *producer_name;   /* "" when absent */
  const char *producer_version;
  uint32_t num_props;          /* the model's metadata_props, in file order; a key given twice
                                  means its last value (class_names, htpu info, Elixir) */
  const htpu_model_prop *props;
  /* The class names of Ultralytics' "names" entry ({0: 'person', 1: 'bicycle', ...}), the
   * index being the class id; 0 and NULL when the model has none or it is not that form. */
  uint32_t num_class_names;
  const char *const *class_names;
  uint32_t num_nodes;          /* the EPContext nodes, in file order */
  const htpu_epcontext_node *nodes;
  uint32_t num_contexts;       /* distinct context binaries in the model */
  uint32_t context;            /* the one this model info describes */
  const char *origin;          /* where its bytes came from: "embedded in node 'x'" or
                                  "file 'dir/x.bin'" */
  /* htpu_inspect_file_all: every context, num_contexts entries (contexts[context].info is
   * the info holding this source); NULL from the other calls. */
  const htpu_model_context *contexts;
} htpu_model_source;

/* ---- what a model costs in memory -----------------------------------------------------------
 * Per graph, the HTP graph blob info a binary carries with graph info V3 (QAIRT 2.28 on):
 * version 1 the spill-fill buffer, version 2 the I/O, op data, constant, DDR-tensor and
 * shared-weight sizes (each version has only its own fields). 0 = not reported. */
typedef struct htpu_graph_memory {
  uint32_t blob_info_version;   /* 0: none (graph info below V3, or no HTP blob), 1 or 2 */
  uint64_t spill_fill_bytes;    /* V1: the graph's spill-fill buffer */
  uint32_t optimization_level;  /* V1 */
  uint64_t hvx_threads;         /* V1: HVX threads the graph reserves */
  uint64_t io_tensor_bytes;     /* V2: graph inputs and outputs */
  uint64_t op_data_bytes;       /* V2: op data and run lists */
  uint64_t const_bytes;         /* V2: constants (weights) of this graph */
  uint64_t ddr_tensor_bytes;    /* V2: tensors kept in DDR */
  uint64_t shared_weights_bytes; /* V2: weights shared with the context's other graphs */
  uint64_t native_k_channel_bytes, native_v_channel_bytes; /* V2 (LLM caches; 0 for vision) */
  int safe_share_io;            /* V2: inputs and outputs may share one buffer */
} htpu_graph_memory;

/* What a context binary says about itself (copied out of the system library). */
typedef struct htpu_model_info {
  uint32_t binary_info_version; /* 1..3 */
  uint32_t backend_id;
  const char *build_id;         /* "" when absent */
  htpu_version3 core_api_version;
  htpu_version3 backend_api_version;
  htpu_version3 context_blob_version;
  const char *soc_version;      /* "" when absent */
  uint32_t soc_model;           /* V3 only, 0 when unknown */
  uint32_t dsp_arch;            /* e.g. 68, 0 when unknown */
  uint64_t context_blob_size;
  uint32_t num_graphs;
  const htpu_graph_info *graphs;
  const htpu_model_source *source; /* NULL for a raw context binary; else the ONNX model's
                                      facts (owned by the same info) */
  const htpu_graph_memory *graph_memory; /* num_graphs entries, in the order of graphs */
  uint64_t binary_bytes;        /* the context binary's size (a loaded context keeps it:
                                   copied, or mapped or lent, htpu_context_load_info) */
  /* What loading it is expected to cost the host, in bytes: the binary the context keeps (its
   * pages are the page cache's where it is mapped), the largest spill-fill buffer (one per
   * context, or per group sharing one), and per graph its I/O, op data, constants and
   * DDR tensors, shared weights once (docs/board.md, "Memory"). A floor when a graph reports
   * no blob info, or only version 1 (no sizes but the spill-fill). */
  uint64_t load_estimate_bytes;
} htpu_model_info;

/* Reads a context binary's metadata through the QNN system library alone (no backend, no
 * device). `system_lib` NULL = HTPU_DEFAULT_SYSTEM_LIB. On success *out is owned by the caller
 * and freed with htpu_model_info_free. Errors: HTPU_EINVAL, HTPU_EIO, HTPU_ELOAD_SYSTEM,
 * HTPU_ESYMBOL, HTPU_ENO_PROVIDER, HTPU_EVERSION, HTPU_EMODEL, HTPU_ENOMEM, and
 * HTPU_ESYSTEM_LAYOUT when the library's answer fails validation ("unsupported system library
 * layout: <path> (System API x.y.z): <what looked wrong>"): a library whose structs are not the
 * sizes its API version implies, such as QAIRT 2.13's, is refused instead of misread. */
HTPU_API int htpu_inspect_file(const char *system_lib, const char *path, htpu_model_info **out);
HTPU_API int htpu_inspect_buffer(const char *system_lib, const void *buf, size_t len,
                                 htpu_model_info **out);
/* htpu_inspect_file of one context of an ONNX model holding several (htpu_inspect_file gives
 * the first: source->num_contexts says how many). index must be below num_contexts
 * (HTPU_EINVAL naming the count); for a raw binary only 0 is valid. */
HTPU_API int htpu_inspect_file_context(const char *system_lib, const char *path, uint32_t index,
                                       htpu_model_info **out);
/* Every context of a model file at once: htpu_inspect_file of context 0 whose
 * source->contexts lists each context's origin and metadata (owned by the same info). The
 * file and each binary it names are read once (htpu_inspect_file_context for each index would
 * read them all for each). For a raw binary, htpu_inspect_file (source NULL). Errors as
 * htpu_inspect_file. */
HTPU_API int htpu_inspect_file_all(const char *system_lib, const char *path,
                                   htpu_model_info **out);
/* The raw QNN context binary a model file holds: the file's own bytes for a raw binary; for an
 * ONNX EPContext model, the binary of the context holding `graph` (non-NULL), else of context
 * `index`, embedded or read from beside the model. With `graph`, a binary without that graph
 * is HTPU_ENOT_FOUND listing the graphs. The system library reads the binaries' graphs (NULL:
 * HTPU_DEFAULT_SYSTEM_LIB). On success *out (malloc'd: release it with free()) holds *len
 * bytes. Errors as htpu_inspect_file_context. Thread-safe. */
HTPU_API int htpu_model_binary(const char *system_lib, const char *path, const char *graph,
                               uint32_t index, void **out, size_t *len);
HTPU_API void htpu_model_info_free(htpu_model_info *info);

/* The largest file htpu_inspect_file and htpu_context_open_file read. A larger file is refused
 * with HTPU_EMODEL before anything is allocated for it, so a wrong path (a disk image, a sparse
 * file) costs neither memory nor time. The default is HTPU_DEFAULT_MAX_BINARY_BYTES, or the
 * environment variable HTPU_MAX_BINARY_BYTES (decimal bytes) when set at the first file read.
 * Process-wide; thread-safe. 0 restores the default. Buffers passed to
 * htpu_context_open_buffer/htpu_inspect_buffer are not limited. */
#define HTPU_DEFAULT_MAX_BINARY_BYTES (1ull << 30)
HTPU_API void htpu_set_max_binary_bytes(uint64_t bytes);
HTPU_API uint64_t htpu_max_binary_bytes(void);

/* ---- runtime ------------------------------------------------------------------------------ */

#define HTPU_DEFAULT_BACKEND_LIB "/usr/lib/libQnnHtp.so"
#define HTPU_DEFAULT_SYSTEM_LIB "/usr/lib/libQnnSystem.so"

typedef struct htpu_runtime htpu_runtime;
typedef struct htpu_context htpu_context;
typedef struct htpu_graph htpu_graph;

/* Performance profiles: what each votes (DCVS v3 through the HTP perf infrastructure) is in
 * docs/board.md. DEFAULT casts no vote and leaves the clocks to the DSP's own governor. */
typedef enum htpu_perf_profile {
  HTPU_PERF_DEFAULT = 0,
  HTPU_PERF_BURST,
  HTPU_PERF_SUSTAINED_HIGH_PERFORMANCE,
  HTPU_PERF_HIGH_PERFORMANCE,
  HTPU_PERF_BALANCED,
  HTPU_PERF_LOW_BALANCED,
  HTPU_PERF_HIGH_POWER_SAVER,
  HTPU_PERF_POWER_SAVER,
  HTPU_PERF_LOW_POWER_SAVER,
  HTPU_PERF_EXTREME_POWER_SAVER,
  HTPU_PERF_PROFILE_COUNT
} htpu_perf_profile;

/* "burst", "balanced", ... ("default" for HTPU_PERF_DEFAULT); NULL for an invalid value. */
HTPU_API const char *htpu_perf_profile_name(htpu_perf_profile p);
/* Parses a name as above. Returns 0, or HTPU_EINVAL listing the valid names. */
HTPU_API int htpu_perf_profile_from_name(const char *name, htpu_perf_profile *out);

/* ---- deadlines and priorities ----------------------------------------------------------------
 * Every execute has a deadline: start (the call's entry, or its submit) + its timeout. A call
 * still waiting for its graph at its deadline is removed and returns HTPU_ETIMEDOUT without
 * having run; a running one is aborted through the graph's QnnSignal where the backend
 * announces execute signals (htpu_runtime_info.execute_signals), and the graph stays usable.
 * Without signals a submitted call (or a synchronous one with a timeout of its own or of its
 * context, exec_timeout_ns) ends at its deadline on the host while its graphExecute runs to its
 * end in the background (outputs discarded): docs/board.md, "Deadlines, aborts and priorities". */
#define HTPU_DEFAULT_TIMEOUT_NS (60ull * 1000000000ull) /* never fires in normal use */
#define HTPU_MAX_TIMEOUT_NS (24ull * 3600ull * 1000000000ull) /* 24 h: larger is HTPU_EINVAL */
/* The largest memory-limit hint (htpu_load_options.memory_limit_mb): QNN's MEMORY_LIMIT_HINT is
 * megabytes in a uint64_t, which a backend weighs against byte counts; from 2^44 MB on the
 * limit in bytes no longer fits a uint64_t. The same range in Elixir and htpu. */
#define HTPU_MAX_MEMORY_LIMIT_MB ((1ull << 44) - 1)
/* No limit on the calls waiting for a graph but memory: a caller waits rather than fails. */
#define HTPU_DEFAULT_QUEUE_LIMIT 0u

/* Priorities: the QNN context priority of a load (where the backend announces priority
 * control, htpu_runtime_info.priority_control), and the host order of calls waiting for one
 * QNN graph: highest effective priority first, then arrival. DEFAULT: the context's (its own
 * DEFAULT: NORMAL). */
typedef enum htpu_priority {
  HTPU_PRIORITY_DEFAULT = 0,
  HTPU_PRIORITY_LOW = 1,
  HTPU_PRIORITY_NORMAL = 2,
  HTPU_PRIORITY_NORMAL_HIGH = 3,
  HTPU_PRIORITY_HIGH = 4,
  HTPU_PRIORITY_COUNT
} htpu_priority;

/* Anti-starvation: each time a waiting call is passed over by a call that arrived after it, its
 * count rises; every HTPU_PRIORITY_AGING passes lift it one level (so a LOW call waits behind
 * at most 3 x HTPU_PRIORITY_AGING = 12 HIGH calls that arrived after it). */
#define HTPU_PRIORITY_AGING 4

/* Where the runtime has graphExecuteAsync (htpu_runtime_info.execute_async): how many
 * submitted calls of one graph are in QNN's queue at once. Two keep the NPU busy across the
 * hand-over; the rest wait on the host, where priorities, deadlines and cancels still act. */
#define HTPU_ASYNC_DEPTH 2

/* "default", "low", "normal", "normal_high", "high"; NULL for an invalid value. */
HTPU_API const char *htpu_priority_name(htpu_priority p);
/* Parses "low", "normal", "normal_high", "high" (and "default"). Returns 0, or HTPU_EINVAL
 * naming the given string and listing the valid names (*out untouched). */
HTPU_API int htpu_priority_from_name(const char *name, htpu_priority *out);

typedef struct htpu_runtime_options {
  const char *backend_lib;      /* path for dlopen; default HTPU_DEFAULT_BACKEND_LIB */
  const char *system_lib;       /* default HTPU_DEFAULT_SYSTEM_LIB */
  const char *dsp_library_path; /* NULL = leave the environment alone; otherwise setenv()
                                   DSP_LIBRARY_PATH and ADSP_LIBRARY_PATH before backendCreate */
  uint32_t backend_id;          /* 0 = any (prefer HTP = 6); else only that id */
  uint32_t log_level;           /* QNN log level 1 (error) .. 5 (debug); default 2 (warn) */
  int skip_device;              /* nonzero: do not create a QNN device (backends without one) */
  htpu_perf_profile perf_profile; /* voted at open; default HTPU_PERF_DEFAULT (no vote) */
  const char *fastrpc_lib;      /* FastRPC shared memory (rpcmem_*); default "libcdsprpc.so" */
  uint32_t recovery_retries;    /* after a DSP restart (QNN 1007): recreate the context and
                                   retry the call this many times; 0 = off; default 1. A
                                   recreate that fails with a transient code (the DSP still
                                   coming back) is itself retried this many times, with the
                                   start-up backoff below, before the model is given up
                                   (HTPU_EDEVICE_RESET) */
  uint32_t startup_retries;     /* transient backend/device creation failures (the first
                                   FastRPC session after boot) are retried this many times;
                                   default 3 */
  uint32_t startup_retry_delay_ms; /* first backoff, doubled per retry (at most 10 s), of
                                      start-up and recovery retries; default 100 */
  uint64_t default_timeout_ns;  /* deadline of an execute that names none (nor its context):
                                   0 = HTPU_DEFAULT_TIMEOUT_NS; at most HTPU_MAX_TIMEOUT_NS */
  uint32_t queue_limit;         /* calls that may wait for one QNN graph (synchronous and
                                   submitted together); one more is refused with HTPU_EBUSY.
                                   0 = HTPU_DEFAULT_QUEUE_LIMIT: none (memory bounds it; each
                                   waiting submitted call holds its converted inputs) */
  int spill_fill_sharing;       /* default 0: each context its own spill-fill buffer. 1: the
                                   contexts of the runtime share one (HTP's
                                   REGISTER_MULTI_CONTEXTS), sized by the first context of the
                                   group (the largest of a htpu_context_open_many call), where
                                   the backend takes it: one buffer instead of one per model,
                                   but the group's executes then run one context at a time
                                   (about half the calls/s of two models executing at once in
                                   the bench; docs/board.md, "What a model costs") */
  /* The cross-process NPU lock (docs/board.md, "One NPU user at a time"): backend/device
   * creation and every context creation (a load, a recovery) hold an advisory flock on this
   * file, taken before the process's own execute gate, so two programs using hexagon_tpu never
   * create QNN sessions at the same moment. NULL: $HTPU_NPU_LOCK when set and not empty, else
   * HTPU_DEFAULT_NPU_LOCK; "": no lock. The file is created (mode 0666 before the umask) when
   * missing; its directory must exist. Copied at open. */
  const char *npu_lock_path;
  uint64_t npu_lock_timeout_ns; /* the longest wait for another process's creation, for the
                                   runtime's own and for loads that name no timeout_ns (a
                                   load's timeout_ns bounds its wait): 0 =
                                   HTPU_DEFAULT_TIMEOUT_NS; at most HTPU_MAX_TIMEOUT_NS. Past
                                   it the open or load fails with HTPU_ETIMEDOUT naming the
                                   holder */
  /* Called on the waiting thread whenever a creation has to wait for the lock, with who holds
   * it (as htpu_npu_lock_holder words it) and npu_lock_wait_arg; NULL: not called. For a
   * tool's "waiting for ..." line: it must return promptly and not call the library. */
  void (*npu_lock_wait)(const char *holder, void *arg);
  void *npu_lock_wait_arg;
  /* Bounds the open where it waits: for the NPU lock (above) and for the executes in flight in
   * this process (a backend and device are a QNN session: none is created beside an execute,
   * the execute gate). 0: none (the lock's own limit still applies). Past it the open fails
   * with HTPU_ETIMEDOUT naming what it waited for; at most HTPU_MAX_TIMEOUT_NS. */
  uint64_t open_timeout_ns;
  const char *qnn_set;          /* a QNN set's folder (see "QNN sets" below): its backend and
                                   system library (backend_lib and system_lib must then be left
                                   at their defaults), its stubs opened by full path before the
                                   backend, DSP_LIBRARY_PATH its skel's folder (unless
                                   dsp_library_path is given). NULL: the libraries above */
} htpu_runtime_options;

/* Where the NPU lock lives unless the options or HTPU_NPU_LOCK say otherwise: /tmp is
 * writable by every user on a desktop Linux and is a tmpfs on Nerves (whose root is
 * read-only). */
#define HTPU_DEFAULT_NPU_LOCK "/tmp/hexagon_tpu-npu.lock"

/* Fills defaults. Always call it before setting fields, so new fields get defaults. */
HTPU_API void htpu_runtime_options_init(htpu_runtime_options *opts);

/* What a backend library's provider says about itself (htpu_backend_probe). Plain data:
 * the strings are copied into the struct (truncated to fit), nothing to free. */
#define HTPU_BACKEND_FACTS_STRING_MAX 256
typedef struct htpu_backend_facts {
  char provider_name[HTPU_BACKEND_FACTS_STRING_MAX]; /* "" when the provider has none */
  uint32_t backend_id;
  htpu_version3 core_api_version;
  htpu_version3 backend_api_version;
  char build_id[HTPU_BACKEND_FACTS_STRING_MAX]; /* backendGetBuildId, "" when unavailable */
} htpu_backend_facts;

/* Loads `backend_lib` (NULL = HTPU_DEFAULT_BACKEND_LIB), picks the provider htpu_runtime_open
 * would pick for `backend_id` (0 = any, preferring HTP), copies its facts into *out and the
 * build id from backendGetBuildId (which needs no backend), then closes the library. Creates
 * no QNN log, backend or device, so it answers where the DSP is unreachable (a tool can say
 * which QAIRT is installed before anything that needs the NPU fails).
 * Errors (*out zeroed, htpu_last_error() names the stage as htpu_runtime_open does):
 * HTPU_EINVAL, HTPU_ENOMEM, HTPU_ELOAD_BACKEND, HTPU_ESYMBOL, HTPU_ENO_PROVIDER, HTPU_EVERSION.
 * Thread-safe. */
HTPU_API int htpu_backend_probe(const char *backend_lib, uint32_t backend_id,
                                htpu_backend_facts *out);

/* The QAIRT release a QNN build id names. QAIRT libraries report ids such as
 * "v2.25.0.240728104910_97711" (-> 2.25.0): an optional 'v', three decimal numbers joined by
 * '.', then the end or one of '.', '_', '-', '+' followed by anything. Returns 0, or
 * HTPU_EINVAL with *out zeroed for NULL and any other form (the reference backend's
 * "htpu-reference-0.1.0" names no QAIRT release). */
HTPU_API int htpu_qairt_version_from_build_id(const char *build_id, htpu_version3 *out);

/* ---- QNN sets ------------------------------------------------------------------------------
 * A QNN set is one QAIRT release's libraries together: backend (libQnnHtp.so), system library
 * (libQnnSystem.so), stubs (libQnnHtpV<arch>Stub.so) and skel (libQnnHtpV<arch>Skel.so), the
 * stub and skel of the backend's own release. Two layouts are recognised: "flat" (all four in
 * one folder, as ONNX Runtime's QNN wheel ships them: /usr/lib/onnxruntime-qnn on the board's
 * image) and "qairt" (the skel in the folder's dsp/ subfolder: /usr/lib and /usr/lib/dsp). The
 * release is read from the files' build ids (the text every QAIRT library carries).
 * One set per OS process: the DSP keeps the first configuration for the life of the process,
 * so a runtime of another set (named by qnn_set, or a libQnnHtp.so in another folder) is
 * refused with HTPU_EINVAL before any QNN call (docs/board.md, "QNN sets"). */
#define HTPU_QNN_SET_PATH_MAX 4096 /* a set in a longer path is not read */
#define HTPU_QNN_SET_ID_MAX 72
typedef struct htpu_qnn_set {
  char dir[HTPU_QNN_SET_PATH_MAX];          /* the folder, resolved */
  char layout[16];                          /* "flat" or "qairt" */
  char backend_lib[HTPU_QNN_SET_PATH_MAX];  /* "" when missing */
  char system_lib[HTPU_QNN_SET_PATH_MAX];
  char stub[HTPU_QNN_SET_PATH_MAX];         /* the v68 stub, else the first; "" when none */
  char skel[HTPU_QNN_SET_PATH_MAX];         /* the skel of the same architecture */
  char skel_dir[HTPU_QNN_SET_PATH_MAX];     /* the DSP search path the set needs */
  char build_id[HTPU_QNN_SET_ID_MAX];       /* the backend's; "" when none found */
  char stub_build_id[HTPU_QNN_SET_ID_MAX];
  char skel_build_id[HTPU_QNN_SET_ID_MAX];
  htpu_version3 release;                    /* from build_id; 0.0.0 when unknown */
  int complete;                             /* backend, system library, stub and skel found */
  int consistent;                           /* stub and skel carry the backend's build id */
  char note[512];                           /* what is missing or mismatched; "" when none */
} htpu_qnn_set;

/* Reads the set in `dir` (no library is loaded). Returns 0 with *out filled (complete and
 * consistent say whether it can be used; note says why not), or HTPU_EINVAL/HTPU_EIO when dir
 * is not a folder holding libQnnHtp.so. Thread-safe. */
HTPU_API int htpu_qnn_set_inspect(const char *dir, htpu_qnn_set *out);
/* The sets installed under `root` (NULL or "": /): root/usr/lib, the folders directly in it,
 * root/usr/local/lib and root/opt/<x>[/lib], in that order, then the folders in the
 * environment variable HTPU_QNN_SET_PATH (':'-separated, not under root). Fills sets[0..max)
 * and *count (how many were found, also past max). Returns 0 or HTPU_EINVAL. */
HTPU_API int htpu_qnn_sets_find(const char *root, htpu_qnn_set *sets, uint32_t max,
                                uint32_t *count);

/* Loads the libraries, picks providers, creates QNN log, backend and device.
 * `opts` NULL = defaults. Strings in opts are copied. On failure *out is NULL and
 * htpu_last_error() names the stage (loading the backend, resolving the symbol, no provider,
 * version, loading the system library, creating the backend/device), the path, the symbol and
 * dlerror(). A failed logCreate is not a failure: the runtime goes on without a QNN log handle
 * (as QNN allows) and says so in htpu_runtime_info.log_note (and in the message of a later
 * start-up failure); the start-up retries still apply to the backend and device. A requested perf_profile that cannot be voted fails the open too (HTPU_EQNN, or
 * HTPU_EUNSUPPORTED without a perf infrastructure): ask for HTPU_PERF_DEFAULT to run unvoted.
 * Not thread-safe with respect to other threads' getenv when dsp_library_path is given (it
 * calls setenv): set it before starting threads that read the environment.
 * Errors: HTPU_EINVAL, HTPU_ENOMEM, HTPU_ELOAD_BACKEND, HTPU_ESYMBOL, HTPU_ENO_PROVIDER,
 * HTPU_EVERSION, HTPU_ELOAD_SYSTEM, HTPU_EQNN, HTPU_EUNSUPPORTED. */
HTPU_API int htpu_runtime_open(const htpu_runtime_options *opts, htpu_runtime **out);

/* Drops the caller's reference and sets *rt = NULL. The QNN device/backend/log are freed and the
 * libraries closed once no context remains. NULL or *rt == NULL: no-op. Returns 0, or
 * HTPU_ECLOSED for a handle that is not a live runtime. */
HTPU_API int htpu_runtime_close(htpu_runtime **rt);

/* What the loader found. Strings are owned by the runtime and valid while it is open. */
typedef struct htpu_runtime_info {
  const char *backend_lib;
  const char *system_lib;
  const char *provider_name;
  uint32_t backend_id;
  htpu_version3 core_api_version;
  htpu_version3 backend_api_version;
  const char *build_id;           /* backendGetBuildId, "" when unavailable */
  const char *system_provider_name;
  htpu_version3 system_api_version;
  int has_device;                 /* a QNN device was created */
  const char *dsp_library_path;   /* DSP_LIBRARY_PATH in effect (getenv), "" when unset */
  uint32_t device_arch;           /* HTP arch the device reports (68 = v68), 0 = unknown */
  uint32_t device_soc_model;      /* SoC model the device reports, 0 = unknown */
  uint64_t device_vtcm_bytes;     /* VTCM the device reports, in bytes, 0 = unknown; QNN's
                                     field is read as bytes when at least 1 MiB, else as MB
                                     (its unit is unverified on a board: docs/abi.md) */
  htpu_perf_profile perf_profile; /* the runtime's current profile */
  int has_perf_infrastructure;    /* power votes are possible */
  int has_shared_memory;          /* FastRPC shared buffers can be registered */
  const char *shared_memory_note; /* why not, when has_shared_memory is 0; or why a buffer
                                     fell back to ordinary memory (first such event) */
  uint32_t startup_attempts;      /* backend/device creation attempts it took */
  const char *log_note;           /* why the runtime has no QNN log ("" when it has one, or
                                     the backend has no log API): logCreate failed, e.g.
                                     "QNN log unavailable: logCreate returned 11002 (...)".
                                     QNN allows a NULL log handle, so the runtime works; only
                                     the QNN log lines quoted in error messages are lost */
  int batch_multiple;             /* the backend announces batch multiples (capability 312):
                                     htpu_exec_options.batch_multiple calls try one execute */
  int execute_signals;            /* executes are bounded by an abort signal (QnnSignal 1201,
                                     execute signal 308 and abort 1202 all announced); 0: the
                                     weaker host-side deadline (docs/board.md) */
  int load_signals;               /* loads are bounded (createFromBinaryWithSignal, 211, and
                                     timeout signals, 1203) */
  int priority_control;           /* context priorities reach QNN (306) */
  int execute_async;              /* submitted calls are queued in QNN (graphExecuteAsync, 304;
                                     no HTP release announces it): up to
                                     HTPU_ASYNC_DEPTH per graph, bounded on the host (an async
                                     call gets no signal: 309 is not asked) */
  /* loading (htpu_load_options, htpu_context_open_many) */
  int persistent_binary;          /* 208: QNN is told the binary stays (no copy of its own) */
  int enable_graphs;              /* 206: htpu_load_options.graphs reaches QNN */
  int memory_limit_hint;          /* 207: htpu_load_options.memory_limit_mb reaches QNN */
  int list_load;                  /* 212 and the slot: htpu_context_open_many loads at once */
  int spill_fill_sharing;         /* contexts share a spill-fill buffer (the option, and the
                                     backend has not refused it) */
  const char *spill_fill_note;    /* why they do not (the option off, or the backend's
                                     refusal); "" when they do */
} htpu_runtime_info;

/* Changes the runtime's performance profile (the vote is replaced; DEFAULT releases it).
 * A rejected optional setting (e.g. RPC polling on v68) is not an error. Errors: HTPU_ECLOSED,
 * HTPU_EINVAL, HTPU_EUNSUPPORTED (the backend has no perf infrastructure, for anything but
 * DEFAULT), HTPU_EQNN. Thread-safe. */
HTPU_API int htpu_runtime_set_perf_profile(htpu_runtime *rt, htpu_perf_profile p);

HTPU_API int htpu_runtime_get_info(htpu_runtime *rt, htpu_runtime_info *out);

/* Copies the runtime's last failure message into buf (always NUL-terminated, truncated with
 * "..." when too small). Returns the full length. */
HTPU_API size_t htpu_runtime_last_error(htpu_runtime *rt, char *buf, size_t len);

/* ---- context ------------------------------------------------------------------------------ */

/* Deserializes one context binary (QnnContext_createFromBinary) after reading its metadata
 * through the system library. The context keeps the binary for its whole life (QNN is told so
 * where it announces PERSISTENT_BINARY, and a recreate after a DSP restart needs it): a file
 * is mapped where its content cannot change while it is (a read-only file system such as the
 * Nerves root file system, a sealed memfd), else copied; a buffer is copied (or lent:
 * htpu_load_options.buffer_release), so the caller's buffer need NOT outlive the call.
 * Waits for the runtime's in-flight executes. The context holds a reference on the runtime.
 * An ONNX EPContext model is taken too ("models wrapped in ONNX" above): its binary is loaded
 * (one of several: htpu_load_options.graph), and the model info's `source` describes the file.
 * Errors: HTPU_ECLOSED, HTPU_EINVAL, HTPU_EIO, HTPU_EMODEL, HTPU_ESYSTEM_LAYOUT (as for
 * htpu_inspect_file), HTPU_EUNSUPPORTED (an ONNX model without EPContext node), HTPU_EQNN,
 * HTPU_ENOMEM. */
HTPU_API int htpu_context_open_file(htpu_runtime *rt, const char *path, htpu_context **out);
HTPU_API int htpu_context_open_buffer(htpu_runtime *rt, const void *buf, size_t len,
                                     htpu_context **out);

/* Drops the caller's reference and sets *ctx = NULL; the QNN context is freed (waiting for the
 * runtime's in-flight executes) when its last graph is closed too. */
HTPU_API int htpu_context_close(htpu_context **ctx);

/* The binary's metadata, owned by the context (valid while the context handle is open). */
HTPU_API const htpu_model_info *htpu_context_model_info(htpu_context *ctx);

/* What a loaded context holds in memory, as the backend answers it (HTP's context custom
 * properties, QnnHtpContext.h) where it announces them (capability 215, and
 * contextGetProperty in its table); every HTP release observed so far does not. */
typedef struct htpu_context_memory {
  int reported;                /* the backend answered the properties below */
  uint64_t weights_bytes;      /* the persistent weights buffer */
  uint64_t spill_fill_bytes;   /* the largest spill-fill buffer of the context's graphs */
  uint64_t buffer_alignment;   /* the alignment its persistent buffers need */
  uint64_t binary_bytes;       /* the binary the context keeps for recovery (always; mapped,
                                  copied or lent: htpu_context_get_load_info) */
  char note[256];              /* why not reported ("" when reported) */
} htpu_context_memory;
/* Asks the backend (no call at all where it does not announce the properties). Safe while
 * the context's graphs execute. Errors: HTPU_EINVAL (out NULL), HTPU_ECLOSED, HTPU_EQNN (the
 * backend announced the properties and then failed the call; message with the QNN code). */
HTPU_API int htpu_context_get_memory(htpu_context *ctx, htpu_context_memory *out);
HTPU_API size_t htpu_context_last_error(htpu_context *ctx, char *buf, size_t len);

/* ---- graph -------------------------------------------------------------------------------- */

/* Retrieves a graph by name (graphRetrieve). name NULL: the only graph (HTPU_EINVAL naming the
 * available graphs when there are several). Unknown name: HTPU_ENOT_FOUND, the message lists
 * the names the binary holds. The graph holds a reference on its context. A context made
 * stale by a DSP restart (QNN 1007) is recovered as htpu_graph_execute_ex does, and the
 * retrieve retried; HTPU_EDEVICE_RESET when it cannot be.
 * A graph already open on this context gives another handle of the same graph: what belongs
 * to the graph (its execute lock, its timing window, its scratch blocks) is shared by all its
 * handles, so their executes are serialized as one graph's; each handle has its own last
 * error and is closed on its own. */
HTPU_API int htpu_graph_open(htpu_context *ctx, const char *name, htpu_graph **out);
/* Drops the handle's reference; when it is the last of the graph's last handle on its
 * context, the graph's scratch blocks (htpu_io) go too, FastRPC ones deregistered first, which waits for in-flight executes as
 * htpu_shared_free does. First it waits for the graph's no-wait executes and timing reads in
 * progress (they never wait, so this is as long as one graphExecute): their threads must not
 * block, so they never hold the last reference and never run those frees. */
HTPU_API int htpu_graph_close(htpu_graph **g);

/* Borrowed from the graph; valid while the graph handle is open. NULL for a bad index/handle. */
HTPU_API const htpu_graph_info *htpu_graph_get_info(htpu_graph *g);
HTPU_API const htpu_tensor_info *htpu_graph_input(htpu_graph *g, uint32_t index);
HTPU_API const htpu_tensor_info *htpu_graph_output(htpu_graph *g, uint32_t index);
HTPU_API size_t htpu_graph_last_error(htpu_graph *g, char *buf, size_t len);

/* One input or output buffer. `dtype` is what the caller's bytes are:
 *  - the tensor's own dtype: passed to QNN as is (no copy; outputs are written in place);
 *  - HTPU_F32 for a quantized or f16 tensor: inputs are quantized into a scratch block of the
 *    graph's own (one per call in progress; FastRPC shared memory when the runtime has it, so
 *    nothing is copied again), outputs dequantized from one (round half to even, saturating;
 *    NaN is an error).
 * `size` must be exactly num_elements * htpu_dtype_size(dtype). */
typedef struct htpu_io {
  void *data;
  size_t size;
  htpu_dtype dtype;
} htpu_io;

/* Why a no-wait call (htpu_exec_options.no_wait) returned HTPU_EBUSY without running. */
typedef enum htpu_decline {
  HTPU_DECLINE_NONE = 0,     /* the call was not declined */
  HTPU_DECLINE_UNKNOWN = 1,  /* fewer than HTPU_TIMING_WINDOW recorded calls: duration unknown */
  HTPU_DECLINE_LONG = 2,     /* a call in the window took longer than short_ns */
  HTPU_DECLINE_BUSY = 3,     /* another execute of the graph holds or awaits it (it would have
                                queued); seen before any input is converted */
  HTPU_DECLINE_GATE = 4,     /* a context load/free/recovery holds or waits for the gate */
  HTPU_DECLINE_PERF = 5,     /* a per-call perf_profile vote (it may cross to the DSP) */
  HTPU_DECLINE_RECOVERY = 6, /* graphExecute asked for a DSP-restart recovery (it may block) */
  HTPU_DECLINE_RESOURCE = 7, /* FastRPC memory would have to be allocated (no idle scratch
                                block of the graph) or a buffer registered with the context
                                (memRegister), or another call holds the context's
                                registrations: DSP round trips an ordinary call makes */
  HTPU_DECLINE_STALLED = 8,  /* the call was stopped at its short-call bound (its abort signal
                                fired: the DSP stalled); make it again without no_wait. The
                                runtime then declines no-wait calls of all its graphs
                                (HTPU_DECLINE_LONG) for HTPU_STALL_DEMOTION_NS */
  HTPU_DECLINE_UNBOUNDED = 9 /* the backend has no execute signals, so a no-wait call could not
                                be bounded: the short path needs a bound */
} htpu_decline;

/* How long a stalled no-wait call (HTPU_DECLINE_STALLED) demotes the runtime's short path. */
#define HTPU_STALL_DEMOTION_NS 1000000000ull

typedef struct htpu_exec_stats {
  uint64_t execute_ns;    /* graphExecute alone, CLOCK_MONOTONIC */
  uint64_t quantize_ns;   /* f32 -> tensor type conversions */
  uint64_t dequantize_ns; /* tensor type -> f32 conversions */
  uint64_t total_ns;      /* the whole call */
  htpu_decline declined;  /* with HTPU_EBUSY from a no_wait call: why it did not run */
  uint32_t executes;      /* graphExecute calls the call made (with batch_multiple k: 1 when
                             the graph took the multiple, k chunked, k + 1 when it refused it
                             in this call; retries after a DSP restart count too) */
  uint32_t failed_chunk;  /* an error of row group c of a batch_multiple call (converting it,
                             or its execute in a chunked call: the c before it ran): c + 1;
                             0 for any other error (e.g. of a single execute of every row
                             group) or none. Outputs are undefined after an error, as for any
                             failed call */
  uint64_t execute_start_ns; /* when its (last) graphExecute began, or it was handed to
                                graphExecuteAsync (CLOCK_MONOTONIC ns; 0: it never got there):
                                with execute_ns, when the graph was busy for it, so the idle
                                time between two calls' executes can be read from their stats */
} htpu_exec_stats;

/* Runs the graph once. Inputs are in graph-input order, outputs in graph-output order; counts
 * must equal the graph's. Builds fresh QNN tensor descriptors for this call only. Serialized
 * with other executes of the same graph, through this handle or any other handle of it (see
 * htpu_graph_open). `stats` may be NULL.
 * Errors: HTPU_ECLOSED, HTPU_EINVAL, HTPU_EMISMATCH (message names the tensor, the expected
 * and the given), HTPU_ENAN (names tensor and element index), HTPU_EQNN (QNN code and name,
 * with the log lines of the call), HTPU_ENOMEM. */
HTPU_API int htpu_graph_execute(htpu_graph *g, const htpu_io *inputs, uint32_t num_inputs,
                                const htpu_io *outputs, uint32_t num_outputs,
                                htpu_exec_stats *stats);

/* Per-call options for htpu_graph_execute_ex. Zero-initialize. */
typedef struct htpu_exec_options {
  /* Vote this profile for the duration of the call when it is higher than the runtime's (the
   * highest profile among the runtime's and all in-flight calls' is in effect), then back
   * down. HTPU_PERF_DEFAULT: no per-call vote. */
  htpu_perf_profile perf_profile;
  /* NULL, or asked once whether the call is still wanted: on the calling thread, when the
   * call's turn on the graph has come (after waiting behind other executes of the graph),
   * before anything reaches the backend. Nonzero: the call returns HTPU_ECANCELLED without
   * running (counted in htpu_stats.executes_cancelled). For a caller that can go away while
   * queued (the NIF: a process killed meanwhile). It runs holding the graph's execute lock: it
   * must be quick and must not call this library. Exception: a call bounded by a deadline on a
   * graph without execute signals runs as a submitted call (see "deadlines and priorities");
   * its thread then asks every 10 ms while it waits, without the lock, and a yes cancels the
   * call whether it waits or runs (a running one ends on the host, its execute finishing in the
   * background). */
  int (*cancelled)(void *cancel_arg);
  void *cancel_arg; /* passed to cancelled; borrowed for the call */
  /* Nonzero: the call must not block, for a caller on a thread that must stay responsive (the
   * BEAM's normal schedulers). Where an ordinary call would wait it returns HTPU_EBUSY at once
   * instead (counted in htpu_stats.executes_declined, not in executes), with stats->declined
   * saying why: another call holds the graph's execute lock, through any handle of the graph
   * (it is only tried), a context
   * load/free/recovery holds or waits for the execute gate, a per-call perf_profile vote is
   * asked (it may cross to the DSP), graphExecute reported a DSP restart (the recovery
   * must run where blocking is allowed: make the call again without no_wait), or the call
   * would need a new scratch block or a memRegister (HTPU_DECLINE_RESOURCE: an ordinary call
   * makes them, and leaves the block idle and registered for the next no-wait call). A
   * declined call has not run the graph (after a DSP restart: it ran and failed), so its
   * outputs hold nothing to read. What a no-wait call does run is its own work: input checks and
   * conversions, graphExecute, output conversions; the caller bounds the sizes. It never
   * frees the graph: a concurrent htpu_graph_close waits for it to end instead of leaving it
   * the last reference. */
  int no_wait;
  /* With no_wait, nonzero: also decline (HTPU_DECLINE_UNKNOWN / HTPU_DECLINE_LONG) unless the
   * graph's last HTPU_TIMING_WINDOW calls are all recorded and each took at most short_ns
   * (htpu_graph_timing.max_ns, nanoseconds). Checked before converting anything and again
   * under the graph's lock, where every earlier call has recorded its duration: when a graph's
   * calls grow, the first long call cannot be foreseen, but every no-wait call that takes the
   * graph after it is declined, until HTPU_TIMING_WINDOW short (ordinary) calls have pushed
   * it out of the window. 0: no duration requirement. */
  uint64_t short_ns;
  /* Profiling (docs/profiling.md). profile_level HTPU_PROFILE_OFF (0): none, and the call
   * pays nothing. Otherwise a QNN profile handle of that level is created for the call, passed
   * to graphExecute (or graphExecuteAsync), read back into a new htpu_profile (the caller's,
   * htpu_profile_free) and freed, before the call returns (a submitted call: before its done
   * runs). htpu_graph_execute_ex: `profile` must point where the call stores it; *profile is
   * NULL when the call fails. htpu_graph_submit: `profile` must be NULL; take the events with
   * htpu_call_take_profile. profile_max_events bounds what is read (0:
   * HTPU_PROFILE_DEFAULT_MAX_EVENTS); past it the profile says "truncated at N events". A
   * level the backend cannot give fails the call before it runs (HTPU_EUNSUPPORTED naming the
   * capability). A read that fails after a call that succeeded does not fail the call (its
   * outputs are good): the call returns 0, the profile is NULL (dropped, counted in
   * htpu_stats.profiles_dropped) and htpu_last_error() says why (htpu_call_take_profile returns
   * the read's error). The deadline, priority and perf vote apply as to any call; a profiled
   * call is not recorded in the graph's timing window (htpu_graph_timing). */
  int profile_level;           /* an htpu_profile_level */
  uint32_t profile_max_events;
  struct htpu_profile **profile;
  /* Batch multiple k (0 and 1: none). With k > 1 every input and output buffer holds k
   * graph-sized row groups back to back (k x the graph's bytes; a size mismatch is
   * HTPU_EMISMATCH naming k), and the call computes all of them: where the runtime announces
   * batch multiples (htpu_runtime_info.batch_multiple) and the graph has not refused one, as ONE
   * graphExecute whose batch dimension (dims[0] of every tensor) is k times the graph's; else,
   * or when the graph refuses it (QNN 1000 or 6004: then remembered for the graph, see
   * htpu_graph_get_batch_multiple), as k executes, one per row group, in the same call and one
   * turn on the graph. stats->executes says which. An error in a chunked call names its row
   * group (stats->failed_chunk); one in a single execute is the whole batch's. Every tensor
   * needs a batch dimension (rank >= 1) and no_wait is refused (HTPU_EINVAL). With a profile:
   * the single execute's events, or the first row group's when chunked. Conversions use a block
   * of k rows allocated for the call (not the graph's FastRPC pool), passed as client buffers. */
  uint32_t batch_multiple;
  /* The call's deadline is its start + timeout_ns. 0: the context's exec_timeout_ns, else the
   * runtime's default_timeout_ns. Above HTPU_MAX_TIMEOUT_NS: HTPU_EINVAL naming the limit.
   * Passed: HTPU_ETIMEDOUT naming the graph and the limit (see "deadlines and priorities").
   * A no_wait call with signals is always bounded: by short_ns x 4, at most 1 ms when
   * timeout_ns is 0, else at most timeout_ns (without short_ns: 1 ms, or timeout_ns); it
   * declines with HTPU_DECLINE_STALLED when that bound fires. */
  uint64_t timeout_ns;
  /* An htpu_priority: its place among the calls waiting for the graph. HTPU_PRIORITY_DEFAULT:
   * the context's. Out of range: HTPU_EINVAL. */
  int priority;
  /* NULL, or where a call that succeeds writes the shape each output came out in: num_outputs
   * rows of HTPU_MAX_RANK entries, output i's dims at output_dims[i * HTPU_MAX_RANK ..] (its
   * rank entries, then zeros). The backend writes an output's dims back after an execute
   * (QnnGraph.h): an output with dynamic dimensions (htpu_tensor_info.dynamic_dims) gets what
   * it produced (a NonZero's row count, say), any other its declared dims unless the backend
   * shrank them; each is at most the declared one (larger is HTPU_EQNN naming the output). The
   * output's buffer holds that many elements from its start (an f32 output: that many
   * dequantized), the rest left as it was. With batch_multiple k: the declared dims with
   * dims[0] x k (a graph with dynamic outputs takes no batch multiple: HTPU_EINVAL). Untouched
   * when the call fails. Submitted calls: borrowed until done runs, as the outputs are (after a
   * host-side deadline or cancel without signals the call worked on its own copy). */
  uint32_t *output_dims;
} htpu_exec_options;

/* htpu_graph_execute with options (NULL = none). After a DSP restart (QNN 1007) the context
 * is recreated from its retained binary, its graphs re-retrieved, shared buffers re-registered
 * and the call retried (runtime option recovery_retries); a failed recovery or QNN 1011 gives
 * HTPU_EDEVICE_RESET, after which the handles are still safe to close. HTPU_ECANCELLED when
 * opts->cancelled said so, or when the graph handle was closed while the call waited or ran.
 * The calling thread waits for the graph's turn in the graph's waiting list (priority, then
 * arrival; HTPU_EBUSY when queue_limit calls already wait) and runs the execute itself.
 * HTPU_ETIMEDOUT at the deadline (opts->timeout_ns). */
HTPU_API int htpu_graph_execute_ex(htpu_graph *g, const htpu_io *inputs, uint32_t num_inputs,
                                   const htpu_io *outputs, uint32_t num_outputs,
                                   const htpu_exec_options *opts, htpu_exec_stats *stats);

/* ---- submitted calls (answers that come back later) -------------------------------------------
 * A submitted call's f32 inputs are converted inside htpu_graph_submit; the call then joins the
 * same waiting list as synchronous executes and is run by the graph's worker threads (two per
 * QNN graph, started on the first submit): one executes the call holding the turn while the
 * other converts the previous call's outputs and runs its done. A graph's dones run one at a
 * time, in execute order. */
typedef struct htpu_call htpu_call;
/* Runs exactly once per accepted call, on a core thread (a graph's worker, or the timer
 * thread for a call that timed out or was cancelled while waiting), never inside submit. It
 * must not block for long; it may call htpu_call_result (the call's rc, stats and message are
 * decided when done runs) / htpu_call_release and submit again, but must not close the graph,
 * context or runtime of the call. While done runs, htpu_last_error() and htpu_last_qnn_code()
 * on its thread are the call's. */
typedef void (*htpu_call_done_fn)(htpu_call *call, int rc, void *arg);

/* Checks everything it can at once (handle, counts, sizes, dtypes, options, the input
 * conversions, the profile level against the backend: errors returned here, done never runs),
 * converts the f32 inputs (on the caller's thread: submit costs it the input conversion) and
 * queues the call. On 0, *out is the caller's reference (release it with htpu_call_release,
 * before or after done) and done(call, rc, done_arg) will run once.
 * inputs/outputs (the arrays and the memory they point to) are borrowed until done runs,
 * except after a host-side deadline or cancel without signals (the call worked on copies).
 * opts is copied (no_wait, cancelled and profile are not supported here: HTPU_EINVAL). With
 * opts->profile_level the call carries its own profile handle (to graphExecute or
 * graphExecuteAsync alike), read on the worker before done: htpu_call_take_profile.
 * done may be NULL (then wait with htpu_call_wait).
 * Errors: HTPU_ECLOSED, HTPU_EINVAL, HTPU_EMISMATCH, HTPU_EBUSY (the graph's queue of N calls
 * is full), HTPU_ENOMEM. Thread-safe. */
HTPU_API int htpu_graph_submit(htpu_graph *g, const htpu_io *inputs, uint32_t num_inputs,
                               const htpu_io *outputs, uint32_t num_outputs,
                               const htpu_exec_options *opts, htpu_call_done_fn done,
                               void *done_arg, htpu_call **out);
/* Waiting: removed, done(HTPU_ECANCELLED). Running: its abort signal is triggered and done
 * runs with HTPU_ECANCELLED when QNN returns (no signals: at once, the execute finishing in the
 * background on copies). Finished: no effect. Returns 0, or HTPU_EINVAL for NULL. */
HTPU_API int htpu_call_cancel(htpu_call *call);
/* Waits until the call has ended (done has returned) or timeout_ns passed (0: no wait, a poll;
 * UINT64_MAX: no limit). Returns the call's rc, or HTPU_ETIMEDOUT if it has not ended within
 * timeout_ns (the call goes on). Must not be called from the call's own done. */
HTPU_API int htpu_call_wait(htpu_call *call, uint64_t timeout_ns);
/* An ended call's rc, its stats (may be NULL) and its error message copied into msg (may be
 * NULL; NUL-terminated, truncated); from done on (inside done too). HTPU_EBUSY before. */
HTPU_API int htpu_call_result(htpu_call *call, htpu_exec_stats *stats, char *msg, size_t len);
/* A profiled call's events (opts->profile_level at submit), from done on (inside done too):
 * *out gets them and the caller owns them (htpu_profile_free); the first take moves them, a
 * later one gives NULL. *out is NULL and 0 is returned for a call that was not profiled or
 * that failed. When the call succeeded but its events could not be read (dropped, counted in
 * htpu_stats.profiles_dropped), *out is NULL and the read's error is returned with its
 * message; the call's own rc is still 0. Errors: HTPU_EINVAL (call or out NULL), HTPU_EBUSY
 * (the call has not ended). Profiles never taken are freed with the call. Thread-safe. */
HTPU_API int htpu_call_take_profile(htpu_call *call, struct htpu_profile **out);
/* Drops the caller's reference and sets *call = NULL; NULL is a no-op. A call still queued or
 * running goes on (cancel it first if it is no longer wanted). */
HTPU_API void htpu_call_release(htpu_call **call);

/* Recent call durations of one graph, for deciding whether its calls are short (e.g. whether
 * a caller may run them on a thread that must not block for long). They are the graph's, not
 * the handle's: calls through every handle of the graph are recorded in one window, which
 * every handle reads. A call's recorded duration
 * is its own work up to the end of graphExecute: input conversion plus the time holding the
 * graph's execute lock (graphExecute, and any recovery), in nanoseconds, CLOCK_MONOTONIC; the
 * wait for the graph's turn is not included. Output conversion comes after and is not included
 * (it is linear in the output size). Every call that reached graphExecute is recorded, failed
 * ones too; cancelled, declined and profiled calls are not (a profiled call's time includes the
 * profiler's work, which is not the graph's). */
#define HTPU_TIMING_WINDOW 32
typedef struct htpu_graph_timing {
  uint64_t samples; /* calls recorded since the graph was opened on its context (through any
                       of its handles; from 0 again when reopened after its last handle closed) */
  uint32_t window;  /* of which in the window: min(samples, HTPU_TIMING_WINDOW) */
  uint64_t max_ns;  /* the longest in the window (0 when empty) */
  uint64_t last_ns; /* the most recent (0 when none) */
} htpu_graph_timing;

/* Fills *out with the graph's recent call durations. Lock-free: readable from any thread at
 * any time, also while the graph executes (the window may then be one call behind).
 * Errors: HTPU_EINVAL (out NULL), HTPU_ECLOSED. */
HTPU_API int htpu_graph_get_timing(htpu_graph *g, htpu_graph_timing *out);

/* How the graph runs calls with htpu_exec_options.batch_multiple > 1. */
typedef enum htpu_batch_multiple_state {
  HTPU_BATCH_MULTIPLE_UNTRIED = 0,     /* no call with a multiple has run yet: the next tries one
                                          execute */
  HTPU_BATCH_MULTIPLE_ONE_EXECUTE = 1, /* the graph took a multiple: one execute per call */
  HTPU_BATCH_MULTIPLE_CHUNKED = 2      /* the graph refused one (remembered while it is open),
                                          or the runtime does not announce them: k executes */
} htpu_batch_multiple_state;

/* Fills *out for the graph (its QNN graph's state, shared by every handle of it). Lock-free,
 * like htpu_graph_get_timing. Errors: HTPU_EINVAL (out NULL), HTPU_ECLOSED. */
HTPU_API int htpu_graph_get_batch_multiple(htpu_graph *g, htpu_batch_multiple_state *out);

/* ---- shared (zero-copy) buffers ----------------------------------------------------------------
 * Memory the DSP reads and writes directly (FastRPC rpcmem, loaded with dlopen after the device
 * exists). An htpu_io whose data lies inside a shared buffer is registered with the graph's
 * context on first use (memRegister, HTP shared-buffer descriptor: fd, offset, total size),
 * cached, and bound by handle instead of being copied through FastRPC on every call. When
 * FastRPC memory is unavailable, ordinary memory is returned instead and htpu_shared_note says
 * why for that buffer; when registering a FastRPC buffer with a context fails, the buffer is
 * passed as an ordinary one (htpu_shared_note stays ""). htpu_runtime_info.shared_memory_note
 * keeps the runtime's first such reason of either kind. Executes work either way, with copies. */
typedef struct htpu_shared htpu_shared;

/* Allocates size bytes (64-byte aligned). The buffer holds a reference on the runtime.
 * Errors: HTPU_ECLOSED, HTPU_EINVAL, HTPU_ENOMEM. */
HTPU_API int htpu_shared_alloc(htpu_runtime *rt, size_t size, htpu_shared **out);
/* Deregisters it from every context (waiting for in-flight executes) and frees it. */
HTPU_API int htpu_shared_free(htpu_shared **buf);
/* Borrowed pointer / size; NULL / 0 for a closed handle. */
HTPU_API void *htpu_shared_data(htpu_shared *buf);
HTPU_API size_t htpu_shared_size(htpu_shared *buf);
/* 1 when the memory is FastRPC shared memory, 0 when it is the ordinary-memory fallback. */
HTPU_API int htpu_shared_is_fastrpc(htpu_shared *buf);
/* Why this buffer is ordinary memory (never "" then; "" for FastRPC memory): its own reason,
 * fixed when it was allocated, so it stays right when the runtime's first note
 * (shared_memory_note) is about something else. A later failed registration of a FastRPC
 * buffer is not this note's business (see above). Borrowed and immutable: readable from any thread until htpu_shared_free of this
 * buffer, on whatever thread, ends it. NULL for a closed handle. */
HTPU_API const char *htpu_shared_note(htpu_shared *buf);

/* Convenience: one shared buffer holding every input and output of the graph in its own type,
 * 64-byte aligned; fills inputs[num_inputs] and outputs[num_outputs] to point into it, ready to
 * fill and to pass to htpu_graph_execute. Free with htpu_shared_free. */
HTPU_API int htpu_graph_alloc_io(htpu_graph *g, htpu_io *inputs, htpu_io *outputs,
                                 htpu_shared **out);

/* ---- quantization helpers ------------------------------------------------------------------ */

/* f32 -> integer tensor type with its quantization (per tensor or per axis; `info` gives the
 * dims for the axis): q = round_half_even(x / scale) + zero_point, saturated to the type's
 * range, x / scale being the exact quotient (SIMD kernels where the CPU has them, giving the
 * same bytes: docs/quantization.md); +-Inf saturate; NaN -> HTPU_ENAN with the element index
 * in htpu_last_error().
 * HTPU_QUANT_NONE to an integer type rounds and saturates the value itself; to HTPU_F16
 * converts with round-to-nearest-even. `dst` holds info->num_elements elements of info->dtype. */
HTPU_API int htpu_quantize(const htpu_tensor_info *info, const float *src, void *dst);
/* Integer/f16 tensor type -> f32: x = (q - zero_point) * scale. */
HTPU_API int htpu_dequantize(const htpu_tensor_info *info, const void *src, float *dst);

/* Scalar conversions for f16, exposed for tests and tools. */
HTPU_API uint16_t htpu_f32_to_f16(float x);
HTPU_API float htpu_f16_to_f32(uint16_t h);

/* ---- profiling --------------------------------------------------------------------------------
 * Where a call's time goes, from the backend's own profile events (QnnProfile): attach a level
 * to an execute (htpu_exec_options) or a load (htpu_load_options) and get the events back as a
 * plain tree the caller owns, with HTP's event ids named and the per-op figures digested. What
 * each level costs, what it shows on HTP v68 and how to read it: docs/profiling.md. */

typedef enum htpu_profile_level {
  HTPU_PROFILE_OFF = 0,
  HTPU_PROFILE_BASIC = 1,    /* the execute (or load) event and its HTP sub-events */
  HTPU_PROFILE_DETAILED = 2, /* and a NODE event per op: its name, cycles and time */
  HTPU_PROFILE_LINTING = 3,  /* HTP's level 7001: per op, critical-path cycles and waits */
  HTPU_PROFILE_OPTRACE = 4   /* detailed with the optrace config; where the backend announces
                                it (capability 1405), and only binaries built for it carry
                                optrace data */
} htpu_profile_level;

/* "off", "basic", "detailed", "linting", "optrace"; NULL for an invalid value. */
HTPU_API const char *htpu_profile_level_name(htpu_profile_level level);
/* Parses a name as above. Returns 0, or HTPU_EINVAL listing the valid names. */
HTPU_API int htpu_profile_level_from_name(const char *name, htpu_profile_level *out);

#define HTPU_PROFILE_DEFAULT_MAX_EVENTS 4096u
#define HTPU_PROFILE_MAX_EVENTS_LIMIT (1u << 20) /* the largest profile_max_events accepted */

/* One event. type/unit/value are QNN's (QnnProfile.h, HTP/QnnHtpProfile.h); `name` is ours
 * for the type ("accelerator time", "host RPC", "VTCM acquire", ...), "event <type>" when we
 * do not know it. Values without a unit are microseconds. An event of unit 5 (object) carries
 * no number (value 0) but the backend's opaque object (QnnProfile_BackendOpaqueObject_t, in the
 * extended event data only: without extended events it cannot be read, and the profile's note
 * counts it among the events that could not be read): its bytes and the file name it gives,
 * copied into the profile, at most HTPU_PROFILE_MAX_OBJECT_BYTES of them per profile (an
 * object past that is not copied: object NULL, object_size 0, and the note says so). */
typedef struct htpu_profile_event {
  uint32_t type;
  uint32_t unit;             /* 1 us, 2 bytes, 3 cycles, 4 count, 5 object, 6 none */
  uint64_t value;
  const char *name;
  const char *identifier;    /* the op's name for an op event; "" when none */
  uint64_t timestamp;        /* from the extended event data (backend's clock), else 0 */
  int has_timestamp;
  uint32_t num_children;
  const struct htpu_profile_event *children;
  const void *object;        /* unit 5: the object's bytes (NULL when none or not copied) */
  uint64_t object_size;      /* ... and their count */
  const char *object_file;   /* unit 5: the object's file name; "" when none (and otherwise) */
} htpu_profile_event;

/* The most object bytes (htpu_profile_event.object) one profile copies: 64 MiB. */
#define HTPU_PROFILE_MAX_OBJECT_BYTES (64ull << 20)

/* One op of a detailed or linting profile, in execution order. */
typedef struct htpu_profile_op {
  const char *name;   /* the op's name; "#<index>" when the binary carries none */
  uint64_t cycles;    /* accelerator cycles (0 when the backend gave none) */
  uint64_t us;        /* time in microseconds (0 when the backend gave none) */
  uint64_t start;     /* its event's timestamp (0 without extended events) */
} htpu_profile_op;

/* What one profiled call read back. One allocation, owned by the caller. */
typedef struct htpu_profile {
  htpu_profile_level level;
  const char *graph;          /* the executed graph's name; "" for a load */
  uint32_t num_events;        /* top-level events */
  const htpu_profile_event *events;
  uint32_t total_events;      /* events read, nested ones included */
  uint32_t dropped_events;    /* events past max_events, not read (a lower bound) */
  uint32_t max_events;
  int extended;               /* read with timestamps (capability 1404) */
  const char *note;           /* "" or what is missing: "truncated at 4096 events ...", "the
                                 binary carries no op names ...", ... */
  /* digested: the accelerator's total, the RPC sides, and the ops */
  uint64_t accel_us, accel_cycles, host_rpc_us, htp_rpc_us;
  uint32_t num_ops;
  const htpu_profile_op *ops;
  /* the host side of the call, ns (CLOCK_MONOTONIC): convert in, graphExecute (or the load),
   * convert out */
  uint64_t start_ns, quantize_ns, execute_start_ns, execute_ns, dequantize_ns, total_ns;
  uint64_t read_ns; /* what reading the events back and converting them cost this call */
  /* How many of ops, from the first, have their cycles / their time read: num_ops when the
   * backend gave that figure per op and nothing was dropped. Past the event cap the tree is
   * cut (breadth first), so the ops and figures read are a prefix: a table of such a profile
   * is partial, and an op's 0 past these counts means "not read", not "took nothing". */
  uint32_t ops_with_cycles, ops_with_us;
} htpu_profile;

HTPU_API void htpu_profile_free(htpu_profile *p);

/* Our name for a QNN/HTP event type ("accelerator time"), "" for one we do not know. */
HTPU_API const char *htpu_profile_event_name(uint32_t type);
/* "us", "bytes", "cycles", "count", "object", "none"; "" for an unknown unit. */
HTPU_API const char *htpu_profile_unit_name(uint32_t unit);

/* What the backend announces (propertyHasCapability; nonzero = supported). */
typedef struct htpu_profile_caps {
  int profiling;          /* 1401: the profile API at all */
  int custom_config;      /* 1402 */
  int max_events_config;  /* 1403: the backend bounds its own events (else the core does) */
  int extended_events;    /* 1404: timestamps */
  int optrace;            /* 1405: HTPU_PROFILE_OPTRACE */
  int continuous;         /* 310: a handle bound to a graph (not used by the core) */
  int profiling_state;    /* 315: profiling switched per graph (not used by the core) */
  int system_serialization; /* the system library has QnnSystemProfile (System API >= 1.5) */
  int linting;            /* HTPU_PROFILE_LINTING: HTP's own level (7001), so an HTP backend */
} htpu_profile_caps;
HTPU_API int htpu_runtime_profile_caps(htpu_runtime *rt, htpu_profile_caps *out);

/* Options of htpu_context_open_*_ex. Zero-initialize. */
typedef struct htpu_load_options {
  int profile_level;              /* an htpu_profile_level; HTPU_PROFILE_OFF: none */
  uint32_t profile_max_events;    /* 0: HTPU_PROFILE_DEFAULT_MAX_EVENTS */
  htpu_profile **profile;         /* out, as in htpu_exec_options: the load's init events */
  int priority;                   /* an htpu_priority: the context's QNN priority config where
                                     the backend announces priority control (else the host
                                     order only), and the default of its executes */
  uint64_t timeout_ns;            /* bounds the load (a timeout signal on
                                     createFromBinaryWithSignal where announced; else the load
                                     runs to its end); 0: none. HTPU_ETIMEDOUT naming the
                                     binary and the limit */
  uint64_t exec_timeout_ns;       /* default timeout of executes on this context; 0: the
                                     runtime's default_timeout_ns */
  uint32_t queue_limit;           /* calls that may wait for one graph of this context, as the
                                     runtime option; 0: the runtime's */
  const char *graph;              /* an ONNX model holding several context binaries: load the
                                     one that holds this graph (HTPU_ENOT_FOUND listing each
                                     context's graphs when none does). NULL: the one holding
                                     graphs[0] (below) when graphs are named, else the model's
                                     only context; with several, HTPU_EINVAL listing them */
  /* Only these graphs of the binary are deserialized (QNN's ENABLE_GRAPHS config where the
   * backend announces it, htpu_runtime_info.enable_graphs; elsewhere every graph is, and the
   * API behaves the same): htpu_graph_open of another is HTPU_ENOT_FOUND naming this option.
   * A name the binary does not hold is HTPU_ENOT_FOUND listing the names it holds. NULL (or
   * num_graphs 0): every graph. The names are copied. */
  const char *const *graphs;
  uint32_t num_graphs;
  uint64_t memory_limit_mb;       /* QNN's memory-limit hint for the context (MB) where the
                                     backend announces it (htpu_runtime_info.memory_limit_hint;
                                     elsewhere not passed, see htpu_context_load_info); 0: none;
                                     at most HTPU_MAX_MEMORY_LIMIT_MB (larger: HTPU_EINVAL) */
  int copy_binary;                /* nonzero: a file is copied even where it could be mapped
                                     (htpu_context_open_file_ex) */
  /* A buffer load (htpu_context_open_buffer_ex, or a buffer request of
   * htpu_context_open_many) with a release function lends the buffer instead of having it
   * copied: it must stay valid and unchanged until buffer_release(buffer_release_arg) is
   * called, exactly once (also when the load fails), from whichever thread frees the context
   * (possibly a graph close or a runtime close). NULL: the buffer is copied. */
  void (*buffer_release)(void *arg);
  void *buffer_release_arg;
} htpu_load_options;
/* htpu_context_open_file / _buffer with options (NULL = none). */
HTPU_API int htpu_context_open_file_ex(htpu_runtime *rt, const char *path,
                                       const htpu_load_options *opts, htpu_context **out);
HTPU_API int htpu_context_open_buffer_ex(htpu_runtime *rt, const void *buf, size_t len,
                                         const htpu_load_options *opts, htpu_context **out);

/* ---- several models at once, and what a load holds ------------------------------------------
 * docs/board.md, "What a model costs": memory and time, and the options that reduce them. */

/* One model of htpu_context_open_many: a file (path) or a buffer (buf, len), its options
 * (NULL: none; timeouts, priorities, graphs, profiles per model), and what became of it. A
 * request naming both, neither, or an empty buffer fails alone with HTPU_EINVAL saying which
 * (a lent buffer, opts->buffer_release, is still released exactly once). */
typedef struct htpu_load_request {
  const char *path;              /* a context binary file, or NULL for buf/len */
  const void *buf;
  size_t len;
  const htpu_load_options *opts;
  htpu_context *ctx;             /* out: the context (the caller's to close); NULL on failure */
  int rc;                        /* out: 0 or the HTPU_E* code of this model's failure */
  uint32_t qnn_code;             /* out: the QNN code involved in it (0: none) */
  char *error;                   /* optional: this model's failure message is copied here */
  size_t error_len;              /* (truncated with "..." to error_len - 1 bytes; whole in
                                    HTPU_ERROR_MAX bytes) */
} htpu_load_request;

/* Loads n models in one call. Where the backend announces contextCreateFromBinaryListAsync
 * (capability 212, htpu_runtime_info.list_load) they are created by one call and
 * deserialized at once (the backend's threads), so n loads take about as long as the
 * slowest; elsewhere one after another, with the same results. Each model gets what
 * htpu_context_open_*_ex would give it: its load timeout (the list's timeout signal runs to
 * the latest deadline; a model created past its own is freed and gets HTPU_ETIMEDOUT),
 * priority, graphs, profile, its own error and a single load's fallbacks (one more create
 * after a DSP restart, with recovery_retries on; its spill-fill group's). The execute gate
 * is held exclusively from before the first load to after the last model's notification: no
 * execute runs beside any of them (as for a single load), and the models load beside each
 * other only. Returns 0 when every model loaded, else the code of the first that failed (in
 * request order); the models that loaded are returned either way. HTPU_EINVAL for a NULL reqs
 * or n 0. */
HTPU_API int htpu_context_open_many(htpu_runtime *rt, htpu_load_request *reqs, size_t n);

/* How a context's binary is held and what its load passed to QNN (htpu_context_get_load_info).
 * Strings are owned by the context and valid while it is open. */
typedef struct htpu_context_load_info {
  const char *binary;            /* "mapped", "copied" or "lent" */
  const char *binary_note;       /* why: "mapped: squashfs has no write support, ..." */
  uint64_t binary_bytes;
  uint64_t binary_copy_bytes;    /* of them copied by the library (0 when mapped or lent) */
  int persistent_binary;         /* QNN was told the binary stays (PERSISTENT_BINARY, 208) */
  uint32_t graphs_enabled;       /* graphs that may be opened (all, unless graphs was given) */
  int enable_graphs_passed;      /* only those were deserialized (ENABLE_GRAPHS, 206) */
  uint64_t memory_limit_mb;      /* the hint asked for */
  int memory_limit_passed;       /* and given to QNN (207) */
  uint64_t spill_fill_bytes;     /* its graphs' spill-fill buffer (the largest of the enabled
                                    graphs', from the binary's graph blob info; 0 unknown) */
  uint64_t spill_fill_group;     /* nonzero: the group of contexts sharing one spill-fill buffer
                                    it belongs to (htpu_runtime_options.spill_fill_sharing) */
  uint64_t spill_fill_group_bytes; /* that shared buffer's size */
  const char *spill_fill_note;   /* why it shares none ("" when it does) */
  int list_loaded;               /* came up through contextCreateFromBinaryListAsync */
  uint64_t load_ns;              /* the load's own time (introspection to creation) */
} htpu_context_load_info;
HTPU_API int htpu_context_get_load_info(htpu_context *ctx, htpu_context_load_info *out);

/* Writers. Each returns 0, HTPU_EINVAL (NULL profile or path) or HTPU_EIO naming the path and
 * the reason. A path that exists and is not a regular file (a terminal, pipe, FIFO or device;
 * /dev/stdout and /dev/fd/N: this process's descriptors) is written directly and every write
 * error is reported (ENOSPC on /dev/full is HTPU_EIO). A regular file or a new path is written
 * to a unique temporary file beside its final target (a symlink followed: the link stays, its
 * target gets the content) and renamed over it, keeping a replaced file's permission bits;
 * concurrent writers of one path each succeed. An existing regular file whose directory takes
 * no new file (EACCES, EPERM, EROFS) is written in place when it opens for writing: not
 * atomic. A directory, a missing parent or a path writable neither way is HTPU_EIO; nothing
 * is left behind by a failure (docs/profiling.md).
 * - A Chrome trace-event JSON (Perfetto, chrome://tracing): the host spans (convert, execute,
 *   convert back) on one track, the accelerator and its ops on their own.
 * - One self-contained HTML page (no network): a per-op bar chart and the timeline.
 * - Through the runtime's system library (QnnSystemProfile serialization, System API 1.5 on)
 *   in Qualcomm's log format that qnn-profile-viewer reads; HTPU_EUNSUPPORTED when the library
 *   has no such slots. */
HTPU_API int htpu_profile_write_trace(const htpu_profile *p, const char *path);
HTPU_API int htpu_profile_write_html(const htpu_profile *p, const char *title, const char *path);
HTPU_API int htpu_profile_write_qnn_log(htpu_runtime *rt, const htpu_profile *p,
                                        const char *path);

/* ---- the board: heat, clocks, NPU load, other NPU users --------------------------------------
 * Readings of the board's files, every one through a root: a directory standing in for / (a
 * copy of a board's tree, or a test's fake one); NULL or "" reads this machine's. A path is
 * resolved inside the root as after chroot (symbolic links from the root, `..` never above
 * it). Files are opened without ever blocking (a FIFO is refused, not waited on) and every
 * value is checked before it is trusted: a missing, unreadable or absurd value is reported as
 * such, never as a number. Thread-safe; nothing is cached between calls. */

/* What became of one value. */
typedef enum htpu_reading_state {
  HTPU_READING_OK = 0,
  HTPU_READING_MISSING = 1,    /* the file (or its directory) is not there */
  HTPU_READING_UNREADABLE = 2, /* there, but not a readable regular file (a FIFO, a directory, a
                                  link loop, a read error) */
  HTPU_READING_ABSURD = 3      /* read, but not a plausible value (not a number, a temperature
                                  outside -40..150 C, a frequency of 0 or above 100 GHz) */
} htpu_reading_state;
/* "ok", "missing", "unreadable", "absurd"; NULL for another value. */
HTPU_API const char *htpu_reading_state_name(int state);

/* Which part of the SoC a thermal zone measures, from its type: "nspss0-thermal" (the NPU's
 * subsystem, whose trip points matter to throughput), "cpu4-thermal" or "cpuss0-thermal". */
typedef enum htpu_zone_kind { HTPU_ZONE_OTHER = 0, HTPU_ZONE_NSP = 1, HTPU_ZONE_CPU = 2 } htpu_zone_kind;

#define HTPU_BOARD_MAX_TRIPS 12
#define HTPU_BOARD_NO_TEMP INT64_MIN /* a temperature field with nothing trustworthy in it */

typedef struct htpu_trip_point {
  char type[24];              /* trip_point_N_type: "passive", "hot", "critical", ... ("" unread) */
  int64_t temp_mc;            /* trip_point_N_temp, millidegrees C; HTPU_BOARD_NO_TEMP unless ok */
  int state;                  /* an htpu_reading_state, of temp_mc */
} htpu_trip_point;

typedef struct htpu_thermal_zone {
  char zone[32];              /* "thermal_zone12" */
  char type[64];              /* "nspss0-thermal" ("" when its type file cannot be read) */
  int kind;                   /* an htpu_zone_kind */
  int state;                  /* an htpu_reading_state, of temp_mc */
  int64_t temp_mc;            /* millidegrees C; HTPU_BOARD_NO_TEMP unless state is ok */
  char note[256];             /* why state is not ok: the path and the cause; "" when ok */
  uint32_t num_trips;         /* trip points listed (at most HTPU_BOARD_MAX_TRIPS) */
  htpu_trip_point trips[HTPU_BOARD_MAX_TRIPS];
  int64_t hot_mc;             /* the lowest trustworthy trip of type "hot", else of type
                                 "passive", among all the zone's trip points (listed or not);
                                 HTPU_BOARD_NO_TEMP when none */
  int64_t critical_mc;        /* the lowest trustworthy "critical" trip, or HTPU_BOARD_NO_TEMP */
  uint32_t trips_skipped;     /* trip points past the first HTPU_BOARD_MAX_TRIPS: read for
                                 hot_mc and critical_mc, not listed in trips */
} htpu_thermal_zone;

typedef struct htpu_cpu_policy {
  char policy[32];            /* "policy4" */
  char cpus[64];              /* related_cpus, as the kernel writes it ("4 5 6"); "" unread */
  char governor[32];          /* scaling_governor ("schedutil", "performance"); "" unless ok */
  int governor_state;         /* an htpu_reading_state */
  uint64_t cur_khz;           /* scaling_cur_freq; 0 unless cur_state is ok */
  int cur_state;              /* an htpu_reading_state */
  uint64_t min_khz, max_khz;  /* scaling_min_freq, scaling_max_freq; 0 when not ok */
  uint64_t hw_min_khz, hw_max_khz; /* cpuinfo_min_freq, cpuinfo_max_freq; 0 when not ok */
  char note[256];             /* why the governor or current frequency is not ok; "" */
} htpu_cpu_policy;

#define HTPU_BOARD_MAX_ZONES 128
#define HTPU_BOARD_MAX_POLICIES 32

/* One reading of the board (htpu_board_read). Plain data in one allocation. */
typedef struct htpu_board {
  uint64_t at_ns;             /* CLOCK_MONOTONIC when read */
  uint64_t executes;          /* htpu_stats.executes and execute_ns_total at that moment: the */
  uint64_t execute_ns_total;  /* NPU's load over an interval comes from two readings */
  uint32_t num_zones;         /* /sys/class/thermal/thermal_zone*, in zone number order */
  uint32_t zones_skipped;     /* zones past HTPU_BOARD_MAX_ZONES, not read */
  htpu_thermal_zone *zones;
  char thermal_note[256];     /* why no zone was read (no /sys/class/thermal); "" */
  uint32_t num_policies;      /* /sys/devices/system/cpu/cpufreq/policy*, in number order */
  uint32_t policies_skipped;
  htpu_cpu_policy *policies;
  char cpufreq_note[256];     /* why no policy was read; "" */
  /* Summaries. The NSP: the hottest trustworthy NSP zone and the lowest hot trip among the NSP
   * zones (HTPU_BOARD_NO_TEMP when none); nsp_state is ok when some NSP zone read ok, else the
   * state of the first NSP zone, HTPU_READING_MISSING when the board has none. */
  int nsp_state;
  int64_t nsp_temp_mc;
  int64_t nsp_hot_mc;
  char nsp_zone[64];          /* the type of the hottest NSP zone ("" when none read ok) */
  int nsp_hot;                /* 1: nsp_temp_mc >= nsp_hot_mc (both known); the NPU throttles
                                 itself there, unseen by Linux's cooling devices */
  int cpu_state;              /* the same over the CPU zones */
  int64_t cpu_temp_mc;
} htpu_board;

/* Reads the board's thermal zones (type, temp, trip points) and cpufreq policies (governor,
 * frequencies) under `root`, and the library's execute counters, into a new *out (free with
 * htpu_board_free). A board without these files is not an error: the reading says what is
 * missing. Errors (*out NULL): HTPU_EINVAL (out NULL; a root that is not a directory, named),
 * HTPU_ENOMEM. Thread-safe. */
HTPU_API int htpu_board_read(const char *root, htpu_board **out);
/* Frees a reading; NULL is a no-op. */
HTPU_API void htpu_board_free(htpu_board *b);

/* The NPU's load between two readings, from this process's own execute times (the kernel has
 * no busy counter for the NPU). */
typedef struct htpu_board_load {
  uint64_t interval_ns;       /* later->at_ns - earlier->at_ns */
  uint64_t executes;          /* executes that ended in the interval */
  uint64_t execute_ns;        /* their graphExecute time */
  double busy;                /* execute_ns / interval_ns, at most 1.0: the share of the
                                 interval the NPU spent in this process's graphExecute calls
                                 (an execute counts in the interval it ends in) */
  double executes_per_s;
} htpu_board_load;
/* Fills *out. Errors: HTPU_EINVAL (a NULL argument, or `later` not read after `earlier`). */
HTPU_API int htpu_board_load_between(const htpu_board *earlier, const htpu_board *later,
                                     htpu_board_load *out);

/* A process that holds the CDSP's FastRPC device open (/dev/fastrpc-cdsp*): on the board,
 * another program using the NPU, or one of FastRPC's own daemons (docs/board.md, "One NPU user
 * at a time": who counts as a user). */
typedef struct htpu_npu_user {
  int32_t pid;
  char comm[32];              /* /proc/PID/comm ("" when unreadable) */
  char device[64];            /* the device it holds ("/dev/fastrpc-cdsp") */
  uint32_t fds;               /* its descriptors open on FastRPC CDSP devices */
  char libraries[1024];       /* the QNN and FastRPC libraries it has mapped (full paths,
                                 space-separated, "..." at the end when they do not fit; from
                                 /proc/PID/maps), "" when none or unreadable */
} htpu_npu_user;

typedef struct htpu_npu_users {
  uint32_t count;             /* the other NPU users: every holder but the daemons below */
  htpu_npu_user *users;       /* in pid order */
  uint32_t unexamined;        /* processes whose descriptors could not be listed (another
                                 user's, without privileges): a user may hide among them */
  char note[256];             /* why no process could be examined (no /proc); "" */
  uint32_t num_daemons;       /* FastRPC's daemons holding the device (cdsprpcd, adsprpcd,
                                 sdsprpcd, gdsprpcd: started at boot, they attach to the DSP's
                                 root process domain and keep the device open for good): */
  htpu_npu_user *daemons;     /* expected on a board, not users; in pid order */
} htpu_npu_users;

/* Scans /proc/PID/fd under `root` for descriptors on /dev/fastrpc-cdsp* (their link targets;
 * nothing is followed), skipping exclude_pid (the caller's own pid, or 0). A holder is a
 * FastRPC daemon (in `daemons`, not counted) when its name (/proc/PID/comm) is one of the
 * daemons', its executable (/proc/PID/exe, when readable) has that name too, and it maps no
 * QNN library; every other holder is a user, whatever it maps. Errors (*out NULL):
 * HTPU_EINVAL, HTPU_ENOMEM. Free with htpu_npu_users_free (NULL is a no-op). Thread-safe. */
HTPU_API int htpu_npu_users_read(const char *root, int32_t exclude_pid, htpu_npu_users **out);
HTPU_API void htpu_npu_users_free(htpu_npu_users *u);

/* Who holds the NPU lock at `path` (NULL: the default, as htpu_runtime_options.npu_lock_path)
 * now, found from this machine's /proc/locks and what the holder wrote into the file: "pid
 * 1234 (htpu), loading file 'm.bin'". Returns 1 (held; buf says by whom), 0 (free, or no lock
 * file yet; buf "") or a negative HTPU_E* (HTPU_EINVAL, HTPU_EIO naming the path). buf is
 * always NUL-terminated. Thread-safe. */
HTPU_API int htpu_npu_lock_holder(const char *path, char *buf, size_t len);

/* ---- counters ----------------------------------------------------------------------------- */

/* Process-wide, atomically updated, readable at any time from any thread. */
typedef struct htpu_stats {
  uint64_t live_runtimes;
  uint64_t live_contexts;
  uint64_t live_graphs;    /* graph handles (two handles of one graph count two) */
  uint64_t executes;
  uint64_t execute_errors;
  uint64_t execute_ns_total;
  uint64_t execute_ns_last;
  uint64_t loads;          /* contexts created */
  uint64_t load_ns_total;
  uint64_t quantize_ns_total;
  uint64_t dequantize_ns_total;
  uint64_t recoveries;     /* DSP-restart recoveries that succeeded */
  uint64_t recovery_failures; /* ... that did not (HTPU_EDEVICE_RESET) */
  uint64_t live_shared_buffers;
  uint64_t mem_registrations; /* memRegister calls that succeeded */
  uint64_t startup_retries;   /* transient backend/device creation failures retried */
  uint64_t executes_in_flight; /* inside the backend's graphExecute now */
  uint64_t executes_waiting;   /* now queued behind another execute of the same graph (each
                                  holds its graph, so a close meanwhile does not stop it) */
  uint64_t executes_cancelled; /* skipped when their turn came, as their caller was gone
                                  (htpu_exec_options.cancelled); not counted in executes */
  uint64_t executes_declined;  /* no_wait calls that returned HTPU_EBUSY instead of waiting
                                  (htpu_exec_options.no_wait); not counted in executes */
  uint64_t live_profiles;      /* QNN profile handles alive now (one per profiled call, freed
                                  before it returns) */
  uint64_t profiled_calls;     /* executes and loads whose events were read back */
  uint64_t batch_multiple_executes; /* single executes of k > 1 row groups that succeeded */
  uint64_t batch_multiple_refusals; /* ... that a graph refused (its calls then go chunked) */
  uint64_t live_calls;         /* htpu_call objects alive now (submitted, not yet released and
                                  ended) */
  uint64_t executes_timed_out; /* calls that ended with HTPU_ETIMEDOUT */
  uint64_t timer_wakeups;      /* deadlines that had to wake the core's timer thread: one per
                                  run of back-to-back calls, not one per call */
  uint64_t profiles_dropped;   /* profiled calls that succeeded but whose events could not be
                                  read back: the call's answer stands, the profile is lost */
  uint64_t worker_threads;     /* the graphs' worker threads alive now (two per graph with
                                  submitted calls; they exit about a second after its last) */
  uint64_t gate_writers;       /* context loads, frees and DSP recoveries holding the execute
                                  gate or waiting for it now: executes wait behind them */
  uint64_t frees_deferred;     /* context, runtime and FastRPC buffer frees that could not have
                                  the gate at once (an execute in flight was stuck) and were
                                  done later on a thread of the core's, so their close returned */
  uint64_t binary_bytes_copied; /* context binaries held as copies now (bytes) */
  uint64_t binary_bytes_mapped; /* ... mapped from files now (bytes; the page cache's): the
                                  whole file, for a binary embedded in an ONNX model, once
                                  per context loaded from it */
  uint64_t list_loads;         /* contexts created through contextCreateFromBinaryListAsync */
  uint64_t npu_lock_waits;     /* creations that waited for the NPU lock (another process's
                                  creation, or another thread's) */
  uint64_t npu_lock_waiting;   /* ... waiting now */
  uint64_t npu_lock_wait_ns_total; /* time spent waiting for it */
  uint64_t npu_lock_timeouts;  /* waits that ended at their deadline (HTPU_ETIMEDOUT) */
} htpu_stats;

HTPU_API void htpu_stats_get(htpu_stats *out);

/* ---- vision: camera frames in, detections out -------------------------------------------------
 * Optional helpers around a detector's graph (docs/vision.md). htpu_preprocess writes a camera
 * frame straight into a graph input, in one pass, in the input's own layout (NHWC or NCHW),
 * channel order, type and quantization: letterboxed exactly as Ultralytics' LetterBox, sampled
 * as OpenCV's cv2.resize INTER_LINEAR (its fixed-point arithmetic, bit for bit where OpenCV is
 * deterministic, within 1 in every case). htpu_decode reads a detector's outputs in their own
 * type (the score threshold compared in the quantized domain, only candidates dequantized),
 * keeps the best, applies class-aware non-maximum suppression and maps the boxes back to frame
 * pixels through the geometry htpu_preprocess returned. Neither calls QNN nor keeps state: they
 * read and write the buffers given (ordinary memory, or a shared buffer from htpu_graph_alloc_io
 * so that nothing is copied again), and any thread may call them at any time. */

typedef enum htpu_pixel_format {
  HTPU_PIXEL_INVALID = 0,
  HTPU_PIXEL_RGB24, /* 3 bytes a pixel: R, G, B */
  HTPU_PIXEL_BGR24, /* B, G, R (OpenCV's order) */
  HTPU_PIXEL_RGBA,  /* 4 bytes: R, G, B, A (alpha is ignored) */
  HTPU_PIXEL_BGRA,
  HTPU_PIXEL_GRAY8, /* 1 byte */
  HTPU_PIXEL_YUYV,  /* 4:2:2 packed, Y0 U Y1 V for two pixels (V4L2 YUYV); even width */
  HTPU_PIXEL_NV12,  /* 4:2:0: the Y plane, then one plane of U,V pairs for each 2x2 block (what
                       the VPU decodes to); even width and height. BT.601 limited range, as
                       OpenCV's COLOR_YUV2RGB_NV12 */
  HTPU_PIXEL_FORMAT_COUNT
} htpu_pixel_format;

/* "rgb24", "bgr24", "rgba", "bgra", "gray8", "yuyv", "nv12"; NULL for an invalid value. */
HTPU_API const char *htpu_pixel_format_name(htpu_pixel_format f);
/* Parses a name as above. Returns 0, or HTPU_EINVAL listing the valid names. */
HTPU_API int htpu_pixel_format_from_name(const char *name, htpu_pixel_format *out);

typedef struct htpu_rect {
  uint32_t x, y, width, height;
} htpu_rect;

/* The largest frame side (width, height, a crop's) and image input side htpu_preprocess takes,
 * in pixels; larger is HTPU_EINVAL naming it. Every size computed from them then fits 64 bits
 * (and a row's byte offsets 32). */
#define HTPU_VISION_MAX_SIDE 65535u

/* One camera frame, borrowed for the call. Rows are `stride` bytes apart (V4L2's bytesperline:
 * VPU buffers are padded); the last row need not be padded. `size` is what may be read at
 * `data`: a frame whose rows (or UV plane) would end past it is refused, never read. Width and
 * height are at most HTPU_VISION_MAX_SIDE. */
typedef struct htpu_frame {
  const void *data;
  size_t size;
  uint32_t width, height;
  uint32_t stride;          /* bytes from one row to the next; 0: packed (width x bytes a pixel) */
  htpu_pixel_format format;
  size_t uv_offset;         /* NV12: where the UV plane starts, in bytes from data (its rows are
                               `stride` apart too); 0: right after the Y plane, stride x height */
  htpu_rect crop;           /* the part of the frame to use; width or height 0: the whole frame */
} htpu_frame;

/* How the frame (or its crop) becomes the input's height x width. */
typedef enum htpu_resize_mode {
  HTPU_RESIZE_LETTERBOX = 0, /* aspect kept, centred, the rest padded (Ultralytics' LetterBox
                                with auto=False: r = min(H / h, W / w), the resized size
                                round(w r) x round(h r) half to even, padding left/top
                                round(dw / 2 - 0.1), right/bottom round(dw / 2 + 0.1)) */
  HTPU_RESIZE_STRETCH,       /* both axes scaled to fit, no padding */
  HTPU_RESIZE_CROP,          /* the largest centred part with the input's aspect, resized
                                (classification; for a square input, Ultralytics' CenterCrop) */
  HTPU_RESIZE_MODE_COUNT
} htpu_resize_mode;
/* "letterbox", "stretch", "crop"; NULL for an invalid value. */
HTPU_API const char *htpu_resize_mode_name(htpu_resize_mode m);
HTPU_API int htpu_resize_mode_from_name(const char *name, htpu_resize_mode *out);

/* What a pixel value p (0..255) becomes before it is stored in the input's type. */
typedef enum htpu_normalize {
  HTPU_NORMALIZE_AUTO = 0, /* UNIT for float and quantized inputs, RAW for plain integers */
  HTPU_NORMALIZE_UNIT,     /* p / 255 (Ultralytics, AI Hub) */
  HTPU_NORMALIZE_RAW,      /* p */
  HTPU_NORMALIZE_MEAN_STD  /* (p / 255 - mean[c]) / std[c], per model channel (torchvision) */
} htpu_normalize;

typedef enum htpu_image_layout {
  HTPU_LAYOUT_AUTO = 0, /* from the input's shape: the axis of size 1 or 3 next to the batch
                           (NCHW) or last (NHWC); HTPU_EINVAL when both could be */
  HTPU_LAYOUT_NHWC,
  HTPU_LAYOUT_NCHW
} htpu_image_layout;

typedef struct htpu_preprocess_options {
  htpu_resize_mode resize;   /* default HTPU_RESIZE_LETTERBOX */
  uint32_t pad_value;        /* the letterbox border, 0..255; default 114 (Ultralytics) */
  int scaleup;               /* letterbox: a frame smaller than the input is enlarged (1,
                                default); 0: kept at its size (Ultralytics' scaleup=False) */
  int bgr;                   /* the model takes B, G, R; default 0: R, G, B */
  htpu_image_layout layout;  /* default HTPU_LAYOUT_AUTO */
  htpu_normalize normalize;  /* default HTPU_NORMALIZE_AUTO */
  float mean[3], std[3];     /* HTPU_NORMALIZE_MEAN_STD, in model channel order; std > 0 */
} htpu_preprocess_options;

/* Fills defaults. Always call it before setting fields, so new fields get defaults. */
HTPU_API void htpu_preprocess_options_init(htpu_preprocess_options *opts);

/* Where the frame went in the input, to map the model's coordinates back. */
typedef struct htpu_geometry {
  uint32_t frame_width, frame_height;   /* the whole frame */
  htpu_rect region;                     /* the frame pixels that were resized: the crop (the
                                           whole frame without one), centre-cropped in
                                           HTPU_RESIZE_CROP */
  uint32_t input_width, input_height;
  uint32_t resized_width, resized_height; /* the region's size in the input */
  uint32_t pad_left, pad_top, pad_right, pad_bottom;
  double scale_x, scale_y;              /* input pixels per frame pixel: Ultralytics' gain r
                                           on both axes when letterboxed */
} htpu_geometry;

/* Input coordinates -> frame pixels: x = (x - pad_left) / scale_x, clipped to [0,
 * region.width], + region.x (likewise y), in float (the division by (float)scale_x): the
 * inverse of the letterbox, with the padding it applied. (Ultralytics' scale_boxes recomputes
 * its padding from the gain instead, which differs by one pixel for some sizes: see
 * HTPU_MAP_ULTRALYTICS.) n points, xy interleaved, in place. */
HTPU_API void htpu_geometry_map_points(const htpu_geometry *g, float *xy, size_t n);

/* Writes `frame` into one graph input: `input` is that input's tensor info (htpu_graph_input;
 * rank 4 with a batch of 1, or rank 3; 1 or 3 channels: a color frame becomes gray with OpenCV's
 * RGB2GRAY weights, a YUV one by its Y plane, and a gray frame fills 3 channels alike), `dst`
 * its buffer of exactly input->byte_size bytes in the input's own type: u8, i8, u16, i16 (with
 * their quantization, per tensor or per channel), f16 or f32. The resize, normalization and
 * quantization run in one pass; nothing else is allocated beyond a few tables. `geometry` (may
 * be NULL) receives where the frame went. Errors (the message names what was wrong and what was
 * expected): HTPU_EINVAL (a bad frame: a stride smaller than a row, a frame shorter than its
 * rows, odd sizes for YUV, a crop outside the frame; an input shape that is not an image; a
 * letterbox that would resize to nothing; bad options), HTPU_EUNSUPPORTED (a type or
 * quantization the writer does not handle), HTPU_EMISMATCH (dst_size), HTPU_ENOMEM. */
HTPU_API int htpu_preprocess(const htpu_frame *frame, const htpu_tensor_info *input,
                             const htpu_preprocess_options *opts, void *dst, size_t dst_size,
                             htpu_geometry *geometry);

/* Detector output layouts htpu_decode reads. */
typedef enum htpu_head {
  HTPU_HEAD_AUTO = 0,         /* three outputs of AI Hub's shapes: HTPU_HEAD_AIHUB; one output of
                                 rank 3 (or 2): HTPU_HEAD_ULTRALYTICS (name the pose head) */
  HTPU_HEAD_ULTRALYTICS,      /* [1, 4 + nc, A] (or [1, A, 4 + nc]): cx, cy, w, h in input
                                 pixels, then nc class scores */
  HTPU_HEAD_ULTRALYTICS_POSE, /* [1, 4 + nc + K x kd, A]: box, nc scores (1: the person),
                                 K keypoints of x, y (and visibility when kd = 3) */
  HTPU_HEAD_AIHUB,            /* boxes [1, A, 4] (x1, y1, x2, y2), scores [1, A], classes [1, A]
                                 (or scores [1, A, nc] without classes): found by name ("box",
                                 "score", "class"), else in that order */
  HTPU_HEAD_COUNT
} htpu_head;
/* "auto", "ultralytics", "ultralytics_pose", "aihub"; NULL for an invalid value. */
HTPU_API const char *htpu_head_name(htpu_head h);
HTPU_API int htpu_head_from_name(const char *name, htpu_head *out);

typedef enum htpu_head_layout {
  HTPU_HEAD_LAYOUT_AUTO = 0,    /* the smaller of the two axes holds the channels */
  HTPU_HEAD_CHANNELS_FIRST,     /* [1, C, A]: Ultralytics' export */
  HTPU_HEAD_ANCHORS_FIRST       /* [1, A, C] */
} htpu_head_layout;

/* How boxes and keypoints go back from input pixels to frame pixels (with a geometry). */
typedef enum htpu_box_mapping {
  HTPU_MAP_LETTERBOX = 0,  /* through the padding the letterbox applied (the geometry's
                              pad_left, pad_top) and its scale: a point maps to the frame pixel
                              that was drawn there */
  HTPU_MAP_ULTRALYTICS,    /* Ultralytics' predict: boxes as scale_boxes, gain = min(input h /
                              region h, input w / region w) and padding round((input w - region w
                              x gain) / 2 - 0.1) recomputed from the sizes, keypoints as
                              scale_coords with the unrounded (input w - region w x gain) / 2;
                              one pixel off the letterbox's padding for some sizes (100x62 into
                              640x640: top 122, where the image starts at row 121). For a
                              geometry whose scale_x and scale_y differ (stretch) it is the same
                              as HTPU_MAP_LETTERBOX */
  HTPU_MAP_COUNT
} htpu_box_mapping;

typedef struct htpu_decode_options {
  htpu_head head;            /* default HTPU_HEAD_AUTO */
  htpu_head_layout layout;   /* default HTPU_HEAD_LAYOUT_AUTO */
  float score_threshold;     /* a prediction is a candidate when its score is > this (as
                                Ultralytics); 0..1 (as Ultralytics' conf); default 0.25 */
  float iou_threshold;       /* NMS drops a box whose IoU with a kept box of its class is > this;
                                default 0.7 (Ultralytics' predict) */
  uint32_t max_detections;   /* default 300 */
  uint32_t max_candidates;   /* the best this many candidates go to NMS; default 30000 */
  uint32_t num_classes;      /* 0: from the shape (pose: 1). AI Hub class outputs: an id (the
                                value rounded to the nearest integer) at or past num_classes
                                is HTPU_EINVAL naming the anchor; with 0 any id 0..2^32-1 is
                                taken as it is (a label table must then expect any id) */
  uint32_t num_keypoints;    /* pose: 0: from the shape */
  uint32_t keypoint_dims;    /* pose: 2 or 3; default 3 */
  int agnostic;              /* one NMS across all classes; default 0: per class */
  htpu_box_mapping box_mapping; /* default HTPU_MAP_LETTERBOX */
} htpu_decode_options;

/* Fills defaults. Always call it before setting fields, so new fields get defaults. */
HTPU_API void htpu_decode_options_init(htpu_decode_options *opts);

typedef struct htpu_detection {
  float box[4];       /* x1, y1, x2, y2: frame pixels (input pixels without a geometry) */
  float score;
  uint32_t class_id;
  uint32_t anchor;    /* the prediction it came from (its index along the head's A axis) */
} htpu_detection;

/* What htpu_decode found, and how it read the head. */
typedef struct htpu_decode_info {
  uint32_t count;          /* detections written, best first */
  uint32_t candidates;     /* predictions above the threshold (before max_candidates) */
  htpu_head head;          /* as resolved */
  htpu_head_layout layout;
  uint32_t num_anchors, num_classes, num_keypoints, keypoint_dims;
} htpu_decode_info;

/* Decodes a detector's outputs: `outputs` the graph's output tensor infos (e.g.
 * htpu_graph_get_info(g)->outputs), `data[i]` output i's bytes in its own type (exactly
 * byte_size; each info's dims must match its num_elements and byte_size). For an output with
 * dynamic dimensions pass its info as the execute produced it (dims from
 * htpu_exec_options.output_dims, num_elements and byte_size to match): the rest of its buffer
 * is not an answer. Candidates (score > threshold, compared in the quantized domain: only they are
 * dequantized) are ordered by score (then by anchor), the best max_candidates kept, greedy NMS
 * applied per class, and the first max_detections written to `out` (capacity at least
 * max_detections) with their boxes mapped through `geometry` (NULL: left in input pixels,
 * unclipped). Pose heads also write each detection's keypoints to `keypoints` (num_keypoints x
 * keypoint_dims floats each, x and y mapped likewise; keypoints_len at least max_detections
 * times that); other heads may pass NULL. `info` (may be NULL) says what was found.
 * Errors: HTPU_EINVAL (bad options, a capacity below max_detections, a geometry htpu_preprocess
 * could not have returned (a zero, NaN or out-of-range scale, a region outside the frame, padding
 * past the input: the message names the field), an output whose shape or type is not the
 * head's, a quantization scale that is not finite and > 0 or dequantizes past +-1e30, NaN among
 * the scores, an infinite candidate score, a candidate's box that is not finite, an AI Hub box
 * whose x2 < x1 or y2 < y1 (refused, not swapped: a broken export or the wrong output): the
 * message names the output, the anchor and what was expected), HTPU_ENOMEM. A score of -inf
 * is below every threshold and never a candidate. */
HTPU_API int htpu_decode(const htpu_tensor_info *outputs, const void *const *data,
                         uint32_t num_outputs, const htpu_decode_options *opts,
                         const htpu_geometry *geometry, htpu_detection *out, uint32_t capacity,
                         float *keypoints, size_t keypoints_len, htpu_decode_info *info);

#ifdef __cplusplus
}
#endif
#endif /* HEXAGON_TPU_H */
