/* info.c - `htpu info MODEL`: what a context binary says about itself (htpu_inspect_file). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "hexagon_tpu.h"
#include "info_source.h"
#include "json.h"
#include "memory.h"
#include "qnn_sets.h"
#include "util.h"

/* Per-axis parameters shown in the human table; --json lists them all. */
#define INFO_AXIS_PREVIEW 4

/* ---- human-readable report ---- */

/* "[1,3]"; a dynamic dimension as "<=N" (N its maximum): "[<=100,4]". */
static void shape_string(const htpu_tensor_info *t, char *buf, size_t len) {
  size_t pos = 0;
  pos += (size_t)snprintf(buf, len, "[");
  for (uint32_t d = 0; d < t->rank && d < HTPU_MAX_RANK && pos < len; d++)
    pos += (size_t)snprintf(buf + pos, len - pos, "%s%s%" PRIu32, d ? "," : "",
                            (t->dynamic_dims >> d) & 1u ? "<=" : "", t->dims[d]);
  if (pos < len) snprintf(buf + pos, len - pos, "]");
}

static int any_dynamic(const htpu_tensor_info *ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (ts[i].dynamic_dims) return 1;
  return 0;
}

static void quant_string(const htpu_quant *q, char *buf, size_t len) {
  switch (q->kind) {
  case HTPU_QUANT_NONE: snprintf(buf, len, "none"); return;
  case HTPU_QUANT_PER_TENSOR:
    snprintf(buf, len, "scale=%.6g zero_point=%" PRId32, (double)q->scale, q->zero_point);
    return;
  case HTPU_QUANT_PER_AXIS: break;
  default: snprintf(buf, len, "unknown kind %d", (int)q->kind); return;
  }
  size_t pos = (size_t)snprintf(buf, len, "axis=%" PRId32 " channels=%" PRIu32 " scales=[", q->axis,
                                q->num_channels);
  uint32_t n = q->num_channels < INFO_AXIS_PREVIEW ? q->num_channels : INFO_AXIS_PREVIEW;
  const char *more = q->num_channels > n ? ", ..." : "";
  for (uint32_t i = 0; i < n && q->scales && pos < len; i++)
    pos += (size_t)snprintf(buf + pos, len - pos, "%s%.6g", i ? ", " : "", (double)q->scales[i]);
  if (pos < len) pos += (size_t)snprintf(buf + pos, len - pos, "%s] zero_points=[", more);
  for (uint32_t i = 0; i < n && q->zero_points && pos < len; i++)
    pos += (size_t)snprintf(buf + pos, len - pos, "%s%" PRId32, i ? ", " : "", q->zero_points[i]);
  if (pos < len) snprintf(buf + pos, len - pos, "%s]", more);
}

static void add_tensor_rows(cli_table *t, const char *dir, const htpu_tensor_info *ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *x = &ts[i];
    char idx[16], id[16], type[48], shape[160], elems[32], bytes[32], quant[320];
    snprintf(idx, sizeof(idx), "%" PRIu32, i);
    snprintf(id, sizeof(id), "%" PRIu32, x->id);
    snprintf(type, sizeof(type), "%s 0x%04" PRIx32, htpu_dtype_name(x->dtype), x->qnn_data_type);
    shape_string(x, shape, sizeof(shape));
    snprintf(elems, sizeof(elems), "%zu", x->num_elements);
    snprintf(bytes, sizeof(bytes), "%zu", x->byte_size);
    quant_string(&x->quant, quant, sizeof(quant));
    const char *row[] = {dir, idx, x->name, id, type, shape, elems, bytes, quant};
    cli_table_add(t, row);
  }
}

static int print_human(const char *path, const char *system_lib, const htpu_model_info *m) {
  char core[48], backend[48], blob[48], soc_model[32], dsp[32], biv[16];
  cli_format_version(m->core_api_version, core, sizeof(core));
  cli_format_version(m->backend_api_version, backend, sizeof(backend));
  cli_format_version(m->context_blob_version, blob, sizeof(blob));
  snprintf(soc_model, sizeof(soc_model), "%" PRIu32, m->soc_model);
  snprintf(dsp, sizeof(dsp), "v%" PRIu32, m->dsp_arch);
  snprintf(biv, sizeof(biv), "%" PRIu32, m->binary_info_version);

  cli_table head;
  cli_table_init(&head, 2);
  char backend_id[64], blob_size[48], graphs[16], estimate[160];
  char est_bytes[32], bin_bytes[32];
  cli_format_bytes(m->load_estimate_bytes, est_bytes, sizeof est_bytes);
  cli_format_bytes(m->binary_bytes, bin_bytes, sizeof bin_bytes);
  snprintf(estimate, sizeof estimate, "%s (the %s binary kept, graphs' buffers: docs/board.md)",
           est_bytes, bin_bytes);
  snprintf(backend_id, sizeof(backend_id), "%" PRIu32 " (%s)", m->backend_id,
           cli_backend_name(m->backend_id));
  snprintf(blob_size, sizeof(blob_size), "%" PRIu64 " bytes", m->context_blob_size);
  snprintf(graphs, sizeof(graphs), "%" PRIu32, m->num_graphs);
  const char *rows[][2] = {
      {"file", path},
      {"system library", system_lib},
      {"binary info version", biv},
      {"backend id", backend_id},
      {"build id", m->build_id && m->build_id[0] ? m->build_id : "(none)"},
      {"core API", core},
      {"backend API", backend},
      {"context blob version", blob},
      {"SoC version", m->soc_version && m->soc_version[0] ? m->soc_version : "(unknown)"},
      {"SoC model", m->soc_model ? soc_model : "(unknown)"},
      {"DSP arch", m->dsp_arch ? dsp : "(unknown)"},
      {"context blob size", blob_size},
      {"graphs", graphs},
      {"load estimate", estimate},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) cli_table_add(&head, rows[i]);
  int rc = cli_table_print(&head, stdout, 0);
  cli_table_free(&head);

  for (uint32_t g = 0; g < m->num_graphs; g++) {
    const htpu_graph_info *gi = &m->graphs[g];
    char vtcm[48] = "", amount[32];
    cli_format_vtcm(gi->vtcm_bytes, amount, sizeof(amount));
    if (gi->vtcm_bytes) snprintf(vtcm, sizeof(vtcm), ", VTCM %s", amount);
    printf("\ngraph %" PRIu32 ": ", g);
    /* the name goes through the table's sanitizer so control bytes cannot reach the tty */
    cli_table name;
    cli_table_init(&name, 1);
    const char *cell[] = {gi->name};
    cli_table_add(&name, cell);
    if (name.num_rows == 1) fputs(name.cells[0], stdout);
    cli_table_free(&name);
    printf("  (graph info v%" PRIu32 ", %" PRIu32 " input%s, %" PRIu32 " output%s%s)\n",
           gi->graph_info_version, gi->num_inputs, gi->num_inputs == 1 ? "" : "s", gi->num_outputs,
           gi->num_outputs == 1 ? "" : "s", vtcm);

    cli_table t;
    cli_table_init(&t, 9);
    const char *header[] = {"dir",   "#",        "name",  "id",          "type",
                            "shape", "elements", "bytes", "quantization"};
    cli_table_add(&t, header);
    add_tensor_rows(&t, "in", gi->inputs, gi->num_inputs);
    add_tensor_rows(&t, "out", gi->outputs, gi->num_outputs);
    if (cli_table_print(&t, stdout, 2) != 0) rc = -1;
    cli_table_free(&t);
    char mem[400];
    cli_graph_memory_line(&m->graph_memory[g], mem, sizeof mem);
    if (mem[0]) printf("  %s\n", mem);
    if (any_dynamic(gi->inputs, gi->num_inputs) || any_dynamic(gi->outputs, gi->num_outputs))
      printf("  <=N: a dynamic dimension, at most N (elements and bytes: the maximum); each "
             "execute sets an output's\n");
  }
  return rc;
}

/* ---- JSON report (schema documented in docs/htpu.md; bump "schema" on breaking changes) ---- */

static void json_version(cli_json *j, const char *key, htpu_version3 v) {
  char buf[48];
  cli_format_version(v, buf, sizeof(buf));
  cli_json_string(j, key, buf);
}

static void json_quant(cli_json *j, const htpu_quant *q) {
  cli_json_object_begin(j, "quantization");
  switch (q->kind) {
  case HTPU_QUANT_NONE: cli_json_string(j, "kind", "none"); break;
  case HTPU_QUANT_PER_TENSOR:
    cli_json_string(j, "kind", "per_tensor");
    cli_json_double(j, "scale", q->scale);
    cli_json_int(j, "zero_point", q->zero_point);
    break;
  case HTPU_QUANT_PER_AXIS:
    cli_json_string(j, "kind", "per_axis");
    cli_json_int(j, "axis", q->axis);
    cli_json_uint(j, "num_channels", q->num_channels);
    cli_json_array_begin(j, "scales", 1);
    for (uint32_t i = 0; q->scales && i < q->num_channels; i++)
      cli_json_double(j, NULL, q->scales[i]);
    cli_json_array_end(j);
    cli_json_array_begin(j, "zero_points", 1);
    for (uint32_t i = 0; q->zero_points && i < q->num_channels; i++)
      cli_json_int(j, NULL, q->zero_points[i]);
    cli_json_array_end(j);
    break;
  default: cli_json_string(j, "kind", "unknown"); break;
  }
  cli_json_object_end(j);
}

static void json_tensors(cli_json *j, const char *key, const htpu_tensor_info *ts, uint32_t n) {
  cli_json_array_begin(j, key, 0);
  for (uint32_t i = 0; i < n; i++) {
    const htpu_tensor_info *x = &ts[i];
    char hex[16];
    snprintf(hex, sizeof(hex), "0x%04" PRIx32, x->qnn_data_type);
    cli_json_object_begin(j, NULL);
    cli_json_uint(j, "index", i);
    cli_json_string(j, "name", x->name);
    cli_json_uint(j, "id", x->id);
    cli_json_string(j, "dtype", htpu_dtype_name(x->dtype));
    cli_json_uint(j, "qnn_data_type", x->qnn_data_type);
    cli_json_string(j, "qnn_data_type_hex", hex);
    cli_json_string(j, "qnn_data_type_name", cli_qnn_type_name(x->qnn_data_type));
    cli_json_uint(j, "tensor_version", x->tensor_version);
    cli_json_array_begin(j, "shape", 1);
    for (uint32_t d = 0; d < x->rank && d < HTPU_MAX_RANK; d++) cli_json_uint(j, NULL, x->dims[d]);
    cli_json_array_end(j);
    /* the axes whose shape entry is a maximum, set per execute (outputs) */
    cli_json_array_begin(j, "dynamic_dims", 1);
    for (uint32_t d = 0; d < x->rank && d < HTPU_MAX_RANK; d++)
      if ((x->dynamic_dims >> d) & 1u) cli_json_uint(j, NULL, d);
    cli_json_array_end(j);
    cli_json_uint(j, "num_elements", x->num_elements);
    cli_json_uint(j, "byte_size", x->byte_size);
    json_quant(j, &x->quant);
    cli_json_object_end(j);
  }
  cli_json_array_end(j);
}

/* The binary's facts and graphs, as members of the object being written. */
static void json_binary(cli_json *jp, const htpu_model_info *m) {
  cli_json j = *jp;
  cli_json_uint(&j, "binary_info_version", m->binary_info_version);
  cli_json_uint(&j, "backend_id", m->backend_id);
  cli_json_string(&j, "backend_name", cli_backend_name(m->backend_id));
  cli_json_string(&j, "build_id", m->build_id ? m->build_id : "");
  json_version(&j, "core_api_version", m->core_api_version);
  json_version(&j, "backend_api_version", m->backend_api_version);
  json_version(&j, "context_blob_version", m->context_blob_version);
  cli_json_string(&j, "soc_version", m->soc_version ? m->soc_version : "");
  cli_json_uint(&j, "soc_model", m->soc_model);
  cli_json_uint(&j, "dsp_arch", m->dsp_arch);
  cli_json_uint(&j, "context_blob_size", m->context_blob_size);
  cli_json_array_begin(&j, "graphs", 0);
  for (uint32_t g = 0; g < m->num_graphs; g++) {
    const htpu_graph_info *gi = &m->graphs[g];
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "name", gi->name);
    cli_json_uint(&j, "graph_info_version", gi->graph_info_version);
    cli_json_uint(&j, "vtcm_bytes", gi->vtcm_bytes);
    json_tensors(&j, "inputs", gi->inputs, gi->num_inputs);
    json_tensors(&j, "outputs", gi->outputs, gi->num_outputs);
    cli_graph_memory_json(&j, &m->graph_memory[g]);
    cli_json_object_end(&j);
  }
  cli_json_array_end(&j);
  cli_json_uint(&j, "binary_bytes", m->binary_bytes);
  cli_json_uint(&j, "load_estimate_bytes", m->load_estimate_bytes);
  *jp = j;
}

/* ctxs: an ONNX model's contexts (num_contexts; m is context 0), else NULL. */
static int print_json(const char *path, const char *system_lib, const htpu_model_info *m,
                      const htpu_model_context *ctxs, uint32_t num_contexts) {
  cli_json j;
  cli_json_init(&j, stdout);
  cli_json_object_begin(&j, NULL);
  cli_json_string(&j, "schema", "htpu.info/2");
  cli_json_string(&j, "htpu_version", HTPU_VERSION_STRING);
  cli_json_string(&j, "file", path);
  cli_json_string(&j, "system_lib", system_lib);
  json_binary(&j, m);
  if (m->source) {
    info_source_json(&j, m->source);
    cli_json_array_begin(&j, "other_contexts", 0);
    for (uint32_t i = 1; i < num_contexts; i++) {
      cli_json_object_begin(&j, NULL);
      cli_json_uint(&j, "context", i);
      cli_json_string(&j, "origin", ctxs[i].origin);
      json_binary(&j, ctxs[i].info);
      cli_json_object_end(&j);
    }
    cli_json_array_end(&j);
  } else {
    cli_json_null(&j, "source");
  }
  cli_qnn_verdict_json(&j, m);
  cli_json_object_end(&j);
  return cli_json_finish(&j);
}

/* ---- command ---- */

static int run_info(const cli_args *a) {
  const char *path = a->positional[0];
  /* info opens no backend: only --system-lib (or the system library of --qnn's set) applies */
  static cli_libs libs;
  static htpu_qnn_set set; /* 28 KiB: not on the stack */
  const char *system_lib = NULL;
  int ex = cli_system_lib_option(a, &libs, &set, &system_lib);
  if (ex != CLI_EXIT_OK) return ex;

  /* every context of an ONNX model in one reading: the file and each binary it names once */
  htpu_model_info *m = NULL;
  int rc = htpu_inspect_file_all(system_lib, path, &m);
  if (rc != 0) {
    const char *msg = htpu_last_error();
    return cli_fail(a->cmd, "%s: %s", htpu_err_name(rc), msg && msg[0] ? msg : htpu_strerror(rc));
  }
  uint32_t n = m->source ? m->source->num_contexts : 1;
  const htpu_model_context *ctxs = m->source ? m->source->contexts : NULL;
  const char *shown_lib = system_lib ? system_lib : HTPU_DEFAULT_SYSTEM_LIB;
  int out = 0;
  if (cli_has(a, "json")) {
    out = print_json(path, shown_lib, m, ctxs, n);
  } else {
    out = print_human(path, shown_lib, m);
    if (m->source && info_source_print(m->source) != 0) out = -1;
    for (uint32_t i = 1; i < n; i++) {
      printf("\n---- context %" PRIu32 " of the model's %" PRIu32 " (%s) ----\n", i, n,
             ctxs[i].origin);
      if (print_human(path, shown_lib, ctxs[i].info) != 0) out = -1;
    }
    if (cli_qnn_verdict_print(m) != 0) out = -1;
  }
  htpu_model_info_free(m);
  if (out != 0) return cli_fail(a->cmd, "could not write the report");
  return CLI_EXIT_OK;
}

static const cli_option info_options[] = {
    {"system-lib", "PATH",
     "QNN system library that parses the binary (default " HTPU_DEFAULT_SYSTEM_LIB
     "; 'reference' = the reference system library)",
     0},
    CLI_QNN_OPTION,
    {"json", NULL, "print the report as JSON (schema htpu.info/2, see docs/htpu.md)", 0},
    {NULL, NULL, NULL, 0},
};

const cli_command cmd_info = {
    .name = "info",
    .synopsis = "MODEL [--system-lib PATH|reference | --qnn DIR] [--json]",
    .summary = "show what a context binary (or an ONNX EPContext model) holds: versions, SoC, "
               "graphs, tensors, quantization",
    .description =
        "Reads MODEL's metadata through the QNN system library alone: no backend, no device,\n"
        "so it works on any machine that has libQnnSystem.so. Prints the binary-level facts\n"
        "(binary info version, backend id, build id, API versions, context blob version, SoC,\n"
        "DSP arch, blob size) and, for each graph, one row per input and output tensor: index,\n"
        "name, id, element type (with the raw QNN data type in hex), shape, element count, byte\n"
        "size and quantization (scale/zero_point, or per-axis axis, channel count and the\n"
        "first scales/zero points). zero_point is the negated QNN offset. A dynamic dimension\n"
        "shows as <=N, N its maximum (an output's actual value is what each execute writes).\n"
        "Backend id, DSP arch, SoC model, API versions and each graph's VTCM are what the\n"
        "library compares with the device before loading (htpu doctor shows the device's side;\n"
        "docs/board.md).\n"
        "An ONNX model whose EPContext nodes carry the binary (Ultralytics' format=\"qnn\", ONNX\n"
        "Runtime's ep.context_enable) is read too: its identity, metadata_props, class names and\n"
        "EPContext nodes follow, and each context binary it holds gets its own report\n"
        "(docs/context-binaries.md).\n"
        "Last, the QNN sets installed on this machine (htpu doctor lists them), each with\n"
        "whether it can load the binary: a set loads binaries made by its own QAIRT release or\n"
        "an older one (the releases are read from the build ids).\n",
    .options = info_options,
    .positional_name = "MODEL",
    .min_positional = 1,
    .max_positional = 1,
    .run = run_info,
};
