/* run.c - `htpu run MODEL --input NAME=FILE ...`: one execute, outputs to .npy files and a
 * summary on stdout. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "frame_input.h"
#include "inputs.h"
#include "json.h"
#include "load_report.h"
#include "memory.h"
#include "outputs.h"
#include "session.h"
#include "shared_io.h"
#include "stats.h"
#include "util.h"

typedef struct run_output {
  const htpu_tensor_info *tensor; /* the graph's, or `produced` (dynamic dims, below) */
  htpu_tensor_info produced;      /* its info with the dims the execute wrote */
  htpu_dtype dtype; /* as written: HTPU_F32 (dequantized) or the tensor's own */
  void *data;
  size_t size;
  char *path; /* directory + file name; NULL without --output-dir */
  cli_value_summary summary;
} run_output;

typedef struct run_state {
  const cli_args *args;
  cli_session s;
  cli_inputs in;
  run_output *out;
  uint32_t num_out;
  htpu_exec_stats st;
  int shared;        /* --shared-buffers */
  cli_shared_io sio; /* with --shared-buffers */
  uint64_t registrations;
  htpu_context_load_info load; /* the load: shown with --stats, always in the JSON */
  cli_load_memory mem; /* the load's memory: shown with --stats, always in the JSON */
} run_state;

static void free_outputs(run_state *r) {
  for (uint32_t i = 0; r->out && i < r->num_out; i++) {
    free(r->out[i].data);
    free(r->out[i].path);
  }
  free(r->out);
  r->out = NULL;
}

static int alloc_outputs(run_state *r, int native) {
  const htpu_graph_info *gi = r->s.info;
  r->out = calloc(gi->num_outputs ? gi->num_outputs : 1, sizeof(*r->out));
  if (!r->out) return cli_fail(r->args->cmd, "out of memory");
  r->num_out = gi->num_outputs;
  for (uint32_t i = 0; i < gi->num_outputs; i++) {
    run_output *o = &r->out[i];
    o->tensor = &gi->outputs[i];
    if (o->tensor->dtype == HTPU_DTYPE_INVALID)
      return cli_fail(r->args->cmd, "output '%s' has QNN data type 0x%04" PRIx32
                                    ", which htpu cannot read",
                      o->tensor->name, o->tensor->qnn_data_type);
    o->dtype = native ? o->tensor->dtype : HTPU_F32;
    o->size = o->tensor->num_elements * htpu_dtype_size(o->dtype);
    /* zeroed: a backend that reports success without writing shows zeros, not old memory */
    o->data = calloc(1, o->size ? o->size : 1);
    if (!o->data) return cli_fail(r->args->cmd, "out of memory (%zu bytes)", o->size);
  }
  return CLI_EXIT_OK;
}

/* The shape each output came out in (htpu_exec_options.output_dims): an output with dynamic
 * dimensions holds fewer elements than its maximum, and is summarized and written as such. */
static void take_dims(run_state *r, const uint32_t *dims) {
  for (uint32_t i = 0; i < r->num_out; i++) {
    run_output *o = &r->out[i];
    const uint32_t *d = dims + (size_t)i * HTPU_MAX_RANK;
    o->produced = *o->tensor;
    size_t n = 1;
    for (uint32_t k = 0; k < o->produced.rank; k++) n *= (o->produced.dims[k] = d[k]);
    o->produced.num_elements = n;
    o->produced.byte_size = n * htpu_dtype_size(o->produced.dtype);
    o->tensor = &o->produced;
    o->size = n * htpu_dtype_size(o->dtype);
  }
}

static int execute_ex(run_state *r, const htpu_io *io, uint32_t n_in, uint32_t *dims) {
  htpu_exec_options o;
  memset(&o, 0, sizeof o);
  o.output_dims = dims;
  return htpu_graph_execute_ex(r->s.graph, io, n_in, io + n_in, r->num_out, &o, &r->st);
}

/* --shared-buffers: inputs converted into the registered buffer, executed there, outputs read
 * back from it in the requested type. */
static int execute_shared(run_state *r) {
  const cli_command *cmd = r->args->cmd;
  const htpu_graph_info *gi = r->s.info;
  int rc = cli_shared_io_open(cmd, r->s.graph, gi, &r->sio);
  if (rc == CLI_EXIT_OK) rc = cli_shared_io_fill_inputs(cmd, &r->sio, &r->in);
  if (rc != CLI_EXIT_OK) return rc;
  uint32_t *dims = calloc((size_t)r->num_out * HTPU_MAX_RANK + 1, sizeof *dims);
  if (!dims) return cli_fail(cmd, "out of memory");
  int e = execute_ex(r, r->sio.io, gi->num_inputs, dims);
  if (e == 0) take_dims(r, dims);
  free(dims);
  if (e != 0) return cli_fail_htpu(cmd, e, "executing the graph");
  r->registrations = cli_shared_io_finish(&r->sio, r->s.rt);
  for (uint32_t i = 0; i < r->num_out && rc == CLI_EXIT_OK; i++)
    rc = cli_shared_io_read_output(cmd, &r->sio, gi, i, r->out[i].tensor, r->out[i].dtype,
                                   r->out[i].data, r->out[i].size);
  return rc;
}

static int execute(run_state *r) {
  if (r->shared) return execute_shared(r);
  uint32_t n_in = r->in.count, n_out = r->num_out;
  htpu_io *io = calloc((size_t)n_in + n_out + 1, sizeof(*io));
  uint32_t *dims = calloc((size_t)n_out * HTPU_MAX_RANK + 1, sizeof *dims);
  if (!io || !dims) {
    free(io);
    free(dims);
    return cli_fail(r->args->cmd, "out of memory");
  }
  cli_inputs_fill_io(&r->in, io);
  for (uint32_t i = 0; i < n_out; i++) {
    io[n_in + i].data = r->out[i].data;
    io[n_in + i].size = r->out[i].size;
    io[n_in + i].dtype = r->out[i].dtype;
  }
  int rc = execute_ex(r, io, n_in, dims);
  if (rc == 0) take_dims(r, dims);
  free(io);
  free(dims);
  if (rc != 0) return cli_fail_htpu(r->args->cmd, rc, "executing the graph");
  return CLI_EXIT_OK;
}

static int write_outputs(run_state *r, const char *dir) {
  char **names = NULL;
  if (cli_output_names(r->s.info, &names) != 0) return cli_fail(r->args->cmd, "out of memory");
  int rc = CLI_EXIT_OK;
  for (uint32_t i = 0; i < r->num_out && rc == CLI_EXIT_OK; i++) {
    run_output *o = &r->out[i];
    size_t len = strlen(dir) + strlen(names[i]) + 2;
    o->path = malloc(len);
    if (!o->path) {
      rc = cli_fail(r->args->cmd, "out of memory");
      break;
    }
    int slash = dir[strlen(dir) - 1] == '/';
    snprintf(o->path, len, "%s%s%s", dir, slash ? "" : "/", names[i]);
    rc = cli_write_npy(r->args->cmd, o->path, o->dtype, o->tensor, o->data, o->size);
  }
  cli_output_names_free(names, r->num_out);
  return rc;
}

/* ---- human-readable report ---- */

static void format_value(double v, char *buf, size_t len) { snprintf(buf, len, "%.6g", v); }

static void print_first_values(const run_output *o) {
  const cli_value_summary *s = &o->summary;
  cli_table t;
  cli_table_init(&t, 1);
  const char *cell[] = {o->tensor->name};
  cli_table_add(&t, cell); /* the table's sanitizer keeps control bytes off the terminal */
  printf("  %s: [", t.num_rows ? t.cells[0] : "?");
  cli_table_free(&t);
  for (size_t i = 0; i < s->num_first; i++) {
    char v[32];
    format_value(s->first[i], v, sizeof(v));
    printf("%s%s", i ? ", " : "", v);
  }
  printf("%s]\n", s->count > s->num_first ? ", ..." : "");
}

/* The model, graph, backend, timing and (with --shared-buffers) shared I/O rows. */
static int print_head(const run_state *r) {
  const cli_session *s = &r->s;
  char exec[32], total[32], quant[32], dequant[32], timing[256], shared[1200];
  cli_format_ns((double)r->st.execute_ns, exec, sizeof(exec));
  cli_format_ns((double)r->st.total_ns, total, sizeof(total));
  cli_format_ns((double)r->st.quantize_ns, quant, sizeof(quant));
  cli_format_ns((double)r->st.dequantize_ns, dequant, sizeof(dequant));
  snprintf(timing, sizeof(timing), "%s (whole call %s: quantize %s, dequantize %s)", exec, total,
           quant, dequant);
  if (r->shared && r->sio.fastrpc)
    snprintf(shared, sizeof(shared), "yes: FastRPC shared memory, %llu tensor%s registered%s%s",
             (unsigned long long)r->registrations, r->registrations == 1 ? "" : "s",
             r->sio.note[0] ? ": " : "", r->sio.note);
  else if (r->shared)
    snprintf(shared, sizeof(shared), "requested, fallback to ordinary memory: %s", r->sio.note);
  cli_table head;
  cli_table_init(&head, 2);
  const char *rows[][2] = {
      {"model", s->model},
      {"graph", s->info->name},
      {"backend", s->backend_lib},
      {"execute", timing},
      {"shared I/O", shared},
  };
  size_t nrows = sizeof(rows) / sizeof(rows[0]) - (r->shared ? 0 : 1);
  for (size_t i = 0; i < nrows; i++) cli_table_add(&head, rows[i]);
  int rc = cli_table_print(&head, stdout, 0);
  cli_table_free(&head);
  return rc;
}

/* One row per input: its file, how it was read, and whether it was converted. */
static int print_inputs(const run_state *r) {
  printf("\ninputs:\n");
  cli_table ti;
  cli_table_init(&ti, 4);
  const char *ih[] = {"name", "file", "format", "data"};
  cli_table_add(&ti, ih);
  for (uint32_t i = 0; i < r->in.count; i++) {
    const cli_input *x = &r->in.items[i];
    char data[96];
    if (x->dtype == x->tensor->dtype)
      snprintf(data, sizeof(data), "%s (native)", htpu_dtype_name(x->dtype));
    else
      snprintf(data, sizeof(data), "f32 -> %s", htpu_dtype_name(x->tensor->dtype));
    const char *row[] = {x->tensor->name, x->path, cli_input_source_name(x->source), data};
    cli_table_add(&ti, row);
  }
  int rc = cli_table_print(&ti, stdout, 2);
  cli_table_free(&ti);
  return rc;
}

/* One row per output (type, shape, summary, file), then each one's first values. */
static int print_outputs(const run_state *r) {
  printf("\noutputs:\n");
  cli_table to;
  cli_table_init(&to, 8);
  const char *oh[] = {"name", "dtype", "shape", "min", "max", "mean", "argmax", "file"};
  cli_table_add(&to, oh);
  for (uint32_t i = 0; i < r->num_out; i++) {
    const run_output *o = &r->out[i];
    const cli_value_summary *v = &o->summary;
    char dtype[48], shape[160], mn[32], mx[32], mean[32], arg[32];
    if (o->dtype == o->tensor->dtype)
      snprintf(dtype, sizeof(dtype), "%s", htpu_dtype_name(o->dtype));
    else
      snprintf(dtype, sizeof(dtype), "f32 (from %s)", htpu_dtype_name(o->tensor->dtype));
    cli_shape_string(o->tensor, shape, sizeof(shape));
    format_value(v->min, mn, sizeof(mn));
    format_value(v->max, mx, sizeof(mx));
    format_value(v->mean, mean, sizeof(mean));
    if (v->has_argmax)
      snprintf(arg, sizeof(arg), "%zu", v->argmax);
    else
      snprintf(arg, sizeof(arg), "-");
    const char *row[] = {o->tensor->name, dtype, shape, mn, mx, mean, arg,
                         o->path ? o->path : "(not written)"};
    cli_table_add(&to, row);
  }
  int rc = cli_table_print(&to, stdout, 2);
  cli_table_free(&to);
  for (uint32_t i = 0; i < r->num_out; i++) {
    print_first_values(&r->out[i]);
    if (r->out[i].summary.nan_count)
      printf("    (%zu NaN values, left out of min/max/mean)\n", r->out[i].summary.nan_count);
  }
  return rc;
}

static int print_human(const run_state *r) {
  int rc = print_head(r);
  if (print_inputs(r) != 0) rc = -1;
  if (print_outputs(r) != 0) rc = -1;
  return rc;
}

/* ---- JSON report (schema htpu.run/1, documented in docs/htpu.md) ---- */

static void json_shape(cli_json *j, const htpu_tensor_info *t) {
  cli_json_array_begin(j, "shape", 1);
  for (uint32_t d = 0; d < t->rank && d < HTPU_MAX_RANK; d++) cli_json_uint(j, NULL, t->dims[d]);
  cli_json_array_end(j);
}

static int print_json(const run_state *r) {
  const cli_session *s = &r->s;
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_object_begin(&j, NULL);
  cli_json_string(&j, "schema", "htpu.run/1");
  cli_json_string(&j, "htpu_version", HTPU_VERSION_STRING);
  cli_json_string(&j, "model", s->model);
  cli_json_string(&j, "graph", s->info->name);
  cli_json_string(&j, "backend_lib", s->backend_lib);
  cli_json_string(&j, "system_lib", s->system_lib);
  cli_json_object_begin(&j, "timing_ns");
  cli_json_uint(&j, "execute", r->st.execute_ns);
  cli_json_uint(&j, "quantize", r->st.quantize_ns);
  cli_json_uint(&j, "dequantize", r->st.dequantize_ns);
  cli_json_uint(&j, "total", r->st.total_ns);
  cli_json_object_end(&j);
  cli_json_array_begin(&j, "inputs", 0);
  for (uint32_t i = 0; i < r->in.count; i++) {
    const cli_input *x = &r->in.items[i];
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "name", x->tensor->name);
    cli_json_string(&j, "file", x->path);
    cli_json_string(&j, "format", cli_input_source_name(x->source));
    cli_json_string(&j, "dtype", htpu_dtype_name(x->dtype));
    cli_json_string(&j, "tensor_dtype", htpu_dtype_name(x->tensor->dtype));
    json_shape(&j, x->tensor);
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  cli_json_array_begin(&j, "outputs", 0);
  for (uint32_t i = 0; i < r->num_out; i++) {
    const run_output *o = &r->out[i];
    const cli_value_summary *v = &o->summary;
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "name", o->tensor->name);
    cli_json_string(&j, "dtype", htpu_dtype_name(o->dtype));
    cli_json_string(&j, "tensor_dtype", htpu_dtype_name(o->tensor->dtype));
    json_shape(&j, o->tensor);
    cli_json_string(&j, "file", o->path);
    cli_json_double(&j, "min", v->min);
    cli_json_double(&j, "max", v->max);
    cli_json_double(&j, "mean", v->mean);
    if (v->has_argmax)
      cli_json_uint(&j, "argmax", v->argmax);
    else
      cli_json_null(&j, "argmax");
    cli_json_uint(&j, "nan_count", v->nan_count);
    cli_json_array_begin(&j, "first", 1);
    for (size_t k = 0; k < v->num_first; k++) cli_json_double(&j, NULL, v->first[k]);
    cli_json_array_end(&j);
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  cli_json_object_begin(&j, "shared_buffers");
  cli_json_bool(&j, "requested", r->shared);
  cli_json_bool(&j, "fastrpc", r->shared && r->sio.fastrpc);
  cli_json_string(&j, "note", r->shared && r->sio.note[0] ? r->sio.note : NULL);
  cli_json_uint(&j, "registrations", r->registrations);
  cli_json_object_end(&j);
  cli_json_string(&j, "fastrpc_lib", s->fastrpc_lib);
  cli_load_info_json(&j, "load", &r->load);
  cli_load_memory_json(&j, &r->mem);
  cli_json_object_end(&j);
  return cli_json_finish(&j);
}

/* ---- command ---- */

/* --stats: what the model costs in memory, then how the load held and made it. */
static int print_stats(const run_state *r) {
  int w = cli_load_memory_print(&r->mem);
  if (w == 0) {
    printf("\nload:\n");
    cli_load_info_print(&r->load, "  ");
  }
  return w;
}

static int run_run(const cli_args *a) {
  run_state r;
  memset(&r, 0, sizeof(r));
  r.args = a;
  r.shared = cli_has(a, "shared-buffers") || cli_has(a, "zero-copy");
  /* ./output by default, as Qualcomm's qnn-net-run does, never the current directory itself:
   * an output named like a file there would be overwritten silently. */
  const char *dir = cli_get(a, "output-dir");
  if (!dir) dir = "output";
  /* cheap checks first: no model load for a directory that cannot take the files */
  int rc = cli_output_dir_prepare(a->cmd, dir);
  if (rc == CLI_EXIT_OK) rc = cli_session_inspect(a, &r.s);
  if (rc != CLI_EXIT_OK) return rc;
  /* the inputs against the metadata, before a backend is created and the model loaded */
  rc = cli_inputs_bind(a, r.s.meta_info, 1, &r.in);
  if (rc == CLI_EXIT_OK) rc = cli_frames_bind(a, r.s.meta_info, &r.in);
  if (rc == CLI_EXIT_OK) rc = cli_inputs_load(a->cmd, &r.in);
  if (rc == CLI_EXIT_OK) rc = cli_session_open(a, &r.s);
  if (rc == CLI_EXIT_OK) cli_inputs_retarget(&r.in, r.s.info);
  if (rc == CLI_EXIT_OK) rc = alloc_outputs(&r, cli_has(a, "native-output"));
  if (rc == CLI_EXIT_OK) htpu_context_get_load_info(r.s.ctx, &r.load);
  if (rc == CLI_EXIT_OK) {
    r.mem.estimate = r.s.meta->load_estimate_bytes;
    r.mem.rss_before = r.s.rss_before_load;
    r.mem.rss_after = r.s.rss_after_load;
    r.mem.ctx_rc = htpu_context_get_memory(r.s.ctx, &r.mem.ctx);
  }
  if (rc == CLI_EXIT_OK) rc = execute(&r);
  if (rc == CLI_EXIT_OK && dir) rc = write_outputs(&r, dir);
  if (rc == CLI_EXIT_OK) {
    for (uint32_t i = 0; i < r.num_out; i++) {
      run_output *o = &r.out[i];
      cli_summarize(o->dtype, o->data, o->tensor->num_elements, o->tensor->dims, o->tensor->rank,
                    &o->summary);
    }
    int w = cli_has(a, "json") ? print_json(&r) : print_human(&r);
    if (w == 0 && !cli_has(a, "json") && cli_has(a, "stats")) w = print_stats(&r);
    if (w != 0) rc = cli_fail(a->cmd, "could not write the report");
  }
  free_outputs(&r);
  cli_shared_io_close(&r.sio);
  cli_inputs_free(&r.in);
  cli_session_close(&r.s);
  return rc;
}

static const cli_option run_options[] = {
    {"graph", "NAME", "the graph to run (needed when MODEL holds several)", 0},
    {"input", "NAME=FILE",
     "input data: a .npy file (f32 or the tensor's own type, C order, exact shape) or a raw "
     "file (f32 if it has num_elements*4 bytes, else the tensor's own type); a bare FILE takes "
     "the next input in graph order when all inputs are given that way",
     1},
    {"image", "NAME=F.ppm",
     "a camera frame for input NAME from a binary PPM (P6) or PGM (P5) file, letterboxed into "
     "the input's layout and type (docs/vision.md); a bare F.ppm for a graph of one input",
     1},
    {"frame", "NAME=FILE",
     "a raw camera frame for input NAME, described by --size, --format (and --stride, "
     "--uv-offset), into the input as --image",
     1},
    CLI_FRAME_OPTIONS,
    {"output-dir", "DIR",
     "write each output to DIR/NAME.npy (default ./output; created if missing; names "
     "sanitized)", 0},
    {"native-output", NULL,
     "write outputs in the tensor's own type instead of dequantized f32", 0},
    {"shared-buffers", NULL,
     "run on one registered shared buffer holding every input and output in its own type "
     "(htpu_graph_alloc_io); the outputs are the same",
     0},
    {"zero-copy", NULL, "same as --shared-buffers", 0},
    {"stats", NULL,
     "also print what the load cost: in memory (the estimate from the binary, the resident "
     "set before and after the load, what the context reports), and how it was made (the "
     "binary mapped or copied, the graphs deserialized, the spill-fill buffer, the load time; "
     "docs/board.md, \"What a model costs\")",
     0},
    CLI_SESSION_OPTIONS,
    {"json", NULL, "print the report as JSON (schema htpu.run/1, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_run = {
    .name = "run",
    .synopsis = "MODEL [--graph NAME] (--input NAME=FILE | --image NAME=F.ppm | "
                "--frame NAME=F --size WxH --format FMT [--stride N]) ... "
                "[--resize letterbox|stretch|crop] [--output-dir DIR] "
                "[--native-output] [--shared-buffers] [--stats] [--backend PATH|reference] "
                "[--system-lib PATH|reference | --qnn DIR] [--fastrpc-lib PATH|reference] "
                "[--recovery-retries N] [--startup-retries N] [--timeout MS] [--priority P] "
                "[--force] [--npu-lock PATH|none] [--root DIR] [--json]",
    .summary = "run a graph once on input files and summarize (and save) its outputs",
    .description =
        "Loads MODEL, runs one graph once and prints, for each output, its type, shape,\n"
        "min/max/mean, argmax (for vector-shaped outputs) and first values. f32 input data is\n"
        "quantized to the tensor's type by the library; outputs are dequantized to f32 unless\n"
        "--native-output. Each output is also saved as a .npy file named after the tensor, in\n"
        "--output-dir (default ./output). Every graph input needs one --input, or a camera\n"
        "frame with --image or --frame, letterboxed (or --resize stretch|crop) straight into\n"
        "the input's own layout, type and quantization (docs/vision.md).\n",
    .options = run_options,
    .positional_name = "MODEL",
    .min_positional = 1,
    .max_positional = 1,
    .run = run_run,
};
